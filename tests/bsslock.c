// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * bsslock: threads take turns on one pthread mutex that lies deep in the
 * program's .bss, past the part of it the file mapping covers: in the
 * anonymous mapping that continues the image. Built twice, as is and
 * stripped of its symbol table, for the names of such a lock.
 *
 *   bsslock [-t THREADS] [-n LOOPS] [-h HOLD_US]
 *
 * Prints one JSON object: pid and the mutex's address.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include "testclock.h"

#define MAX_THREADS 64

/* The lock 256 KiB into one object: far beyond the file's last page. */
struct bss_area {
	char ballast[256 << 10];
	pthread_mutex_t lock;
};

static struct bss_area bss_area;
static atomic_int go;
static long loops = 2000, hold_us = 20;

static void *worker(void *arg)
{
	long i;

	(void)arg;
	while (!atomic_load(&go))
		;
	for (i = 0; i < loops; i++) {
		pthread_mutex_lock(&bss_area.lock);
		busy(hold_us);
		pthread_mutex_unlock(&bss_area.lock);
		busy(hold_us / 4);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t tids[MAX_THREADS];
	int opt, i, n = 4;

	while ((opt = getopt(argc, argv, "t:n:h:")) != -1) {
		switch (opt) {
		case 't':
			n = atoi(optarg);
			break;
		case 'n':
			loops = atol(optarg);
			break;
		case 'h':
			hold_us = atol(optarg);
			break;
		default:
			fprintf(stderr,
				"usage: bsslock [-t THREADS] [-n LOOPS] "
				"[-h HOLD_US]\n");
			return 2;
		}
	}
	if (n < 1 || n > MAX_THREADS || loops < 1 || hold_us < 0)
		return 2;
	pthread_mutex_init(&bss_area.lock, NULL);
	for (i = 0; i < n; i++)
		if (pthread_create(&tids[i], NULL, worker, NULL))
			return 1;
	atomic_store(&go, 1);
	for (i = 0; i < n; i++)
		pthread_join(tids[i], NULL);
	printf("{\"pid\": %d, \"address\": \"0x%" PRIxPTR "\"}\n", getpid(),
	       (uintptr_t)&bss_area.lock);
	return 0;
}
