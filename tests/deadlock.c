// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * deadlock: two processes take one lock each, then each waits for the
 * other's, for a bounded time so that the run ends by itself.
 *
 *   deadlock ofd|fcntl|mutex PATH [SECONDS]
 *
 * ofd and mutex make a real cycle that lasts SECONDS. With classic POSIX
 * (fcntl) locks the kernel refuses the cycle: one side gets EDEADLK.
 * Prints {"a": PID, "b": PID, "edeadlk": N}.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/wait.h>

static int cmd_wait = F_OFD_SETLKW;

static void on_alarm(int sig)
{
	(void)sig; /* only interrupts the wait */
}

static int setlk(int fd, short type, off_t at, int cmd)
{
	struct flock fl = {
		.l_type = type, .l_whence = SEEK_SET, .l_start = at, .l_len = 1
	};

	return fcntl(fd, cmd, &fl);
}

/* Side i holds lock i, then waits for lock 1 - i. Returns 1 on EDEADLK. */
static int side(int i, const char *path, pthread_mutex_t *m, int secs,
		int ready_w, int ready_r)
{
	struct sigaction sa = { .sa_handler = on_alarm };
	struct timespec until;
	char c = 0;
	int fd = open(path, O_RDWR), ret = 0;

	sigaction(SIGALRM, &sa, NULL); /* no SA_RESTART: EINTR ends waits */
	if (m) {
		if (pthread_mutex_lock(&m[i]))
			return -1;
	} else if (setlk(fd, F_WRLCK, i, cmd_wait)) {
		return -1;
	}
	/* Both hold theirs before either reaches for the other's. */
	if (write(ready_w, &c, 1) != 1 || read(ready_r, &c, 1) != 1)
		return -1;
	if (m) {
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += secs;
		if (pthread_mutex_timedlock(&m[1 - i], &until) == 0)
			pthread_mutex_unlock(&m[1 - i]);
		pthread_mutex_unlock(&m[i]);
	} else {
		alarm(secs);
		if (setlk(fd, F_WRLCK, 1 - i, cmd_wait) && errno == EDEADLK)
			ret = 1;
		alarm(0);
		close(fd);
	}
	return ret;
}

int main(int argc, char **argv)
{
	int secs = argc > 3 ? atoi(argv[3]) : 2, ab[2], ba[2], fd, st, dl = 0;
	pthread_mutex_t *m = NULL;
	pthread_mutexattr_t attr;
	pid_t b;

	if (argc < 3) {
		fprintf(stderr,
			"usage: deadlock ofd|fcntl|mutex PATH [SECS]\n");
		return 2;
	}
	fd = open(argv[2], O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || ftruncate(fd, 4096) || pipe(ab) || pipe(ba))
		return 1;
	if (!strcmp(argv[1], "fcntl")) {
		cmd_wait = F_SETLKW;
	} else if (!strcmp(argv[1], "mutex")) {
		m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (m == MAP_FAILED)
			return 1;
		pthread_mutexattr_init(&attr);
		pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
		pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_ROBUST);
		pthread_mutex_init(&m[0], &attr);
		pthread_mutex_init(&m[1], &attr);
	} else if (strcmp(argv[1], "ofd")) {
		fprintf(stderr, "deadlock: unknown kind '%s'\n", argv[1]);
		return 2;
	}
	fflush(stdout);
	b = fork();
	if (b == 0)
		_exit(side(1, argv[2], m, secs, ba[1], ab[0]) == 1 ? 3 : 0);
	if (side(0, argv[2], m, secs, ab[1], ba[0]) == 1)
		dl++;
	waitpid(b, &st, 0);
	if (WIFEXITED(st) && WEXITSTATUS(st) == 3)
		dl++;
	printf("{\"a\": %d, \"b\": %d, \"edeadlk\": %d}\n", getpid(), b, dl);
	unlink(argv[2]);
	return 0;
}
