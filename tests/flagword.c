// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * flagword: threads take a lock of their own making whose futex word is
 * a flag bit and a count, as InnoDB's srw_mutex is: HOLDER (the top bit)
 * while held, plus one for the holder and each thread waiting. A waiter
 * sleeps with FUTEX_WAIT on the value it saw, 0x80000002 to 0x80000005
 * with four threads and the first holder: no thread's TID, though its
 * low bits are kthreadd's and other kernel threads' PIDs. The waits come through syscall(2) from this
 * program's own function, and the test runs it stripped: no symbol
 * names the site.
 *
 * The first holder keeps the lock HOLD_FIRST_MS, so that the first waits
 * last past the judging of their site; then the threads take turns,
 * each holding the lock asleep for 40 us, so that the others wait on it
 * whether or not a CPU is free to run them.
 * Prints {"pid": N, "word": "0x...", "waits": N} where waits counts the
 * futex waits the threads made on the word.
 *
 *   flagword [THREADS [ROUNDS]]
 */
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

#define HOLDER 0x80000000U
#define HOLD_FIRST_MS 400
#define MAX_THREADS 16

static _Atomic uint32_t word;
static atomic_long waits;
static atomic_int started;
static int rounds = 2000;
static int nthreads = 4;

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

/* Registers as one more thread on the lock, then takes it. */
static void flag_lock(void)
{
	uint32_t lk = atomic_fetch_add(&word, 1) + 1;

	for (;;) {
		if (lk & HOLDER) {
			syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, lk, NULL,
				NULL, 0);
			atomic_fetch_add(&waits, 1);
			lk = atomic_load(&word);
		} else {
			lk = atomic_fetch_or(&word, HOLDER);
			if (!(lk & HOLDER))
				return;
			lk |= HOLDER;
		}
	}
}

static void flag_unlock(void)
{
	uint32_t lk = atomic_fetch_sub(&word, HOLDER + 1);

	if (lk != HOLDER + 1)
		syscall(SYS_futex, &word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

static void *worker(void *arg)
{
	int i;

	(void)arg;
	atomic_fetch_add(&started, 1);
	for (i = 0; i < rounds; i++) {
		flag_lock();
		/* Held asleep: the others find it held however many CPUs
		 * run them. */
		usleep(40);
		flag_unlock();
		busy_us(10);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[MAX_THREADS];
	int i;

	if (argc > 1)
		nthreads = atoi(argv[1]);
	if (argc > 2)
		rounds = atoi(argv[2]);
	if (nthreads < 2 || nthreads > MAX_THREADS || rounds < 1) {
		fprintf(stderr, "usage: flagword [THREADS [ROUNDS]]\n");
		return 2;
	}
	/* The first hold, long: every other thread waits through it. */
	flag_lock();
	for (i = 0; i < nthreads; i++)
		if (pthread_create(&t[i], NULL, worker, NULL)) {
			perror("pthread_create");
			return 1;
		}
	while (atomic_load(&started) < nthreads)
		usleep(1000);
	usleep(HOLD_FIRST_MS * 1000);
	flag_unlock();
	for (i = 0; i < nthreads; i++)
		pthread_join(t[i], NULL);
	printf("{\"pid\": %d, \"word\": \"%p\", \"waits\": %ld}\n", getpid(),
	       (void *)&word, atomic_load(&waits));
	return 0;
}
