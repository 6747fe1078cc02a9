// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * manylocks: one futex wait on each of N distinct lock words, each
 * returning at once (the word is not 2), so that a tracer sees N
 * distinct locks quickly: more than its map can hold, if N is large.
 * Prints {"pid": N, "waits": N}.
 */
#include <linux/futex.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/syscall.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 20000, i;
	uint32_t *words = calloc(n, sizeof(*words));

	if (!words || n < 1)
		return 1;
	for (i = 0; i < n; i++)
		syscall(SYS_futex, &words[i], FUTEX_WAIT_PRIVATE, 2, NULL,
			NULL, 0);
	printf("{\"pid\": %d, \"waits\": %ld}\n", getpid(), n);
	free(words);
	return 0;
}
