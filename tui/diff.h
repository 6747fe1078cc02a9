/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `locktop diff BEFORE AFTER`: compares two recordings lock by lock and
 * kind by kind, says better, worse or same within the noise, and gates
 * CI with --fail-if.
 */
#ifndef LOCKTOP_DIFF_H
#define LOCKTOP_DIFF_H

#include <stdbool.h>
#include <stdio.h>
#include "record.h"

#define DIFF_EXIT_CROSSED 1 /* a --fail-if threshold was crossed */
#define DIFF_EXIT_BAD 2 /* bad input, or an output that cannot be made */

enum diff_verdict {
	DIFF_BETTER = -1,
	DIFF_SAME = 0,
	DIFF_WORSE = 1,
};

const char *diff_verdict_name(enum diff_verdict v);

struct diff_rule {
	double sigma; /* standard errors of the per-interval spread */
	double threshold_pct; /* changes this small are "same" anyway */
};

/* One figure of one side: the total and its noise (one standard error). */
struct diff_side {
	double value;
	double noise;
};

/* The verdict on a change from b to a of a metric where less is better. */
enum diff_verdict diff_judge(const struct diff_rule *rule,
			     const struct diff_side *b,
			     const struct diff_side *a);

/*
 * A --fail-if expression: [KIND.]METRIC OP VALUE, e.g. "wait_time>+10%".
 * Returns 0, or -1 with a message in err.
 */
struct diff_gate {
	char text[128];
	int kind; /* -1: all lock kinds */
	enum rec_metric metric;
	char op; /* '>' or '<' */
	enum { GATE_REL, GATE_DELTA, GATE_VALUE } mode;
	double value; /* %, or ns / a count */
};

int diff_gate_parse(const char *text, struct diff_gate *g, char *err,
		    size_t err_len);
/* Whether the change from b to a crosses the gate; *seen gets the figure. */
bool diff_gate_crossed(const struct diff_gate *g, double b, double a,
		       double *seen);

/* The noise of one row's metric in one record: see docs/record.md. */
double diff_noise(const struct record *r, int kind, const char *key,
		  bool all_kinds, enum rec_metric m);

/* The whole subcommand; argv[0] is "diff". Returns the exit status. */
int diff_main(int argc, char **argv);

#endif /* LOCKTOP_DIFF_H */
