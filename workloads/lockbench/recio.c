// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Record I/O: everything in the table but the lock words is read and
 * written through here, with the system calls --io chose.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "lockbench.h"

void lb_io_read(struct lb_worker *w, uint64_t off, void *buf, size_t len)
{
	struct lb_run *run = w->run;
	uint8_t *p = buf;
	ssize_t n;

	if (w->direct || run->cfg->io == LB_IO_MMAP) {
		memcpy(buf, run->map + off, len);
		return;
	}
	if (run->cfg->io == LB_IO_LSEEK &&
	    lseek(w->fd, (off_t)off, SEEK_SET) == (off_t)-1)
		lb_worker_die(w, "lseek to %llu: %s", (unsigned long long)off,
			      strerror(errno));
	while (len) {
		if (run->cfg->io == LB_IO_PREAD)
			n = pread(w->fd, p, len, (off_t)off);
		else
			n = read(w->fd, p, len);
		if (w->st) {
			w->st->io_reads++;
			w->st->io_read_bytes += n > 0 ? (uint64_t)n : 0;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			lb_worker_die(w, "read at %llu: %s",
				      (unsigned long long)off,
				      n ? strerror(errno) : "end of file");
		p += n;
		off += (uint64_t)n;
		len -= (size_t)n;
	}
}

void lb_io_write(struct lb_worker *w, uint64_t off, const void *buf, size_t len)
{
	struct lb_run *run = w->run;
	const uint8_t *p = buf;
	ssize_t n;

	if (w->direct || run->cfg->io == LB_IO_MMAP) {
		memcpy(run->map + off, buf, len);
		return;
	}
	if (run->cfg->io == LB_IO_LSEEK &&
	    lseek(w->fd, (off_t)off, SEEK_SET) == (off_t)-1)
		lb_worker_die(w, "lseek to %llu: %s", (unsigned long long)off,
			      strerror(errno));
	while (len) {
		if (run->cfg->io == LB_IO_PREAD)
			n = pwrite(w->fd, p, len, (off_t)off);
		else
			n = write(w->fd, p, len);
		if (w->st) {
			w->st->io_writes++;
			w->st->io_write_bytes += n > 0 ? (uint64_t)n : 0;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			lb_worker_die(w, "write at %llu: %s",
				      (unsigned long long)off,
				      n ? strerror(errno) : "short write");
		p += n;
		off += (uint64_t)n;
		len -= (size_t)n;
	}
}
