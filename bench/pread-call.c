// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * pread-call: pread system calls in one process, timed. Each call reads
 * 16 bytes at offset 0 of a small file that stays in the page cache, so
 * the time per call is the system call and a copy, and what a tracer
 * adds to it is its cost per pread. With --files K each call opens one
 * of K files, reads it and closes it, in turn, as a server does that
 * reads another process's small state file (smbd reads its peers'
 * messaging lock files this way, inside its share mode lock): the time
 * is then per open, pread and close. A warm-up of a tenth of the calls
 * (at most 100,000) runs first, untimed. bench/pread-cost.sh runs it
 * untraced and under each tracer.
 *
 *   pread-call [-n CALLS] [--files K] [-j]
 *
 * The files are made in a new directory under $TMPDIR (or /tmp), and
 * removed at the end.
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
#define FILES_MAX 4096UL
#define READ_LEN 16

struct env {
	unsigned long calls;
	unsigned long files; /* 0: one file, kept open */
	bool json;
};

static struct env env = {
	.calls = 1000000,
};

enum { OPT_FILES = 0x100 };

static const struct argp_option options[] = {
	{ "calls", 'n', "N", 0, "Timed calls (default 1000000)", 0 },
	{ "files", OPT_FILES, "K", 0,
	  "Open, read and close one of K files a call, in turn (at most "
	  "4096), in place of reading one open file",
	  0 },
	{ "json", 'j', NULL, 0, "Print one JSON object", 0 },
	{},
};

static error_t parse_arg(int key, char *arg, struct argp_state *state)
{
	error_t err;

	switch (key) {
	case 'n':
		return parse_count(arg, state, &env.calls);
	case OPT_FILES:
		err = parse_count(arg, state, &env.files);
		if (!err && env.files > FILES_MAX) {
			argp_error(state, "at most %lu files", FILES_MAX);
			return EINVAL;
		}
		return err;
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
	.doc = "Times pread calls of 16 bytes from a file in the page cache "
	       "in one process and prints the nanoseconds per call."
	       "\v"
	       "EXAMPLES:\n"
	       "  pread-call                 # 1,000,000 preads of one file\n"
	       "  pread-call --files 32 -j   # open, pread, close of 32 files "
	       "in turn, JSON",
};

static void file_path(char *buf, size_t len, const char *dir, unsigned long i)
{
	snprintf(buf, len, "%s/%lu", dir, i);
}

/* One call: a pread of fd, or of file i % files opened for it. */
static int one_call(int fd, const char *dir, unsigned long i)
{
	char buf[READ_LEN], path[PATH_MAX + 24];
	ssize_t n;

	if (env.files) {
		file_path(path, sizeof(path), dir, i % env.files);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return -errno;
	}
	n = pread(fd, buf, sizeof(buf), 0);
	if (env.files)
		close(fd);
	if (n != READ_LEN)
		return n < 0 ? -errno : -EIO;
	return 0;
}

static int run_calls(int fd, const char *dir, unsigned long n)
{
	unsigned long i;
	int err;

	for (i = 0; i < n; i++) {
		err = one_call(fd, dir, i);
		if (err) {
			fprintf(stderr, "pread-call: call %lu: %s\n", i,
				strerror(-err));
			return err;
		}
	}
	return 0;
}

/* The files, each READ_LEN bytes; fd of the first, kept open. */
static int make_files(const char *dir)
{
	static const char data[READ_LEN] = "0123456789abcdef";
	char path[PATH_MAX + 24];
	unsigned long i, n = env.files ? env.files : 1;
	int fd = -1;

	for (i = 0; i < n; i++) {
		if (fd >= 0)
			close(fd);
		file_path(path, sizeof(path), dir, i);
		fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
		if (fd < 0 || write(fd, data, sizeof(data)) != READ_LEN) {
			fprintf(stderr, "pread-call: %s: %s\n", path,
				strerror(errno));
			if (fd >= 0)
				close(fd);
			return -1;
		}
	}
	return fd;
}

static void remove_files(const char *dir)
{
	char path[PATH_MAX + 24];
	unsigned long i, n = env.files ? env.files : 1;

	for (i = 0; i < n; i++) {
		file_path(path, sizeof(path), dir, i);
		unlink(path);
	}
	rmdir(dir);
}

int main(int argc, char **argv)
{
	char dir[PATH_MAX];
	unsigned long warmup;
	double t0, ns;
	int fd, err;

	err = argp_parse(&argp, argc, argv, 0, NULL, NULL);
	if (err)
		return 2;
	if (bench_mkdtemp(dir, sizeof(dir), "pread-call"))
		return 1;
	err = 1;
	fd = make_files(dir);
	if (fd < 0)
		goto cleanup;

	/* Warm-up: caches, a tracer's per-thread and per-file state */
	warmup = env.calls / 10;
	if (warmup > WARMUP_MAX)
		warmup = WARMUP_MAX;
	if (run_calls(fd, dir, warmup ? warmup : 1))
		goto cleanup;

	t0 = bench_now_ns();
	if (run_calls(fd, dir, env.calls))
		goto cleanup;
	ns = (bench_now_ns() - t0) / (double)env.calls;

	if (env.json)
		printf("{\"calls\": %lu, \"files\": %lu, \"elapsed_s\": %.6f, "
		       "\"ns_per_call\": %.1f}\n",
		       env.calls, env.files, ns * (double)env.calls / 1e9, ns);
	else if (env.files)
		printf("%lu open+pread+close over %lu files: %.1f ns per "
		       "call\n",
		       env.calls, env.files, ns);
	else
		printf("%lu preads of one file: %.1f ns per call\n", env.calls,
		       ns);
	err = 0;
cleanup:
	if (fd >= 0)
		close(fd);
	remove_files(dir);
	return err;
}
