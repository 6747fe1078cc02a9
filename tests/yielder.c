// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * yielder: calls sched_yield N times from one place in the program.
 * Prints {"pid": N, "yields": N}.
 *
 *   yielder [N]
 */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static __attribute__((noinline)) void yield_loop(long n)
{
	long i;

	for (i = 0; i < n; i++)
		sched_yield();
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000;

	if (n < 1) {
		fprintf(stderr, "usage: yielder [N]\n");
		return 2;
	}
	yield_loop(n);
	printf("{\"pid\": %d, \"yields\": %ld}\n", getpid(), n);
	return 0;
}
