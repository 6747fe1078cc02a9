// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ranges: N refused fcntl try-locks, each on its own byte of FILE from
 * FIRST on, so that a tracer meets N distinct file locks. The parent
 * holds the whole file; its child asks for each byte with F_SETLK and is
 * refused (EAGAIN). Prints {"pid": CHILD, "refused": N}.
 *
 *   ranges FILE FIRST N
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/wait.h>

static int set(int fd, short type, off_t start, off_t len)
{
	struct flock fl = {
		.l_type = type,
		.l_whence = SEEK_SET,
		.l_start = start,
		.l_len = len,
	};

	return fcntl(fd, F_SETLK, &fl);
}

int main(int argc, char **argv)
{
	long first, n, i, refused = 0;
	int fd, status;
	pid_t child;

	if (argc != 4) {
		fprintf(stderr, "usage: ranges FILE FIRST N\n");
		return 2;
	}
	first = atol(argv[2]);
	n = atol(argv[3]);
	fd = open(argv[1], O_RDWR | O_CREAT, 0600);
	if (fd < 0 || first < 0 || n < 1) {
		perror("ranges");
		return 1;
	}
	if (set(fd, F_WRLCK, 0, 0)) {
		perror("ranges: lock the file");
		return 1;
	}
	child = fork();
	if (child < 0) {
		perror("ranges: fork");
		return 1;
	}
	if (child == 0) {
		for (i = 0; i < n; i++)
			if (set(fd, F_WRLCK, first + i, 1) &&
			    (errno == EAGAIN || errno == EACCES))
				refused++;
		printf("{\"pid\": %d, \"refused\": %ld}\n", getpid(), refused);
		fflush(stdout);
		return refused == n ? 0 : 1;
	}
	if (waitpid(child, &status, 0) != child)
		return 1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
