// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rwpool: readers blocked on a pthread rwlock that a writer holds most of
 * the time, beside a semaphore no one posts until the end. Their values
 * do not say which is which; the function each wait came from does. The
 * readers' waits are lock contention, the semaphore's an event. Each
 * reader measures its own time blocked in pthread_rwlock_rdlock.
 * Prints {"pid": N, "rwlock": "0x...", "sem": "0x...", "read_wait_ns": N}.
 */
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>
#include "testclock.h"

#define READERS 3
#define ROUNDS 40

static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static sem_t idle;
static atomic_int done;
static atomic_ullong read_wait_ns;

static void *reader(void *arg)
{
	uint64_t t0;

	while (!atomic_load(&done)) {
		t0 = now_ns();
		pthread_rwlock_rdlock(&rw);
		atomic_fetch_add(&read_wait_ns, now_ns() - t0);
		pthread_rwlock_unlock(&rw);
		usleep(2000);
	}
	return arg;
}

static void *sleeper(void *arg)
{
	sem_wait(&idle);
	return arg;
}

int main(void)
{
	pthread_t r[READERS], s;
	int i;

	sem_init(&idle, 0, 0);
	pthread_create(&s, NULL, sleeper, NULL);
	for (i = 0; i < READERS; i++)
		pthread_create(&r[i], NULL, reader, NULL);
	for (i = 0; i < ROUNDS; i++) {
		pthread_rwlock_wrlock(&rw);
		usleep(40000);
		pthread_rwlock_unlock(&rw);
		usleep(5000);
	}
	atomic_store(&done, 1);
	for (i = 0; i < READERS; i++)
		pthread_join(r[i], NULL);
	sem_post(&idle);
	pthread_join(s, NULL);
	printf("{\"pid\": %d, \"rwlock\": \"%p\", \"sem\": \"%p\", "
	       "\"read_wait_ns\": %llu}\n",
	       (int)getpid(), (void *)&rw, (void *)&idle,
	       (unsigned long long)atomic_load(&read_wait_ns));
	return 0;
}
