// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * spinner: threads take turns on a test-and-test-and-set spin lock in
 * the program's own data (private memory), holding it busy for a while,
 * for SECS seconds. Each times its spinning on its thread CPU clock.
 * Prints {"pid": N, "lock": "0x...", "spin_cpu_ns": N, "acquires": N}.
 *
 *   spinner [THREADS [SECS]]
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

/* In .data, not .bss: a file-backed mapping names it. */
static struct {
	uint32_t word;
	uint32_t magic;
} lock = { 0, 0x5a5a5a5a };

static double secs = 2.0;
static uint64_t spin_ns, acquires;
static pthread_mutex_t sums = PTHREAD_MUTEX_INITIALIZER;

static uint64_t now(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void spin_lock(uint32_t *w)
{
	uint32_t zero;

	for (;;) {
		zero = 0;
		if (__atomic_load_n(w, __ATOMIC_RELAXED) == 0 &&
		    __atomic_compare_exchange_n(w, &zero, 1, false,
						__ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED))
			return;
		__builtin_ia32_pause();
	}
}

static void *worker(void *arg)
{
	uint64_t end = now(CLOCK_MONOTONIC) + (uint64_t)(secs * 1e9);
	uint64_t mine = 0, n = 0, t0, hold;

	(void)arg;
	while (now(CLOCK_MONOTONIC) < end) {
		t0 = now(CLOCK_THREAD_CPUTIME_ID);
		spin_lock(&lock.word);
		mine += now(CLOCK_THREAD_CPUTIME_ID) - t0;
		n++;
		hold = now(CLOCK_MONOTONIC) + 50000;
		while (now(CLOCK_MONOTONIC) < hold)
			;
		__atomic_store_n(&lock.word, 0, __ATOMIC_RELEASE);
	}
	pthread_mutex_lock(&sums);
	spin_ns += mine;
	acquires += n;
	pthread_mutex_unlock(&sums);
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 2, i;
	pthread_t t[64];

	if (argc > 2)
		secs = atof(argv[2]);
	if (n < 1 || n > 64 || secs <= 0) {
		fprintf(stderr, "usage: spinner [THREADS [SECS]]\n");
		return 2;
	}
	for (i = 0; i < n; i++)
		pthread_create(&t[i], NULL, worker, NULL);
	for (i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	printf("{\"pid\": %d, \"lock\": \"%p\", \"spin_cpu_ns\": %llu, "
	       "\"acquires\": %llu}\n",
	       (int)getpid(), (void *)&lock.word, (unsigned long long)spin_ns,
	       (unsigned long long)acquires);
	return 0;
}
