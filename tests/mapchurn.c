// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * mapchurn: futex waits on one word of a shared file mapping while other
 * threads of the same process map and unmap memory without pause, so
 * that the process's mmap lock is often held to change its maps when a
 * wait begins. Two processes (the second forked) each run two waiting
 * threads that wait for SECONDS, each wait returning at once (the word
 * is not 2), and two churning threads. Prints {"pids": [A, B], "waits":
 * TOTAL, "offset": N}: every wait is on one lock, the file's word at
 * offset.
 *
 * With "private", each process waits on its own word, own_word in its
 * data, as a private futex, its churners running a moment first: a new
 * lock whose mapping the probe may not read at its first wait.
 *
 *   mapchurn PATH [SECONDS [private]]
 */
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

#define WORD_OFFSET 256
#define COUNT_OFFSET 1024 /* the waits of both processes */
#define WAITERS 2
#define CHURNERS 2

static uint32_t *word;
static _Atomic long *count;
static double seconds;
static atomic_bool done;
static int wait_op = FUTEX_WAIT;
uint32_t own_word; /* the private mode's word, in the image's data */

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void *wait_on_word(void *arg)
{
	double end = now() + seconds;
	long n = 0;

	(void)arg;
	while (now() < end) {
		syscall(SYS_futex, word, wait_op, 2, NULL, NULL, 0);
		n++;
	}
	atomic_fetch_add(count, n);
	return NULL;
}

static void *churn(void *arg)
{
	(void)arg;
	while (!atomic_load(&done)) {
		void *p = mmap(NULL, 1 << 16, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p != MAP_FAILED) {
			*(volatile char *)p = 1;
			munmap(p, 1 << 16);
		}
	}
	return NULL;
}

/* One process's part: its churners run until its waiters are done. */
static int run(void)
{
	pthread_t w[WAITERS], c[CHURNERS];
	int i;

	for (i = 0; i < CHURNERS; i++)
		if (pthread_create(&c[i], NULL, churn, NULL))
			return 1;
	if (wait_op != FUTEX_WAIT)
		usleep(50000); /* the maps change when the first wait begins */
	for (i = 0; i < WAITERS; i++)
		if (pthread_create(&w[i], NULL, wait_on_word, NULL))
			return 1;
	for (i = 0; i < WAITERS; i++)
		pthread_join(w[i], NULL);
	atomic_store(&done, true);
	for (i = 0; i < CHURNERS; i++)
		pthread_join(c[i], NULL);
	return 0;
}

int main(int argc, char **argv)
{
	void *map;
	pid_t b;
	int fd, st;

	seconds = argc > 2 ? atof(argv[2]) : 2;
	if (argc < 2 || seconds <= 0 ||
	    (argc > 3 && strcmp(argv[3], "private"))) {
		fprintf(stderr, "usage: mapchurn PATH [SECONDS [private]]\n");
		return 2;
	}
	fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || ftruncate(fd, 4096)) {
		perror(argv[1]);
		return 1;
	}
	map = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	word = (uint32_t *)((char *)map + WORD_OFFSET);
	count = (_Atomic long *)((char *)map + COUNT_OFFSET);
	if (argc > 3) {
		word = &own_word;
		wait_op = FUTEX_WAIT | FUTEX_PRIVATE_FLAG;
	}
	b = fork();
	if (b < 0) {
		perror("fork");
		return 1;
	}
	if (b == 0)
		_exit(run());
	if (run() || waitpid(b, &st, 0) != b || !WIFEXITED(st) ||
	    WEXITSTATUS(st))
		return 1;
	printf("{\"pids\": [%d, %d], \"waits\": %ld, \"offset\": %d}\n",
	       getpid(), b, atomic_load(count), WORD_OFFSET);
	return 0;
}
