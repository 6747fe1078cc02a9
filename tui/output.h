/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Batch output of snapshots: tables like top -b, or one JSON object a line. */
#ifndef LOCKTOP_OUTPUT_H
#define LOCKTOP_OUTPUT_H

#include <stdbool.h>
#include <stdio.h>
#include "collector.h"

struct output_opts {
	FILE *out;
	bool json;
	bool all_kinds; /* show condition-like waits too */
	bool members; /* a lock site's members in place of its row */
	size_t limit; /* rows per table; 0 means all */
};

/*
 * The locks a table or JSON object of s lists, in lt_lock_order(): those
 * lt_lock_shown() shows (all kinds with o->all_kinds), the first
 * o->limit of them (0: all). *rows gets an array of *n_rows that the
 * caller frees, *n_all how many are shown in all (more when the limit
 * cut). Returns 0 or -ENOMEM.
 */
int output_rank(const struct output_opts *o, const struct lt_snapshot *s,
		bool totals, bool text, const struct lt_lock ***rows,
		size_t *n_rows, size_t *n_all);

/* One interval: its deltas. */
int output_interval(const struct output_opts *o, const struct lt_snapshot *s);

/*
 * The summary of the whole run: its totals. exit_status < 0 means no
 * command was traced.
 */
int output_final(const struct output_opts *o, const struct lt_snapshot *s,
		 int exit_status);

#endif /* LOCKTOP_OUTPUT_H */
