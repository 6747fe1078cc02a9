// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * attach-floor: attaches probes/floor.bpf.c (an empty program on every
 * event locktop's probes use) until SIGINT or SIGTERM, then detaches.
 * bench/overhead.sh runs it beside locktop as the floor of the overhead,
 * and with --clock as the floor of any tracer that takes a timestamp.
 *
 *   attach-floor [--clock]
 */
#include <argp.h>
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "floor.skel.h"

static bool with_clock;

static const struct argp_option options[] = {
	{ "clock", 'c', NULL, 0,
	  "Each program reads the kernel clock once, as any tracer that "
	  "times a wait must",
	  0 },
	{},
};

static error_t parse_arg(int key, char *arg, struct argp_state *state)
{
	(void)arg;
	switch (key) {
	case 'c':
		with_clock = true;
		return 0;
	case ARGP_KEY_ARG:
		argp_error(state, "unexpected argument '%s'", arg);
		return EINVAL;
	default:
		return ARGP_ERR_UNKNOWN;
	}
}

static const struct argp argp = {
	.options = options,
	.parser = parse_arg,
	.doc = "Attaches an empty program on every event locktop's probes "
	       "use, until SIGINT or SIGTERM: the floor of what tracing "
	       "these events costs. Prints \"attached\" once they are in.",
};

int main(int argc, char **argv)
{
	struct floor_bpf *skel;
	const char *what;
	sigset_t set;
	int sig, err;

	err = argp_parse(&argp, argc, argv, 0, NULL, NULL);
	if (err)
		return 2;
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigprocmask(SIG_BLOCK, &set, NULL);
	skel = floor_bpf__open();
	if (!skel) {
		fprintf(stderr, "attach-floor: cannot open: %s\n",
			strerror(errno));
		return 1;
	}
	skel->rodata->with_clock = with_clock;
	what = "load";
	err = floor_bpf__load(skel);
	if (!err) {
		what = "attach";
		err = floor_bpf__attach(skel);
	}
	if (err) {
		fprintf(stderr, "attach-floor: cannot %s: %s\n", what,
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
