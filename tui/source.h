/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Where snapshots come from. The screen, batch text and JSON read a
 * struct lt_snapshot and do not care whether it came from the embedded
 * collector, a pmcd on another host or a pmlogger archive; one small
 * table of operations hides the difference.
 */
#ifndef LOCKTOP_SOURCE_H
#define LOCKTOP_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include "collector.h"

struct source;

struct source_params {
	const char *host; /* --host: one host */
	/* --host A,B or --host A --host B: a fleet, one context a host */
	const char *const *hosts;
	size_t n_hosts;
	const char *archive; /* --archive */
	const char *series; /* --series: pmproxy's HOST[:PORT] */
	unsigned int window_s; /* --window: seconds up to now */
	struct lt_options collector; /* for the live source */
};

struct source_ops {
	const char *name; /* "live", "pcp", "archive" */
	/* Fills *out; on failure a message that names the fix goes to err. */
	int (*open)(const struct source_params *p, struct source **out,
		    char *err, size_t err_len);
	/*
	 * The next snapshot; it stays valid until the next read or close.
	 * Returns NULL with *end set when an archive has no more data, or
	 * NULL with a message in err on an error.
	 */
	const struct lt_snapshot *(*read)(struct source *s, bool *end,
					  char *err, size_t err_len);
	void (*set_interval)(struct source *s, unsigned int ms);
	/*
	 * Connects again to a source whose read failed (a pmcd that went
	 * away); may be NULL. Returns 0 or a negative errno and a message.
	 */
	int (*reconnect)(struct source *s, char *err, size_t err_len);
	/* Housekeeping between reads, every LT_HOUSEKEEP_MS; may be NULL. */
	void (*housekeep)(struct source *s);
	void (*close)(struct source *s);
	/* Processes traced at the start, 0: every one; may be NULL. */
	size_t (*traced)(struct source *s);
	/* Replays recorded data: no need to wait between reads in batch. */
	bool recorded;
	/* The snapshot's pids are local processes (/proc can be asked). */
	bool local;
};

extern const struct source_ops source_live;
extern const struct source_ops source_pcp_host;
extern const struct source_ops source_pcp_archive;
extern const struct source_ops source_fleet;
extern const struct source_ops source_series;

#endif /* LOCKTOP_SOURCE_H */
