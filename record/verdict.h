/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The verdict of `locktop diff` on one figure of one row (a lock kind, all
 * lock kinds, or one lock): better, worse, same, or unclear when the two
 * records hold too little to judge by. The rules are in docs/record.md,
 * "The verdict".
 */
#ifndef LOCKTOP_VERDICT_H
#define LOCKTOP_VERDICT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "record.h"

/* The row of all lock kinds, where a kind is expected. */
#define DIFF_KIND_ALL (-1)

/* Usable intervals a record needs for a noise estimate of its own. */
#define VERDICT_MIN_INTERVALS 4
/* Fewer waits (or acquisitions, ...) than this are too few to judge by. */
#define VERDICT_MIN_EVENTS 10
/* A change by this factor or more is never "same". */
#define VERDICT_SAME_RATIO 2.0

enum diff_verdict {
	DIFF_BETTER = -1,
	DIFF_SAME = 0,
	DIFF_WORSE = 1,
	DIFF_UNCLEAR = 2,
};

/* "better", "same", "worse" or "unclear". */
const char *diff_verdict_name(enum diff_verdict v);

struct diff_rule {
	double sigma; /* standard errors of the per-interval spread */
	double threshold_pct; /* changes this small are "same" anyway */
};

/* One figure of one side: the total, its noise and what it rests on. */
struct diff_side {
	double value;
	double noise; /* one standard error; 0 without an estimate */
	size_t intervals; /* the usable intervals behind the noise */
	uint64_t events; /* the waits (acquisitions, ...) behind the value */
	bool sampled; /* the events are on-CPU samples (a spin lock's wait) */
};

struct diff_judgement {
	enum diff_verdict verdict;
	char reason[32]; /* why unclear: "2 intervals", "6 waits", ... */
};

/* The verdict on a change from b to a of metric m, where less is better. */
void diff_judge(const struct diff_rule *rule, enum rec_metric m,
		const struct diff_side *b, const struct diff_side *a,
		struct diff_judgement *out);

/* The verdict for people: "worse", or "unclear (2 intervals)". */
const char *diff_judgement_text(const struct diff_judgement *j, char *buf,
				size_t len);

/*
 * How many events a metric's figure rests on: waits for the wait
 * metrics, and for wait time the samples too (a spin lock's wait time).
 */
uint64_t diff_events(const struct rec_fig *f, enum rec_metric m);

/*
 * The figures of one row in a set: one lock (key), one kind, or with
 * kind DIFF_KIND_ALL the sum of the lock kinds (and of the condition-like
 * ones too with all_kinds).
 */
void diff_row_fig(const struct rec_set *s, int kind, const char *key,
		  bool all_kinds, struct rec_fig *out);

/*
 * The noise of one row's metric in one record (one standard error of its
 * total, see docs/record.md), and in *n the number of intervals it comes
 * from. Fewer than two usable intervals give no estimate: 0.
 */
double diff_noise_n(const struct record *r, int kind, const char *key,
		    bool all_kinds, enum rec_metric m, size_t *n);
double diff_noise(const struct record *r, int kind, const char *key,
		  bool all_kinds, enum rec_metric m);

/*
 * The same in steps, for a caller that sums its own rows: the shortest
 * usable interval (0: none is; an interval counts when its interval_s is
 * at least this and above 0) and in *len2 the sum of the squared lengths
 * of all intervals; a spread that takes each usable interval's figure;
 * the noise of the total from it.
 */
struct diff_spread {
	double sum, sum2;
	size_t n;
};

double diff_usable_len(const struct record *r, double *len2);
void diff_spread_add(struct diff_spread *sp, const struct rec_fig *f,
		     double interval_s, enum rec_metric m);
double diff_spread_noise(const struct diff_spread *sp, enum rec_metric m,
			 double len2);

#endif /* LOCKTOP_VERDICT_H */
