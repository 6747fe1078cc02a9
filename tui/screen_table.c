// SPDX-License-Identifier: GPL-2.0-or-later
/* The lock, process and file tables: rows, sorting, scrolling, selection. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "screen_priv.h"

#define HOST_MAX_W 20 /* a longer host name is cut */

/* The views: their names, their tables' columns and first sort. */
const struct view_def views[VIEW_NR] = {
	[VIEW_LOCKS] = { "Locks", lock_cols, LC_NR, LC_WAIT },
	[VIEW_PROCS] = { "Processes", proc_cols, PC_NR, PC_WAIT },
	[VIEW_FILES] = { "Files", file_cols, FC_NR, FC_IOTIME },
	[VIEW_DEADLOCKS] = { "Deadlocks", NULL, 0, 0 },
};

/* ---- rows ---- */

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

/*
 * The locks batch text shows (lt_lock_shown()), or an open lock site's
 * members, then the filters.
 */
static bool lock_shown(const struct screen *sc, const struct lt_lock *l)
{
	struct lt_view v = { .totals = sc->cx.cumulative,
			     .all_kinds = sc->o.all_kinds ||
					  sc->kind_filter >= 0,
			     .members = sc->site_open != 0,
			     .waited_only = true };

	/* The kind asked for, which may be an event wait's. */
	if (sc->kind_filter >= 0 && (int)l->kind != sc->kind_filter)
		return false;
	if (sc->site_open && l->site != sc->site_open)
		return false;
	if (!lt_lock_shown(l, &v))
		return false;
	if (sc->filter[0] && !strcasestr(l->name, sc->filter))
		return false;
	if (sc->pid_filter && !lock_has_pid(l, sc->pid_filter))
		return false;
	return true;
}

static bool proc_shown(const struct screen *sc, const struct lt_proc *p)
{
	const struct lt_proc_figures *f = col_proc_fig(&sc->cx, p);

	if (!f->waits && !f->io_count)
		return false;
	if (sc->pid_filter && p->pid != sc->pid_filter)
		return false;
	if (sc->filter[0] && !strcasestr(p->comm, sc->filter))
		return false;
	return true;
}

static bool file_shown(const struct screen *sc, const struct lt_file *fl)
{
	const struct lt_file_figures *f = col_file_fig(&sc->cx, fl);

	if (!f->reads && !f->writes)
		return false;
	return !sc->filter[0] || strcasestr(fl->name, sc->filter);
}

/* The host of a row, "" for one machine's. */
static const char *row_host(const struct screen *sc, const struct row *r)
{
	const char *h = NULL;

	switch (sc->view) {
	case VIEW_LOCKS:
		h = ((const struct lt_lock *)r->item)->host;
		break;
	case VIEW_PROCS:
		h = ((const struct lt_proc *)r->item)->host;
		break;
	case VIEW_FILES:
		h = ((const struct lt_file *)r->item)->host;
		break;
	default:
		break;
	}
	return h ? h : "";
}

static const char *row_name(const struct screen *sc, const struct row *r)
{
	int col = sc->sort[sc->view];

	if (views[sc->view].cols[col].fleet)
		return row_host(sc, r);
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

		return col == PC_TOP ? col_lock_name(sc->cx.snap, p->top_lock) :
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
	/* Ties in the order of batch output, so that the first rows by
	 * wait time are its rows. */
	if (!r && sc->view == VIEW_LOCKS)
		r = lt_lock_order(x->item, y->item, sc->cx.cumulative);
	if (!r)
		r = x->ident < y->ident ? -1 : x->ident > y->ident;
	return sc->reverse[sc->view] ? -r : r;
}

