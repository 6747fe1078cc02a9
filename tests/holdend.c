// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * holdend: file locks whose hold ends in each way the kernel ends one,
 * each on its own file in DIR, each held for about HOLD_MS:
 *
 *   unlock        fcntl, unlocked by the thread that took it
 *   close         fcntl, released by closing the descriptor
 *   thread-close  fcntl, taken by one thread, released by another's close
 *   thread-gone   fcntl, taken by a thread that then ends; the process
 *                 keeps the lock until main closes the descriptor
 *   exit          fcntl, released by the exit of the process
 *   ofd-close     OFD, released by closing the descriptor
 *   ofd-child     OFD, released by a forked child's close of the last
 *                 descriptor of the open file
 *   flock-close   flock(2), released by closing the descriptor
 *
 * Each lock also meets one refused try-lock from another owner, so that
 * a tracer counts it as contention and lists it.
 *
 * Prints {"cases": [{"name", "file", "hold_ns"}, ...]}, where hold_ns is
 * the hold as this program measured it: from the return of the lock call
 * to the return of the call that released it.
 *
 *   holdend DIR [HOLD_MS]
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include "testclock.h"

static long hold_ms = 150;
static const char *dir;

static void die(const char *what)
{
	fprintf(stderr, "holdend: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static char path[PATH_MAX]; /* the current case's file */

static int open_case(const char *name)
{
	int fd;

	snprintf(path, sizeof(path), "%s/he-%s.dat", dir, name);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		die(path);
	if (ftruncate(fd, 4096))
		die("ftruncate");
	return fd;
}

/* Locks byte 0 for writing, waiting if need be; returns when granted. */
static uint64_t lock_byte(int fd, int cmd)
{
	struct flock fl = { .l_type = F_WRLCK,
			    .l_whence = SEEK_SET,
			    .l_start = 0,
			    .l_len = 1 };

	if (fcntl(fd, cmd, &fl))
		die("fcntl lock");
	return now_ns();
}

static pid_t fork_or_die(void)
{
	pid_t child = fork();

	if (child < 0)
		die("fork");
	return child;
}

/* Waits for child to end; returns its wait status. */
static int reap(pid_t child)
{
	int st;

	if (waitpid(child, &st, 0) != child)
		die("waitpid");
	return st;
}

/* A refused try-lock from another owner of the kind cmd takes. */
static void poke(int fd, int cmd)
{
	struct flock fl = { .l_type = F_WRLCK,
			    .l_whence = SEEK_SET,
			    .l_start = 0,
			    .l_len = 1 };
	int other, st;
	pid_t child;

	if (cmd == F_SETLKW) {
		/* A process's own POSIX locks never conflict: ask from a
		 * child. */
		child = fork_or_die();
		if (!child)
			_exit(fcntl(fd, F_SETLK, &fl) ? 0 : 1);
		st = reap(child);
		if (!WIFEXITED(st) || WEXITSTATUS(st))
			die("the try-lock was not refused");
		return;
	}
	/* Another open file is another owner. */
	other = open(path, O_RDWR);
	if (other < 0)
		die(path);
	if (cmd == F_OFD_SETLKW ? !fcntl(other, F_OFD_SETLK, &fl) :
				  !flock(other, LOCK_EX | LOCK_NB))
		die("the try-lock was not refused");
	close(other);
}

static int cases;

static void report(const char *name, uint64_t ns)
{
	printf("%s{\"name\": \"%s\", \"file\": \"he-%s.dat\", \"hold_ns\": %llu}",
	       cases++ ? ", " : "", name, name, (unsigned long long)ns);
}

struct shared {
	int fd;
	uint64_t t0, t1;
};

static void *take_then_wait(void *arg)
{
	struct shared *s = arg;

	s->t0 = lock_byte(s->fd, F_SETLKW);
	return NULL;
}

static void case_unlock(void)
{
	struct flock fl = { .l_type = F_UNLCK,
			    .l_whence = SEEK_SET,
			    .l_start = 0,
			    .l_len = 1 };
	int fd = open_case("unlock");
	uint64_t t0 = lock_byte(fd, F_SETLKW);

	poke(fd, F_SETLKW);
	sleep_ms(hold_ms);
	if (fcntl(fd, F_SETLK, &fl))
		die("fcntl unlock");
	report("unlock", now_ns() - t0);
	close(fd);
}

static void case_close(const char *name, int cmd)
{
	int fd = open_case(name);
	uint64_t t0 = lock_byte(fd, cmd);

	poke(fd, cmd);
	sleep_ms(hold_ms);
	close(fd);
	report(name, now_ns() - t0);
}

static void *close_later(void *arg)
{
	struct shared *s = arg;

	sleep_ms(hold_ms);
	close(s->fd);
	s->t1 = now_ns();
	return NULL;
}

/* One thread takes it and stays; another closes the descriptor. */
static void case_thread_close(void)
{
	struct shared s = { .fd = open_case("thread-close") };
	pthread_t closer;

	s.t0 = lock_byte(s.fd, F_SETLKW);
	poke(s.fd, F_SETLKW);
	if (pthread_create(&closer, NULL, close_later, &s))
		die("pthread_create");
	pthread_join(closer, NULL);
	report("thread-close", s.t1 - s.t0);
}

/* The taking thread ends; the process holds the lock until the close. */
static void case_thread_gone(void)
{
	struct shared s = { .fd = open_case("thread-gone") };
	pthread_t taker;

	if (pthread_create(&taker, NULL, take_then_wait, &s))
		die("pthread_create");
	pthread_join(taker, NULL);
	poke(s.fd, F_SETLKW);
	sleep_ms(hold_ms);
	close(s.fd);
	report("thread-gone", now_ns() - s.t0);
}

/* Memory a forked child and this process both see. */
static struct shared *shared_area(void)
{
	struct shared *s = mmap(NULL, sizeof(*s), PROT_READ | PROT_WRITE,
				MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (s == MAP_FAILED)
		die("mmap");
	return s;
}

/* A child takes it and exits holding it. */
static void case_exit(void)
{
	struct shared *s = shared_area();
	int fd = open_case("exit");
	pid_t child = fork_or_die();

	if (!child) {
		s->t0 = lock_byte(fd, F_SETLKW);
		s->t1 = 1;
		sleep_ms(hold_ms);
		_exit(0);
	}
	while (!__atomic_load_n(&s->t1, __ATOMIC_ACQUIRE))
		sleep_ms(1);
	poke(fd, F_SETLKW);
	reap(child);
	/* The exit released it before the wait returned. */
	report("exit", now_ns() - s->t0);
	close(fd);
	munmap(s, sizeof(*s));
}

/* The open file outlives our descriptor: a child's close ends it. */
static void case_ofd_child(void)
{
	struct shared *s = shared_area();
	int fd = open_case("ofd-child");
	pid_t child;

	s->t0 = lock_byte(fd, F_OFD_SETLKW);
	poke(fd, F_OFD_SETLKW);
	child = fork_or_die();
	if (!child) {
		sleep_ms(hold_ms);
		close(fd);
		s->t1 = now_ns();
		_exit(0);
	}
	close(fd);
	reap(child);
	report("ofd-child", s->t1 - s->t0);
	munmap(s, sizeof(*s));
}

static void case_flock(void)
{
	int fd = open_case("flock-close");
	uint64_t t0;

	if (flock(fd, LOCK_EX))
		die("flock");
	t0 = now_ns();
	poke(fd, LOCK_EX);
	sleep_ms(hold_ms);
	close(fd);
	report("flock-close", now_ns() - t0);
}

int main(int argc, char **argv)
{
	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: holdend DIR [HOLD_MS]\n");
		return 2;
	}
	dir = argv[1];
	if (argc > 2)
		hold_ms = atol(argv[2]);
	if (hold_ms < 1) {
		fprintf(stderr, "holdend: HOLD_MS must be at least 1\n");
		return 2;
	}
	printf("{\"cases\": [");
	fflush(stdout);
	case_unlock();
	case_close("close", F_SETLKW);
	case_thread_close();
	case_thread_gone();
	case_exit();
	case_close("ofd-close", F_OFD_SETLKW);
	case_ofd_child();
	case_flock();
	printf("]}\n");
	return 0;
}
