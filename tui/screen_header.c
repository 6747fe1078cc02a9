// SPDX-License-Identifier: GPL-2.0-or-later
/* The header above every view: its lines, one function for each meter. */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "screen_priv.h"

/* The kinds the header meters, in order. */
static const enum lt_kind meter_kinds[] = {
	LT_KIND_FUTEX, LT_KIND_FUTEX_PI, LT_KIND_FCNTL,	    LT_KIND_OFD,
	LT_KIND_FLOCK, LT_KIND_SPIN,	 LT_KIND_PG_LWLOCK, LT_KIND_PG_LOCK,
};
#define METERED 6 /* of meter_kinds, the header's per-kind line meters */

struct totals {
	struct lt_kind_figures kinds[LT_KIND_NR];
	uint64_t lock_wait_ns;
	uint64_t io_under_lock_ns;
	unsigned int spinning; /* threads spinning now, on any lock */
	size_t threads;
	size_t procs;
};

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

static void add_pid(struct screen *sc, size_t *n, pid_t pid)
{
	if (lt_grow((void **)&sc->pids, &sc->cap_pids, *n + 1,
		    sizeof(*sc->pids)))
		return;
	sc->pids[(*n)++] = pid;
}

static void sum_totals(struct screen *sc, struct totals *t)
{
	const struct lt_snapshot *s = sc->cx.snap;
	size_t i, j, n = 0;
	int k;

	memset(t, 0, sizeof(*t));
	lt_snapshot_kinds(s, sc->cx.cumulative, t->kinds);
	for (i = 0; i < s->n_locks; i++) {
		const struct lt_lock *l = &s->locks[i];
		const struct lt_figures *f = col_lock_fig(&sc->cx, l);

		t->spinning += l->spinning_now;
		if (!f->waits || !lt_kind_is_lock(l->kind))
			continue;
		t->io_under_lock_ns += f->io_under_lock_ns;
		if (!s->n_procs)
			for (j = 0; j < l->n_pids; j++)
				add_pid(sc, &n, l->pids[j]);
	}
	for (k = 0; k < LT_KIND_NR; k++)
		if (lt_kind_is_lock(k))
			t->lock_wait_ns += t->kinds[k].wait_ns;
	for (i = 0; i < s->n_procs; i++) {
		const struct lt_proc_figures *f =
			col_proc_fig(&sc->cx, &s->procs[i]);

		if (f->waits)
			add_pid(sc, &n, s->procs[i].pid);
	}
	if (s->n_files) {
		t->io_under_lock_ns = 0;
		for (i = 0; i < s->n_files; i++)
			t->io_under_lock_ns +=
				col_file_fig(&sc->cx, &s->files[i])
					->io_under_lock_ns;
	}
	qsort(sc->pids, n, sizeof(*sc->pids), cmp_pid);
	for (i = 0; i < n; i++) {
		if (i && sc->pids[i] == sc->pids[i - 1])
			continue;
		t->procs++;
		t->threads += sc->o.threads ? sc->o.threads(sc->pids[i]) : 1;
	}
}

static void draw_meter(struct screen *sc, int y, int x, int w, double share)
{
	int fill, i;
	char pct[16];

	if (w < 8)
		return;
	snprintf(pct, sizeof(pct), "%.1f%%", share * 100);
	if (share > 1)
		share = 1;
	fill = (int)(share * (w - 2) + 0.5);
	mvaddch(y, x, '[');
	attron(A_BOLD);
	attron(attr(sc, share > 0.5 ? C_BAR_HIGH : C_BAR, A_BOLD));
	for (i = 0; i < w - 2; i++)
		mvaddch(y, x + 1 + i, i < fill ? '|' : ' ');
	attroff(attr(sc, share > 0.5 ? C_BAR_HIGH : C_BAR, A_BOLD));
	attroff(A_BOLD);
	mvaddstr(y, x + w - 1 - (int)strlen(pct), pct);
	mvaddch(y, x + w - 1, ']');
}

static void label(struct screen *sc, int y, int x, const char *s)
{
	attron(attr(sc, C_LABEL, A_BOLD));
	mvaddstr(y, x, s);
	attroff(attr(sc, C_LABEL, A_BOLD));
}

