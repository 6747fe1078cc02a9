// SPDX-License-Identifier: GPL-2.0-or-later
/* The frame: header, view, status and footer; help; the deadlock chains. */
#include <stdio.h>
#include <string.h>
#include "screen_priv.h"

#define MIN_ROWS 10
#define MIN_COLS 40

/* ---- drawing helpers ---- */

/* Columns a UTF-8 string takes: continuation bytes take none. */
static int width_of(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return n;
}

/*
 * Writes s at (y, x), padded or cut to w columns. A name that is a path
 * loses its start, so that its end names the file and the offset; other
 * text (a pid/comm, a command) keeps its start.
 */
void screen_put(int y, int x, int w, const char *s, bool left, bool path)
{
	int len = width_of(s);

	if (w <= 0)
		return;
	if (len > w) {
		if (len != (int)strlen(s)) {
			mvaddnstr(y, x, s, w);
		} else if (path && w > 4) {
			mvaddstr(y, x, "..");
			mvaddnstr(y, x + 2, s + len - (w - 2), w - 2);
		} else {
			mvaddnstr(y, x, s, w);
		}
		return;
	}
	if (left) {
		mvaddstr(y, x, s);
		if (w > len)
			mvhline(y, x + len, ' ', w - len);
	} else {
		if (w > len)
			mvhline(y, x, ' ', w - len);
		mvaddstr(y, x + w - len, s);
	}
}

/* ---- views ---- */

static void draw_deadlocks(struct screen *sc, int y, int bottom, int cols)
{
	const struct lt_snapshot *s = sc->cx.snap;
	char line[512], who[48];
	size_t d, m;

	attron(attr(sc, C_COLHEAD, A_REVERSE));
	mvhline(y, 0, ' ', cols);
	mvaddnstr(y, 0, "BLOCKED CHAINS (each waits on a lock the next holds)",
		  cols);
	attroff(attr(sc, C_COLHEAD, A_REVERSE));
	sc->head_y = -1;
	y++;
	if (!s->n_deadlocks) {
		attron(A_DIM);
		mvaddnstr(y + 1, 2,
			  "no deadlock: no cycle in the wait-for graph",
			  cols - 2);
		attroff(A_DIM);
		return;
	}
	for (d = 0; d < s->n_deadlocks && y < bottom; d++) {
		const struct lt_deadlock *dl = &s->deadlocks[d];
		size_t n = dl->n < LT_CYCLE_MAX ? dl->n : LT_CYCLE_MAX;

		attron(attr(sc, C_ALERT, A_BOLD) | A_BOLD);
		/* Its host, where rows come from hosts. */
		snprintf(line, sizeof(line), "cycle %zu%s%s: %zu processes",
			 d + 1, dl->host ? " on " : "",
			 dl->host ? dl->host : "", n);
		mvaddnstr(y++, 0, line, cols);
		attroff(attr(sc, C_ALERT, A_BOLD) | A_BOLD);
		for (m = 0; m < n && y < bottom; m++) {
			size_t next = (m + 1) % n;

			snprintf(who, sizeof(who), "%d/%.16s", dl->pids[next],
				 dl->comms[next]);
			snprintf(line, sizeof(line),
				 "  %d/%.16s waits on %s held by %s",
				 dl->pids[m], dl->comms[m],
				 col_lock_name(s, dl->locks[m]), who);
			mvaddnstr(y++, 0, line, cols);
		}
	}
}

static const char *const help_lines[] = {
	"locktop: where processes wait on locks, who holds them, what it costs",
	"",
	"Views    F2 or l  Locks       F3 or P  Processes   F4 or f  Files",
	"         F5 or D  Deadlocks   Tab      next view   Enter    lock detail",
	"Move     arrows, PgUp/PgDn, Home/End; Esc or Left leaves the detail",
	"Sort     < > pick the column, F6 a menu, I inverts, click a title",
	"Filter   / name   p pid   k kind (cycles)   a futex-cond too   c clears",
	"Time     space pauses   d sets the delay   t per second <-> cumulative",
	"Other    h or ? this help   q or F10 quits",
	"",
	"Header   Wait: share of the traced threads' time blocked on locks:",
	"         lock wait time / interval / threads of the waiting processes",
	"         (processes when the source is remote); 'blocked' is the",
	"         average number of threads blocked at any moment.",
	"         Kinds: waits/s and wait time per second (ms/s).",
	"         pread p50/p99: latency of all pread/pwrite in the interval;",
	"         locked: I/O time spent holding a lock; probes: cost per",
	"         event, events/s and the probes' CPU share of one core;",
	"         maps: the fuller of the kernel's lock and file maps.",
	"Columns  WAITS/s, WAIT/s (ms of waiting per second), AVG, P99, MAX of",
	"         one wait; WAITERS blocked now; HOLDER pid/comm; PROCS seen.",
	"",
	"Any key returns.",
};

static void draw_help(struct screen *sc, int y, int bottom, int cols)
{
	size_t i;

	(void)sc;
	for (i = 0; i < sizeof(help_lines) / sizeof(*help_lines) && y < bottom;
	     i++, y++)
		mvaddnstr(y, 0, help_lines[i], cols);
}

