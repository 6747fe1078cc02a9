// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * kcontend: kernel lock contention on purpose, for locktop's kernel
 * locks to be tested against the lock tracepoints.
 *
 *   append  N processes append to one file: its inode's i_rwsem
 *   mmap    N threads map and unmap while as many fault pages in: the
 *           process's mmap_lock
 *   dir     N processes create and delete files in one directory: the
 *           directory's i_rwsem
 *   dirpath the same by the files' paths as given (absolute with an
 *           absolute --path), not through the directory's descriptor
 *
 * It runs for the given seconds and prints what each worker did.
 */
#include <argp.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>

enum mode { MODE_APPEND, MODE_MMAP, MODE_DIR, MODE_DIRPATH };

static struct {
	enum mode mode;
	int workers;
	double seconds;
	const char *path;
} opt = { .workers = 4, .seconds = 2 };

static volatile sig_atomic_t stop;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static bool over(double end)
{
	return stop || now_s() >= end;
}

/* Small appends, each its own write: the inode lock per call. */
static long run_append(double end)
{
	char buf[64];
	long n = 0;
	int fd = open(opt.path, O_WRONLY | O_APPEND | O_CREAT, 0644);

	if (fd < 0)
		return -1;
	memset(buf, 'x', sizeof(buf));
	while (!over(end)) {
		if (write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
			break;
		if (++n % 4096 == 0 && ftruncate(fd, 0))
			break;
	}
	close(fd);
	return n;
}

/*
 * Create and delete files in the directory, through its descriptor, or
 * (dirpath) by their paths under --path.
 */
static long run_dir(double end, int id)
{
	char name[4096];
	long n = 0;
	int dfd = AT_FDCWD, fd;
	bool by_path = opt.mode == MODE_DIRPATH;

	if (!by_path)
		dfd = open(opt.path, O_RDONLY | O_DIRECTORY);
	if (dfd < 0 && !by_path)
		return -1;
	while (!over(end)) {
		if (by_path)
			snprintf(name, sizeof(name), "%s/f%d.%ld", opt.path, id,
				 n % 16);
		else
			snprintf(name, sizeof(name), "f%d.%ld", id, n % 16);
		fd = openat(dfd, name, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0)
			break;
		close(fd);
		if (unlinkat(dfd, name, 0))
			break;
		n++;
	}
	if (!by_path)
		close(dfd);
	return n;
}

#define PAGES 64

static char *shared_area;
static double mmap_end;

/* Map, touch once and unmap: the mmap_lock for writing, twice. */
static void *mapper(void *arg)
{
	long n = 0;

	(void)arg;
	while (!over(mmap_end)) {
		char *p = mmap(NULL, 4096 * 4, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED)
			break;
		p[0] = 1;
		munmap(p, 4096 * 4);
		n++;
	}
	return (void *)n;
}

/* Fault pages of one area in, and give them back. */
static void *faulter(void *arg)
{
	long n = 0;
	int i;

	(void)arg;
	while (!over(mmap_end)) {
		for (i = 0; i < PAGES; i++)
			shared_area[(size_t)i * 4096] = 1;
		madvise(shared_area, PAGES * 4096, MADV_DONTNEED);
		n++;
	}
	return (void *)n;
}

static long run_mmap(double end)
{
	pthread_t *t = calloc(2 * (size_t)opt.workers, sizeof(*t));
	long total = 0;
	void *r;
	int i;

	shared_area = mmap(NULL, PAGES * 4096, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!t || shared_area == MAP_FAILED)
		return -1;
	mmap_end = end;
	for (i = 0; i < 2 * opt.workers; i++)
		pthread_create(&t[i], NULL, i % 2 ? faulter : mapper, NULL);
	for (i = 0; i < 2 * opt.workers; i++) {
		pthread_join(t[i], &r);
		total += (long)r;
	}
	free(t);
	return total;
}

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

static int run_processes(double end)
{
	pid_t *pids = calloc((size_t)opt.workers, sizeof(*pids));
	int i, status, bad = 0;

	if (!pids)
		return 1;
	for (i = 0; i < opt.workers; i++) {
		pids[i] = fork();
		if (pids[i] == 0) {
			long n = opt.mode == MODE_APPEND ? run_append(end) :
							   run_dir(end, i);

			printf("worker %d: %ld\n", i, n);
			fflush(stdout);
			_exit(n < 0);
		}
	}
	for (i = 0; i < opt.workers; i++)
		if (pids[i] > 0 && waitpid(pids[i], &status, 0) == pids[i] &&
		    (!WIFEXITED(status) || WEXITSTATUS(status)))
			bad = 1;
	free(pids);
	return bad;
}

static error_t parse(int key, char *arg, struct argp_state *state)
{
	switch (key) {
	case 'm':
		if (!strcmp(arg, "append"))
			opt.mode = MODE_APPEND;
		else if (!strcmp(arg, "mmap"))
			opt.mode = MODE_MMAP;
		else if (!strcmp(arg, "dir"))
			opt.mode = MODE_DIR;
		else if (!strcmp(arg, "dirpath"))
			opt.mode = MODE_DIRPATH;
		else
			argp_error(state, "unknown mode %s", arg);
		break;
	case 'n':
		opt.workers = atoi(arg);
		if (opt.workers < 1 || opt.workers > 1024)
			argp_error(state, "-n takes 1 to 1024");
		break;
	case 't':
		opt.seconds = atof(arg);
		break;
	case 'p':
		opt.path = arg;
		break;
	case ARGP_KEY_END:
		if (opt.mode != MODE_MMAP && !opt.path)
			argp_error(state,
				   "append, dir and dirpath need --path");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const struct argp_option options[] = {
	{ "mode", 'm', "MODE", 0, "append, mmap, dir or dirpath", 0 },
	{ "workers", 'n', "N", 0, "processes (threads: mmap) (default 4)", 0 },
	{ "time", 't', "SECS", 0, "how long (default 2)", 0 },
	{ "path", 'p', "PATH", 0,
	  "the file (append) or directory (dir, dirpath)", 0 },
	{},
};

int main(int argc, char **argv)
{
	struct argp argp = {
		options, parse,
		NULL,	 "kcontend -- kernel lock contention on purpose",
		NULL,	 NULL,
		NULL
	};
	double end;
	long n;

	if (argp_parse(&argp, argc, argv, 0, NULL, NULL))
		return 2;
	signal(SIGTERM, on_term);
	signal(SIGINT, on_term);
	end = now_s() + opt.seconds;
	if (opt.mode != MODE_MMAP)
		return run_processes(end);
	n = run_mmap(end);
	printf("mmap rounds: %ld\n", n);
	return n < 0;
}
