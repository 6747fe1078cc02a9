// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fcntl-pair: uncontended fcntl lock and unlock pairs in one process,
 * timed. Each pair is F_SETLK F_WRLCK then F_UNLCK on one byte, cycling
 * over K distinct offsets; a warm-up of a tenth of the pairs (at most
 * 100,000) runs first, untimed. With nobody else on the file every
 * call is granted at once, so the time per pair is two system calls
 * and the lock code, and what a tracer adds to it is its cost per
 * lock and per unlock. bench/fcntl-pair.sh runs it untraced and under
 * each tracer.
 *
 *   fcntl-pair [-n PAIRS] [--offsets K] [--ofd] [-p PATH] [-j]
 *
 * Without -p the file is made in a new directory under $TMPDIR (or
 * /tmp), and both are removed at the end.
 */
#include <argp.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "bench_tool.h"
#include "count_arg.h"

#define WARMUP_MAX 100000UL

struct env {
	unsigned long pairs;
	unsigned long offsets;
	bool ofd;
	bool json;
	const char *path;
};

static struct env env = {
	.pairs = 1000000,
	.offsets = 1,
};

enum { OPT_OFFSETS = 0x100, OPT_OFD };

static const struct argp_option options[] = {
	{ "pairs", 'n', "N", 0, "Timed lock+unlock pairs (default 1000000)",
	  0 },
	{ "offsets", OPT_OFFSETS, "K", 0,
	  "Cycle over K distinct one-byte ranges (default 1)", 0 },
	{ "ofd", OPT_OFD, NULL, 0, "Open file description locks (F_OFD_SETLK)",
	  0 },
	{ "path", 'p', "PATH", 0,
	  "Lock this file (created if missing, left in place) instead of "
	  "one in a new temporary directory",
	  0 },
	{ "json", 'j', NULL, 0, "Print one JSON object", 0 },
	{},
};

static error_t parse_arg(int key, char *arg, struct argp_state *state)
{
	switch (key) {
	case 'n':
		return parse_count(arg, state, &env.pairs);
	case OPT_OFFSETS:
		return parse_count(arg, state, &env.offsets);
	case OPT_OFD:
		env.ofd = true;
		return 0;
	case 'p':
		env.path = arg;
		return 0;
	case 'j':
		env.json = true;
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
	.doc = "Times uncontended fcntl write-lock and unlock pairs on one "
	       "byte in one process and prints the nanoseconds per pair."
	       "\v"
	       "EXAMPLES:\n"
	       "  fcntl-pair                 # 1,000,000 POSIX pairs, one "
	       "offset\n"
	       "  fcntl-pair --ofd -j        # OFD locks, JSON\n"
	       "  fcntl-pair --offsets 64    # 64 ranges, one after another",
};

/* Locks and unlocks byte i % offsets, @n times; -errno on failure. */
static int run_pairs(int fd, unsigned long n)
{
	int cmd = env.ofd ? F_OFD_SETLK : F_SETLK;
	struct flock fl = { .l_whence = SEEK_SET, .l_len = 1 };
	unsigned long i, off = 0;
	int e;

	for (i = 0; i < n; i++) {
		fl.l_start = (off_t)off;
		fl.l_type = F_WRLCK;
		if (fcntl(fd, cmd, &fl))
			goto failed;
		fl.l_type = F_UNLCK;
		if (fcntl(fd, cmd, &fl))
			goto failed;
		if (++off == env.offsets)
			off = 0;
	}
	return 0;

failed:
	e = errno;
	fprintf(stderr, "fcntl-pair: fcntl %s %s at %lu: %s\n",
		env.ofd ? "F_OFD_SETLK" : "F_SETLK",
		fl.l_type == F_WRLCK ? "F_WRLCK" : "F_UNLCK", off, strerror(e));
	return -e;
}

int main(int argc, char **argv)
{
	char dir[PATH_MAX] = "", file[PATH_MAX + 8];
	const char *path;
	unsigned long warmup;
	double t0, ns;
	int fd = -1, err;

	err = argp_parse(&argp, argc, argv, 0, NULL, NULL);
	if (err)
		return 2;

	/* The lock file: the caller's, or one in a directory of our own */
	path = env.path;
	if (!path) {
		if (bench_mkdtemp(dir, sizeof(dir), "fcntl-pair"))
			return 1;
		snprintf(file, sizeof(file), "%s/lock", dir);
		path = file;
	}
	err = 1;
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0) {
		fprintf(stderr, "fcntl-pair: open %s: %s\n", path,
			strerror(errno));
		goto cleanup;
	}

	/* Warm-up: caches, the lock cache, a tracer's per-lock state */
	warmup = env.pairs / 10;
	if (warmup > WARMUP_MAX)
		warmup = WARMUP_MAX;
	if (run_pairs(fd, warmup ? warmup : 1))
		goto cleanup;

	/* The timed loop */
	t0 = bench_now_ns();
	if (run_pairs(fd, env.pairs))
		goto cleanup;
	ns = (bench_now_ns() - t0) / (double)env.pairs;

	if (env.json)
		printf("{\"lock\": \"%s\", \"pairs\": %lu, \"offsets\": %lu, "
		       "\"elapsed_s\": %.6f, \"ns_per_pair\": %.1f}\n",
		       env.ofd ? "ofd" : "posix", env.pairs, env.offsets,
		       ns * (double)env.pairs / 1e9, ns);
	else
		printf("%lu %s pairs over %lu offset%s: %.1f ns per pair\n",
		       env.pairs, env.ofd ? "OFD" : "POSIX", env.offsets,
		       env.offsets == 1 ? "" : "s", ns);
	err = 0;
cleanup:
	if (fd >= 0)
		close(fd);
	if (*dir) {
		unlink(file);
		rmdir(dir);
	}
	return err;
}
