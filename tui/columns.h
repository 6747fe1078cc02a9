/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The lock, process and file tables' columns: headings, widths, cells. */
#ifndef LOCKTOP_COLUMNS_H
#define LOCKTOP_COLUMNS_H

/*
 * A table is an array of struct column indexed by its LC_, PC_ or FC_
 * constants. A cell is formatted, and a row keyed for sorting, from one
 * snapshot, per interval or for the whole run (struct col_ctx); nothing
 * here draws, so the screen and batch output can share it.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "collector.h"

#define MAX_COLS 12 /* the most columns a table has */

struct column {
	const char *title; /* per interval */
	const char *ctitle; /* cumulative; NULL: the same */
	int width; /* the flexible column's minimum */
	bool flex; /* takes what the others leave; a name, cut from the left */
	bool left;
	int drop; /* narrow terminals drop 1 first, then 2...; 0: never */
	bool text; /* sorts by name, A to Z */
	const char *help; /* its meaning, for --help and the man page */
	/*
	 * Shown only where rows come from hosts (a fleet view: --host,
	 * --series), before the others, as wide as the widest host name.
	 */
	bool fleet;
};

/* Locks view */
enum {
	LC_NAME,
	LC_KIND,
	LC_WAITS,
	LC_WAIT,
	LC_AVG,
	LC_P99,
	LC_MAX,
	LC_WAITERS,
	LC_HOLDER,
	LC_PROCS,
	LC_HOST,
	LC_NR
};

/* Processes view */
enum {
	PC_PID,
	PC_COMM,
	PC_WAITS,
	PC_WAIT,
	PC_IOS,
	PC_IOTIME,
	PC_TOP,
	PC_HOST,
	PC_NR
};

/* Files view */
enum {
	FC_NAME,
	FC_READS,
	FC_WRITES,
	FC_RBYTES,
	FC_WBYTES,
	FC_IOTIME,
	FC_UNDER,
	FC_P99,
	FC_HOST,
	FC_NR
};

/* Batch text tables (output.c): their own, fixed columns. */
enum {
	BC_NAME,
	BC_KIND,
	BC_WAITS,
	BC_WAIT,
	BC_AVG,
	BC_MAX,
	BC_PROC,
	BC_HOST,
	BC_NR
};

extern const struct column lock_cols[LC_NR];
extern const struct column proc_cols[PC_NR];
extern const struct column file_cols[FC_NR];
extern const struct column batch_cols[BC_NR];

/*
 * What every table's columns mean, from the tables above: the text that
 * ends locktop --help, which docs/locktop.1 repeats. The caller frees it;
 * NULL when out of memory.
 */
char *col_help_text(void);

/*
 * The width of the columns that say a row's host: the widest host name,
 * at least the title's; 0 when the rows come from no named host.
 */
int col_host_width(const struct lt_snapshot *s);

/* What cells are formatted from. */
struct col_ctx {
	const struct lt_snapshot *snap;
	bool cumulative; /* figures for the whole run, not per interval */
};

/* Numbers */
const char *col_fmt_ns(uint64_t ns, char *buf, size_t len);
const char *col_fmt_num(double v, char *buf, size_t len);
const char *col_fmt_bytes(double v, char *buf, size_t len);
double col_period(const struct col_ctx *cx);
double col_per(const struct col_ctx *cx, uint64_t v);
const char *col_fmt_time_rate(const struct col_ctx *cx, uint64_t ns, char *buf,
			      size_t len);

/*
 * The figures a row shows: the interval's, or the whole run's. A lock's
 * are lt_lock_figures()'s choice.
 */
const struct lt_figures *col_lock_fig(const struct col_ctx *cx,
				      const struct lt_lock *l);
const struct lt_proc_figures *col_proc_fig(const struct col_ctx *cx,
					   const struct lt_proc *p);
const struct lt_file_figures *col_file_fig(const struct col_ctx *cx,
					   const struct lt_file *f);
const struct lt_lock *col_find_lock(const struct lt_snapshot *s, uint64_t id);
/* The lock's name, "-" for none or one no longer in the snapshot. */
const char *col_lock_name(const struct lt_snapshot *s, uint64_t id);
/* The same as people read it: with a lock site's process count. */
const char *col_lock_label(const struct lt_snapshot *s, uint64_t id, char *buf,
			   size_t len);
uint64_t col_lock_p99(const struct lt_figures *f);

/* A cell's sort key, and its text. */
double col_lock_key(const struct col_ctx *cx, const struct lt_lock *l, int col);
void col_lock_cell(const struct col_ctx *cx, const struct lt_lock *l, int col,
		   char *buf, size_t len);
double col_proc_key(const struct col_ctx *cx, const struct lt_proc *p, int col);
void col_proc_cell(const struct col_ctx *cx, const struct lt_proc *p, int col,
		   char *buf, size_t len);
double col_file_key(const struct col_ctx *cx, const struct lt_file *fl,
		    int col);
void col_file_cell(const struct col_ctx *cx, const struct lt_file *fl, int col,
		   char *buf, size_t len);

/*
 * A fleet view's line about one host, for people: up with its locks and
 * waits (the interval's, or the run's), or down since when and why.
 */
void col_host_line(const struct lt_host *h, bool totals, char *buf, size_t len);

#endif /* LOCKTOP_COLUMNS_H */