/* The title line: the time, the delay, the figures' period, the source. */
static void meter_title(struct screen *sc, int cols)
{
	const struct lt_snapshot *s = sc->cx.snap;
	char line[256], when[16];
	time_t now = s ? (time_t)s->time : time(NULL);
	struct tm tm;

	strftime(when, sizeof(when), "%H:%M:%S", localtime_r(&now, &tm));
	attron(A_BOLD);
	mvaddstr(0, 0, "locktop");
	attroff(A_BOLD);
	snprintf(line, sizeof(line), " %s  every %.2gs  %s  %s", when,
		 sc->delay_ms / 1000.0,
		 sc->cx.cumulative ? "cumulative" : "per second", sc->o.source);
	addnstr(line, cols - 8);
}

/* DEADLOCK and PAUSED, at the right end of the title line. */
static void meter_alerts(struct screen *sc, int cols)
{
	const struct lt_snapshot *s = sc->cx.snap;
	char a[48];
	int x;

	x = cols;
	if (s->n_deadlocks) {
		snprintf(a, sizeof(a), " DEADLOCK x%zu ", s->n_deadlocks);
		x -= (int)strlen(a);
		/* A cycle never goes away by itself: flash it. */
		attron(attr(sc, C_ALERT, A_REVERSE) | A_BOLD |
		       (sc->frame & 1 ? A_REVERSE : 0));
		mvaddstr(0, x, a);
		attroff(attr(sc, C_ALERT, A_REVERSE) | A_BOLD | A_REVERSE);
	}
	if (sc->paused) {
		x -= 8;
		attron(A_REVERSE | A_BOLD);
		mvaddstr(0, x, " PAUSED ");
		attroff(A_REVERSE | A_BOLD);
	}
}

/* "drops N", and while there are some, the reason of most of them. */
static void drop_label(const struct lt_snapshot *s, bool cumulative,
		       uint64_t drops, char *buf, size_t len)
{
	const uint64_t *by = cumulative ? s->drop_total : s->drop_delta;
	unsigned int r, top = 0;

	for (r = 1; r < LT_DROP_REASONS; r++)
		if (by[r] > by[top])
			top = r;
	if (drops && by[top])
		snprintf(buf, len, "drops %" PRIu64 " (%s)", drops,
			 lt_drop_name(top));
	else
		snprintf(buf, len, "drops %" PRIu64, drops);
}

/* Wait: the traced threads' share of time blocked on locks, and drops. */
static void meter_wait(struct screen *sc, int y, int cols,
		       const struct totals *t)
{
	const struct lt_snapshot *s = sc->cx.snap;
	char a[48], line[256];
	double p, share, blocked;
	uint64_t drops;
	int meter_w;

	p = col_period(&sc->cx);
	blocked = (double)t->lock_wait_ns / 1e9 / p;
	share = t->threads ? blocked / (double)t->threads : 0;
	drops = sc->cx.cumulative ? s->drops_total : s->drops_delta;
	label(sc, y, 0, "Wait");
	/* What the share is of: every thread of the processes that
	 * waited, idle pool threads too; "blocked" is how many of them
	 * waited at a time, on average. */
	snprintf(line, sizeof(line),
		 " of %zu thr in %zu waiting proc, %.2f blocked on avg",
		 t->threads, t->procs, blocked);
	drop_label(s, sc->cx.cumulative, drops, a, sizeof(a));
	meter_w = cols - 5 - (int)strlen(line) - (int)strlen(a) - 2;
	if (meter_w > 40)
		meter_w = 40;
	if (meter_w < 10) {
		snprintf(line, sizeof(line), " %.2f blk", blocked);
		meter_w = cols - 5 - (int)strlen(line) - (int)strlen(a) - 2;
	}
	draw_meter(sc, y, 5, meter_w, share);
	mvaddnstr(y, 5 + (meter_w > 0 ? meter_w : 0), line, cols - 5 - meter_w);
	if (drops)
		attron(attr(sc, C_ALERT, A_BOLD) | A_BOLD);
	mvaddstr(y, cols - (int)strlen(a), a);
	attroff(attr(sc, C_ALERT, A_BOLD) | A_BOLD);
}

/* Whether a kind did anything: waits, or (spin) time and spinners. */
static bool kind_busy(const struct totals *t, enum lt_kind k)
{
	if (k == LT_KIND_SPIN)
		return t->kinds[k].wait_ns || t->spinning;
	return t->kinds[k].waits;
}

/*
 * One kind's figures after its name: waits and wait time per second (or
 * in all); for spin, spin time per second and the threads spinning now.
 */
