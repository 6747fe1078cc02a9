// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * interrupt: file lock waits that a signal ends, timed by the waiter.
 *
 *   interrupt fcntl|ofd|flock PATH [N] [MS]
 *
 * The parent takes a lock on PATH (byte 0 for fcntl and ofd, the whole
 * file for flock). A child then waits for the same lock N times with a
 * blocking call, each ended by SIGALRM after MS milliseconds (a handler
 * without SA_RESTART: the call fails with EINTR). After that it waits
 * once more, and the parent lets go a tenth of a second later: that
 * wait ends in a grant. The child times each wait itself.
 *
 * Prints {"waiter": PID, "holder": PID, "interrupted": N,
 * "interrupted_ns": NS, "granted_ns": NS}.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/time.h>
#include <sys/wait.h>

enum kind { K_FCNTL, K_OFD, K_FLOCK };

struct result {
	long interrupted;
	long long interrupted_ns;
	long long granted_ns;
};

static void on_alarm(int sig)
{
	(void)sig; /* only ends the wait */
}

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* A blocking write lock (or unlock) of the kind on fd. */
static int lock(enum kind k, int fd, short type)
{
	struct flock fl = { .l_type = type, .l_whence = SEEK_SET, .l_len = 1 };

	if (k == K_FLOCK)
		return flock(fd, type == F_UNLCK ? LOCK_UN : LOCK_EX);
	return fcntl(fd, k == K_OFD ? F_OFD_SETLKW : F_SETLKW, &fl);
}

static int waiter(enum kind k, const char *path, int n, int ms, int done_w,
		  int res_w)
{
	struct sigaction sa = { .sa_handler = on_alarm };
	struct itimerval it = { .it_value = { .tv_sec = ms / 1000,
					      .tv_usec = ms % 1000 * 1000 } };
	struct result r = { 0 };
	int fd = open(path, O_RDWR), i;
	long long t;
	char c = 0;

	if (fd < 0 || sigaction(SIGALRM, &sa, NULL))
		return 1;
	for (i = 0; i < n; i++) {
		if (setitimer(ITIMER_REAL, &it, NULL))
			return 1;
		t = now_ns();
		if (lock(k, fd, F_WRLCK) == 0 || errno != EINTR) {
			fprintf(stderr, "interrupt: wait %d not interrupted\n",
				i);
			return 1;
		}
		r.interrupted_ns += now_ns() - t;
		r.interrupted++;
	}
	if (write(done_w, &c, 1) != 1)
		return 1;
	t = now_ns();
	if (lock(k, fd, F_WRLCK))
		return 1;
	r.granted_ns = now_ns() - t;
	lock(k, fd, F_UNLCK);
	return write(res_w, &r, sizeof(r)) == sizeof(r) ? 0 : 1;
}

int main(int argc, char **argv)
{
	enum kind k;
	int n = argc > 3 ? atoi(argv[3]) : 5,
	    ms = argc > 4 ? atoi(argv[4]) : 40;
	int fd, done[2], res[2], status;
	struct result r;
	pid_t child;
	char c;

	if (argc < 3 || n < 1 || ms < 1) {
		fprintf(stderr,
			"usage: interrupt fcntl|ofd|flock PATH [N] [MS]\n");
		return 2;
	}
	if (!strcmp(argv[1], "fcntl"))
		k = K_FCNTL;
	else if (!strcmp(argv[1], "ofd"))
		k = K_OFD;
	else if (!strcmp(argv[1], "flock"))
		k = K_FLOCK;
	else
		return fprintf(stderr, "interrupt: no kind %s\n", argv[1]), 2;
	fd = open(argv[2], O_RDWR | O_CREAT, 0600);
	if (fd < 0 || lock(k, fd, F_WRLCK) || pipe(done) || pipe(res))
		return perror("interrupt"), 1;
	child = fork();
	if (child < 0)
		return perror("fork"), 1;
	if (!child)
		_exit(waiter(k, argv[2], n, ms, done[1], res[1]));
	if (read(done[0], &c, 1) != 1)
		return fprintf(stderr, "interrupt: the waiter failed\n"), 1;
	usleep(100000); /* the last wait is in the kernel by then */
	lock(k, fd, F_UNLCK);
	if (read(res[0], &r, sizeof(r)) != sizeof(r) ||
	    waitpid(child, &status, 0) != child || status)
		return fprintf(stderr, "interrupt: the waiter failed\n"), 1;
	printf("{\"waiter\": %d, \"holder\": %d, \"interrupted\": %ld, "
	       "\"interrupted_ns\": %lld, \"granted_ns\": %lld}\n",
	       child, getpid(), r.interrupted, r.interrupted_ns, r.granted_ns);
	return 0;
}
