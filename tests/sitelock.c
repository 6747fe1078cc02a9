// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sitelock: P processes of one program, each with its own private mutex
 * on the heap, taken in turn by its own T threads: the private copies
 * of one lock, at the same heap offset in every process (one lock
 * site). Each process allocates the same way after the fork, so the
 * mutex lies at the same offset from its heap's start.
 *
 *   sitelock [-p PROCS] [-t THREADS] [-n LOOPS] [-h HOLD_US] [-s SECS]
 *
 * With -s each process runs for SECS seconds and then stops; else each
 * thread takes the lock LOOPS times. Prints one JSON object per process,
 * {"pid", "address"}, then waits for them all.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>
#include "testclock.h"

#define MAX_THREADS 64

static pthread_mutex_t *lock;
static long loops = 2000, hold_us = 20, secs;
static int nthreads = 4;
static atomic_int stop;

static void *worker(void *arg)
{
	long i;

	(void)arg;
	for (i = 0; secs ? !atomic_load(&stop) : i < loops; i++) {
		pthread_mutex_lock(lock);
		busy(hold_us);
		pthread_mutex_unlock(lock);
	}
	return NULL;
}

static int child(void)
{
	pthread_t t[MAX_THREADS];
	int i;

	/* The main thread's malloc: the main arena, on [heap]. */
	lock = malloc(sizeof(*lock));
	if (!lock || pthread_mutex_init(lock, NULL))
		return 1;
	printf("{\"pid\": %d, \"address\": \"%p\"}\n", getpid(), (void *)lock);
	fflush(stdout);
	for (i = 0; i < nthreads; i++)
		if (pthread_create(&t[i], NULL, worker, NULL))
			return 1;
	if (secs) {
		sleep((unsigned int)secs);
		atomic_store(&stop, 1);
	}
	for (i = 0; i < nthreads; i++)
		pthread_join(t[i], NULL);
	return 0;
}

int main(int argc, char **argv)
{
	int procs = 4, opt, i, status, bad = 0;

	while ((opt = getopt(argc, argv, "p:t:n:h:s:")) != -1) {
		switch (opt) {
		case 'p':
			procs = atoi(optarg);
			break;
		case 't':
			nthreads = atoi(optarg);
			break;
		case 'n':
			loops = atol(optarg);
			break;
		case 'h':
			hold_us = atol(optarg);
			break;
		case 's':
			secs = atol(optarg);
			break;
		default:
			goto usage;
		}
	}
	if (procs < 1 || nthreads < 1 || nthreads > MAX_THREADS)
		goto usage;
	for (i = 0; i < procs; i++) {
		pid_t pid = fork();

		if (pid < 0)
			return 1;
		if (!pid)
			_exit(child());
	}
	while (wait(&status) > 0)
		bad |= !WIFEXITED(status) || WEXITSTATUS(status);
	return bad;
usage:
	fprintf(stderr, "usage: sitelock [-p PROCS] [-t THREADS] [-n LOOPS] "
			"[-h HOLD_US] [-s SECS]\n");
	return 2;
}
