/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The bench tools' clock and scratch directory: one of each. */
#ifndef LOCKTOP_BENCH_BENCH_TOOL_H
#define LOCKTOP_BENCH_BENCH_TOOL_H
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The monotonic clock, in ns. */
static inline double bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/*
 * A new directory TOOL.XXXXXX under $TMPDIR (or /tmp), its path in dir;
 * 0, or -1 with a message on stderr.
 */
static inline int bench_mkdtemp(char *dir, size_t len, const char *tool)
{
	const char *tmpdir = getenv("TMPDIR");

	if (!tmpdir || !*tmpdir)
		tmpdir = "/tmp";
	snprintf(dir, len, "%s/%s.XXXXXX", tmpdir, tool);
	if (!mkdtemp(dir)) {
		fprintf(stderr, "%s: mkdtemp %s: %s\n", tool, dir,
			strerror(errno));
		return -1;
	}
	return 0;
}

#endif /* LOCKTOP_BENCH_BENCH_TOOL_H */
