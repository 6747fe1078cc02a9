// SPDX-License-Identifier: GPL-2.0-or-later
/* The column model: the tables' columns, their sort keys and their cells. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "columns.h"

#define HOST_HELP                                                          \
	"the host the row was read from (as --host names it; pmcd's "      \
	"hostname with --series), drawn before the other columns; only "   \
	"where rows come from hosts. The header has a line per host, and " \
	"DOWN on it when the host stops answering"

/* The HOST column, one in every table: drawn only for rows from hosts. */
#define HOST_COLUMN                                                      \
	{                                                                \
		.title = "HOST", .width = 4, .left = true, .text = true, \
		.fleet = true, .help = HOST_HELP                         \
	}

/*
 * A column's help says what it shows in both of its titles: the first a
 * rate for the interval, the second (ctitle) the whole run's figure.
 */
const struct column lock_cols[LC_NR] = {
	[LC_NAME] = { "LOCK", NULL, 20, true, true, 0, true,
		      "the lock: image+0xOFF in a program's or library's "
		      "data, [heap]+0x..., [anon@0x...]+0x... in other "
		      "anonymous memory, a shared file's path+0xOFF, a "
		      "locked file's path:offset, a spin loop's code site, or "
		      "the name a kernel lock or a server's probes give it" },
	[LC_KIND] = { "KIND", NULL, 10, false, true, 5, true,
		      "futex, futex-pi, fcntl, ofd, flock, kernel, spin, "
		      "pg-lwlock or pg-lock; futex-cond for the condition-like "
		      "waits that --all shows" },
	[LC_WAITS] = { "WAITS/s", "WAITS", 8, false, false, 0, false,
		       "waits on it that ended" },
	[LC_WAIT] = { "WAIT/s", "WAIT", 8, false, false, 0, false,
		      "the time those waits took" },
	[LC_AVG] = { "AVG", NULL, 7, false, false, 2, false, "the mean wait" },
	[LC_P99] = { "P99", NULL, 7, false, false, 4, false,
		     "the 99th percentile wait, the upper bound of its "
		     "histogram bucket" },
	[LC_MAX] = { "MAX", NULL, 7, false, false, 6, false,
		     "the longest wait" },
	[LC_WAITERS] = { "WAITERS", NULL, 7, false, false, 3, false,
			 "threads blocked on it now (on a spin lock, the "
			 "threads spinning on it)" },
	[LC_HOLDER] = { "HOLDER", NULL, 14, false, true, 7, true,
			"its last known holder, as pid/comm, and (tid/thread) "
			"when a thread other than the process's first held "
			"it" },
	[LC_PROCS] = { "PROCS", NULL, 5, false, false, 1, false,
		       "how many processes have waited on it" },
	[LC_HOST] = HOST_COLUMN,
};

const struct column proc_cols[PC_NR] = {
	[PC_PID] = { "PID", NULL, 7, false, false, 0, false,
		     "the process's id" },
	[PC_COMM] = { "COMMAND", NULL, 15, false, true, 0, true,
		      "its command name" },
	[PC_WAITS] = { "WAITS/s", "WAITS", 8, false, false, 0, false,
		       "its lock waits that ended" },
	[PC_WAIT] = { "WAIT/s", "WAIT", 8, false, false, 0, false,
		      "the time those waits took" },
	[PC_IOS] = { "IO/s", "IOS", 7, false, false, 2, false,
		     "its pread and pwrite calls" },
	[PC_IOTIME] = { "IOTIME/s", "IOTIME", 8, false, false, 1, false,
			"the time those calls took" },
	[PC_TOP] = { "TOP LOCK", NULL, 12, true, true, 0, true,
		     "the lock it has waited on longest" },
	[PC_HOST] = HOST_COLUMN,
};

const struct column file_cols[FC_NR] = {
	[FC_NAME] = { "FILE", NULL, 16, true, true, 0, true,
		      "the file's path" },
	[FC_READS] = { "PREAD/s", "PREADS", 8, false, false, 0, false,
		       "pread calls on it" },
	[FC_WRITES] = { "PWRITE/s", "PWRITES", 8, false, false, 0, false,
			"pwrite calls on it" },
	[FC_RBYTES] = { "RD B/s", "RD B", 7, false, false, 4, false,
			"the bytes those preads read" },
	[FC_WBYTES] = { "WR B/s", "WR B", 7, false, false, 3, false,
			"the bytes those pwrites wrote" },
	[FC_IOTIME] = { "IOTIME/s", "IOTIME", 8, false, false, 2, false,
			"the time the calls took" },
	[FC_UNDER] = { "LOCKED/s", "LOCKED", 8, false, false, 0, false,
		       "the part of that time in which the caller held a "
		       "lock" },
	[FC_P99] = { "P99", NULL, 7, false, false, 1, false,
		     "the 99th percentile call" },
	[FC_HOST] = HOST_COLUMN,
};

