/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the PCP agent exports, derived from collector snapshots without
 * any PCP calls, so that it can be tested without pmcd or BPF.
 *
 * The instance domains of locks, processes and files are bounded: each
 * keeps the top N entries by a decaying score, so that a lock that was
 * busy an hour ago gives way to one that is busy now, while a lock that
 * is busy now does not flicker in and out from one second to the next.
 * Everything not kept adds up in an "other" entry whose counters only
 * ever grow, so that PCP rates of the whole domain stay right.
 */
#ifndef LOCKTOP_PMDA_MODEL_H
#define LOCKTOP_PMDA_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "collector.h"

#define LTPM_TOP_DEFAULT 20
#define LTPM_TOP_MAX 1000
#define LTPM_DECAY_S 30.0 /* time constant of the score */

/* Decaying scores keyed by a 64-bit identity: open addressing. */
struct ltpm_scores {
	uint64_t *keys; /* 0 marks a free slot: keys are stored + 1 */
	double *vals;
	size_t size, n;
};

struct ltpm_model {
	size_t top_n;
	double decay_s;

	struct ltpm_scores lock_scores, proc_scores, file_scores;

	/* The kept entries of the latest snapshot, best first. */
	const struct lt_lock **locks;
	size_t n_locks;
	const struct lt_proc **procs;
	size_t n_procs;
	const struct lt_file **files;
	size_t n_files;

	/*
	 * Locks that are not kept, as one: totals grow by each interval's
	 * deltas; maxima and waiters_now are the latest interval's.
	 */
	struct lt_lock other;

	/* Histograms of every eligible lock, summed over the agent's life. */
	uint64_t hist_wait[LT_HIST_BUCKETS];
	uint64_t hist_hold[LT_HIST_BUCKETS];
	uint64_t hist_io[LT_HIST_BUCKETS];

	uint64_t updates; /* snapshots taken in */
	size_t cap; /* room in locks, procs, files */
};

int ltpm_model_init(struct ltpm_model *m, size_t top_n);
void ltpm_model_free(struct ltpm_model *m);

/*
 * Takes in a new snapshot: updates the scores and the "other" and
 * histogram sums, and chooses the kept entries. The kept pointers point
 * into s and are valid as long as s is.
 */
int ltpm_model_update(struct ltpm_model *m, const struct lt_snapshot *s);

/*
 * Forgets the kept entries and the scores, for a collector that is
 * closed or reopened (lock ids start again). The sums stay, so the
 * counters built from them keep growing.
 */
void ltpm_model_forget(struct ltpm_model *m);

/*
 * Whether l can be a lock instance: a lock lt_lock_shown() shows for the
 * whole run, of a lock kind. The N best by score are kept, ties going in
 * lt_lock_order(); the others add up in "other".
 */
bool ltpm_lock_eligible(const struct lt_lock *l);

/* Clamps and sets N; the next update applies it. */
void ltpm_model_set_top(struct ltpm_model *m, size_t top_n);

/*
 * Adds l's counters, histograms and waiters into sum, and raises sum's
 * maxima to l's: two locks that are one instance (a file replaced by
 * another of the same name) count as one, whose counters never go back.
 */
void ltpm_lock_add(struct lt_lock *sum, const struct lt_lock *l);

/*
 * The name of histogram bucket i as an instance: "LOW-HIGH" in ns,
 * inclusive, the form grafana-pcp's heatmaps read.
 */
void ltpm_bucket_name(unsigned int i, char *buf, size_t len);

/*
 * base with tag inserted where PCP's name comparison still sees it:
 * instance names are compared up to the first space, so the tag goes
 * before it, e.g. "table.db+0x1000[pid:42]".
 */
void ltpm_unique_name(const char *base, const char *tag, char *buf, size_t len);

/* Parses "123, 456 789" into pids; returns the count or -1 if bad. */
int ltpm_parse_pids(const char *s, pid_t *pids, size_t max);

#endif /* LOCKTOP_PMDA_MODEL_H */
