// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The full-screen view. Everything here is formatting of one snapshot and
 * handling of keys; no BPF, no PCP. Only the rows on screen are formatted,
 * so a frame costs a sort of the filtered rows and a screenful of text.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <langinfo.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <curses.h>
#include "screen.h"

enum view { VIEW_LOCKS, VIEW_PROCS, VIEW_FILES, VIEW_DEADLOCKS, VIEW_NR };
enum mode { MODE_TABLE, MODE_DETAIL, MODE_HELP, MODE_SORT };
enum prompt { PROMPT_NONE, PROMPT_FILTER, PROMPT_PID, PROMPT_DELAY };

enum colour {
	C_LABEL = 1, /* header labels */
	C_BAR, /* the wait meter */
	C_BAR_HIGH, /* the wait meter past half */
	C_COLHEAD, /* the table header */
	C_SORTED, /* the sorted column's title */
	C_SELECT, /* the selected row */
	C_FKEY, /* footer key names */
	C_FLABEL, /* footer labels */
	C_ALERT, /* drops, deadlocks */
	C_DIM, /* idle figures */
};

#define MAX_COLS 12
#define MIN_ROWS 10
#define MIN_COLS 40

struct column {
	const char *title; /* per interval */
	const char *ctitle; /* cumulative; NULL: the same */
	int width; /* the flexible column's minimum */
	bool flex; /* takes what the others leave; a name, cut from the left */
	bool left;
	int drop; /* narrow terminals drop 1 first, then 2...; 0: never */
	bool text; /* sorts by name, A to Z */
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
	LC_NR
};
static const struct column lock_cols[LC_NR] = {
	[LC_NAME] = { "LOCK", NULL, 20, true, true, 0, true },
	[LC_KIND] = { "KIND", NULL, 10, false, true, 5, true },
	[LC_WAITS] = { "WAITS/s", "WAITS", 8, false, false, 0, false },
	[LC_WAIT] = { "WAIT/s", "WAIT", 8, false, false, 0, false },
	[LC_AVG] = { "AVG", NULL, 7, false, false, 2, false },
	[LC_P99] = { "P99", NULL, 7, false, false, 4, false },
	[LC_MAX] = { "MAX", NULL, 7, false, false, 6, false },
	[LC_WAITERS] = { "WAITERS", NULL, 7, false, false, 3, false },
	[LC_HOLDER] = { "HOLDER", NULL, 14, false, true, 7, true },
	[LC_PROCS] = { "PROCS", NULL, 5, false, false, 1, false },
};

/* Processes view */
enum { PC_PID, PC_COMM, PC_WAITS, PC_WAIT, PC_IOS, PC_IOTIME, PC_TOP, PC_NR };
static const struct column proc_cols[PC_NR] = {
	[PC_PID] = { "PID", NULL, 7, false, false, 0, false },
	[PC_COMM] = { "COMMAND", NULL, 15, false, true, 0, true },
	[PC_WAITS] = { "WAITS/s", "WAITS", 8, false, false, 0, false },
	[PC_WAIT] = { "WAIT/s", "WAIT", 8, false, false, 0, false },
	[PC_IOS] = { "IO/s", "IOS", 7, false, false, 2, false },
	[PC_IOTIME] = { "IOTIME/s", "IOTIME", 8, false, false, 1, false },
	[PC_TOP] = { "TOP LOCK", NULL, 12, true, true, 0, true },
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
	FC_NR
};
static const struct column file_cols[FC_NR] = {
	[FC_NAME] = { "FILE", NULL, 16, true, true, 0, true },
	[FC_READS] = { "PREAD/s", "PREADS", 8, false, false, 0, false },
	[FC_WRITES] = { "PWRITE/s", "PWRITES", 8, false, false, 0, false },
	[FC_RBYTES] = { "RD B/s", "RD B", 7, false, false, 4, false },
	[FC_WBYTES] = { "WR B/s", "WR B", 7, false, false, 3, false },
	[FC_IOTIME] = { "IOTIME/s", "IOTIME", 8, false, false, 2, false },
	[FC_UNDER] = { "LOCKED/s", "LOCKED", 8, false, false, 0, false },
	[FC_P99] = { "P99", NULL, 7, false, false, 1, false },
};

static const struct {
	const char *name;
	const struct column *cols;
	int n_cols;
	int default_sort;
} views[VIEW_NR] = {
	[VIEW_LOCKS] = { "Locks", lock_cols, LC_NR, LC_WAIT },
	[VIEW_PROCS] = { "Processes", proc_cols, PC_NR, PC_WAIT },
	[VIEW_FILES] = { "Files", file_cols, FC_NR, FC_IOTIME },
	[VIEW_DEADLOCKS] = { "Deadlocks", NULL, 0, 0 },
};

/* The kinds the header meters, in order. */
static const enum lt_kind meter_kinds[] = { LT_KIND_FUTEX, LT_KIND_FUTEX_PI,
					    LT_KIND_FCNTL, LT_KIND_OFD,
					    LT_KIND_FLOCK };

struct row {
	const void *item;
	double key;
	uint64_t ident;
};

struct screen {
	SCREEN *term;
	struct screen_opts o;
	bool color;
	const struct lt_snapshot *snap;
	enum view view;
	enum mode mode;
	int sort[VIEW_NR];
	bool reverse[VIEW_NR];
	size_t sel[VIEW_NR];
	size_t top[VIEW_NR];
	uint64_t sel_ident[VIEW_NR];
	struct row *rows;
	size_t n_rows, cap_rows;
	bool cumulative, paused;
	char filter[64];
	pid_t pid_filter;
	int kind_filter; /* -1: every kind shown */
	enum prompt prompt;
	char input[64];
	size_t input_len;
	uint64_t detail_id;
	int detail_scroll;
	int sort_menu;
	char message[160];
	unsigned int delay_ms;
	unsigned int frame;
	/* where the table header's columns are, for mouse clicks */
	int head_y;
	int n_vis;
	int vis_col[MAX_COLS], vis_x[MAX_COLS], vis_w[MAX_COLS];
	const char *up, *down; /* the sort direction marks */
	/* distinct pids of the snapshot, for the wait meter */
	pid_t *pids;
	size_t cap_pids;
};

/* ---- numbers ---- */

static const char *fmt_ns(uint64_t ns, char *buf, size_t len)
{
	if (!ns) {
		snprintf(buf, len, "-");
		return buf;
	}
	return lt_format_ns(ns, buf, len);
}

/* A count or a rate with a k/M/G suffix, fitting 7 characters. */
static const char *fmt_num(double v, char *buf, size_t len)
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

static const char *fmt_bytes(double v, char *buf, size_t len)
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

