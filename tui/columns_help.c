// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * What the columns mean, as text for the end of locktop --help, made
 * from the column tables themselves so that the help names exactly the
 * columns that are drawn. docs/locktop.1 repeats it (tests/tui/columns.sh
 * compares the three).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "columns.h"

#define HELP_WIDTH 76 /* within argp's right margin, so it rewraps nothing */
#define TITLE_WIDTH 19 /* "PWRITE/s, PWRITES" and two spaces */
#define TITLE_INDENT 2

static const struct {
	const char *heading;
	const struct column *cols;
	int n;
} tables[] = {
	{ "Locks view (F2 or l, the first):", lock_cols, LC_NR },
	{ "Processes view (F3 or P):", proc_cols, PC_NR },
	{ "Files view (F4 or f):", file_cols, FC_NR },
	{ "Batch tables (--batch), one per interval and a summary of the "
	  "run:",
	  batch_cols, BC_NR },
};

static const char intro[] =
	"Columns. The screen's figures are of the last interval, or with t of "
	"the whole run. A column with two titles shows a rate under the first "
	"(per second; a time in ms per second) and, with t, the run's total "
	"under the second.";

/*
 * Writes text from column col (the cursor's), its lines no wider than
 * HELP_WIDTH, the next ones from column indent; ends the line.
 */
static void put_wrapped(FILE *f, const char *text, int col, int indent)
{
	while (*text) {
		int room = HELP_WIDTH - col, len = 0, cut = 0;

		while (text[len] && len <= room) {
			if (text[len] == ' ')
				cut = len;
			len++;
		}
		if (!text[len] && len <= room)
			cut = len;
		else if (!cut)
			cut = room; /* one word longer than the line */
		fprintf(f, "%.*s\n", cut, text);
		text += cut;
		while (*text == ' ')
			text++;
		if (*text)
			fprintf(f, "%*s", indent, "");
		col = indent;
	}
}

static void put_column(FILE *f, const struct column *c)
{
	char title[64];
	int w;

	snprintf(title, sizeof(title), "%s%s%s", c->title,
		 c->ctitle ? ", " : "", c->ctitle ? c->ctitle : "");
	w = fprintf(f, "%*s%-*s", TITLE_INDENT, "", TITLE_WIDTH, title);
	if (strlen(title) > TITLE_WIDTH - 2) { /* no room: its own line */
		fputc('\n', f);
		w = fprintf(f, "%*s", TITLE_INDENT + TITLE_WIDTH, "");
	}
	put_wrapped(f, c->help ? c->help : "", w, TITLE_INDENT + TITLE_WIDTH);
}

char *col_help_text(void)
{
	char *buf = NULL;
	size_t len = 0, t;
	FILE *f = open_memstream(&buf, &len);
	int i;

	if (!f)
		return NULL;
	put_wrapped(f, intro, 0, 0);
	for (t = 0; t < sizeof(tables) / sizeof(*tables); t++) {
		put_wrapped(f, tables[t].heading, 0, 0);
		for (i = 0; i < tables[t].n; i++)
			put_column(f, &tables[t].cols[i]);
	}
	if (fclose(f)) {
		free(buf);
		return NULL;
	}
	/* argp ends the paragraph itself. */
	if (len && buf[len - 1] == '\n')
		buf[len - 1] = 0;
	return buf;
}
