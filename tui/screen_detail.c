// SPDX-License-Identifier: GPL-2.0-or-later
/* One lock's detail: its figures, histograms, holders, waiters and stack. */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "screen_priv.h"

static void wlabel(struct screen *sc, WINDOW *w, int y, int x, const char *s)
{
	wattron(w, attr(sc, C_LABEL, A_BOLD));
	mvwaddstr(w, y, x, s);
	wattroff(w, attr(sc, C_LABEL, A_BOLD));
}

/* A log2 histogram as horizontal bars, busy buckets only. */
static int draw_hist(struct screen *sc, WINDOW *w, int y, int cols,
		     const char *title, const uint64_t *hist)
{
	uint64_t max = 0;
	int i, first = -1, last = -1, bar_w = cols - 24;
	char lo[16], line[64];

	for (i = 0; i < LT_HIST_BUCKETS; i++) {
		if (!hist[i])
			continue;
		if (first < 0)
			first = i;
		last = i;
		if (hist[i] > max)
			max = hist[i];
	}
	wlabel(sc, w, y, 0, title);
	if (first < 0)
		waddstr(w, "  (none)");
	y++;
	if (first < 0 || bar_w < 4)
		return y;
	if (bar_w > 60)
		bar_w = 60;
	for (i = first; i <= last; i++, y++) {
		int n = (int)((double)hist[i] / (double)max * bar_w + 0.5);

		lt_format_ns(1ULL << i, lo, sizeof(lo));
		snprintf(line, sizeof(line), "%9s %10" PRIu64 " ", lo, hist[i]);
		mvwaddstr(w, y, 0, line);
		wattron(w, attr(sc, C_BAR, A_BOLD));
		while (n-- > 0)
			waddch(w, '#');
		wattroff(w, attr(sc, C_BAR, A_BOLD));
	}
	return y;
}

static int draw_parties(struct screen *sc, WINDOW *w, int y, int cols,
			const char *title, const struct lt_party *p, size_t n)
{
	char line[128], ns[16];
	size_t i;

	wlabel(sc, w, y++, 0, title);
	if (!n) {
		mvwaddstr(w, y++, 2, "(none recorded)");
		return y;
	}
	for (i = 0; i < n && i < LT_TOP_PARTIES; i++) {
		int k = snprintf(line, sizeof(line),
				 "  %7d %-16s %10" PRIu64 " %10s", p[i].pid,
				 p[i].comm, p[i].count,
				 lt_format_ns(p[i].ns, ns, sizeof(ns)));

		/* A holder's thread that held most, by TID and name. */
		if (p[i].tid && k > 0 && k < (int)sizeof(line))
			snprintf(line + k, sizeof(line) - k, "  %7d %s",
				 p[i].tid, p[i].thread);
		mvwaddnstr(w, y++, 0, line, cols);
	}
	return y;
}

#define DETAIL_LINES 256
/* The lock's kind, ids and file range; returns the line after them. */
static int detail_identity(WINDOW *w, const struct lt_lock *l, int y, int cols)
{
	char e[16], line[512];
	int n;

	snprintf(line, sizeof(line),
		 "%s%s%skind %s  id %" PRIu64 "  address 0x%" PRIx64 "  key %s",
		 l->host ? "host " : "", l->host ? l->host : "",
		 l->host ? "  " : "", lt_kind_name(l->kind), l->id, l->address,
		 l->key[0] ? l->key : "-");
	mvwaddnstr(w, y++, 0, line, cols);
	if (l->kernel_type[0] || l->caller[0]) {
		snprintf(line, sizeof(line), "kernel %s  caller %s",
			 l->kernel_type[0] ? l->kernel_type : "-",
			 l->caller[0] ? l->caller : "-");
		mvwaddnstr(w, y++, 0, line, cols);
	}
	if (l->ino) {
		if (l->end > l->start)
			snprintf(e, sizeof(e), "bytes");
		else
			snprintf(e, sizeof(e), "offset");
		n = snprintf(line, sizeof(line),
			     "file dev %" PRIu64 " ino %" PRIu64
			     "  %s %" PRIu64,
			     l->dev, l->ino, e, l->start);
		if (l->end > l->start)
			snprintf(line + n, sizeof(line) - n, "-%" PRIu64,
				 l->end);
		mvwaddnstr(w, y++, 0, line, cols);
	}
	return y;
}

