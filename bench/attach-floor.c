// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * attach-floor: attaches probes/floor.bpf.c (an empty program on every
 * event locktop's probes use) until SIGINT or SIGTERM, then detaches.
 * bench/overhead.sh runs it beside locktop as the floor of the overhead.
 *
 *   attach-floor
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "floor.skel.h"

int main(int argc, char **argv)
{
	struct floor_bpf *skel;
	sigset_t set;
	int sig, err;

	(void)argv;
	if (argc > 1) {
		fprintf(stderr,
			"usage: attach-floor\n"
			"Attaches an empty program on every event locktop's "
			"probes use, until SIGINT or SIGTERM.\n");
		return 2;
	}
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigprocmask(SIG_BLOCK, &set, NULL);
	skel = floor_bpf__open_and_load();
	if (!skel) {
		fprintf(stderr, "attach-floor: cannot load: %s\n",
			strerror(errno));
		return 1;
	}
	err = floor_bpf__attach(skel);
	if (err) {
		fprintf(stderr, "attach-floor: cannot attach: %s\n",
			strerror(-err));
		floor_bpf__destroy(skel);
		return 1;
	}
	printf("attached\n");
	fflush(stdout);
	sigwait(&set, &sig);
	floor_bpf__destroy(skel);
	return 0;
}