static void kind_figures(struct screen *sc, enum lt_kind k,
			 const struct totals *t, char *line, size_t size)
{
	const struct lt_kind_figures *kf = &t->kinds[k];
	char a[48], b[48];

	col_fmt_time_rate(&sc->cx, kf->wait_ns, b, sizeof(b));
	if (k == LT_KIND_SPIN)
		snprintf(line, size, " %s%s %u spinning", b,
			 kf->wait_ns && !sc->cx.cumulative ? "/s" : "",
			 t->spinning);
	else if (sc->cx.cumulative)
		snprintf(line, size, " %s %s",
			 col_fmt_num((double)kf->waits, a, sizeof(a)), b);
	else
		snprintf(line, size, " %s/s %s%s",
			 col_fmt_num(col_per(&sc->cx, kf->waits), a, sizeof(a)),
			 b, kf->wait_ns ? "/s" : "");
}

/*
 * Waits by kind; the busy ones first, over at most two lines. Returns the
 * line after them.
 */
static int meter_by_kind(struct screen *sc, int y, int cols,
			 const struct totals *t)
{
	char line[256];
	int order[METERED], n = 0, pass, x, i, lines;
	size_t k;

	for (pass = 0; pass < 2; pass++)
		for (k = 0; k < METERED; k++)
			if (kind_busy(t, meter_kinds[k]) == !pass)
				order[n++] = (int)k;
	x = 0;
	lines = 0;
	for (i = 0; i < n && lines < 2; i++) {
		enum lt_kind kind = meter_kinds[order[i]];
		const char *name = lt_kind_name(kind);
		bool busy = kind_busy(t, kind);
		int cw;

		kind_figures(sc, kind, t, line, sizeof(line));
		cw = (int)strlen(name) + (int)strlen(line) + 2;
		if (x && x + cw > cols) {
			if (++lines == 2)
				break;
			y++;
			x = 0;
		}
		if (!busy)
			attron(attr(sc, C_DIM, A_DIM));
		label(sc, y, x, name);
		mvaddnstr(y, x + (int)strlen(name), line,
			  cols - x - (int)strlen(name));
		attroff(attr(sc, C_DIM, A_DIM));
		x += cw;
	}
	y++;
	return y;
}

/* pread latency, p50 and p99; returns the column after it. */
static int meter_pread(struct screen *sc, int y, int cols)
{
	const struct lt_snapshot *s = sc->cx.snap;
	char a[48], b[48], line[256];
	uint64_t p50, p99;
	int x, i;

	p50 = lt_hist_quantile(s->io_hist_delta, LT_HIST_BUCKETS, 0.5);
	p99 = lt_hist_quantile(s->io_hist_delta, LT_HIST_BUCKETS, 0.99);
	label(sc, y, 0, "pread");
	snprintf(line, sizeof(line), " p50 %s p99 %s  ",
		 col_fmt_ns(p50, a, sizeof(a)), col_fmt_ns(p99, b, sizeof(b)));
	addnstr(line, cols - 5);
	getyx(stdscr, i, x);
	(void)i;
	return x;
}

/* I/O under lock, where it fits after x; returns the column after it. */
static int meter_locked(struct screen *sc, int y, int x, int cols,
			const struct totals *t)
{
	char a[48], line[256];
	int i;

	if (x + 12 < cols) {
		label(sc, y, x, "locked");
		snprintf(line, sizeof(line), " %s  ",
			 col_fmt_time_rate(&sc->cx, t->io_under_lock_ns, a,
					   sizeof(a)));
		addnstr(line, cols - x - 6);
		getyx(stdscr, i, x);
		(void)i;
	}
	return x;
}

/*
 * The fullest of the kernel's lock, party and file maps: drops
 * start at 100%, idle slots go back past 25%, sooner past 50%;
 * "folding" while new byte ranges count in their file's other
 * ranges. Appended to line, which holds size bytes.
 */
static void meter_maps(const struct lt_snapshot *s, char *line, size_t size)
{
	if (s->lock_capacity || s->file_capacity) {
		double fill = 0;
		size_t len = strlen(line);

		if (s->lock_capacity)
			fill = (double)s->lock_entries /
			       (double)s->lock_capacity;
		if (s->file_capacity &&
		    (double)s->file_entries / (double)s->file_capacity > fill)
			fill = (double)s->file_entries /
			       (double)s->file_capacity;
		if (s->party_capacity &&
		    (double)s->party_entries / (double)s->party_capacity > fill)
			fill = (double)s->party_entries /
			       (double)s->party_capacity;
		snprintf(line + len, size - len, " maps %.0f%%%s", fill * 100,
			 s->folding ? " folding" : "");
	}
}

