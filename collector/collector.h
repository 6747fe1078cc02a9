/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The locktop collector: loads and attaches the probes, reads their maps
 * once per interval and hands out one snapshot type to every consumer.
 */
#ifndef LOCKTOP_COLLECTOR_H
#define LOCKTOP_COLLECTOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define LT_HIST_BUCKETS \
	40 /* log2(ns); bucket i counts waits in [2^i, 2^(i+1)) */
#define LT_NAME_LEN 160
#define LT_COMM_SIZE 16

enum lt_kind {
	LT_KIND_FUTEX = 0, /* a futex used as a lock */
	LT_KIND_FUTEX_COND, /* condition variables, semaphores, joins */
	LT_KIND_NR,
};

const char *lt_kind_name(enum lt_kind kind);
/* A lock kind that the default views rank (not an event wait). */
bool lt_kind_is_lock(enum lt_kind kind);

struct lt_figures {
	uint64_t waits;
	uint64_t wait_ns;
	uint64_t max_wait_ns;
	uint64_t hist[LT_HIST_BUCKETS];
};

struct lt_lock {
	char name[LT_NAME_LEN]; /* for people: mapping+offset, or the address */
	enum lt_kind kind;
	uint64_t address; /* the futex's user address in its process */
	const pid_t *pids; /* processes that waited on it */
	size_t n_pids;
	char comm[LT_COMM_SIZE]; /* name of the first waiting process */
	struct lt_figures total; /* since the collector opened */
	struct lt_figures delta; /* during the last interval */
};

struct lt_snapshot {
	double time; /* wall clock, seconds since the epoch */
	double interval_s; /* length of the interval that delta covers */
	double elapsed_s; /* since the collector opened */
	uint64_t drops_total; /* waits that could not be counted */
	uint64_t drops_delta;
	size_t n_locks;
	const struct lt_lock *locks; /* valid until the next read or close */
};

struct lt_options {
	const pid_t *pids; /* trace these and their children; none: all */
	size_t n_pids;
	unsigned int interval_ms; /* for lt_collector_wait(); 0 means 1000 */
	bool verbose; /* route libbpf's debug output to stderr */
};

struct lt_collector;

/*
 * Checks privileges, BTF and tracefs, loads and attaches the probes.
 * On failure returns a negative errno and writes a message that names
 * the fix into err.
 */
int lt_collector_open(const struct lt_options *opts, struct lt_collector **out,
		      char *err, size_t err_len);

/* Reads the maps now. The result belongs to the collector. */
int lt_collector_read(struct lt_collector *c, const struct lt_snapshot **snap);

/*
 * Sleeps until the next interval boundary. Returns 0 at the boundary, or
 * 1 early when fd (if >= 0) becomes readable.
 */
int lt_collector_wait(struct lt_collector *c, int fd);

/* Detaches every probe and frees everything. NULL is fine. */
void lt_collector_close(struct lt_collector *c);

/* Human form of a duration in ns, e.g. "812.3ms", into buf. */
const char *lt_format_ns(uint64_t ns, char *buf, size_t len);

/* The value below which the given fraction of a histogram's waits fall. */
uint64_t lt_hist_quantile(const uint64_t *hist, size_t buckets, double q);

#endif /* LOCKTOP_COLLECTOR_H */