static double period(const struct screen *sc)
{
	double p = sc->cumulative ? sc->snap->elapsed_s : sc->snap->interval_s;

	return p > 1e-6 ? p : 1e-6;
}

/* A count: per second per interval, the plain total when cumulative. */
static double per(const struct screen *sc, uint64_t v)
{
	return sc->cumulative ? (double)v : (double)v / period(sc);
}

/* Wait or I/O time: ms/s per interval, a duration when cumulative. */
static const char *fmt_time_rate(const struct screen *sc, uint64_t ns,
				 char *buf, size_t len)
{
	if (sc->cumulative)
		return fmt_ns(ns, buf, len);
	if (!ns)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.1fms", (double)ns / 1e6 / period(sc));
	return buf;
}

/* ---- rows ---- */

static const struct lt_figures *lock_fig(const struct screen *sc,
					 const struct lt_lock *l)
{
	return sc->cumulative ? &l->total : &l->delta;
}

static const struct lt_proc_figures *proc_fig(const struct screen *sc,
					      const struct lt_proc *p)
{
	return sc->cumulative ? &p->total : &p->delta;
}

static const struct lt_file_figures *file_fig(const struct screen *sc,
					      const struct lt_file *f)
{
	return sc->cumulative ? &f->total : &f->delta;
}

static const struct lt_lock *find_lock(const struct lt_snapshot *s, uint64_t id)
{
	size_t i;

	for (i = 0; i < s->n_locks; i++)
		if (s->locks[i].id == id)
			return &s->locks[i];
	return NULL;
}

static bool lock_has_pid(const struct lt_lock *l, pid_t pid)
{
	size_t i;

	for (i = 0; i < l->n_pids; i++)
		if (l->pids[i] == pid)
			return true;
	for (i = 0; i < l->n_holders && i < LT_TOP_PARTIES; i++)
		if (l->holders[i].pid == pid)
			return true;
	return l->holder == pid;
}

static bool lock_shown(const struct screen *sc, const struct lt_lock *l)
{
	const struct lt_figures *f = lock_fig(sc, l);

	if (!f->waits && !f->contended && !f->trylock_failures &&
	    !l->waiters_now)
		return false;
	if (sc->kind_filter >= 0) {
		if ((int)l->kind != sc->kind_filter)
			return false;
	} else if (!sc->o.all_kinds && !lt_kind_is_lock(l->kind)) {
		return false;
	}
	if (sc->filter[0] && !strcasestr(l->name, sc->filter))
		return false;
	if (sc->pid_filter && !lock_has_pid(l, sc->pid_filter))
		return false;
	return true;
}

static uint64_t lock_p99(const struct lt_figures *f)
{
	return lt_wait_quantile(f, 0.99);
}

static double lock_key(const struct screen *sc, const struct lt_lock *l,
		       int col)
{
	const struct lt_figures *f = lock_fig(sc, l);

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
		return (double)lock_p99(f);
	case LC_MAX:
		return (double)f->max_wait_ns;
	case LC_WAITERS:
		return l->waiters_now;
	case LC_HOLDER:
		return l->holder;
	case LC_PROCS:
		return (double)l->n_pids;
	}
	return 0;
}

static const char *lock_name_of(const struct lt_snapshot *s, uint64_t id)
{
	const struct lt_lock *l = id ? find_lock(s, id) : NULL;

	return l ? l->name : "-";
}

static void lock_cell(const struct screen *sc, const struct lt_lock *l, int col,
		      char *buf, size_t len)
{
	const struct lt_figures *f = lock_fig(sc, l);

	switch (col) {
	case LC_NAME:
		snprintf(buf, len, "%s", l->name);
		break;
	case LC_KIND:
		snprintf(buf, len, "%s", lt_kind_name(l->kind));
		break;
	case LC_WAITS:
		fmt_num(per(sc, f->waits), buf, len);
		break;
	case LC_WAIT:
		fmt_time_rate(sc, f->wait_ns, buf, len);
		break;
	case LC_AVG:
		fmt_ns(f->waits ? f->wait_ns / f->waits : 0, buf, len);
		break;
	case LC_P99:
		fmt_ns(lock_p99(f), buf, len);
		break;
	case LC_MAX:
		fmt_ns(f->max_wait_ns, buf, len);
		break;
	case LC_WAITERS:
		snprintf(buf, len, "%u", l->waiters_now);
		break;
	case LC_HOLDER:
		if (l->holder)
			snprintf(buf, len, "%d/%s", l->holder,
				 l->holder_comm[0] ? l->holder_comm : "?");
		else
			snprintf(buf, len, "-");
		break;
	case LC_PROCS:
		snprintf(buf, len, "%zu", l->n_pids);
		break;
	default:
		buf[0] = 0;
	}
}

static bool proc_shown(const struct screen *sc, const struct lt_proc *p)
{
	const struct lt_proc_figures *f = proc_fig(sc, p);

	if (!f->waits && !f->io_count)
		return false;
	if (sc->pid_filter && p->pid != sc->pid_filter)
		return false;
	if (sc->filter[0] && !strcasestr(p->comm, sc->filter))
		return false;
	return true;
}

