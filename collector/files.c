// SPDX-License-Identifier: LGPL-2.1-or-later
/* Files: their rows, their names and their I/O figures. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "state.h"
#include "futex.skel.h"
#include "fileio.skel.h"

/* What a file's I/O adds to, summed. */
uint64_t files_counter_sum(const struct lt_file_stat *v)
{
	return v->reads + v->writes + v->read_bytes + v->write_bytes +
	       v->io_ns + v->io_under_lock_ns;
}

/* A file slot's value on one CPU, as a per-CPU map pads it. */
#define FILE_STRIDE ((sizeof(struct lt_file_stat) + 7) & ~7UL)

static void hist_delta(uint64_t *out, uint64_t *total, const __u64 *now,
		       const __u64 *before)
{
	size_t b;

	for (b = 0; b < LT_HIST_SLOTS; b++) {
		out[b] = diff(now[b], before[b]);
		total[b] += out[b];
	}
}

/* The row of the file in slot, made on its first sight and named from
 * what the probe kept; -1 when out of memory. */
static ssize_t file_row_of(struct lt_collector *c, __u32 slot)
{
	struct lt_file_where w;
	struct lt_file_key key;
	struct lt_file *f;
	ssize_t i;

	if (bpf_map_lookup_elem(bpf_map__fd(c->obj.fileio->maps.file_keys),
				&slot, &key))
		return -1;
	i = lt_index_find(&c->filetab.file_ix, &key, c->filetab.fstate);
	if (i < 0) {
		i = (ssize_t)c->filetab.n_files;
		if (lt_grow((void **)&c->filetab.files, &c->filetab.cap_files,
			    i + 1, sizeof(*c->filetab.files)) ||
		    lt_grow((void **)&c->filetab.fstate, &c->filetab.cap_fstate,
			    i + 1, sizeof(*c->filetab.fstate)))
			return -1;
		memset(&c->filetab.fstate[i], 0, sizeof(c->filetab.fstate[i]));
		c->filetab.fstate[i].key = key;
		if (lt_index_add(&c->filetab.file_ix, i, c->filetab.fstate))
			return -1;
		c->filetab.n_files++;
		memset(&c->filetab.files[i], 0, sizeof(c->filetab.files[i]));
	} else if (c->filetab.fstate[i].slot >= 0) {
		return -1; /* not reached: one file, one slot */
	}
	/* A file met again after its slot went back may be another file
	 * on a reused inode: it is named anew. */
	f = &c->filetab.files[i];
	f->dev = key.dev;
	f->ino = key.ino;
	if (bpf_map_lookup_elem(bpf_map__fd(c->obj.fileio->maps.file_where),
				&slot, &w) ||
	    !w.tgid) {
		snprintf(f->name, sizeof(f->name), "inode %llu",
			 (unsigned long long)f->ino);
	} else if (!lt_proc_fd_path(w.tgid, w.fd, f->dev, f->ino, f->name,
				    sizeof(f->name))) {
		w.name[sizeof(w.name) - 1] = '\0';
		if (w.name[0])
			snprintf(f->name, sizeof(f->name), "%s", w.name);
		else
			snprintf(f->name, sizeof(f->name), "inode %llu",
				 (unsigned long long)f->ino);
	}
	c->filetab.fstate[i].slot = (__s32)slot;
	memset(&c->filetab.fstate[i].raw, 0, sizeof(c->filetab.fstate[i].raw));
	c->slots.file_row[slot] = i;
	c->filetab.file_entries++;
	return i;
}

/* Adds what moved in a file's slot, summed over the CPUs, to its row. */
static void merge_file(struct lt_collector *c, size_t i,
		       const struct lt_file_stat *percpu, size_t stride)
{
	struct file_state *s = &c->filetab.fstate[i];
	struct lt_file *f = &c->filetab.files[i];
	struct lt_file_stat sum = { 0 };
	int cpu, b;

	for (cpu = 0; cpu < c->opts.ncpus; cpu++) {
		const struct lt_file_stat *v =
			(const void *)((const char *)percpu +
				       (size_t)cpu * stride);

		sum.reads += v->reads;
		sum.writes += v->writes;
		sum.read_bytes += v->read_bytes;
		sum.write_bytes += v->write_bytes;
		sum.io_ns += v->io_ns;
		sum.io_under_lock_ns += v->io_under_lock_ns;
		for (b = 0; b < LT_HIST_SLOTS; b++)
			sum.hist[b] += v->hist[b];
	}
	if (files_counter_sum(&sum) != files_counter_sum(&s->raw))
		s->moved_at = c->reading.read_ns;
#define FDELTA(field)                                           \
	do {                                                    \
		f->delta.field = diff(sum.field, s->raw.field); \
		f->total.field += f->delta.field;               \
	} while (0)
	FDELTA(reads);
	FDELTA(writes);
	FDELTA(read_bytes);
	FDELTA(write_bytes);
	FDELTA(io_ns);
	FDELTA(io_under_lock_ns);
#undef FDELTA
	hist_delta(f->delta.io_hist, f->total.io_hist, sum.hist, s->raw.hist);
	for (b = 0; b < LT_HIST_SLOTS; b++)
		c->snap.io_hist_delta[b] += f->delta.io_hist[b];
	s->raw = sum;
}

/* One slot's values on every CPU: a row made for what it holds, and
 * what moved added to the row. */
static int merge_slot(struct lt_collector *c, const void *key,
		      const void *value)
{
	__u32 slot = *(const __u32 *)key;
	const struct lt_file_stat *v = value;
	ssize_t row;

	if (slot >= LT_MAX_FILES)
		return 0;
	row = c->slots.file_row[slot];
	if (row < 0) {
		uint64_t counter_sum = 0;
		int cpu;

		for (cpu = 0; cpu < c->opts.ncpus; cpu++)
			counter_sum += files_counter_sum(
				(const void *)((const char *)v +
					       cpu * FILE_STRIDE));
		if (!counter_sum)
			return 0;
		row = file_row_of(c, slot);
		if (row < 0)
			return 0;
	}
	merge_file(c, (size_t)row, v, FILE_STRIDE);
	return 0;
}

/*
 * Reads the file slots ever handed out, in batches. A slot not yet
 * linked to a row with nothing in it is free, or taken by a probe that
 * has not counted yet.
 */
int files_read(struct lt_collector *c)
{
	__u32 which = LT_HIGH_FILES;
	__u64 high = 0;

	if (bpf_map_lookup_elem(bpf_map__fd(c->obj.futex->maps.slot_high),
				&which, &high))
		return -errno;
	if (high > LT_MAX_FILES)
		high = LT_MAX_FILES;
	return mapio_each_slot(c, bpf_map__fd(c->obj.fileio->maps.file_stat),
			       high, sizeof(struct lt_file_stat), merge_slot);
}
