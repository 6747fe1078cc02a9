/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `locktop diff BEFORE AFTER`: compares two recordings lock by lock and
 * kind by kind, says better, worse, same within the noise or unclear
 * when the records hold too little to judge by, and gates CI with
 * --fail-if.
 */
#ifndef LOCKTOP_DIFF_H
#define LOCKTOP_DIFF_H

#include <stdbool.h>
#include <stdio.h>
#include "record.h"
#include "verdict.h"

#define DIFF_EXIT_CROSSED 1 /* a --fail-if threshold was crossed */
#define DIFF_EXIT_BAD 2 /* bad input, or an output that cannot be made */

/*
 * A --fail-if expression: [KIND.]METRIC[/op] OP VALUE, e.g.
 * "wait_time>+10%", "fcntl.waits/op>0.5".
 * Returns 0, or -1 with a message in err.
 */
struct diff_gate {
	char text[128];
	int kind; /* -1: all lock kinds */
	enum rec_metric metric;
	bool per_op; /* METRIC/op: the figure per operation */
	char op; /* '>' or '<' */
	enum { GATE_REL, GATE_DELTA, GATE_VALUE } mode;
	double value; /* %, or ns / a count */
};

int diff_gate_parse(const char *text, struct diff_gate *g, char *err,
		    size_t err_len);
/* Whether the change from b to a crosses the gate; *seen gets the figure. */
bool diff_gate_crossed(const struct diff_gate *g, double b, double a,
		       double *seen);

/*
 * The opening of the output: elapsed time and CPU time (user+sys, user,
 * sys: the command's and --pid's processes'), before → after, as text or
 * a Markdown table; with ops (each run's operations, or NULL) the CPU
 * time per operation too.
 */
void diff_run_text(FILE *out, const struct record *const rec[2],
		   const char *const path[2], const double *ops);
void diff_run_markdown(FILE *out, const struct record *const rec[2],
		       const char *const path[2], const double *ops);

/*
 * Charts the wait time per interval of both records (all lock kinds, and
 * the condition-like waits too with all_kinds) into the SVG file svg,
 * with gnuplot. Returns 0, or -1 with a message in err.
 */
int diff_plot(const struct record *const rec[2], const char *const rec_path[2],
	      bool all_kinds, const char *svg, char *err, size_t err_len);

/* The whole subcommand; argv[0] is "diff". Returns the exit status. */
int diff_main(int argc, char **argv);

#endif /* LOCKTOP_DIFF_H */