/* The probes' own cost from column x: per event, events/s, CPU; the maps. */
static void meter_probes(struct screen *sc, int y, int x, int cols)
{
	const struct lt_snapshot *s = sc->cx.snap;
	char a[48], c[48], line[256];
	double p = col_period(&sc->cx);
	uint64_t ev_cnt = 0, ev_ns = 0;
	size_t k;

	for (k = 0; k < s->n_probes; k++) {
		ev_cnt += sc->cx.cumulative ? s->probes[k].run_cnt :
					      s->probes[k].delta_cnt;
		ev_ns += sc->cx.cumulative ? s->probes[k].run_ns :
					     s->probes[k].delta_ns;
	}
	snprintf(line, sizeof(line), " %sns/ev %s ev/s cpu %.1f%%",
		 ev_cnt ? col_fmt_num((double)ev_ns / (double)ev_cnt, a,
				      sizeof(a)) :
			  "-",
		 col_fmt_num((double)(sc->cx.cumulative ? s->events_total :
							  s->events_delta) /
				     (sc->cx.cumulative ? p : p),
			     c, sizeof(c)),
		 s->cpu_percent);
	meter_maps(s, line, sizeof(line));
	/* The probes' cost shows whole or not at all. */
	if (x + 6 + (int)strlen(line) <= cols) {
		label(sc, y, x, "probes");
		addstr(line);
	}
}

/*
 * Where the kernel does not report its spinning waits, a line says so
 * (and why), so that no kernel spinlock row is taken for none waiting.
 * Returns the line after it.
 */
static int meter_kspins(struct screen *sc, int y, int cols)
{
	const struct lt_snapshot *s = sc->cx.snap;
	char line[512];

	if (s->kernel_spins != LT_KSPINS_HIDDEN)
		return y;
	snprintf(line, sizeof(line), " not visible here: %s",
		 s->kernel_spins_why ? s->kernel_spins_why : "");
	attron(attr(sc, C_DIM, A_DIM));
	label(sc, y, 0, "kernel spinlocks");
	mvaddnstr(y, 16, line, cols - 16);
	attroff(attr(sc, C_DIM, A_DIM));
	return y + 1;
}

/*
 * A fleet view: one line per host, up with its figures or down since
 * when and why, at most a third of the screen. Returns the line after.
 */
static int meter_hosts(struct screen *sc, int y, int cols)
{
	const struct lt_snapshot *s = sc->cx.snap;
	char line[320];
	size_t i;
	int max;

	max = getmaxy(stdscr) / 3 > 1 ? getmaxy(stdscr) / 3 : 1;
	for (i = 0; i < s->n_hosts; i++) {
		const struct lt_host *h = &s->hosts[i];

		if ((int)i == max - 1 && s->n_hosts > (size_t)max) {
			snprintf(line, sizeof(line), "... %zu more hosts",
				 s->n_hosts - i);
			mvaddnstr(y++, 5, line, cols - 5);
			break;
		}
		col_host_line(h, sc->cx.cumulative, line, sizeof(line));
		label(sc, y, 0, "host");
		if (!h->up)
			attron(attr(sc, C_ALERT, A_BOLD) | A_BOLD);
		mvaddnstr(y, 5, line, cols - 5);
		if (!h->up)
			attroff(attr(sc, C_ALERT, A_BOLD) | A_BOLD);
		y++;
	}
	return y;
}

/* Returns the first line after the header. */
int screen_header_draw(struct screen *sc, int cols)
{
	const struct lt_snapshot *s = sc->cx.snap;
	struct totals t;
	int y, x;

	meter_title(sc, cols);
	if (!s) {
		mvaddstr(1, 0, "waiting for the first interval...");
		return 3;
	}
	meter_alerts(sc, cols);
	y = 1;

	sum_totals(sc, &t);
	meter_wait(sc, y, cols, &t);
	y++;
	y = meter_by_kind(sc, y, cols, &t);

	/* pread latency, I/O under lock, the probes' own cost */
	x = meter_pread(sc, y, cols);
	x = meter_locked(sc, y, x, cols, &t);
	meter_probes(sc, y, x, cols);
	y = meter_kspins(sc, y + 1, cols);
	return meter_hosts(sc, y, cols);
}