/* The lines of the lock's figures after the waits' (figures.def's DETAIL). */
enum detail_line { DETAIL_HOLD, DETAIL_EVENT };

/* Appends "LABEL VALUE" to a line of n characters; returns its length. */
static int detail_put(char *line, size_t len, int n, const char *label,
		      enum lt_unit unit, uint64_t v)
{
	char ns[16];
	int k;

	if (n < 0 || (size_t)n >= len)
		return n;
	if (unit == LT_UNIT_NS)
		k = snprintf(line + n, len - n, "%s%s %s", n ? "  " : "", label,
			     col_fmt_ns(v, ns, sizeof(ns)));
	else
		k = snprintf(line + n, len - n, "%s%s %" PRIu64, n ? "  " : "",
			     label, v);
	return k < 0 ? n : n + k;
}

/* One line of figures, in figures.def's order, on line y. */
static void detail_line(WINDOW *w, const struct lt_figures *f,
			enum detail_line which, int y, int cols)
{
	char line[512];
	int n = 0;

	line[0] = '\0';
#define LT_DETAIL(NAME, UNIT, LINE, LABEL) \
	if (which == DETAIL_##LINE)        \
		n = detail_put(line, sizeof(line), n, LABEL, UNIT, f->NAME);
#include "figures.def"
	mvwaddnstr(w, y, 0, line, cols);
}

/* Waits, holds and wake-ups, on three lines; returns the line after. */
static int detail_figures(struct screen *sc, WINDOW *w,
			  const struct lt_figures *f, int y, int cols)
{
	char a[16], b[16], c[16], d[16], e[16], line[512];

	snprintf(line, sizeof(line),
		 "%s: waits %" PRIu64 "  wait %s  avg %s  p50 %s  p99 %s  "
		 "max %s",
		 sc->cx.cumulative ? "whole run" : "interval", f->waits,
		 col_fmt_ns(f->wait_ns, a, sizeof(a)),
		 col_fmt_ns(f->waits ? f->wait_ns / f->waits : 0, b, sizeof(b)),
		 col_fmt_ns(lt_wait_quantile(f, 0.5), c, sizeof(c)),
		 col_fmt_ns(col_lock_p99(f), d, sizeof(d)),
		 col_fmt_ns(f->max_wait_ns, e, sizeof(e)));
	mvwaddnstr(w, y++, 0, line, cols);
	detail_line(w, f, DETAIL_HOLD, y++, cols);
	detail_line(w, f, DETAIL_EVENT, y++, cols);
	return y;
}

/* Waiters now, the holder and the pids seen, on line y; returns y. */
static int detail_waiters(WINDOW *w, const struct lt_lock *l, int y, int cols)
{
	char e[16], line[512];
	int n;
	size_t i;

	if (l->holder)
		snprintf(e, sizeof(e), "%d", l->holder);
	else
		snprintf(e, sizeof(e), "-");
	n = snprintf(line, sizeof(line), "waiters now %u  holder %s/%s",
		     l->waiters_now, e, l->holder ? l->holder_comm : "-");
	if (l->holder && l->holder_tid)
		n += snprintf(line + n, sizeof(line) - n, "  thread %d/%s",
			      l->holder_tid, l->holder_thread);
	n += snprintf(line + n, sizeof(line) - n, "  pids");
	for (i = 0;
	     i < l->n_pids && n + 20 < (int)sizeof(line) && n + 10 < cols; i++)
		n += snprintf(line + n, sizeof(line) - n, " %d", l->pids[i]);
	if (i < l->n_pids)
		snprintf(line + n, sizeof(line) - n, " +%zu", l->n_pids - i);
	mvwaddnstr(w, y, 0, line, cols);
	return y;
}

/* A stack's frames, one a line, from line y; returns the line after. */
static int draw_frames(WINDOW *w, const char *p, int y, int cols)
{
	while (*p && y < DETAIL_LINES) {
		const char *nl = strchr(p, '\n');
		int len = nl ? (int)(nl - p) : (int)strlen(p);

		mvwaddnstr(w, y++, 2, p, len < cols - 2 ? len : cols - 2);
		p = nl ? nl + 1 : p + len;
	}
	return y;
}

/* Where there is no stack to show, why. */
static int no_stack(struct screen *sc, WINDOW *w, int y)
{
	mvwaddstr(w, y++, 2,
		  sc->o.stacks ? "(none recorded yet)" :
				 "(start locktop with --stacks)");
	return y;
}

/*
 * The lock's worst wait stack, then where it was held: the release
 * stacks that ended its waits, most waiting ended first, each headed by
 * its releases and the waiting they ended (totals over the run). From
 * line y; returns the line after.
 */
static int detail_stack(struct screen *sc, WINDOW *w, const struct lt_lock *l,
			int y, int cols)
{
	char line[96], ns[16];
	size_t i;

	wlabel(sc, w, y++, 0, "Stack");
	y = l->stack ? draw_frames(w, l->stack, y, cols) : no_stack(sc, w, y);
	if (y >= DETAIL_LINES - 2)
		return y;
	y++;
	wlabel(sc, w, y++, 0, "Where it was held (release stack)");
	if (!l->n_releases)
		return no_stack(sc, w, y);
	for (i = 0; i < l->n_releases && y < DETAIL_LINES - 1; i++) {
		snprintf(line, sizeof(line),
			 "#%zu: %" PRIu64 " releases ended %s of waiting",
			 i + 1, l->releases[i].count,
			 lt_format_ns(l->releases[i].ns, ns, sizeof(ns)));
		mvwaddnstr(w, y++, 1, line, cols - 1);
		y = draw_frames(w, l->releases[i].stack, y, cols);
	}
	return y;
}

/* Fills the pad with the lock's detail; returns the lines used. */
static int fill_detail(struct screen *sc, WINDOW *w, const struct lt_lock *l,
		       int cols)
{
	const struct lt_figures *f = col_lock_fig(&sc->cx, l);
	int y = 0;

	y = detail_identity(w, l, y, cols);
	y = detail_figures(sc, w, f, y, cols);
	y = detail_waiters(w, l, y, cols);
	y += 2;
	y = draw_hist(sc, w, y, cols, "Wait time", f->wait_hist);
	y = draw_hist(sc, w, y, cols, "Hold time", f->hold_hist);
	y++;
	y = draw_parties(sc, w, y, cols,
			 "Top waiters    pid comm                  count"
			 "       time",
			 l->waiters, l->n_waiters);
	y = draw_parties(sc, w, y, cols,
			 "Top holders    pid comm                  count"
			 "     caused      tid thread",
			 l->holders, l->n_holders);
	y++;
	y = detail_stack(sc, w, l, y, cols);
	return y;
}

void screen_detail_draw(struct screen *sc, int y0, int bottom, int cols)
{
	const struct lt_lock *l = col_find_lock(sc->cx.snap, sc->detail_id);
	WINDOW *pad;
	int used;

	attron(attr(sc, C_COLHEAD, A_REVERSE));
	mvhline(y0, 0, ' ', cols);
	screen_put(y0, 0, cols, l ? l->name : "(the lock is gone)", true, true);
	attroff(attr(sc, C_COLHEAD, A_REVERSE));
	sc->head_y = -1;
	if (!l || bottom <= y0 + 1)
		return;
	/* The detail may be longer than the screen: it scrolls in a pad. */
	pad = newpad(DETAIL_LINES, cols);
	if (!pad)
		return;
	used = fill_detail(sc, pad, l, cols);
	if (sc->detail_scroll > used - (bottom - y0 - 1))
		sc->detail_scroll = used - (bottom - y0 - 1);
	if (sc->detail_scroll < 0)
		sc->detail_scroll = 0;
	copywin(pad, stdscr, sc->detail_scroll, 0, y0 + 1, 0, bottom - 1,
		cols - 1, FALSE);
	delwin(pad);
}
