// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * preadfiles: one pread(2) of each of N files of DIR, named f<FIRST> on,
 * so that a tracer meets N distinct files. A file that is not there is
 * made, 16 bytes long, with ftruncate (no write call). Prints
 * {"pid": PID, "reads": N}.
 *
 *   preadfiles DIR FIRST N
 */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	char path[PATH_MAX], byte;
	long first, n, i;
	int fd;

	if (argc != 4) {
		fprintf(stderr, "usage: preadfiles DIR FIRST N\n");
		return 2;
	}
	first = atol(argv[2]);
	n = atol(argv[3]);
	for (i = first; i < first + n; i++) {
		snprintf(path, sizeof(path), "%s/f%ld", argv[1], i);
		fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
		if (fd < 0 || ftruncate(fd, 16) ||
		    pread(fd, &byte, 1, 0) != 1) {
			perror(path);
			return 1;
		}
		close(fd);
	}
	printf("{\"pid\": %d, \"reads\": %ld}\n", (int)getpid(), n);
	return 0;
}
