// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * holder: process A takes an fcntl lock and a robust process-shared
 * mutex in a shared file; process B then waits on each in turn. Prints
 * {"a": PID, "a_tid": TID, "b": PID, "path": ..., "mutex_offset": N,
 * "fcntl_offset": N} so a test can check that B's waits name A as the
 * holder. With -t, A locks and waits from a thread of its own, named
 * "a-holder", whose TID is not A's PID; with -T the same, and A then
 * lives on, its thread ended, until a signal ends it.
 *
 *   holder [-t | -T] PATH [HOLD_MS]
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#define MUTEX_OFFSET 256
#define FCNTL_OFFSET 64

static int setlk(int fd, short type, off_t at, int cmd)
{
	struct flock fl = {
		.l_type = type, .l_whence = SEEK_SET, .l_start = at, .l_len = 1
	};

	return fcntl(fd, cmd, &fl);
}

struct run {
	const char *path;
	int hold_ms;
	bool thread; /* run_a runs in a thread of its own */
	int ret;
};

/* A's part: lock both, let B wait on each, release. */
static void *run_a(void *arg)
{
	struct run *r = arg;
	pthread_mutexattr_t attr;
	pthread_mutex_t *m;
	int fd, go[2], st;
	char c = 0;
	void *map;
	pid_t b;

	r->ret = 1;
	if (r->thread)
		pthread_setname_np(pthread_self(), "a-holder");
	fd = open(r->path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || ftruncate(fd, 4096) || pipe(go)) {
		perror("holder");
		return NULL;
	}
	map = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		perror("mmap");
		return NULL;
	}
	m = (pthread_mutex_t *)((char *)map + MUTEX_OFFSET);
	pthread_mutexattr_init(&attr);
	pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
	pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_ROBUST);
	pthread_mutex_init(m, &attr);

	/* A holds both before B exists. */
	if (setlk(fd, F_WRLCK, FCNTL_OFFSET, F_SETLKW) ||
	    pthread_mutex_lock(m)) {
		perror("lock");
		return NULL;
	}
	printf("{\"a\": %d, \"a_tid\": %ld, ", (int)getpid(),
	       (long)syscall(SYS_gettid));
	fflush(stdout);
	b = fork();
	if (b == 0) {
		/* B: its own descriptor, so POSIX locks conflict with A's. */
		int fd2 = open(r->path, O_RDWR);

		if (fd2 < 0 || read(go[0], &c, 1) != 1)
			_exit(1);
		if (setlk(fd2, F_WRLCK, FCNTL_OFFSET, F_SETLKW))
			_exit(1);
		setlk(fd2, F_UNLCK, FCNTL_OFFSET, F_SETLK);
		if (pthread_mutex_lock(m) == 0)
			pthread_mutex_unlock(m);
		_exit(0);
	}
	if (write(go[1], &c, 1) != 1)
		return NULL;
	usleep(r->hold_ms * 1000);
	setlk(fd, F_UNLCK, FCNTL_OFFSET, F_SETLK);
	usleep(r->hold_ms * 1000);
	pthread_mutex_unlock(m);
	waitpid(b, &st, 0);
	printf("\"b\": %d, \"path\": \"%s\", \"mutex_offset\": %d, "
	       "\"fcntl_offset\": %d}\n",
	       b, r->path, MUTEX_OFFSET, FCNTL_OFFSET);
	fflush(stdout);
	unlink(r->path);
	r->ret = WIFEXITED(st) ? WEXITSTATUS(st) : 1;
	return NULL;
}

int main(int argc, char **argv)
{
	struct run r = { 0 };
	bool linger = argc > 1 && !strcmp(argv[1], "-T");
	bool thread = linger || (argc > 1 && !strcmp(argv[1], "-t"));
	pthread_t t;

	if (thread) {
		argc--;
		argv++;
	}
	if (argc < 2) {
		fprintf(stderr, "usage: holder [-t | -T] PATH [HOLD_MS]\n");
		return 2;
	}
	r.path = argv[1];
	r.thread = thread;
	r.hold_ms = argc > 2 ? atoi(argv[2]) : 400;
	if (!thread) {
		run_a(&r);
	} else if (pthread_create(&t, NULL, run_a, &r) ||
		   pthread_join(t, NULL)) {
		perror("pthread_create");
		return 1;
	}
	while (linger && !r.ret)
		pause();
	return r.ret;
}