static int grow_rows(struct screen *sc, size_t n)
{
	return lt_grow((void **)&sc->rows, &sc->cap_rows, n, sizeof(*sc->rows));
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
void screen_table_build_rows(struct screen *sc)
{
	const struct lt_snapshot *s = sc->cx.snap;
	int col = sc->sort[sc->view];
	size_t i, n = 0;

	sc->n_rows = 0;
	if (!s)
		return;
	switch (sc->view) {
	case VIEW_LOCKS:
		if (grow_rows(sc, lt_snapshot_rows(s)))
			return;
		for (i = 0; i < lt_snapshot_rows(s); i++) {
			const struct lt_lock *l = lt_snapshot_row(s, i);

			if (!lock_shown(sc, l))
				continue;
			sc->rows[n].item = l;
			sc->rows[n].ident = l->id;
			sc->rows[n++].key = col_lock_key(&sc->cx, l, col);
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
			sc->rows[n++].key = col_proc_key(&sc->cx, p, col);
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
			sc->rows[n++].key = col_file_key(&sc->cx, f, col);
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

/*
 * A column's width before it is stretched: the HOST column as wide as
 * the widest host name (at most HOST_MAX_W), 0 when it is not shown.
 */
static int col_width(const struct screen *sc, const struct column *c)
{
	int w;

	if (!c->fleet)
		return c->width;
	w = col_host_width(sc->cx.snap);
	return w > HOST_MAX_W ? HOST_MAX_W : w;
}

/*
 * Lays out the visible columns for width w: drops until they fit. The
 * columns that name the host come first.
 */
static void layout(struct screen *sc, int w)
{
	const struct column *cols = views[sc->view].cols;
	int n = views[sc->view].n_cols, need, i, k, level, flex = -1, x;
	int order[MAX_COLS], cw[MAX_COLS];
	bool keep[MAX_COLS];

	for (i = 0, k = 0; i < n; i++)
		if (cols[i].fleet)
			order[k++] = i;
	for (i = 0; i < n; i++)
		if (!cols[i].fleet)
			order[k++] = i;
	for (i = 0; i < n; i++) {
		cw[i] = col_width(sc, &cols[i]);
		keep[i] = cw[i] > 0;
	}
	for (level = 1; level < 10; level++) {
		need = 0;
		for (i = 0; i < n; i++)
			if (keep[i])
				need += cw[i] + 1;
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
		need += cw[i] + 1;
		if (cols[i].flex)
			flex = i;
	}
	need--;
	sc->n_vis = 0;
	x = 0;
	for (k = 0; k < n; k++) {
		int c = order[k], width;

		if (!keep[c])
			continue;
		width = cw[c];
		if (c == flex && w > need)
			width += w - need;
		if (x + width > w)
			width = w - x;
		if (width <= 0)
			break;
		sc->vis_col[sc->n_vis] = c;
		sc->vis_x[sc->n_vis] = x;
		sc->vis_w[sc->n_vis++] = width;
		x += width + 1;
	}
}

static void cell(const struct screen *sc, const struct row *r, int col,
		 char *buf, size_t len)
{
	switch (sc->view) {
	case VIEW_LOCKS:
		col_lock_cell(&sc->cx, r->item, col, buf, len);
		break;
	case VIEW_PROCS:
		col_proc_cell(&sc->cx, r->item, col, buf, len);
		break;
	case VIEW_FILES:
		col_file_cell(&sc->cx, r->item, col, buf, len);
		break;
	default:
		buf[0] = 0;
	}
}

static void draw_table_head(struct screen *sc, int y, int cols)
{
	const struct column *cdefs = views[sc->view].cols;
	int i;

	sc->head_y = y;
	attron(attr(sc, C_COLHEAD, A_REVERSE));
	mvhline(y, 0, ' ', cols);
	for (i = 0; i < sc->n_vis; i++) {
		const struct column *c = &cdefs[sc->vis_col[i]];
		const char *t = sc->cx.cumulative && c->ctitle ? c->ctitle :
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
		screen_put(y, sc->vis_x[i], sc->vis_w[i], title,
			   cdefs[sc->vis_col[i]].left, false);
		if (sorted) {
			attroff(attr(sc, C_SORTED, A_BOLD) | A_BOLD);
			attron(attr(sc, C_COLHEAD, A_REVERSE));
		}
	}
	attroff(attr(sc, C_COLHEAD, A_REVERSE));
}

void screen_table_draw(struct screen *sc, int y, int bottom, int cols)
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

		if (sc->view == VIEW_PROCS && !sc->cx.snap->n_procs)
			why = "no process figures from this source yet";
		else if (sc->view == VIEW_FILES && sc->cx.snap->io_off)
			why = sc->o.local ? "pread and pwrite are not traced "
					    "(--no-io)" :
					    "pread and pwrite are not traced "
					    "(the agent's -I)";
		else if (sc->view == VIEW_FILES && !sc->cx.snap->n_files)
			why = "no file I/O figures from this source yet";
		else if (sc->filter[0] || sc->pid_filter ||
			 sc->kind_filter >= 0)
			why = "nothing matches the filter";
		else if (sc->cx.cumulative)
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
			screen_put(y, sc->vis_x[i], sc->vis_w[i], buf,
				   views[sc->view].cols[c].left,
				   views[sc->view].cols[c].flex);
		}
		if (selected)
			attroff(attr(sc, C_SELECT, A_REVERSE));
	}
}

void screen_table_sort_menu(struct screen *sc, int y, int bottom)
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