static const struct {
	const char *key;
	const char *label;
} fkeys[] = {
	{ "F1", "Help" },   { "F2", "Locks" },	{ "F3", "Procs" },
	{ "F4", "Files" },  { "F5", "Deadlk" }, { "F6", "SortBy" },
	{ "F7", "Filter" }, { "F8", "Pid" },	{ "F9", "Kind" },
	{ "F10", "Quit" },
};

static void draw_footer(struct screen *sc, int y, int cols)
{
	size_t i;
	int x = 0;

	move(y, 0);
	clrtoeol();
	if (sc->prompt != PROMPT_NONE) {
		static const char *const what[] = {
			[PROMPT_FILTER] = "Filter by name: ",
			[PROMPT_PID] = "Only PID (empty: all): ",
			[PROMPT_DELAY] = "Delay in seconds: ",
		};

		attron(A_BOLD);
		mvaddnstr(y, 0, what[sc->prompt], cols);
		attroff(A_BOLD);
		if (sc->input_selected)
			attron(A_REVERSE);
		addnstr(sc->input, cols - (int)strlen(what[sc->prompt]));
		attroff(A_REVERSE);
		curs_set(1);
		return;
	}
	curs_set(0);
	for (i = 0; i < sizeof(fkeys) / sizeof(*fkeys); i++) {
		int kw = (int)strlen(fkeys[i].key);
		int lw = (int)strlen(fkeys[i].label) + 1;

		if (x + kw + 1 > cols)
			break;
		attron(attr(sc, C_FKEY, A_NORMAL));
		mvaddstr(y, x, fkeys[i].key);
		attroff(attr(sc, C_FKEY, A_NORMAL));
		x += kw;
		attron(attr(sc, C_FLABEL, A_REVERSE));
		screen_put(y, x, lw < cols - x ? lw : cols - x, fkeys[i].label,
			   true, false);
		attroff(attr(sc, C_FLABEL, A_REVERSE));
		x += lw;
	}
}

/* Filters and messages, on the line above the footer. */
static void draw_status(struct screen *sc, int y, int cols)
{
	char line[256];
	int n = 0;

	move(y, 0);
	clrtoeol();
	if (sc->message[0]) {
		attron(A_BOLD);
		mvaddnstr(y, 0, sc->message, cols);
		attroff(A_BOLD);
		return;
	}
	n += snprintf(line + n, sizeof(line) - n, "%s", views[sc->view].name);
	if (sc->view != VIEW_DEADLOCKS)
		n += snprintf(line + n, sizeof(line) - n, " %zu rows",
			      sc->n_rows);
	if (sc->filter[0])
		n += snprintf(line + n, sizeof(line) - n, "  name~'%s'",
			      sc->filter);
	if (sc->pid_filter)
		n += snprintf(line + n, sizeof(line) - n, "  pid=%d",
			      sc->pid_filter);
	if (sc->site_open && sc->view == VIEW_LOCKS) {
		const struct lt_lock *l =
			col_find_lock(sc->cx.snap, sc->site_open);
		char name[LT_NAME_LEN + 32];

		n += snprintf(line + n, sizeof(line) - n,
			      "  processes of %s (Esc: back)",
			      l ? lt_lock_label(l, name, sizeof(name)) : "?");
	}
	if (sc->kind_filter >= 0)
		n += snprintf(line + n, sizeof(line) - n, "  kind=%s",
			      lt_kind_name(sc->kind_filter));
	else if (sc->o.all_kinds)
		n += snprintf(line + n, sizeof(line) - n, "  +futex-cond");
	attron(A_DIM);
	mvaddnstr(y, 0, line, cols);
	attroff(A_DIM);
}

void screen_draw(struct screen *sc)
{
	int rows, cols, y;

	getmaxyx(stdscr, rows, cols);
	erase();
	sc->frame++;
	sc->head_y = -1;
	if (rows < MIN_ROWS || cols < MIN_COLS) {
		char msg[64];

		mvaddnstr(rows / 2 - 1, 0, "terminal too small", cols);
		snprintf(msg, sizeof(msg), "need %dx%d, have %dx%d", MIN_COLS,
			 MIN_ROWS, cols, rows);
		mvaddnstr(rows / 2, 0, msg, cols);
		refresh();
		return;
	}
	y = screen_header_draw(sc, cols);
	if (sc->cx.snap) {
		if (sc->mode == MODE_HELP) {
			draw_help(sc, y, rows - 1, cols);
		} else if (sc->mode == MODE_DETAIL) {
			screen_detail_draw(sc, y, rows - 2, cols);
		} else if (sc->view == VIEW_DEADLOCKS) {
			draw_deadlocks(sc, y, rows - 2, cols);
		} else {
			screen_table_build_rows(sc);
			screen_table_draw(sc, y, rows - 2, cols);
			if (sc->mode == MODE_SORT)
				screen_table_sort_menu(sc, y + 1, rows - 2);
		}
	}
	draw_status(sc, rows - 2, cols);
	draw_footer(sc, rows - 1, cols);
	refresh();
}

void screen_update(struct screen *sc, const struct lt_snapshot *snap)
{
	sc->cx.snap = snap;
	screen_draw(sc);
}

void screen_message(struct screen *sc, const char *msg)
{
	snprintf(sc->message, sizeof(sc->message), "%s", msg);
}

bool screen_paused(const struct screen *sc)
{
	return sc->paused;
}

unsigned int screen_delay_ms(const struct screen *sc)
{
	return sc->delay_ms;
}