static double proc_key(const struct screen *sc, const struct lt_proc *p,
		       int col)
{
	const struct lt_proc_figures *f = proc_fig(sc, p);

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

static void proc_cell(const struct screen *sc, const struct lt_proc *p, int col,
		      char *buf, size_t len)
{
	const struct lt_proc_figures *f = proc_fig(sc, p);

	switch (col) {
	case PC_PID:
		snprintf(buf, len, "%d", p->pid);
		break;
	case PC_COMM:
		snprintf(buf, len, "%s", p->comm);
		break;
	case PC_WAITS:
		fmt_num(per(sc, f->waits), buf, len);
		break;
	case PC_WAIT:
		fmt_time_rate(sc, f->wait_ns, buf, len);
		break;
	case PC_IOS:
		fmt_num(per(sc, f->io_count), buf, len);
		break;
	case PC_IOTIME:
		fmt_time_rate(sc, f->io_ns, buf, len);
		break;
	case PC_TOP:
		snprintf(buf, len, "%s", lock_name_of(sc->snap, p->top_lock));
		break;
	default:
		buf[0] = 0;
	}
}

static bool file_shown(const struct screen *sc, const struct lt_file *fl)
{
	const struct lt_file_figures *f = file_fig(sc, fl);

	if (!f->reads && !f->writes)
		return false;
	return !sc->filter[0] || strcasestr(fl->name, sc->filter);
}

static double file_key(const struct screen *sc, const struct lt_file *fl,
		       int col)
{
	const struct lt_file_figures *f = file_fig(sc, fl);

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

static void file_cell(const struct screen *sc, const struct lt_file *fl,
		      int col, char *buf, size_t len)
{
	const struct lt_file_figures *f = file_fig(sc, fl);

	switch (col) {
	case FC_NAME:
		snprintf(buf, len, "%s", fl->name);
		break;
	case FC_READS:
		fmt_num(per(sc, f->reads), buf, len);
		break;
	case FC_WRITES:
		fmt_num(per(sc, f->writes), buf, len);
		break;
	case FC_RBYTES:
		fmt_bytes(per(sc, f->read_bytes), buf, len);
		break;
	case FC_WBYTES:
		fmt_bytes(per(sc, f->write_bytes), buf, len);
		break;
	case FC_IOTIME:
		fmt_time_rate(sc, f->io_ns, buf, len);
		break;
	case FC_UNDER:
		fmt_time_rate(sc, f->io_under_lock_ns, buf, len);
		break;
	case FC_P99:
		fmt_ns(lt_hist_quantile(f->io_hist, LT_HIST_BUCKETS, 0.99), buf,
		       len);
		break;
	default:
		buf[0] = 0;
	}
}

static const char *row_name(const struct screen *sc, const struct row *r)
{
	int col = sc->sort[sc->view];

	switch (sc->view) {
	case VIEW_LOCKS: {
		const struct lt_lock *l = r->item;

		if (col == LC_KIND)
			return lt_kind_name(l->kind);
		if (col == LC_HOLDER)
			return l->holder_comm;
		return l->name;
	}
	case VIEW_PROCS: {
		const struct lt_proc *p = r->item;

		return col == PC_TOP ? lock_name_of(sc->snap, p->top_lock) :
				       p->comm;
	}
	case VIEW_FILES:
		return ((const struct lt_file *)r->item)->name;
	default:
		return "";
	}
}

static const struct screen *sort_ctx;

static int cmp_rows(const void *a, const void *b)
{
	const struct screen *sc = sort_ctx;
	const struct row *x = a, *y = b;
	const struct column *c = &views[sc->view].cols[sc->sort[sc->view]];
	int r = 0;

	if (c->text && sc->sort[sc->view] != LC_KIND) {
		r = strcmp(row_name(sc, x), row_name(sc, y));
	} else if (x->key != y->key) {
		/* Numbers rank biggest first, like top. */
		r = x->key < y->key ? 1 : -1;
		if (c->text)
			r = -r;
	}
	if (!r)
		r = x->ident < y->ident ? -1 : x->ident > y->ident;
	return sc->reverse[sc->view] ? -r : r;
}

static int grow_rows(struct screen *sc, size_t n)
{
	struct row *r;

	if (n <= sc->cap_rows)
		return 0;
	r = realloc(sc->rows, n * sizeof(*r));
	if (!r)
		return -ENOMEM;
	sc->rows = r;
	sc->cap_rows = n;
	return 0;
}

static uint64_t file_ident(const struct lt_file *f)
{
	uint64_t h = 1469598103934665603ULL;
	const char *p;

	if (f->ino)
		return f->dev << 40 ^ f->ino;
	for (p = f->name; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ULL;
	return h;
}

/* The rows of the current view that pass the filters, sorted. */
static void build_rows(struct screen *sc)
{
	const struct lt_snapshot *s = sc->snap;
	int col = sc->sort[sc->view];
	size_t i, n = 0;

	sc->n_rows = 0;
	if (!s)
		return;
	switch (sc->view) {
	case VIEW_LOCKS:
		if (grow_rows(sc, s->n_locks))
			return;
		for (i = 0; i < s->n_locks; i++) {
			const struct lt_lock *l = &s->locks[i];

			if (!lock_shown(sc, l))
				continue;
			sc->rows[n].item = l;
			sc->rows[n].ident = l->id;
			sc->rows[n++].key = lock_key(sc, l, col);
		}
		break;
	case VIEW_PROCS:
		if (grow_rows(sc, s->n_procs))
			return;
		for (i = 0; i < s->n_procs; i++) {
			const struct lt_proc *p = &s->procs[i];

			if (!proc_shown(sc, p))
				continue;
			sc->rows[n].item = p;
			sc->rows[n].ident = (uint64_t)p->pid;
			sc->rows[n++].key = proc_key(sc, p, col);
		}
		break;
	case VIEW_FILES:
		if (grow_rows(sc, s->n_files))
			return;
		for (i = 0; i < s->n_files; i++) {
			const struct lt_file *f = &s->files[i];

			if (!file_shown(sc, f))
				continue;
			sc->rows[n].item = f;
			sc->rows[n].ident = file_ident(f);
			sc->rows[n++].key = file_key(sc, f, col);
		}
		break;
	default:
		break;
	}
	sort_ctx = sc;
	qsort(sc->rows, n, sizeof(*sc->rows), cmp_rows);
	sc->n_rows = n;

	/* The selection follows its item, not its position. */
	if (sc->sel_ident[sc->view]) {
		for (i = 0; i < n; i++) {
			if (sc->rows[i].ident == sc->sel_ident[sc->view]) {
				sc->sel[sc->view] = i;
				break;
			}
		}
	}
	if (sc->sel[sc->view] >= n)
		sc->sel[sc->view] = n ? n - 1 : 0;
}

/* ---- drawing helpers ---- */

static attr_t attr(const struct screen *sc, enum colour c, attr_t mono)
{
	return sc->color ? COLOR_PAIR(c) : mono;
}

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
static void put(int y, int x, int w, const char *s, bool left, bool path)
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

/* Lays out the visible columns for width w: drops until they fit. */
static void layout(struct screen *sc, int w)
{
	const struct column *cols = views[sc->view].cols;
	int n = views[sc->view].n_cols, need, i, level, flex = -1, x;
	bool keep[MAX_COLS];

	for (i = 0; i < n; i++)
		keep[i] = true;
	for (level = 1; level < 10; level++) {
		need = 0;
		for (i = 0; i < n; i++)
			if (keep[i])
				need += cols[i].width + 1;
		if (need - 1 <= w)
			break;
		for (i = 0; i < n; i++)
			if (cols[i].drop == level)
				keep[i] = false;
	}
	need = 0;
	for (i = 0; i < n; i++) {
		if (!keep[i])
			continue;
		need += cols[i].width + 1;
		if (cols[i].flex)
			flex = i;
	}
	need--;
	sc->n_vis = 0;
	x = 0;
	for (i = 0; i < n; i++) {
		int cw;

		if (!keep[i])
			continue;
		cw = cols[i].width;
		if (i == flex && w > need)
			cw += w - need;
		if (x + cw > w)
			cw = w - x;
		if (cw <= 0)
			break;
		sc->vis_col[sc->n_vis] = i;
		sc->vis_x[sc->n_vis] = x;
		sc->vis_w[sc->n_vis++] = cw;
		x += cw + 1;
	}
}

static void cell(const struct screen *sc, const struct row *r, int col,
		 char *buf, size_t len)
{
	switch (sc->view) {
	case VIEW_LOCKS:
		lock_cell(sc, r->item, col, buf, len);
		break;
	case VIEW_PROCS:
		proc_cell(sc, r->item, col, buf, len);
		break;
	case VIEW_FILES:
		file_cell(sc, r->item, col, buf, len);
		break;
	default:
		buf[0] = 0;
	}
}

/* ---- header ---- */

struct totals {
	struct lt_kind_figures kinds[LT_KIND_NR];
	uint64_t lock_wait_ns;
	uint64_t io_under_lock_ns;
	size_t threads;
	size_t procs;
};

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

/* Threads of a live process, from /proc; 1 when it is gone. */
static size_t threads_of(pid_t pid)
{
	char path[64], buf[512], *p;
	size_t n = 0;
	long t = 1;
	FILE *f;
	int i;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "re");
	if (!f)
		return 1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	/* comm may hold spaces; fields count from its closing paren. */
	p = strrchr(buf, ')');
	for (i = 2; p && i < 20; i++)
		p = strchr(p + 1, ' ');
	if (p)
		t = strtol(p + 1, NULL, 10);
	return t > 0 ? (size_t)t : 1;
}

static void add_pid(struct screen *sc, size_t *n, pid_t pid)
{
	if (*n == sc->cap_pids) {
		size_t cap = sc->cap_pids ? sc->cap_pids * 2 : 64;
		pid_t *p = realloc(sc->pids, cap * sizeof(*p));

		if (!p)
			return;
		sc->pids = p;
		sc->cap_pids = cap;
	}
	sc->pids[(*n)++] = pid;
}

static void sum_totals(struct screen *sc, struct totals *t)
{
	const struct lt_snapshot *s = sc->snap;
	const struct lt_kind_figures *kf = sc->cumulative ? s->kind_total :
							    s->kind_delta;
	bool have_kinds = false;
	size_t i, j, n = 0;
	int k;

	memset(t, 0, sizeof(*t));
	for (k = 0; k < LT_KIND_NR; k++) {
		t->kinds[k] = kf[k];
		if (kf[k].waits || kf[k].wait_ns)
			have_kinds = true;
	}
	for (i = 0; i < s->n_locks; i++) {
		const struct lt_lock *l = &s->locks[i];
		const struct lt_figures *f = lock_fig(sc, l);

		if (!f->waits || !lt_kind_is_lock(l->kind))
			continue;
		/* A source without per-kind sums: add them up here. */
		if (!have_kinds && (unsigned int)l->kind < LT_KIND_NR) {
			t->kinds[l->kind].waits += f->waits;
			t->kinds[l->kind].wait_ns += f->wait_ns;
		}
		t->io_under_lock_ns += f->io_under_lock_ns;
		if (!s->n_procs)
			for (j = 0; j < l->n_pids; j++)
				add_pid(sc, &n, l->pids[j]);
	}
	for (k = 0; k < LT_KIND_NR; k++)
		if (lt_kind_is_lock(k))
			t->lock_wait_ns += t->kinds[k].wait_ns;
	for (i = 0; i < s->n_procs; i++) {
		const struct lt_proc_figures *f = proc_fig(sc, &s->procs[i]);

		if (f->waits)
			add_pid(sc, &n, s->procs[i].pid);
	}
	if (s->n_files) {
		t->io_under_lock_ns = 0;
		for (i = 0; i < s->n_files; i++)
			t->io_under_lock_ns +=
				file_fig(sc, &s->files[i])->io_under_lock_ns;
	}
	qsort(sc->pids, n, sizeof(*sc->pids), cmp_pid);
	for (i = 0; i < n; i++) {
		if (i && sc->pids[i] == sc->pids[i - 1])
			continue;
		t->procs++;
		t->threads += sc->o.local ? threads_of(sc->pids[i]) : 1;
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

static void wlabel(struct screen *sc, WINDOW *w, int y, int x, const char *s);

/* Returns the first line after the header. */
static int draw_header(struct screen *sc, int cols)
{
	const struct lt_snapshot *s = sc->snap;
	struct totals t;
	char a[48], b[48], c[48], line[256], when[16];
	time_t now = s ? (time_t)s->time : time(NULL);
	struct tm tm;
	double p, share, blocked;
	uint64_t drops, ev_cnt = 0, ev_ns = 0, p50, p99;
	int y = 0, x, i, meter_w, lines;
	size_t k;

	strftime(when, sizeof(when), "%H:%M:%S", localtime_r(&now, &tm));
	attron(A_BOLD);
	mvaddstr(0, 0, "locktop");
	attroff(A_BOLD);
	snprintf(line, sizeof(line), " %s  every %.2gs  %s  %s", when,
		 sc->delay_ms / 1000.0,
		 sc->cumulative ? "cumulative" : "per second", sc->o.source);
	addnstr(line, cols - 8);
	if (!s) {
		mvaddstr(1, 0, "waiting for the first interval...");
		return 3;
	}
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
	y = 1;

	sum_totals(sc, &t);
	p = period(sc);
	blocked = (double)t.lock_wait_ns / 1e9 / p;
	share = t.threads ? blocked / (double)t.threads : 0;
	drops = sc->cumulative ? s->drops_total : s->drops_delta;
	label(sc, y, 0, "Wait");
	snprintf(line, sizeof(line), " of %zu thr %zu proc, %.2f blocked",
		 t.threads, t.procs, blocked);
	snprintf(a, sizeof(a), "drops %" PRIu64, drops);
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
	y++;

	/* Waits by kind; the busy ones first, over at most two lines. */
	{
		int order[5], n = 0, pass;

		for (pass = 0; pass < 2; pass++)
			for (k = 0; k < 5; k++) {
				bool busy = t.kinds[meter_kinds[k]].waits;

				if (busy == !pass)
					order[n++] = (int)k;
			}
		x = 0;
		lines = 0;
		for (i = 0; i < n && lines < 2; i++) {
			const struct lt_kind_figures *kf =
				&t.kinds[meter_kinds[order[i]]];
			const char *name = lt_kind_name(meter_kinds[order[i]]);
			int cw;

			snprintf(line, sizeof(line), " %s/s %s%s",
				 fmt_num(per(sc, kf->waits), a, sizeof(a)),
				 fmt_time_rate(sc, kf->wait_ns, b, sizeof(b)),
				 kf->wait_ns ? "/s" : "");
			if (sc->cumulative)
				snprintf(line, sizeof(line), " %s %s",
					 fmt_num((double)kf->waits, a,
						 sizeof(a)),
					 fmt_ns(kf->wait_ns, b, sizeof(b)));
			cw = (int)strlen(name) + (int)strlen(line) + 2;
			if (x && x + cw > cols) {
				if (++lines == 2)
					break;
				y++;
				x = 0;
			}
			if (!kf->waits)
				attron(attr(sc, C_DIM, A_DIM));
			label(sc, y, x, name);
			mvaddnstr(y, x + (int)strlen(name), line,
				  cols - x - (int)strlen(name));
			attroff(attr(sc, C_DIM, A_DIM));
			x += cw;
		}
		y++;
	}

	/* pread latency, I/O under lock, the probes' own cost */
	p50 = lt_hist_quantile(s->io_hist_delta, LT_HIST_BUCKETS, 0.5);
	p99 = lt_hist_quantile(s->io_hist_delta, LT_HIST_BUCKETS, 0.99);
	for (k = 0; k < s->n_probes; k++) {
		ev_cnt += sc->cumulative ? s->probes[k].run_cnt :
					   s->probes[k].delta_cnt;
		ev_ns += sc->cumulative ? s->probes[k].run_ns :
					  s->probes[k].delta_ns;
	}
	label(sc, y, 0, "pread");
	snprintf(line, sizeof(line), " p50 %s p99 %s  ",
		 fmt_ns(p50, a, sizeof(a)), fmt_ns(p99, b, sizeof(b)));
	addnstr(line, cols - 5);
	getyx(stdscr, i, x);
	(void)i;
	if (x + 12 < cols) {
		label(sc, y, x, "locked");
		snprintf(line, sizeof(line), " %s  ",
			 fmt_time_rate(sc, t.io_under_lock_ns, a, sizeof(a)));
		addnstr(line, cols - x - 6);
		getyx(stdscr, i, x);
	}
	snprintf(line, sizeof(line), " %sns/ev %s ev/s cpu %.1f%%",
		 ev_cnt ?
			 fmt_num((double)ev_ns / (double)ev_cnt, a, sizeof(a)) :
			 "-",
		 fmt_num((double)(sc->cumulative ? s->events_total :
						   s->events_delta) /
				 (sc->cumulative ? p : p),
			 c, sizeof(c)),
		 s->cpu_percent);
	/* The fullest of the kernel's lock, party and file maps: drops
	 * start at 100%, idle slots go back past 25%, sooner past 50%;
	 * "folding" while new byte ranges count in their file's other
	 * ranges. */
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
		snprintf(line + len, sizeof(line) - len, " maps %.0f%%%s",
			 fill * 100, s->folding ? " folding" : "");
	}
	/* The probes' cost shows whole or not at all. */
	if (x + 6 + (int)strlen(line) <= cols) {
		label(sc, y, x, "probes");
		addstr(line);
	}
	return y + 1;
}

/* ---- views ---- */

static void draw_table_head(struct screen *sc, int y, int cols)
{
	const struct column *cdefs = views[sc->view].cols;
	int i;

	sc->head_y = y;
	attron(attr(sc, C_COLHEAD, A_REVERSE));
	mvhline(y, 0, ' ', cols);
	for (i = 0; i < sc->n_vis; i++) {
		const struct column *c = &cdefs[sc->vis_col[i]];
		const char *t = sc->cumulative && c->ctitle ? c->ctitle :
							      c->title;
		char title[32];
		bool sorted = sc->vis_col[i] == sc->sort[sc->view];

		/* The sort column carries an arrow, like htop's. */
		snprintf(title, sizeof(title), "%s%s", t,
			 !sorted	       ? "" :
			 sc->reverse[sc->view] ? sc->up :
						 sc->down);
		if (sorted)
			attron(attr(sc, C_SORTED, A_BOLD) | A_BOLD);
		put(y, sc->vis_x[i], sc->vis_w[i], title,
		    cdefs[sc->vis_col[i]].left, false);
		if (sorted) {
			attroff(attr(sc, C_SORTED, A_BOLD) | A_BOLD);
			attron(attr(sc, C_COLHEAD, A_REVERSE));
		}
	}
	attroff(attr(sc, C_COLHEAD, A_REVERSE));
}

static void draw_table(struct screen *sc, int y, int bottom, int cols)
{
	size_t *sel = &sc->sel[sc->view], *top = &sc->top[sc->view], r;
	int h = bottom - y - 1, i;
	char buf[LT_NAME_LEN + 32];

	layout(sc, cols);
	draw_table_head(sc, y, cols);
	y++;
	if (h < 1)
		return;
	if (*sel < *top)
		*top = *sel;
	if (*sel >= *top + (size_t)h)
		*top = *sel - (size_t)h + 1;
	if (*top + (size_t)h > sc->n_rows)
		*top = sc->n_rows > (size_t)h ? sc->n_rows - (size_t)h : 0;
	if (!sc->n_rows) {
		const char *why = "no lock waits in this interval";

		if (sc->view == VIEW_PROCS && !sc->snap->n_procs)
			why = "no process figures from this source yet";
		else if (sc->view == VIEW_FILES && !sc->snap->n_files)
			why = "no file I/O figures from this source yet";
		else if (sc->filter[0] || sc->pid_filter ||
			 sc->kind_filter >= 0)
			why = "nothing matches the filter";
		else if (sc->cumulative)
			why = "no lock waits yet";
		attron(A_DIM);
		mvaddnstr(y + 1, 2, why, cols - 2);
		attroff(A_DIM);
		return;
	}
	for (r = *top; r < sc->n_rows && y < bottom; r++, y++) {
		bool selected = r == *sel;

		if (selected) {
			attron(attr(sc, C_SELECT, A_REVERSE));
			mvhline(y, 0, ' ', cols);
			sc->sel_ident[sc->view] = sc->rows[r].ident;
		}
		for (i = 0; i < sc->n_vis; i++) {
			int c = sc->vis_col[i];

			cell(sc, &sc->rows[r], c, buf, sizeof(buf));
			put(y, sc->vis_x[i], sc->vis_w[i], buf,
			    views[sc->view].cols[c].left,
			    views[sc->view].cols[c].flex);
		}
		if (selected)
			attroff(attr(sc, C_SELECT, A_REVERSE));
	}
}

static void draw_deadlocks(struct screen *sc, int y, int bottom, int cols)
{
	const struct lt_snapshot *s = sc->snap;
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
		snprintf(line, sizeof(line), "cycle %zu: %zu processes", d + 1,
			 n);
		mvaddnstr(y++, 0, line, cols);
		attroff(attr(sc, C_ALERT, A_BOLD) | A_BOLD);
		for (m = 0; m < n && y < bottom; m++) {
			size_t next = (m + 1) % n;

			snprintf(who, sizeof(who), "%d/%.16s", dl->pids[next],
				 dl->comms[next]);
			snprintf(line, sizeof(line),
				 "  %d/%.16s waits on %s held by %s",
				 dl->pids[m], dl->comms[m],
				 lock_name_of(s, dl->locks[m]), who);
			mvaddnstr(y++, 0, line, cols);
		}
	}
}

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
		snprintf(line, sizeof(line), "  %7d %-16s %10" PRIu64 " %10s",
			 p[i].pid, p[i].comm, p[i].count,
			 lt_format_ns(p[i].ns, ns, sizeof(ns)));
		mvwaddnstr(w, y++, 0, line, cols);
	}
	return y;
}

