/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The full-screen view: header meters, the Locks, Processes, Files and
 * Deadlocks views, a lock's detail, help. It formats snapshots and reads
 * keys; the main loop owns time, sources and signals.
 */
#ifndef LOCKTOP_SCREEN_H
#define LOCKTOP_SCREEN_H

#include <stdbool.h>
#include <stdio.h>
#include "collector.h"

struct screen;

struct screen_opts {
	const char *source; /* shown in the header: "live", a host, a file */
	bool local; /* this machine's probes, not an agent or a file */
	/* A process's threads (lt_proc_threads); NULL counts 1 each. */
	size_t (*threads)(pid_t pid);
	bool all_kinds; /* show futex-cond too */
	bool stacks; /* stacks were asked for */
	unsigned int delay_ms;
	bool color; /* false: monochrome, whatever the terminal can do */
};

/* What a key asked the main loop to do. */
enum screen_action {
	SCREEN_NONE,
	SCREEN_QUIT,
	SCREEN_DELAY, /* new delay in screen_delay_ms() */
};

/* Starts curses on the given terminal streams; NULL on failure. */
struct screen *screen_open(const struct screen_opts *o, FILE *in, FILE *out);
void screen_close(struct screen *sc);

/* New data; the snapshot must stay valid until the next call. */
void screen_update(struct screen *sc, const struct lt_snapshot *snap);
/* A note at the bottom, e.g. "archive ended". */
void screen_message(struct screen *sc, const char *msg);
void screen_draw(struct screen *sc);
/* The terminal changed size to rows x cols. */
void screen_resize(struct screen *sc, int rows, int cols);
/* Reads every pending key; redraws when one changed something. */
enum screen_action screen_keys(struct screen *sc);
bool screen_paused(const struct screen *sc);
unsigned int screen_delay_ms(const struct screen *sc);

#endif /* LOCKTOP_SCREEN_H */
