// SPDX-License-Identifier: GPL-2.0-or-later
/* The live source: the embedded collector, probes in this kernel. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "source.h"

struct source {
	struct lt_collector *col;
};

static int live_open(const struct source_params *p, struct source **out,
		     char *err, size_t err_len)
{
	struct source *s = calloc(1, sizeof(*s));
	int ret;

	*out = NULL;
	if (!s) {
		snprintf(err, err_len, "out of memory");
		return -ENOMEM;
	}
	ret = lt_collector_open(&p->collector, &s->col, err, err_len);
	if (ret) {
		free(s);
		return ret;
	}
	*out = s;
	return 0;
}

static const struct lt_snapshot *live_read(struct source *s, bool *end,
					   char *err, size_t err_len)
{
	const struct lt_snapshot *snap;
	int ret;

	*end = false;
	ret = lt_collector_read(s->col, &snap);
	if (ret) {
		snprintf(err, err_len, "reading the probes: %s",
			 strerror(-ret));
		return NULL;
	}
	return snap;
}

static void live_set_interval(struct source *s, unsigned int ms)
{
	lt_collector_set_interval(s->col, ms);
}

static void live_close(struct source *s)
{
	if (!s)
		return;
	lt_collector_close(s->col);
	free(s);
}

static void live_housekeep(struct source *s)
{
	lt_collector_housekeep(s->col);
}

static size_t live_traced(struct source *s)
{
	return lt_collector_traced(s->col);
}

const struct source_ops source_live = {
	.name = "live",
	.open = live_open,
	.read = live_read,
	.set_interval = live_set_interval,
	.housekeep = live_housekeep,
	.close = live_close,
	.traced = live_traced,
	.recorded = false,
	.local = true,
};
