/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Recordings: `locktop record` writes a session's snapshots into one JSON
 * file (docs/record.md), `locktop diff` loads two of them. The writer
 * streams into a temporary file next to the target and renames it at the
 * end, so a reader never sees half a record; the loader trusts nothing
 * in the file.
 */
#ifndef LOCKTOP_RECORD_H
#define LOCKTOP_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "collector.h"

#define RECORD_FORMAT "locktop-record"
#define RECORD_VERSION 1
/* Bigger files are refused before parsing: the tree would not fit. */
#define RECORD_MAX_BYTES (256UL << 20)
/* JSON nesting the loader accepts; a record needs 5. */
#define RECORD_MAX_DEPTH 32

/* ---- writing ---- */

struct record_meta {
	const char *path; /* the file to write */
	char **argv; /* locktop's own command line */
	int argc;
	char **command; /* the traced command, NULL-terminated, or NULL */
	const pid_t *pids; /* --pid */
	size_t n_pids;
	/* The processes whose CPU time, with their descendants', is kept:
	 * --pid's (the command's is the children's time, see below). */
	const pid_t *cpu_pids;
	size_t n_cpu_pids;
	double interval_s;
	double duration_s; /* 0: none */
};

struct recorder;

/* Creates the temporary file; on failure a message goes to err. */
int recorder_open(const struct record_meta *m, struct recorder **out, char *err,
		  size_t err_len);
/* The recording starts now: the probes are attached (CPU time's base). */
int recorder_started(struct recorder *r);
/* Appends one interval (the snapshot's deltas). */
int recorder_add(struct recorder *r, const struct lt_snapshot *s);
/* The operations the run did (docs/record.md, --ops-file). */
void recorder_set_ops(struct recorder *r, uint64_t ops);
/*
 * Reads an operation count from path: one whole number, blanks around
 * it allowed. Returns 0, or -1 with a message in err.
 */
int record_read_ops(const char *path, uint64_t *ops, char *err, size_t err_len);
/*
 * Writes the totals of last (NULL: none were read), syncs and renames the
 * file into place, and frees r. ended_by is "command", "duration" or
 * "signal"; exit_status < 0 means no command, or one not waited for.
 * With a command that was waited for, the CPU time of the children this
 * process waited for, which is the command's, goes into the record.
 */
int recorder_finish(struct recorder *r, const struct lt_snapshot *last,
		    int exit_status, const char *ended_by, char *err,
		    size_t err_len);
/* Removes the temporary file and frees r. */
void recorder_abort(struct recorder *r);
/*
 * l's release stacks as JSON, as locktop's JSON and records give them:
 * an array, most waiting ended first, of {"stack", "count", "ns"}.
 */
struct json_object;
struct json_object *record_releases_json(const struct lt_lock *l);
/*
 * Whether a set of totals (or of an interval's deltas) holds l: every
 * lock lt_lock_shown() shows, of every kind.
 */
bool record_keeps(const struct lt_lock *l, bool totals);

/* ---- reading ---- */

/*
 * The metrics locktop diff compares, in its order: the rows of figures.def
 * with a DIFF column, those of PART MAIN (REC_WAITS, REC_WAIT_TIME, ...),
 * the p99 wait, then those of PART USED (REC_CONTENDED, ...).
 */
#define REC_METRIC_MAIN(ID) REC_##ID,
#define REC_METRIC_USED(ID)
#define LT_DIFF(NAME, UNIT, PART, ID, METRIC, LABEL, EVENTS, ONE, MANY) \
	REC_METRIC_##PART(ID)
enum rec_metric {
#include "figures.def"
	REC_P99,
#undef REC_METRIC_MAIN
#undef REC_METRIC_USED
#define REC_METRIC_MAIN(ID)
#define REC_METRIC_USED(ID) REC_##ID,
#define LT_DIFF(NAME, UNIT, PART, ID, METRIC, LABEL, EVENTS, ONE, MANY) \
	REC_METRIC_##PART(ID)
#include "figures.def"
	REC_METRIC_NR,
};
#undef REC_METRIC_MAIN
#undef REC_METRIC_USED

/* The metric's name in --fail-if and JSON ("wait_time"), and for people. */
const char *rec_metric_name(enum rec_metric m);
const char *rec_metric_label(enum rec_metric m);
int rec_metric_parse(const char *name);
/* The names, in their order, between commas: "waits, wait_time, ...". */
extern const char rec_metric_list[];
/* Whether the metric is a duration in ns. */
bool rec_metric_is_time(enum rec_metric m);

