// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * contend: N threads take one pthread mutex in turn and measure, around
 * each blocking acquire, how long they were kept waiting. The figures it
 * prints are the ground truth the futex probe is checked against.
 *
 *   contend [-t THREADS] [-n LOOPS] [-h HOLD_US] [-i]
 *
 * -i gives every thread its own mutex: the same work, no contention.
 * Prints one JSON object: pid, mutex address, contended acquires, wait_ns.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "testclock.h"

#define MAX_THREADS 64

static pthread_mutex_t shared_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t own_locks[MAX_THREADS];
static atomic_int go;
static long loops = 2000, hold_us = 20;
static int nthreads = 4;
static int independent;

struct result {
	uint64_t waits;
	uint64_t wait_ns;
};

static struct result results[MAX_THREADS];

static void *worker(void *arg)
{
	long id = (long)arg, i;
	pthread_mutex_t *m = independent ? &own_locks[id] : &shared_lock;
	struct result *r = &results[id];

	/* Spin, not a barrier: a barrier's own futex waits would show. */
	while (!atomic_load(&go))
		;
	for (i = 0; i < loops; i++) {
		if (pthread_mutex_trylock(m) == EBUSY) {
			uint64_t t0 = now_ns();

			pthread_mutex_lock(m);
			r->wait_ns += now_ns() - t0;
			r->waits++;
		}
		busy(hold_us);
		pthread_mutex_unlock(m);
		/* Give the others a chance to find the lock taken. */
		busy(hold_us / 4);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t tids[MAX_THREADS];
	struct result sum = { 0 };
	int opt, i;

	while ((opt = getopt(argc, argv, "t:n:h:i")) != -1) {
		switch (opt) {
		case 't':
			nthreads = atoi(optarg);
			break;
		case 'n':
			loops = atol(optarg);
			break;
		case 'h':
			hold_us = atol(optarg);
			break;
		case 'i':
			independent = 1;
			break;
		default:
			fprintf(stderr,
				"usage: contend [-t THREADS] [-n LOOPS] "
				"[-h HOLD_US] [-i]\n");
			return 2;
		}
	}
	if (nthreads < 1 || nthreads > MAX_THREADS || loops < 1 ||
	    hold_us < 0) {
		fprintf(stderr, "contend: bad value\n");
		return 2;
	}
	for (i = 0; i < nthreads; i++) {
		pthread_mutex_init(&own_locks[i], NULL);
		if (pthread_create(&tids[i], NULL, worker, (void *)(long)i)) {
			fprintf(stderr, "contend: pthread_create failed\n");
			return 1;
		}
	}
	atomic_store(&go, 1);
	for (i = 0; i < nthreads; i++) {
		pthread_join(tids[i], NULL);
		sum.waits += results[i].waits;
		sum.wait_ns += results[i].wait_ns;
	}
	printf("{\"pid\": %d, \"address\": \"%p\", \"waits\": %" PRIu64
	       ", \"wait_ns\": %" PRIu64 "}\n",
	       getpid(), (void *)&shared_lock, sum.waits, sum.wait_ns);
	return 0;
}
