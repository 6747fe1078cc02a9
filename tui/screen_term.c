// SPDX-License-Identifier: GPL-2.0-or-later
/* The terminal: curses set-up and teardown, colour pairs, new sizes. */
#include <langinfo.h>
#include <stdlib.h>
#include <string.h>
#include "screen_priv.h"

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

void screen_resize(struct screen *sc, int rows, int cols)
{
	resizeterm(rows, cols);
	clear();
	screen_draw(sc);
}
