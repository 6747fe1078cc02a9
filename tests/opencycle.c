// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * opencycle: N opens of FILE, all kept open at once, spread over child
 * processes of at most 1,000 descriptors each; on each open it takes an
 * OFD read lock on the whole file and unlocks it again. Each open is
 * its own lock owner, so a tracer meets N (owner, file) pairs alive at
 * once, each of which held a lock for a moment and then holds none: more
 * pairs than its map holds, if N is large. Last, while one more open
 * holds the lock, another is refused it, so the lock counts as
 * contended. Prints {"pid": N, "locks": N + 1, "refused": 1}.
 *
 *   opencycle FILE N
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/wait.h>

#define PER_CHILD 1000

static int lock(int fd, short type)
{
	struct flock fl = { .l_type = type, .l_whence = SEEK_SET };

	return fcntl(fd, F_OFD_SETLK, &fl);
}

/*
 * count opens, each read-locked (children do not refuse each other) and
 * unlocked, kept until the parent closes release. Says on ready whether
 * they all went well.
 */
static int child(const char *path, long count, int ready, int release)
{
	char c = 'y';
	long i;
	int fd;

	for (i = 0; i < count && c == 'y'; i++) {
		fd = open(path, O_RDWR | O_CREAT, 0600);
		if (fd < 0 || lock(fd, F_RDLCK) || lock(fd, F_UNLCK)) {
			perror("opencycle");
			c = 'n';
		}
	}
	if (write(ready, &c, 1) != 1 || c != 'y')
		return 1;
	/* Returns at EOF: the parent is done. */
	return read(release, &c, 1) < 0;
}

int main(int argc, char **argv)
{
	long n = argc > 2 ? atol(argv[2]) : 0, left, count;
	int ready[2], release[2], fd, other, status, rc = 0;
	long children = 0, i;
	char c;
	pid_t pid;

	if (argc != 3 || n < 1) {
		fprintf(stderr, "usage: opencycle FILE N\n");
		return 2;
	}
	if (pipe(ready) || pipe(release)) {
		perror("opencycle: pipe");
		return 1;
	}
	for (left = n; left > 0; left -= count) {
		count = left < PER_CHILD ? left : PER_CHILD;
		pid = fork();
		if (pid < 0) {
			perror("opencycle: fork");
			return 1;
		}
		if (!pid) {
			close(ready[0]);
			close(release[1]);
			_exit(child(argv[1], count, ready[1], release[0]));
		}
		children++;
	}
	close(ready[1]);
	close(release[0]);
	for (i = 0; i < children && !rc; i++)
		if (read(ready[0], &c, 1) != 1 || c != 'y') {
			fprintf(stderr, "opencycle: a child failed\n");
			rc = 1;
			break;
		}
	if (!rc) {
		fd = open(argv[1], O_RDWR);
		other = open(argv[1], O_RDWR);
		if (fd < 0 || other < 0 || lock(fd, F_WRLCK) ||
		    !lock(other, F_WRLCK)) {
			fprintf(stderr,
				"opencycle: the last lock was not refused\n");
			rc = 1;
		}
	}
	close(release[1]);
	while (wait(&status) > 0)
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			rc = 1;
	if (!rc)
		printf("{\"pid\": %d, \"locks\": %ld, \"refused\": 1}\n",
		       (int)getpid(), n + 1);
	return rc;
}