/*
 * Batch text: a width per column, one space between columns, two before
 * the last, which takes the rest of the line. Text cells longer than
 * their width are cut; numbers are not.
 */
const struct column batch_cols[BC_NR] = {
	[BC_NAME] = { "LOCK", NULL, 36, false, true, 0, true,
		      "the lock, named as on the screen, cut to 36 "
		      "characters as the screen cuts it, from the left "
		      "after two dots, so that a file's lock keeps its "
		      "file and chain or offset, and a lock site its "
		      "process count" },
	[BC_KIND] = { "KIND", NULL, 10, false, true, 0, true,
		      "its kind, as on the screen" },
	[BC_WAITS] = { "WAITS", NULL, 9, false, false, 0, false,
		       "waits on it that ended in the interval (in the "
		       "summary, in the run)" },
	[BC_WAIT] = { "TOTAL WAIT", NULL, 10, false, false, 0, false,
		      "the time those waits took" },
	[BC_AVG] = { "AVG", NULL, 9, false, false, 0, false, "the mean wait" },
	[BC_MAX] = { "MAX", NULL, 9, false, false, 0, false,
		     "the longest wait" },
	[BC_PROC] = { "PROCESS", NULL, 0, true, true, 0, true,
		      "comm/pid of the first process that waited on it, and "
		      "+N when N others waited too" },
	[BC_HOST] = HOST_COLUMN,
};

/* ---- numbers ---- */

const char *col_fmt_ns(uint64_t ns, char *buf, size_t len)
{
	if (!ns) {
		snprintf(buf, len, "-");
		return buf;
	}
	return lt_format_ns(ns, buf, len);
}

/* A count or a rate with a k/M/G suffix, fitting 7 characters. */
const char *col_fmt_num(double v, char *buf, size_t len)
{
	if (v <= 0)
		snprintf(buf, len, "0");
	else if (v < 10 && v != (double)(uint64_t)v)
		snprintf(buf, len, "%.1f", v);
	else if (v < 100000)
		snprintf(buf, len, "%.0f", v);
	else if (v < 1e7)
		snprintf(buf, len, "%.1fk", v / 1e3);
	else if (v < 1e10)
		snprintf(buf, len, "%.1fM", v / 1e6);
	else
		snprintf(buf, len, "%.1fG", v / 1e9);
	return buf;
}

