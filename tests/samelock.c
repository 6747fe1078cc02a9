// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * samelock: N futex waits on one static word, each returning at once
 * (the word is not 2). Built without PIE, the word has the same address
 * in every run, so a run that gets a PID an earlier run had uses the
 * same lock key (process, address). Prints {"pid": N, "waits": N}.
 *
 *   samelock [N]
 */
#include <linux/futex.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/syscall.h>

static uint32_t word;

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000, i;

	if (n < 1) {
		fprintf(stderr, "usage: samelock [N]\n");
		return 2;
	}
	for (i = 0; i < n; i++)
		syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, 2, NULL, NULL, 0);
	printf("{\"pid\": %d, \"waits\": %ld}\n", getpid(), n);
	return 0;
}
