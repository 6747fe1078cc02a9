// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * condpool: an idle pool of threads blocked on a condition variable,
 * beside a few threads fighting over one mutex. The mutex is lock
 * contention; the idle waits are events, not lock waits.
 * Prints {"pid": N, "mutex": "0x...", "cond": "0x..."}.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#define IDLE 6
#define BUSY 3

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t work = PTHREAD_COND_INITIALIZER;
static pthread_mutex_t hot = PTHREAD_MUTEX_INITIALIZER;
static atomic_int done;

static void busy_us(long us)
{
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	do
		clock_gettime(CLOCK_MONOTONIC, &b);
	while ((b.tv_sec - a.tv_sec) * 1000000L +
		       (b.tv_nsec - a.tv_nsec) / 1000 <
	       us);
}

static void *idle(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&pool_lock);
	while (!atomic_load(&done))
		pthread_cond_wait(&work, &pool_lock);
	pthread_mutex_unlock(&pool_lock);
	return NULL;
}

static void *busy(void *arg)
{
	int i;

	(void)arg;
	for (i = 0; i < 3000; i++) {
		pthread_mutex_lock(&hot);
		busy_us(30);
		pthread_mutex_unlock(&hot);
		busy_us(5);
	}
	return NULL;
}

int main(void)
{
	pthread_t t[IDLE + BUSY];
	int i;

	for (i = 0; i < IDLE; i++)
		pthread_create(&t[i], NULL, idle, NULL);
	usleep(100000);
	for (i = IDLE; i < IDLE + BUSY; i++)
		pthread_create(&t[i], NULL, busy, NULL);
	for (i = IDLE; i < IDLE + BUSY; i++)
		pthread_join(t[i], NULL);
	pthread_mutex_lock(&pool_lock);
	atomic_store(&done, 1);
	pthread_cond_broadcast(&work);
	pthread_mutex_unlock(&pool_lock);
	for (i = 0; i < IDLE; i++)
		pthread_join(t[i], NULL);
	printf("{\"pid\": %d, \"mutex\": \"%p\", \"cond\": \"%p\"}\n", getpid(),
	       (void *)&hot, (void *)&work);
	return 0;
}