#define DETAIL_LINES 256

/* Fills the pad with the lock's detail; returns the lines used. */
static int fill_detail(struct screen *sc, WINDOW *w, const struct lt_lock *l,
		       int cols)
{
	const struct lt_figures *f = lock_fig(sc, l);
	char a[16], b[16], c[16], d[16], e[16], line[512];
	int y = 0, n;
	size_t i;

	snprintf(line, sizeof(line),
		 "kind %s  id %" PRIu64 "  address 0x%" PRIx64 "  key %s",
		 lt_kind_name(l->kind), l->id, l->address,
		 l->key[0] ? l->key : "-");
	mvwaddnstr(w, y++, 0, line, cols);
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
	snprintf(line, sizeof(line),
		 "%s: waits %" PRIu64 "  wait %s  avg %s  p50 %s  p99 %s  "
		 "max %s",
		 sc->cumulative ? "whole run" : "interval", f->waits,
		 fmt_ns(f->wait_ns, a, sizeof(a)),
		 fmt_ns(f->waits ? f->wait_ns / f->waits : 0, b, sizeof(b)),
		 fmt_ns(lt_wait_quantile(f, 0.5), c, sizeof(c)),
		 fmt_ns(lock_p99(f), d, sizeof(d)),
		 fmt_ns(f->max_wait_ns, e, sizeof(e)));
	mvwaddnstr(w, y++, 0, line, cols);
	snprintf(line, sizeof(line),
		 "acquires %" PRIu64 "  contended %" PRIu64
		 "  trylock failures %" PRIu64 "  hold %s  max hold %s"
		 "  I/O under lock %s",
		 f->acquires, f->contended, f->trylock_failures,
		 fmt_ns(f->hold_ns, a, sizeof(a)),
		 fmt_ns(f->max_hold_ns, b, sizeof(b)),
		 fmt_ns(f->io_under_lock_ns, c, sizeof(c)));
	mvwaddnstr(w, y++, 0, line, cols);
	snprintf(line, sizeof(line),
		 "wakes %" PRIu64 "  timeouts %" PRIu64 "  interrupted %" PRIu64
		 "  value changed %" PRIu64 "  owner died %" PRIu64,
		 f->wakes, f->timeouts, f->interrupted, f->value_changed,
		 f->owner_died);
	mvwaddnstr(w, y++, 0, line, cols);
	if (l->holder)
		snprintf(e, sizeof(e), "%d", l->holder);
	else
		snprintf(e, sizeof(e), "-");
	n = snprintf(line, sizeof(line), "waiters now %u  holder %s/%s  pids",
		     l->waiters_now, e, l->holder ? l->holder_comm : "-");
	for (i = 0;
	     i < l->n_pids && n + 20 < (int)sizeof(line) && n + 10 < cols; i++)
		n += snprintf(line + n, sizeof(line) - n, " %d", l->pids[i]);
	if (i < l->n_pids)
		snprintf(line + n, sizeof(line) - n, " +%zu", l->n_pids - i);
	mvwaddnstr(w, y, 0, line, cols);
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
			 "     caused",
			 l->holders, l->n_holders);
	y++;
	wlabel(sc, w, y++, 0, "Stack");
	if (l->stack) {
		const char *p = l->stack;

		while (*p && y < DETAIL_LINES) {
			const char *nl = strchr(p, '\n');
			int len = nl ? (int)(nl - p) : (int)strlen(p);

			mvwaddnstr(w, y++, 2, p,
				   len < cols - 2 ? len : cols - 2);
			p = nl ? nl + 1 : p + len;
		}
	} else {
		mvwaddstr(w, y++, 2,
			  sc->o.stacks ? "(none recorded yet)" :
					 "(start locktop with --stacks)");
	}
	return y;
}

