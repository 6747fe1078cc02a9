// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * relstack: one lock, a holder that holds it long and a waiter that
 * waits for it, each in a function of its own, so that a lock's wait
 * stack and its release stack name different functions.
 *
 *   relstack mutex|fcntl [-n LOOPS] [-h HOLD_US] [-f FILE]
 *
 * mutex: two threads of one process share a private pthread mutex; the
 * holder takes and releases it in hold_the_lock_long(), the waiter in
 * wait_for_the_lock(). fcntl: the same with a byte of FILE locked by
 * F_SETLKW, the holder in hold_file_lock() in this process, the waiter
 * in wait_for_file_lock() in a child (POSIX locks are per process).
 * Prints one JSON object: pid and the mutex's address.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "testclock.h"

static pthread_mutex_t the_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int done;
static long loops = 2000, hold_us = 300;
static int fd = -1;

static __attribute__((noinline)) void hold_the_lock_long(void)
{
	pthread_mutex_lock(&the_lock);
	busy(hold_us);
	pthread_mutex_unlock(&the_lock);
	__asm__ volatile("" ::: "memory"); /* no tail call */
}

static __attribute__((noinline)) void wait_for_the_lock(void)
{
	pthread_mutex_lock(&the_lock);
	pthread_mutex_unlock(&the_lock);
	__asm__ volatile("" ::: "memory");
}

static void *waiter(void *arg)
{
	(void)arg;
	while (!atomic_load(&done)) {
		wait_for_the_lock();
		busy(hold_us / 10);
	}
	return NULL;
}

static int setlk(short type)
{
	struct flock fl = { .l_type = type, .l_whence = SEEK_SET, .l_len = 1 };

	return fcntl(fd, F_SETLKW, &fl);
}

static __attribute__((noinline)) void hold_file_lock(void)
{
	if (setlk(F_WRLCK))
		perror("fcntl");
	busy(hold_us);
	setlk(F_UNLCK);
	__asm__ volatile("" ::: "memory");
}

static __attribute__((noinline)) void wait_for_file_lock(void)
{
	if (setlk(F_WRLCK))
		perror("fcntl");
	setlk(F_UNLCK);
	__asm__ volatile("" ::: "memory");
}

static int run_mutex(void)
{
	pthread_t t;
	long i;

	if (pthread_create(&t, NULL, waiter, NULL))
		return 1;
	for (i = 0; i < loops; i++) {
		hold_the_lock_long();
		busy(hold_us / 10);
	}
	atomic_store(&done, 1);
	pthread_join(t, NULL);
	return 0;
}

static int run_fcntl(const char *path)
{
	int pipefd[2], status;
	pid_t child;
	long i;
	char c;

	fd = open(path, O_RDWR | O_CREAT, 0600);
	if (fd < 0 || pipe(pipefd)) {
		perror(path);
		return 1;
	}
	child = fork();
	if (child < 0)
		return 1;
	if (!child) {
		/* Until the parent closes its end. */
		close(pipefd[1]);
		fcntl(pipefd[0], F_SETFL, O_NONBLOCK);
		while (read(pipefd[0], &c, 1) < 0) {
			wait_for_file_lock();
			busy(hold_us / 10);
		}
		_exit(0);
	}
	close(pipefd[0]);
	for (i = 0; i < loops; i++) {
		hold_file_lock();
		busy(hold_us / 10);
	}
	close(pipefd[1]);
	waitpid(child, &status, 0);
	return !WIFEXITED(status) || WEXITSTATUS(status);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "mutex";
	const char *path = "/tmp/relstack.lock";
	int opt, err;

	optind = 2;
	while ((opt = getopt(argc, argv, "n:h:f:")) != -1) {
		switch (opt) {
		case 'n':
			loops = atol(optarg);
			break;
		case 'h':
			hold_us = atol(optarg);
			break;
		case 'f':
			path = optarg;
			break;
		default:
			fprintf(stderr,
				"usage: relstack mutex|fcntl [-n LOOPS] "
				"[-h HOLD_US] [-f FILE]\n");
			return 2;
		}
	}
	if (!strcmp(mode, "mutex"))
		err = run_mutex();
	else if (!strcmp(mode, "fcntl"))
		err = run_fcntl(path);
	else
		err = 2;
	printf("{\"pid\": %d, \"address\": \"%p\"}\n", (int)getpid(),
	       (void *)&the_lock);
	return err;
}