/*
 * The parts of a recording's figures object, in their order, with the
 * p99 between the first two: the RECORD column of figures.def. A row
 * NOREC is not recorded. REC_KEPT(RECORD, X, NAME) is X(NAME, part) for
 * a recorded row, nothing for the others.
 */
enum rec_fig_part { REC_PART_WAIT, REC_PART_HOLD, REC_PART_REST };
#define REC_KEPT(RECORD, X, NAME) REC_KEPT_##RECORD(X, NAME)
#define REC_KEPT_WAIT(X, NAME) X(NAME, REC_PART_WAIT)
#define REC_KEPT_HOLD(X, NAME) X(NAME, REC_PART_HOLD)
#define REC_KEPT_REST(X, NAME) X(NAME, REC_PART_REST)
#define REC_KEPT_NOREC(X, NAME)

/* A lock's figures in a recording: the recorded rows of figures.def. */
struct rec_fig {
#define REC_FIELD(NAME, PART) uint64_t NAME;
#define LT_FIGURE(NAME, JSON, RECORD) REC_KEPT(RECORD, REC_FIELD, NAME)
#include "figures.def"
#undef REC_FIELD
	uint64_t p99_wait_ns; /* as stored; used when there is no histogram */
	bool has_hist;
	uint64_t wait_hist[LT_HIST_BUCKETS];
};

/*
 * Adds b into a, as lt_figures_add() adds a snapshot's figures, for the
 * figures a record holds; a p99 without histograms takes the larger.
 */
void rec_fig_add(struct rec_fig *a, const struct rec_fig *b);
/* One metric of a figure set; p99 comes from the histogram when known. */
uint64_t rec_fig_metric(const struct rec_fig *f, enum rec_metric m);

struct rec_lock {
	char key[LT_NAME_LEN]; /* normalised: see record_normalize_key() */
	char name[LT_NAME_LEN];
	enum lt_kind kind;
	/* Kernel locks: as locktop's JSON gives them; "" for the others,
	 * and in records written before they were kept. */
	char kernel_type[LT_KTYPE_LEN];
	char caller[LT_CALLER_LEN];
	struct rec_fig fig;
};

/* One interval's deltas, or the whole run's totals. */
struct rec_set {
	double time;
	double interval_s;
	double elapsed_s;
	uint64_t drops;
	struct rec_fig kinds[LT_KIND_NR]; /* sums of the locks of each kind */
	size_t n_locks;
	struct rec_lock *locks; /* sorted by key, one per key */
};

struct record {
	int version;
	char host[256];
	char kernel[256];
	char cmdline[1024];
	char start[64]; /* ISO 8601, as written */
	double start_time;
	double interval_s; /* the requested interval; 0: not recorded */
	int exit_status; /* -1: no command */
	char ended_by[16];
	bool has_cpu; /* the command's CPU time is known */
	double cpu_user_s;
	double cpu_sys_s;
	/* --pid's processes and their descendants, from /proc. */
	bool has_pids_cpu;
	double pids_cpu_user_s;
	double pids_cpu_sys_s;
	uint64_t pids_unwaited; /* ended with no parent in the tree */
	/* The operations the run did: the record's own `ops`, or --ops. */
	bool has_ops;
	uint64_t ops;
	size_t n_intervals;
	struct rec_set *intervals;
	struct rec_set final;
};

/*
 * Parses a record from memory. Returns 0, or -1 with a message in err;
 * never trusts the input (sizes, depth, types, ranges).
 */
int record_parse(const char *buf, size_t len, struct record **out, char *err,
		 size_t err_len);
/* Reads and parses a file ("-" is stdin). */
int record_load(const char *path, struct record **out, char *err,
		size_t err_len);
void record_free(struct record *r);

/*
 * The lock in a set with this (normalised) key, or NULL; a set holds one
 * lock per key and kind, and this finds the first of the key's kinds.
 */
const struct rec_lock *rec_set_find(const struct rec_set *s, const char *key);
/* The lock of this key and kind, or NULL. */
const struct rec_lock *rec_set_find_kind(const struct rec_set *s,
					 const char *key, enum lt_kind kind);

/*
 * Makes a lock key comparable across runs: drops the directories of a
 * file's path (the collector knows them only while the file is open),
 * then applies record.c's table of rules: " (deleted)" goes (a file
 * removed before the read), and a temporary file's random name becomes a
 * fixed pattern (docs/record.md lists them).
 */
void record_normalize_key(const char *key, char *out, size_t len);

#endif /* LOCKTOP_RECORD_H */