static void draw_detail(struct screen *sc, int y0, int bottom, int cols)
{
	const struct lt_lock *l = find_lock(sc->snap, sc->detail_id);
	WINDOW *pad;
	int used;

	attron(attr(sc, C_COLHEAD, A_REVERSE));
	mvhline(y0, 0, ' ', cols);
	put(y0, 0, cols, l ? l->name : "(the lock is gone)", true, true);
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

static void draw_sort_menu(struct screen *sc, int y, int bottom)
{
	const struct column *cols = views[sc->view].cols;
	int i;

	for (i = 0; i < views[sc->view].n_cols && y + i < bottom; i++) {
		if (i == sc->sort_menu)
			attron(attr(sc, C_SELECT, A_REVERSE));
		mvprintw(y + i, 0, " %-12s", cols[i].title);
		if (i == sc->sort_menu)
			attroff(attr(sc, C_SELECT, A_REVERSE));
	}
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
		addnstr(sc->input, cols - (int)strlen(what[sc->prompt]));
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
		put(y, x, lw < cols - x ? lw : cols - x, fkeys[i].label, true,
		    false);
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
	y = draw_header(sc, cols);
	if (sc->snap) {
		if (sc->mode == MODE_HELP) {
			draw_help(sc, y, rows - 1, cols);
		} else if (sc->mode == MODE_DETAIL) {
			draw_detail(sc, y, rows - 2, cols);
		} else if (sc->view == VIEW_DEADLOCKS) {
			draw_deadlocks(sc, y, rows - 2, cols);
		} else {
			build_rows(sc);
			draw_table(sc, y, rows - 2, cols);
			if (sc->mode == MODE_SORT)
				draw_sort_menu(sc, y + 1, rows - 2);
		}
	}
	draw_status(sc, rows - 2, cols);
	draw_footer(sc, rows - 1, cols);
	refresh();
}

/* ---- keys ---- */

static void set_view(struct screen *sc, enum view v)
{
	sc->view = v;
	sc->mode = MODE_TABLE;
}

static void move_sel(struct screen *sc, long by)
{
	size_t *sel = &sc->sel[sc->view];
	long v = (long)*sel + by;

	if (v < 0 || !sc->n_rows)
		v = 0;
	if (sc->n_rows && v >= (long)sc->n_rows)
		v = (long)sc->n_rows - 1;
	*sel = (size_t)v;
	sc->sel_ident[sc->view] = sc->n_rows ? sc->rows[*sel].ident : 0;
}

static void set_sort(struct screen *sc, int col)
{
	int n = views[sc->view].n_cols;

	if (!n)
		return;
	col = (col % n + n) % n;
	if (sc->sort[sc->view] == col)
		sc->reverse[sc->view] = !sc->reverse[sc->view];
	else
		sc->reverse[sc->view] = false;
	sc->sort[sc->view] = col;
}

static void start_prompt(struct screen *sc, enum prompt p)
{
	sc->prompt = p;
	sc->input_len = 0;
	sc->input[0] = 0;
	if (p == PROMPT_FILTER) {
		snprintf(sc->input, sizeof(sc->input), "%s", sc->filter);
		sc->input_len = strlen(sc->input);
	}
}

static enum screen_action finish_prompt(struct screen *sc)
{
	enum prompt p = sc->prompt;
	char *end;
	double d;
	long v;

	sc->prompt = PROMPT_NONE;
	sc->message[0] = 0;
	switch (p) {
	case PROMPT_FILTER:
		snprintf(sc->filter, sizeof(sc->filter), "%s", sc->input);
		break;
	case PROMPT_PID:
		if (!sc->input_len) {
			sc->pid_filter = 0;
			break;
		}
		v = strtol(sc->input, &end, 10);
		if (*end || v <= 0 || v > INT32_MAX)
			snprintf(sc->message, sizeof(sc->message),
				 "not a PID: '%s'", sc->input);
		else
			sc->pid_filter = (pid_t)v;
		break;
	case PROMPT_DELAY:
		if (!sc->input_len)
			break;
		d = strtod(sc->input, &end);
		if (*end || !(d >= 0.01 && d <= 86400)) {
			snprintf(sc->message, sizeof(sc->message),
				 "delay: give seconds between 0.01 and 86400");
			break;
		}
		sc->delay_ms = (unsigned int)(d * 1000 + 0.5);
		return SCREEN_DELAY;
	default:
		break;
	}
	sc->sel[sc->view] = 0;
	sc->top[sc->view] = 0;
	sc->sel_ident[sc->view] = 0;
	return SCREEN_NONE;
}

static enum screen_action prompt_key(struct screen *sc, int ch)
{
	switch (ch) {
	case '\n':
	case '\r':
	case KEY_ENTER:
		return finish_prompt(sc);
	case 27:
		sc->prompt = PROMPT_NONE;
		break;
	case KEY_BACKSPACE:
	case 127:
	case 8:
		if (sc->input_len)
			sc->input[--sc->input_len] = 0;
		break;
	default:
		if (ch >= 32 && ch < 127 &&
		    sc->input_len + 1 < sizeof(sc->input)) {
			sc->input[sc->input_len++] = (char)ch;
			sc->input[sc->input_len] = 0;
		}
	}
	return SCREEN_NONE;
}

static void mouse_click(struct screen *sc)
{
	MEVENT ev;
	int i;

	if (getmouse(&ev) != OK)
		return;
	if (!(ev.bstate & (BUTTON1_PRESSED | BUTTON1_CLICKED)))
		return;
	if (ev.y == sc->head_y && sc->mode == MODE_TABLE) {
		for (i = 0; i < sc->n_vis; i++)
			if (ev.x >= sc->vis_x[i] &&
			    ev.x < sc->vis_x[i] + sc->vis_w[i] + 1)
				set_sort(sc, sc->vis_col[i]);
	} else if (sc->mode == MODE_TABLE && ev.y > sc->head_y &&
		   sc->head_y >= 0) {
		size_t r = sc->top[sc->view] + (size_t)(ev.y - sc->head_y - 1);

		if (r < sc->n_rows) {
			sc->sel[sc->view] = r;
			sc->sel_ident[sc->view] = sc->rows[r].ident;
		}
	}
}

static void next_kind(struct screen *sc)
{
	/* all -> each kind in turn -> all */
	do {
		sc->kind_filter++;
		if (sc->kind_filter >= LT_KIND_NR) {
			sc->kind_filter = -1;
			break;
		}
	} while (!sc->o.all_kinds && !lt_kind_is_lock(sc->kind_filter));
	sc->sel[sc->view] = 0;
	sc->sel_ident[sc->view] = 0;
}

static enum screen_action table_key(struct screen *sc, int ch, int page)
{
	switch (ch) {
	case KEY_UP:
		move_sel(sc, -1);
		break;
	case KEY_DOWN:
		move_sel(sc, 1);
		break;
	case KEY_PPAGE:
		move_sel(sc, -page);
		break;
	case KEY_NPAGE:
		move_sel(sc, page);
		break;
	case KEY_HOME:
		move_sel(sc, -(long)sc->n_rows);
		break;
	case KEY_END:
		move_sel(sc, (long)sc->n_rows);
		break;
	case '<':
	case ',':
		set_sort(sc, sc->sort[sc->view] - 1);
		sc->reverse[sc->view] = false;
		break;
	case '>':
	case '.':
		set_sort(sc, sc->sort[sc->view] + 1);
		sc->reverse[sc->view] = false;
		break;
	case 'I':
		sc->reverse[sc->view] = !sc->reverse[sc->view];
		break;
	case KEY_F(6):
		if (views[sc->view].n_cols) {
			sc->mode = MODE_SORT;
			sc->sort_menu = sc->sort[sc->view];
		}
		break;
	case '\n':
	case '\r':
	case KEY_ENTER:
		if (sc->view == VIEW_LOCKS && sc->n_rows) {
			const struct lt_lock *l =
				sc->rows[sc->sel[sc->view]].item;

			sc->detail_id = l->id;
			sc->detail_scroll = 0;
			sc->mode = MODE_DETAIL;
		}
		break;
	}
	return SCREEN_NONE;
}

static enum screen_action key(struct screen *sc, int ch)
{
	int rows = getmaxy(stdscr), page = rows > 12 ? rows - 10 : 1;

	if (sc->prompt != PROMPT_NONE)
		return prompt_key(sc, ch);
	if (sc->mode == MODE_HELP) {
		sc->mode = MODE_TABLE;
		return ch == 'q' || ch == KEY_F(10) ? SCREEN_QUIT : SCREEN_NONE;
	}
	if (sc->mode == MODE_SORT) {
		int n = views[sc->view].n_cols;

		switch (ch) {
		case KEY_UP:
			sc->sort_menu = (sc->sort_menu + n - 1) % n;
			break;
		case KEY_DOWN:
			sc->sort_menu = (sc->sort_menu + 1) % n;
			break;
		case '\n':
		case '\r':
		case KEY_ENTER:
			sc->sort[sc->view] = sc->sort_menu;
			sc->reverse[sc->view] = false;
			sc->mode = MODE_TABLE;
			break;
		default:
			sc->mode = MODE_TABLE;
		}
		return SCREEN_NONE;
	}
	sc->message[0] = 0;
	switch (ch) {
	case 'q':
	case KEY_F(10):
		if (sc->mode == MODE_DETAIL) {
			sc->mode = MODE_TABLE;
			return SCREEN_NONE;
		}
		return SCREEN_QUIT;
	case 'h':
	case '?':
	case KEY_F(1):
		sc->mode = MODE_HELP;
		return SCREEN_NONE;
	case KEY_F(2):
	case 'l':
		set_view(sc, VIEW_LOCKS);
		return SCREEN_NONE;
	case KEY_F(3):
	case 'P':
		set_view(sc, VIEW_PROCS);
		return SCREEN_NONE;
	case KEY_F(4):
	case 'f':
		set_view(sc, VIEW_FILES);
		return SCREEN_NONE;
	case KEY_F(5):
	case 'D':
		set_view(sc, VIEW_DEADLOCKS);
		return SCREEN_NONE;
	case '\t':
		set_view(sc, (sc->view + 1) % VIEW_NR);
		return SCREEN_NONE;
	case '/':
	case KEY_F(7):
		start_prompt(sc, PROMPT_FILTER);
		return SCREEN_NONE;
	case 'p':
	case KEY_F(8):
		start_prompt(sc, PROMPT_PID);
		return SCREEN_NONE;
	case 'd':
		start_prompt(sc, PROMPT_DELAY);
		return SCREEN_NONE;
	case 'k':
	case KEY_F(9):
		next_kind(sc);
		return SCREEN_NONE;
	case 'a':
		sc->o.all_kinds = !sc->o.all_kinds;
		return SCREEN_NONE;
	case 'c':
		sc->filter[0] = 0;
		sc->pid_filter = 0;
		sc->kind_filter = -1;
		return SCREEN_NONE;
	case ' ':
		sc->paused = !sc->paused;
		return SCREEN_NONE;
	case 't':
		sc->cumulative = !sc->cumulative;
		return SCREEN_NONE;
	case KEY_MOUSE:
		mouse_click(sc);
		return SCREEN_NONE;
	}
	if (sc->mode == MODE_DETAIL) {
		switch (ch) {
		case 27:
		case KEY_LEFT:
		case KEY_BACKSPACE:
		case 127:
			sc->mode = MODE_TABLE;
			break;
		case KEY_UP:
			if (sc->detail_scroll)
				sc->detail_scroll--;
			break;
		case KEY_DOWN:
			sc->detail_scroll++;
			break;
		case KEY_PPAGE:
			sc->detail_scroll -= sc->detail_scroll > page ?
						     page :
						     sc->detail_scroll;
			break;
		case KEY_NPAGE:
			sc->detail_scroll += page;
			break;
		case KEY_HOME:
			sc->detail_scroll = 0;
			break;
		}
		return SCREEN_NONE;
	}
	return table_key(sc, ch, page);
}

enum screen_action screen_keys(struct screen *sc)
{
	enum screen_action act = SCREEN_NONE, a;
	bool any = false;
	int ch;

	while ((ch = getch()) != ERR) {
		if (ch == KEY_RESIZE)
			continue; /* the main loop hears SIGWINCH itself */
		any = true;
		a = key(sc, ch);
		if (a == SCREEN_QUIT)
			return a;
		if (a != SCREEN_NONE)
			act = a;
	}
	if (any)
		screen_draw(sc);
	return act;
}

/* ---- life cycle ---- */

static void init_colours(struct screen *sc)
{
	const char *nc = getenv("NO_COLOR");

	/* https://no-color.org: any non-empty NO_COLOR turns colour off. */
	sc->color = sc->o.color && has_colors() && !(nc && *nc);
	if (!sc->color)
		return;
	start_color();
	use_default_colors();
	init_pair(C_LABEL, COLOR_CYAN, -1);
	init_pair(C_BAR, COLOR_GREEN, -1);
	init_pair(C_BAR_HIGH, COLOR_RED, -1);
	init_pair(C_COLHEAD, COLOR_BLACK, COLOR_GREEN);
	init_pair(C_SORTED, COLOR_BLACK, COLOR_CYAN);
	init_pair(C_SELECT, COLOR_BLACK, COLOR_CYAN);
	init_pair(C_FKEY, -1, -1);
	init_pair(C_FLABEL, COLOR_BLACK, COLOR_CYAN);
	init_pair(C_ALERT, COLOR_RED, -1);
	init_pair(C_DIM, COLOR_BLUE, -1);
}

struct screen *screen_open(const struct screen_opts *o, FILE *in, FILE *out)
{
	struct screen *sc = calloc(1, sizeof(*sc));
	bool utf8;
	int v;

	if (!sc)
		return NULL;
	sc->o = *o;
	sc->delay_ms = o->delay_ms;
	sc->kind_filter = -1;
	/* htop's triangles where the terminal speaks UTF-8 */
	utf8 = !strcmp(nl_langinfo(CODESET), "UTF-8");
	sc->up = utf8 ? "\u25b3" : "^";
	sc->down = utf8 ? "\u25bd" : "v";
	for (v = 0; v < VIEW_NR; v++)
		sc->sort[v] = views[v].default_sort;
	/* Esc leaves the detail; do not wait a second to tell it apart. */
	set_escdelay(25);
	sc->term = newterm(NULL, out, in);
	if (!sc->term) {
		free(sc);
		return NULL;
	}
	set_term(sc->term);
	cbreak();
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	nodelay(stdscr, TRUE);
	curs_set(0);
	mousemask(BUTTON1_PRESSED | BUTTON1_CLICKED, NULL);
	mouseinterval(0);
	init_colours(sc);
	return sc;
}

void screen_close(struct screen *sc)
{
	if (!sc)
		return;
	endwin();
	delscreen(sc->term);
	free(sc->rows);
	free(sc->pids);
	free(sc);
}

void screen_update(struct screen *sc, const struct lt_snapshot *snap)
{
	sc->snap = snap;
	screen_draw(sc);
}

void screen_message(struct screen *sc, const char *msg)
{
	snprintf(sc->message, sizeof(sc->message), "%s", msg);
}

void screen_resize(struct screen *sc, int rows, int cols)
{
	resizeterm(rows, cols);
	clear();
	screen_draw(sc);
}

bool screen_paused(const struct screen *sc)
{
	return sc->paused;
}

unsigned int screen_delay_ms(const struct screen *sc)
{
	return sc->delay_ms;
}
