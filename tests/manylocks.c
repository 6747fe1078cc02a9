// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * manylocks: one futex wait on each of N distinct lock words, each
 * returning at once (the word is not 2), so that a tracer sees N
 * distinct locks quickly: more than its map can hold, if N is large.
 * With SECONDS, it repeats the pass every 100 ms for that long, keeping
 * N locks active. Prints {"pid": N, "waits": N, "first": A, "last": A},
 * the addresses of the first and last lock word, so that a check can
 * tell its locks from any futex the runtime waits on (a sanitizer's leak
 * check at exit, for one).
 *
 *   manylocks [N] [SECONDS]
 */
#include <linux/futex.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 20000, i, waits = 0;
	double secs = argc > 2 ? atof(argv[2]) : 0, end = now() + secs;
	uint32_t *words;

	if (n < 1 || secs < 0) {
		fprintf(stderr, "usage: manylocks [N] [SECONDS]\n");
		return 2;
	}
	words = calloc(n, sizeof(*words));
	if (!words)
		return 1;
	do {
		for (i = 0; i < n; i++, waits++)
			syscall(SYS_futex, &words[i], FUTEX_WAIT_PRIVATE, 2,
				NULL, NULL, 0);
		if (secs)
			usleep(100000);
	} while (now() < end);
	printf("{\"pid\": %d, \"waits\": %ld, \"first\": %" PRIuPTR
	       ", \"last\": %" PRIuPTR "}\n",
	       getpid(), waits, (uintptr_t)&words[0], (uintptr_t)&words[n - 1]);
	free(words);
	return 0;
}
