// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The kernel's maps: shared by the probe objects, read in batches, by the
 * readers, or mapped.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "state.h"
#include "futex.skel.h"

#define BATCH 512 /* entries a batch lookup asks for */

/*
 * Makes obj count into the futex object's maps, those shared_maps.def
 * lists. Every probe object has them all (probes/maps.bpf.h); one
 * missing is a build that went wrong, and loading on would give the
 * probe maps of its own that no one reads.
 */
int mapio_share_maps(struct lt_collector *c, struct bpf_object *obj,
		     const char *what, char *err, size_t err_len)
{
	static const char *const shared[] = {
#define LT_SHARED_MAP(name) #name,
#include "shared_maps.def"
	};
	size_t i;
	int ret;

	for (i = 0; i < sizeof(shared) / sizeof(shared[0]); i++) {
		struct bpf_map *to =
			bpf_object__find_map_by_name(obj, shared[i]);
		struct bpf_map *from = bpf_object__find_map_by_name(
			c->obj.futex->obj, shared[i]);

		if (!to || !from) {
			snprintf(err, err_len,
				 "the %s probe has no map %s to share with "
				 "the futex probe: a build of mismatched "
				 "objects",
				 what, shared[i]);
			return -ENOENT;
		}
		ret = bpf_map__reuse_fd(to, bpf_map__fd(from));
		if (ret) {
			snprintf(err, err_len,
				 "cannot share map %s with the %s probe: %s",
				 shared[i], what, strerror(-ret));
			return ret;
		}
	}
	return 0;
}

/* The batch buffers, grown to hold BATCH keys and values of these sizes. */
static int batch_bufs(struct lt_collector *c, size_t key_size, size_t vsz)
{
	if (c->mapio.keybuf_len < BATCH * key_size) {
		free(c->mapio.keybuf);
		c->mapio.keybuf = malloc(BATCH * key_size);
		c->mapio.keybuf_len = c->mapio.keybuf ? BATCH * key_size : 0;
	}
	if (c->mapio.valbuf_len < BATCH * vsz) {
		free(c->mapio.valbuf);
		c->mapio.valbuf = malloc(BATCH * vsz);
		c->mapio.valbuf_len = c->mapio.valbuf ? BATCH * vsz : 0;
	}
	return c->mapio.keybuf && c->mapio.valbuf ? 0 : -ENOMEM;
}

/*
 * Reads every entry of a map in batches, calling fn with each key and
 * its value (all CPUs' values in a row for per-CPU maps).
 */
int mapio_each_entry(struct lt_collector *c, int fd, size_t key_size,
		     size_t value_size, bool percpu,
		     int (*fn)(struct lt_collector *c, const void *key,
			       const void *value),
		     size_t *seen)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	size_t vsz = percpu ? ((value_size + 7) & ~7UL) * c->opts.ncpus :
			      value_size;
	char out_batch[64];
	bool first = true, done = false;
	__u32 count, k;
	int err;

	if (batch_bufs(c, key_size, vsz))
		return -ENOMEM;
	if (seen)
		*seen = 0;
	while (!done) {
		count = BATCH;
		err = bpf_map_lookup_batch(fd, first ? NULL : out_batch,
					   out_batch, c->mapio.keybuf,
					   c->mapio.valbuf, &count, &opts);
		if (err == -ENOENT)
			done = true;
		else if (err)
			return err;
		first = false;
		for (k = 0; k < count; k++) {
			err = fn(c, (char *)c->mapio.keybuf + k * key_size,
				 (char *)c->mapio.valbuf + k * vsz);
			if (err)
				return err;
		}
		if (seen)
			*seen += count;
	}
	return 0;
}

/*
 * Reads slots 0 to n - 1 of a per-CPU array in batches, calling fn with
 * each slot's number (a __u32) and its values on every CPU, each padded
 * to 8 bytes.
 */
int mapio_each_slot(struct lt_collector *c, int fd, __u64 n, size_t value_size,
		    int (*fn)(struct lt_collector *c, const void *key,
			      const void *value))
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	size_t vsz = ((value_size + 7) & ~7UL) * (size_t)c->opts.ncpus;
	__u32 done = 0, last = 0, count, k;
	int err, ret;

	if (batch_bufs(c, sizeof(__u32), vsz))
		return -ENOMEM;
	/* An array's batch goes on after the last key it gave. */
	while (done < n) {
		count = (__u32)(n - done) < BATCH ? (__u32)(n - done) : BATCH;
		err = bpf_map_lookup_batch(fd, done ? &last : NULL, &last,
					   c->mapio.keybuf, c->mapio.valbuf,
					   &count, &opts);
		if (err && err != -ENOENT)
			return err;
		for (k = 0; k < count; k++) {
			ret = fn(c, (const __u32 *)c->mapio.keybuf + k,
				 (char *)c->mapio.valbuf + k * vsz);
			if (ret)
				return ret;
		}
		if (err || !count)
			break;
		done += count;
	}
	return 0;
}

/*
 * The counters at keys 0 to n - 1 of a per-CPU array, each summed over
 * the CPUs into sums[key]; a key that cannot be read keeps what sums held.
 */
void mapio_counter_sums(struct lt_collector *c, int fd, __u32 n, uint64_t *sums)
{
	uint64_t *vals = calloc((size_t)c->opts.ncpus, sizeof(*vals));
	__u32 k;
	int cpu;

	if (!vals)
		return;
	for (k = 0; k < n; k++) {
		if (bpf_map_lookup_elem(fd, &k, vals))
			continue;
		sums[k] = 0;
		for (cpu = 0; cpu < c->opts.ncpus; cpu++)
			sums[k] += vals[cpu];
	}
	free(vals);
}

/*
 * Runs a reader (reader.bpf.c) and hands fn each of the n records it
 * wrote into out, an array of size-byte records.
 */
int mapio_run_reader(struct lt_collector *c, struct bpf_program *prog,
		     const void *out, size_t size, const __u32 *n,
		     int (*fn)(struct lt_collector *c, const void *rec))
{
	LIBBPF_OPTS(bpf_test_run_opts, opts);
	__u32 i;
	int err;

	if (bpf_prog_test_run_opts(bpf_program__fd(prog), &opts))
		return -errno;
	for (i = 0; i < *n; i++) {
		err = fn(c, (const char *)out + (size_t)i * size);
		if (err)
			return err;
	}
	return 0;
}

/* The length of an array map's values, in whole pages. */
static size_t out_len(struct bpf_map *map)
{
	size_t len =
		(size_t)bpf_map__value_size(map) * bpf_map__max_entries(map);
	long page = sysconf(_SC_PAGESIZE);

	return (len + (size_t)page - 1) & ~((size_t)page - 1);
}

/* The array map's values, mapped read-only into our memory. */
const void *mapio_map_out(struct bpf_map *map)
{
	void *p = mmap(NULL, out_len(map), PROT_READ, MAP_SHARED,
		       bpf_map__fd(map), 0);

	return p == MAP_FAILED ? NULL : p;
}

void mapio_unmap_out(struct bpf_map *map, const void *p)
{
	if (p)
		munmap((void *)p, out_len(map));
}
