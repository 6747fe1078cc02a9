/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What the screen's files share: its state, its views, its colours. */
#ifndef LOCKTOP_SCREEN_PRIV_H
#define LOCKTOP_SCREEN_PRIV_H

/*
 * The full-screen view. Everything here is formatting of one snapshot and
 * handling of keys; no BPF, no PCP. Only the rows on screen are formatted,
 * so a frame costs a sort of the filtered rows and a screenful of text.
 *
 * The screen is one object, struct screen, in files by concept:
 *
 *   screen.c         the frame: header, view, status and footer lines;
 *                    help and the deadlock chains
 *   screen_header.c  the header, one function per meter
 *   screen_table.c   the Locks, Processes and Files tables: rows,
 *                    sorting, scrolling, selection
 *   screen_detail.c  one lock's detail
 *   screen_keys.c    keys, one handler per mode
 *   screen_term.c    the terminal: curses set-up, colours, teardown
 *
 * The tables' columns are columns.c's (columns.h), which draws nothing.
 * A function one file calls in another is named by the file it lives in.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <curses.h>
#include "columns.h"
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

struct view_def {
	const char *name;
	const struct column *cols;
	int n_cols;
	int default_sort;
};

extern const struct view_def views[VIEW_NR];

struct row {
	const void *item;
	double key;
	uint64_t ident;
};

struct screen {
	SCREEN *term;
	struct screen_opts o;
	bool color;
	struct col_ctx cx; /* the snapshot shown, and whether cumulative */
	enum view view;
	enum mode mode;
	int sort[VIEW_NR];
	bool reverse[VIEW_NR];
	size_t sel[VIEW_NR];
	size_t top[VIEW_NR];
	uint64_t sel_ident[VIEW_NR];
	struct row *rows;
	size_t n_rows, cap_rows;
	bool paused;
	char filter[64];
	pid_t pid_filter;
	int kind_filter; /* -1: every kind shown */
	uint64_t site_open; /* the lock site whose members are listed, or 0 */
	enum prompt prompt;
	char input[64];
	size_t input_len;
	/* The prompt's text is the old one, selected: a key typed replaces
	 * it, Backspace clears it, Enter keeps it, Right or End edits it. */
	bool input_selected;
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

/* A colour pair, or the mono attribute when colour is off. */
static inline attr_t attr(const struct screen *sc, enum colour c, attr_t mono)
{
	return sc->color ? COLOR_PAIR(c) : mono;
}

/* screen.c */
void screen_put(int y, int x, int w, const char *s, bool left, bool path);

/* screen_header.c */
int screen_header_draw(struct screen *sc, int cols);

/* screen_table.c */
void screen_table_build_rows(struct screen *sc);
void screen_table_draw(struct screen *sc, int y, int bottom, int cols);
void screen_table_sort_menu(struct screen *sc, int y, int bottom);

/* screen_detail.c */
void screen_detail_draw(struct screen *sc, int y0, int bottom, int cols);

#endif /* LOCKTOP_SCREEN_PRIV_H */
