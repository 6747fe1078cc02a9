/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Types shared by fileio.bpf.c and the collector. */
#ifndef LOCKTOP_PROBES_FILEIO_H
#define LOCKTOP_PROBES_FILEIO_H

#include "common.h"

#define LT_MAX_FILES 4096
#define LT_IO_NAME_LEN 48

struct lt_file_key {
	__u64 dev;
	__u64 ino;
};

struct lt_file_stat {
	__u64 reads, writes;
	__u64 read_bytes, write_bytes;
	__u64 io_ns;
	__u64 io_under_lock_ns;
	__u64 hist[LT_HIST_SLOTS];
};

/* Per process: its pread-path calls and their time. */
struct lt_proc_io {
	__u64 count;
	__u64 ns;
};

/* Naming facts per file, written with its first I/O. */
struct lt_file_where {
	__u32 tgid;
	__s32 fd;
	char name[LT_IO_NAME_LEN]; /* base name */
};

#endif /* LOCKTOP_PROBES_FILEIO_H */
