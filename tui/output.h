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
	size_t limit; /* rows per table; 0 means all */
};

/* One interval: its deltas. */
int output_interval(const struct output_opts *o, const struct lt_snapshot *s);

/*
 * The summary of the whole run: its totals. exit_status < 0 means no
 * command was traced.
 */
int output_final(const struct output_opts *o, const struct lt_snapshot *s,
		 int exit_status);

#endif /* LOCKTOP_OUTPUT_H */