const char *col_fmt_bytes(double v, char *buf, size_t len)
{
	static const char units[] = "BKMGT";
	int u = 0;

	while (v >= 1024 && u < 4) {
		v /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(buf, len, "%.0f", v);
	else
		snprintf(buf, len, "%.1f%c", v, units[u]);
	return buf;
}

double col_period(const struct col_ctx *cx)
{
	double p = cx->cumulative ? cx->snap->elapsed_s : cx->snap->interval_s;

	return p > 1e-6 ? p : 1e-6;
}

/* A count: per second per interval, the plain total when cumulative. */
double col_per(const struct col_ctx *cx, uint64_t v)
{
	return cx->cumulative ? (double)v : (double)v / col_period(cx);
}

/* Wait or I/O time: ms/s per interval, a duration when cumulative. */
const char *col_fmt_time_rate(const struct col_ctx *cx, uint64_t ns, char *buf,
			      size_t len)
{
	if (cx->cumulative)
		return col_fmt_ns(ns, buf, len);
	if (!ns)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.1fms", (double)ns / 1e6 / col_period(cx));
	return buf;
}

const struct lt_figures *col_lock_fig(const struct col_ctx *cx,
				      const struct lt_lock *l)
{
	return lt_lock_figures(l, cx->cumulative);
}

const struct lt_proc_figures *col_proc_fig(const struct col_ctx *cx,
					   const struct lt_proc *p)
{
	return cx->cumulative ? &p->total : &p->delta;
}

const struct lt_file_figures *col_file_fig(const struct col_ctx *cx,
					   const struct lt_file *f)
{
	return cx->cumulative ? &f->total : &f->delta;
}

const struct lt_lock *col_find_lock(const struct lt_snapshot *s, uint64_t id)
{
	return lt_snapshot_find(s, id);
}

uint64_t col_lock_p99(const struct lt_figures *f)
{
	return lt_wait_quantile(f, 0.99);
}

double col_lock_key(const struct col_ctx *cx, const struct lt_lock *l, int col)
{
	const struct lt_figures *f = col_lock_fig(cx, l);

	switch (col) {
	case LC_KIND:
		return l->kind;
	case LC_WAITS:
		return (double)f->waits;
	case LC_WAIT:
		return (double)f->wait_ns;
	case LC_AVG:
		return f->waits ? (double)f->wait_ns / (double)f->waits : 0;
	case LC_P99:
		return (double)col_lock_p99(f);
	case LC_MAX:
		return (double)f->max_wait_ns;
	case LC_WAITERS:
		return l->waiters_now + l->spinning_now;
	case LC_HOLDER:
		return l->holder;
	case LC_PROCS:
		return (double)l->n_pids;
	}
	return 0;
}

const char *col_lock_name(const struct lt_snapshot *s, uint64_t id)
{
	const struct lt_lock *l = id ? col_find_lock(s, id) : NULL;

	return l ? l->name : "-";
}

const char *col_lock_label(const struct lt_snapshot *s, uint64_t id, char *buf,
			   size_t len)
{
	const struct lt_lock *l = id ? col_find_lock(s, id) : NULL;

	if (!l) {
		snprintf(buf, len, "-");
		return buf;
	}
	return lt_lock_label(l, buf, len);
}

void col_lock_cell(const struct col_ctx *cx, const struct lt_lock *l, int col,
		   char *buf, size_t len)
{
	const struct lt_figures *f = col_lock_fig(cx, l);

	switch (col) {
	case LC_NAME:
		lt_lock_label(l, buf, len);
		break;
	case LC_KIND:
		snprintf(buf, len, "%s", lt_kind_name(l->kind));
		break;
	case LC_WAITS:
		col_fmt_num(col_per(cx, f->waits), buf, len);
		break;
	case LC_WAIT:
		col_fmt_time_rate(cx, f->wait_ns, buf, len);
		break;
	case LC_AVG:
		col_fmt_ns(f->waits ? f->wait_ns / f->waits : 0, buf, len);
		break;
	case LC_P99:
		col_fmt_ns(col_lock_p99(f), buf, len);
		break;
	case LC_MAX:
		col_fmt_ns(f->max_wait_ns, buf, len);
		break;
	case LC_WAITERS:
		/* a spin lock's waiters spin */
		snprintf(buf, len, "%u", l->waiters_now + l->spinning_now);
		break;
	case LC_HOLDER:
		if (l->holder && l->holder_tid && l->holder_tid != l->holder)
			/* One of its threads: which one, by TID and name. */
			snprintf(buf, len, "%d/%s (%d/%s)", l->holder,
				 l->holder_comm[0] ? l->holder_comm : "?",
				 l->holder_tid,
				 l->holder_thread[0] ? l->holder_thread : "?");
		else if (l->holder)
			snprintf(buf, len, "%d/%s", l->holder,
				 l->holder_comm[0] ? l->holder_comm : "?");
		else
			snprintf(buf, len, "-");
		break;
	case LC_PROCS:
		snprintf(buf, len, "%zu", l->n_pids);
		break;
	case LC_HOST:
		snprintf(buf, len, "%s", l->host ? l->host : "");
		break;
	default:
		buf[0] = 0;
	}
}

double col_proc_key(const struct col_ctx *cx, const struct lt_proc *p, int col)
{
	const struct lt_proc_figures *f = col_proc_fig(cx, p);

	switch (col) {
	case PC_PID:
		return p->pid;
	case PC_WAITS:
		return (double)f->waits;
	case PC_WAIT:
		return (double)f->wait_ns;
	case PC_IOS:
		return (double)f->io_count;
	case PC_IOTIME:
		return (double)f->io_ns;
	}
	return 0;
}

void col_proc_cell(const struct col_ctx *cx, const struct lt_proc *p, int col,
		   char *buf, size_t len)
{
	const struct lt_proc_figures *f = col_proc_fig(cx, p);

	switch (col) {
	case PC_PID:
		snprintf(buf, len, "%d", p->pid);
		break;
	case PC_COMM:
		snprintf(buf, len, "%s", p->comm);
		break;
	case PC_WAITS:
		col_fmt_num(col_per(cx, f->waits), buf, len);
		break;
	case PC_WAIT:
		col_fmt_time_rate(cx, f->wait_ns, buf, len);
		break;
	case PC_IOS:
		col_fmt_num(col_per(cx, f->io_count), buf, len);
		break;
	case PC_IOTIME:
		col_fmt_time_rate(cx, f->io_ns, buf, len);
		break;
	case PC_TOP:
		col_lock_label(cx->snap, p->top_lock, buf, len);
		break;
	case PC_HOST:
		snprintf(buf, len, "%s", p->host ? p->host : "");
		break;
	default:
		buf[0] = 0;
	}
}

double col_file_key(const struct col_ctx *cx, const struct lt_file *fl, int col)
{
	const struct lt_file_figures *f = col_file_fig(cx, fl);

	switch (col) {
	case FC_READS:
		return (double)f->reads;
	case FC_WRITES:
		return (double)f->writes;
	case FC_RBYTES:
		return (double)f->read_bytes;
	case FC_WBYTES:
		return (double)f->write_bytes;
	case FC_IOTIME:
		return (double)f->io_ns;
	case FC_UNDER:
		return (double)f->io_under_lock_ns;
	case FC_P99:
		return (double)lt_hist_quantile(f->io_hist, LT_HIST_BUCKETS,
						0.99);
	}
	return 0;
}

void col_file_cell(const struct col_ctx *cx, const struct lt_file *fl, int col,
		   char *buf, size_t len)
{
	const struct lt_file_figures *f = col_file_fig(cx, fl);

	switch (col) {
	case FC_NAME:
		snprintf(buf, len, "%s", fl->name);
		break;
	case FC_READS:
		col_fmt_num(col_per(cx, f->reads), buf, len);
		break;
	case FC_WRITES:
		col_fmt_num(col_per(cx, f->writes), buf, len);
		break;
	case FC_RBYTES:
		col_fmt_bytes(col_per(cx, f->read_bytes), buf, len);
		break;
	case FC_WBYTES:
		col_fmt_bytes(col_per(cx, f->write_bytes), buf, len);
		break;
	case FC_IOTIME:
		col_fmt_time_rate(cx, f->io_ns, buf, len);
		break;
	case FC_UNDER:
		col_fmt_time_rate(cx, f->io_under_lock_ns, buf, len);
		break;
	case FC_P99:
		col_fmt_ns(lt_hist_quantile(f->io_hist, LT_HIST_BUCKETS, 0.99),
			   buf, len);
		break;
	case FC_HOST:
		snprintf(buf, len, "%s", fl->host ? fl->host : "");
		break;
	default:
		buf[0] = 0;
	}
}

/* ---- a fleet view's hosts ---- */

int col_host_width(const struct lt_snapshot *s)
{
	int w = 0;
	size_t i;

	for (i = 0; s && i < s->n_hosts; i++)
		if ((int)strlen(s->hosts[i].name) > w)
			w = (int)strlen(s->hosts[i].name);
	return w && w < lock_cols[LC_HOST].width ? lock_cols[LC_HOST].width : w;
}

void col_host_line(const struct lt_host *h, bool totals, char *buf, size_t len)
{
	const struct lt_kind_figures *f = totals ? &h->total : &h->delta;
	size_t n = totals ? h->n_locks_total : h->n_locks;
	char ns[16], when[16];
	time_t t = (time_t)h->down_since;
	struct tm tm;

	if (h->up) {
		snprintf(buf, len,
			 "%s up: %zu lock%s, %" PRIu64 " waits, %s waiting%s",
			 h->name, n, n == 1 ? "" : "s", f->waits,
			 lt_format_ns(f->wait_ns, ns, sizeof(ns)),
			 h->n_deadlocks ? ", DEADLOCK" : "");
		return;
	}
	strftime(when, sizeof(when), "%H:%M:%S", localtime_r(&t, &tm));
	snprintf(buf, len, "%s DOWN since %s: %s", h->name, when, h->why);
}
