/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the parts of locktop diff share: the comparison's rows
 * (diff_cmp.c), read by the renderers (diff_text.c, diff_json.c) and the
 * command (diff.c).
 */
#ifndef LOCKTOP_DIFF_PRIV_H
#define LOCKTOP_DIFF_PRIV_H

#include <stddef.h>
#include <json-c/json.h>
#include "diff.h"

/*
 * A lock or file row with less wait time than this share of all kinds'
 * on both sides, or fewer than VERDICT_MIN_EVENTS waits, is too small to
 * change a verdict: it comes after the others.
 */
#define DIFF_SMALL_SHARE 0.01

enum diff_row_type {
	DIFF_ROW_KIND, /* a kind, or all of them */
	DIFF_ROW_FILE, /* every lock in one file, across kinds */
	DIFF_ROW_LOCK, /* one lock: one layout key, its kinds paired */
};

/* A lock row's kinds, as a bit per enum lt_kind. */
typedef unsigned int diff_kinds;

struct diff_row {
	enum diff_row_type type;
	/* Kinds: the kind, or DIFF_KIND_ALL. Locks: the kind when a lock of
	 * one kind (not paired across kinds), else -1. Files: -1. */
	int kind;
	/* Identity: a lock's layout key (see diff_layout_key()), a file's
	 * name, a kind's name. */
	char id[LT_NAME_LEN];
	int group; /* locks: -1 pairs across kinds, else its kind */
	char key[LT_NAME_LEN]; /* a lock's key as recorded (its first) */
	char label[LT_NAME_LEN + 160]; /* for people */
	diff_kinds kinds[2]; /* the kinds seen before and after */
	bool in[2]; /* present before / after */
	bool small; /* too few waits on both sides to change a verdict */
	ptrdiff_t file; /* a lock's file row in diff_cmp.rows, or -1 */
	size_t members; /* a file's lock rows */
	char kernel_type[LT_KTYPE_LEN]; /* a kernel lock's, else "" */
	char caller[LT_CALLER_LEN];
	struct diff_side side[REC_METRIC_NR][2]; /* the totals */
	struct diff_side per_op[REC_METRIC_NR][2]; /* per operation */
	struct diff_judgement judged[REC_METRIC_NR];
};

struct diff_cmp {
	const struct record *rec[2];
	const char *path[2];
	struct diff_rule rule;
	bool all_kinds;
	/* Both runs' operation counts are known: figures per operation. */
	bool per_op;
	double ops[2];
	/* Kinds, then files, then locks, each most wait time first. */
	struct diff_row *rows;
	size_t n_rows;
	struct diff_row *kinds, *files, *locks;
	size_t n_kinds, n_files, n_locks;
	size_t n_small_files, n_small_locks; /* the small ones among them */
	const struct diff_row *most; /* the lock that changed most, or NULL */
};

/* Compares c->rec[0] and c->rec[1]; 0, or -ENOMEM. */
int diff_compare(struct diff_cmp *c);
void diff_cmp_free(struct diff_cmp *c);

/* Whether metric m adds up, and so has a figure per operation. */
bool diff_metric_per_op(enum rec_metric m);
/* Whether a row shows metric m: the main ones, the others when used. */
bool diff_metric_shown(const struct diff_row *r, enum rec_metric m);
/* A metric's name in a row: a spin lock's wait time is spin time. */
const char *diff_metric_label(const struct diff_row *r, enum rec_metric m);
/* The sides the verdict was made on: per operation when known. */
const struct diff_side *diff_judged_sides(const struct diff_cmp *c,
					  const struct diff_row *r,
					  enum rec_metric m);
/* " (before only)", " (after only)" or "". */
const char *diff_presence(const struct diff_row *r);

void diff_fmt_value(enum rec_metric m, double v, char *buf, size_t len);
/* A figure per operation: times to the ns, counts to 3 digits. */
void diff_fmt_per_op(enum rec_metric m, double v, char *buf, size_t len);
void diff_fmt_change(double b, double a, char *buf, size_t len);

/* The renderers. n_files and n_locks: how many of each to show. */
void diff_print_text(FILE *out, const struct diff_cmp *c, size_t n_files,
		     size_t n_locks);
void diff_print_markdown(FILE *out, const struct diff_cmp *c, size_t n_files,
			 size_t n_locks);
/* Takes gates over. */
void diff_print_json(FILE *out, const struct diff_cmp *c, size_t n_files,
		     size_t n_locks, json_object *gates, bool crossed);
/* The headline: throughput before → after and the lock that changed most. */
void diff_headline_text(FILE *out, const struct diff_cmp *c);
void diff_headline_markdown(FILE *out, const struct diff_cmp *c);

/* A figure for JSON: whole numbers as integers. */
json_object *diff_j_figure(double v);

#endif /* LOCKTOP_DIFF_PRIV_H */
