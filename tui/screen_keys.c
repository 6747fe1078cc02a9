// SPDX-License-Identifier: GPL-2.0-or-later
/* Keys and the mouse: one handler for each mode, and the prompts. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "screen_priv.h"

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
	int step = col < sc->sort[sc->view] ? -1 : 1;

	if (!n)
		return;
	col = (col % n + n) % n;
	/* A host column that is not shown is passed over. */
	if (views[sc->view].cols[col].fleet && !col_host_width(sc->cx.snap))
		col = ((col + step) % n + n) % n;
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
	sc->input_selected = sc->input_len > 0;
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
	bool selected = sc->input_selected;

	sc->input_selected = false;
	if (selected && ch != '\n' && ch != '\r' && ch != KEY_ENTER &&
	    ch != 27 && ch != KEY_RIGHT && ch != KEY_END) {
		/* The old text goes: typing replaces it. */
		sc->input_len = 0;
		sc->input[0] = 0;
		if (ch == KEY_BACKSPACE || ch == 127 || ch == 8)
			return SCREEN_NONE;
	}
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
	} while (!lt_kind_in_view(sc->kind_filter, sc->o.all_kinds));
	sc->sel[sc->view] = 0;
	sc->sel_ident[sc->view] = 0;
}

/* The Locks view lists lock site id's processes' rows; 0: every lock. */
static void open_site(struct screen *sc, uint64_t id)
{
	sc->site_open = id;
	sc->sel[VIEW_LOCKS] = 0;
	sc->sel_ident[VIEW_LOCKS] = 0;
	sc->top[VIEW_LOCKS] = 0;
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

			/* A lock site opens into its processes' rows. */
			if (l->n_members && !sc->site_open) {
				open_site(sc, l->id);
				break;
			}
			sc->detail_id = l->id;
			sc->detail_scroll = 0;
			sc->mode = MODE_DETAIL;
		}
		break;
	case 27:
	case KEY_LEFT:
	case KEY_BACKSPACE:
	case 127:
		if (sc->view == VIEW_LOCKS && sc->site_open)
			open_site(sc, 0);
		break;
	}
	return SCREEN_NONE;
}

/* Help: any key returns to the table; q and F10 quit from there. */
static enum screen_action help_key(struct screen *sc, int ch)
{
	sc->mode = MODE_TABLE;
	return ch == 'q' || ch == KEY_F(10) ? SCREEN_QUIT : SCREEN_NONE;
}

/* The sort menu: arrows pick a column, Enter sorts by it, others close it. */
static enum screen_action sort_key(struct screen *sc, int ch)
{
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

/*
 * The keys the table and the detail share: quit, help, views, prompts,
 * filters, time, the mouse. False for any other key.
 */
static bool shared_key(struct screen *sc, int ch, enum screen_action *act)
{
	*act = SCREEN_NONE;
	switch (ch) {
	case 'q':
	case KEY_F(10):
		if (sc->mode == MODE_DETAIL) {
			sc->mode = MODE_TABLE;
			return true;
		}
		*act = SCREEN_QUIT;
		return true;
	case 'h':
	case '?':
	case KEY_F(1):
		sc->mode = MODE_HELP;
		return true;
	case KEY_F(2):
	case 'l':
		set_view(sc, VIEW_LOCKS);
		return true;
	case KEY_F(3):
	case 'P':
		set_view(sc, VIEW_PROCS);
		return true;
	case KEY_F(4):
	case 'f':
		set_view(sc, VIEW_FILES);
		return true;
	case KEY_F(5):
	case 'D':
		set_view(sc, VIEW_DEADLOCKS);
		return true;
	case '\t':
		set_view(sc, (sc->view + 1) % VIEW_NR);
		return true;
	case '/':
	case KEY_F(7):
		start_prompt(sc, PROMPT_FILTER);
		return true;
	case 'p':
	case KEY_F(8):
		start_prompt(sc, PROMPT_PID);
		return true;
	case 'd':
		start_prompt(sc, PROMPT_DELAY);
		return true;
	case 'k':
	case KEY_F(9):
		next_kind(sc);
		return true;
	case 'a':
		sc->o.all_kinds = !sc->o.all_kinds;
		return true;
	case 'c':
		sc->filter[0] = 0;
		sc->pid_filter = 0;
		sc->kind_filter = -1;
		sc->site_open = 0;
		return true;
	case ' ':
		sc->paused = !sc->paused;
		return true;
	case 't':
		sc->cx.cumulative = !sc->cx.cumulative;
		return true;
	case KEY_MOUSE:
		mouse_click(sc);
		return true;
	}
	return false;
}

/* The detail: Esc, Left or Backspace leaves it; the rest scroll it. */
static enum screen_action detail_key(struct screen *sc, int ch, int page)
{
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
		sc->detail_scroll -=
			sc->detail_scroll > page ? page : sc->detail_scroll;
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

/* One key: to the prompt being typed, or to the mode's handler. */
static enum screen_action key(struct screen *sc, int ch)
{
	int rows = getmaxy(stdscr), page = rows > 12 ? rows - 10 : 1;
	enum screen_action act;

	if (sc->prompt != PROMPT_NONE)
		return prompt_key(sc, ch);
	if (sc->mode == MODE_HELP)
		return help_key(sc, ch);
	if (sc->mode == MODE_SORT)
		return sort_key(sc, ch);
	sc->message[0] = 0;
	if (shared_key(sc, ch, &act))
		return act;
	if (sc->mode == MODE_DETAIL)
		return detail_key(sc, ch, page);
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
