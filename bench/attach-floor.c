// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * attach-floor: attaches probes/floor.bpf.c (an empty program on every
 * event locktop's probes use) until SIGINT or SIGTERM, then detaches.
 * bench/overhead.sh runs it beside locktop as the floor of the overhead,
 * and with --clock as the floor of any tracer that takes a timestamp.
 * With --sample-hz it only samples every CPU, with an empty program on
 * the event locktop's spin kind samples with: what sampling costs before
 * any work (bench/spin-cost.sh). With --kernel-locks it attaches only the
 * kernel lock events' two: beside locktop --no-kernel-locks, the floor of
 * locktop's kernel lock probe. Servers' USDT probes that locktop uses by
 * default (collector/providers.c) get an empty program too, in the
 * binaries of the servers running when it starts.
 *
 *   attach-floor [--clock] [--sample-hz N | --kernel-locks]
 */
#include <argp.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "floor.skel.h"
#include "providers.h"
#include "sample_event.h"

static bool with_clock;
static unsigned int sample_hz;
static bool kernel_locks;

static const struct argp_option options[] = {
	{ "clock", 'c', NULL, 0,
	  "Each program reads the kernel clock once, as any tracer that "
	  "times a wait must",
	  0 },
	{ "kernel-locks", 'k', NULL, 0,
	  "Only the kernel lock events (contention_begin and "
	  "contention_end), as locktop's kernel lock probe",
	  0 },
	{ "sample-hz", 's', "N", 0,
	  "Only sample every CPU N times a second (1 to 100000), as "
	  "locktop's spin kind does, with an empty program",
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
	case 'k':
		kernel_locks = true;
		return 0;
	case 's': {
		char *end;
		unsigned long hz = strtoul(arg, &end, 10);

		if (*end || hz < 1 || hz > 100000)
			argp_error(state,
				   "--sample-hz takes 1 to 100000, not '%s'",
				   arg);
		sample_hz = (unsigned int)hz;
		return 0;
	}
	case ARGP_KEY_ARG:
		argp_error(state, "unexpected argument '%s'", arg);
		return EINVAL;
	case ARGP_KEY_END:
		if (kernel_locks && sample_hz)
			argp_error(state, "--kernel-locks and --sample-hz "
					  "are floors of different probes: "
					  "one at a time");
		return 0;
	default:
		return ARGP_ERR_UNKNOWN;
	}
}

static const struct argp argp = {
	.options = options,
	.parser = parse_arg,
	.doc = "Attaches an empty program on every event locktop's probes "
	       "use, the USDT probes of the servers running when it starts "
	       "too, until SIGINT or SIGTERM: the floor of what tracing "
	       "these events costs. Prints \"attached\" once they are in.",
};

/* The sampling events, one per CPU, and their links. */
static struct bpf_link **links;
static int *fds, n_samplers;

/* The empty sampler on every online CPU; 0 or -errno. */
static int attach_samplers(struct floor_bpf *skel)
{
	int cpu, ncpus = libbpf_num_possible_cpus(), fd, err;
	bool clock = false;

	if (ncpus < 0)
		return ncpus;
	links = calloc((size_t)ncpus, sizeof(*links));
	fds = calloc((size_t)ncpus, sizeof(*fds));
	if (!links || !fds)
		return -ENOMEM;
	for (cpu = 0; cpu < ncpus; cpu++) {
		fd = lt_sample_event(sample_hz, cpu, &clock);
		if (fd < 0 && (errno == ENODEV || errno == ENXIO))
			continue; /* a possible CPU not online */
		if (fd < 0)
			return -errno;
		links[n_samplers] = bpf_program__attach_perf_event(
			skel->progs.floor_sample, fd);
		if (!links[n_samplers]) {
			err = -errno;
			close(fd);
			return err;
		}
		fds[n_samplers++] = fd;
	}
	return 0;
}

static void detach_samplers(void)
{
	int i;

	for (i = 0; i < n_samplers; i++) {
		bpf_link__destroy(links[i]);
		close(fds[i]);
	}
	free(links);
	free(fds);
	n_samplers = 0;
}

#define MAX_SERVER_BINARIES 8

/* The USDT links, and the servers' binaries they are in. */
static struct bpf_link **usdt_links;
static size_t n_usdt;
static char server_bins[MAX_SERVER_BINARIES][PATH_MAX];
static size_t n_bins;

/* The empty program on each default probe of binary at path; 0 or
 * -ENOMEM. A probe the binary lacks is skipped, as locktop skips it,
 * and said on stderr. */
static int attach_binary(struct floor_bpf *skel, const char *path,
			 const char *binary)
{
	const struct lt_provider_probe *p;
	struct bpf_link *link, **grown;
	size_t i;

	for (i = 0; i < lt_n_provider_probes; i++) {
		p = &lt_provider_probes[i];
		if (!p->on || strcmp(p->binary, binary))
			continue;
		grown = realloc(usdt_links, (n_usdt + 1) * sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		usdt_links = grown;
		link = bpf_program__attach_usdt(skel->progs.floor_usdt, -1,
						path, p->provider, p->probe,
						NULL);
		if (!link) {
			fprintf(stderr, "attach-floor: no %s:%s in %s: %s\n",
				p->provider, p->probe, path, strerror(errno));
			continue;
		}
		usdt_links[n_usdt++] = link;
	}
	return 0;
}

/* The servers' probes, in every running server's binary; 0 or -errno. */
static int attach_servers(struct floor_bpf *skel)
{
	char path[PATH_MAX];
	const char *binary;
	struct dirent *de;
	bool seen;
	size_t i;
	int err = 0;
	DIR *proc = opendir("/proc");

	if (!proc)
		return -errno;
	while (!err && (de = readdir(proc))) {
		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		binary = lt_provider_exe(atoi(de->d_name), path, sizeof(path));
		if (!binary || n_bins == MAX_SERVER_BINARIES)
			continue;
		for (seen = false, i = 0; i < n_bins && !seen; i++)
			seen = !strcmp(server_bins[i], path);
		if (seen)
			continue;
		snprintf(server_bins[n_bins++], PATH_MAX, "%s", path);
		err = attach_binary(skel, path, binary);
	}
	closedir(proc);
	return err;
}

static void detach_servers(void)
{
	size_t i;

	for (i = 0; i < n_usdt; i++)
		bpf_link__destroy(usdt_links[i]);
	free(usdt_links);
	n_usdt = 0;
}

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
	if (kernel_locks) {
		struct bpf_program *prog;

		bpf_object__for_each_program(prog, skel->obj)
			bpf_program__set_autoattach(
				prog, prog == skel->progs.floor_kbegin ||
					      prog == skel->progs.floor_kend);
	}
	what = "load";
	err = floor_bpf__load(skel);
	if (!err) {
		what = "attach";
		err = sample_hz ? attach_samplers(skel) :
				  floor_bpf__attach(skel);
	}
	if (!err && !sample_hz && !kernel_locks)
		err = attach_servers(skel);
	if (err) {
		fprintf(stderr, "attach-floor: cannot %s: %s\n", what,
			strerror(-err));
		detach_samplers();
		detach_servers();
		floor_bpf__destroy(skel);
		return 1;
	}
	printf("attached\n");
	fflush(stdout);
	sigwait(&set, &sig);
	detach_samplers();
	detach_servers();
	floor_bpf__destroy(skel);
	return 0;
}
