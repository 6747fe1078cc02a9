// SPDX-License-Identifier: GPL-2.0-or-later
#include <errno.h>
#include <stdio.h>
#include "source.h"

static int pcp_open(const struct source_params *p, struct source **out,
		    char *err, size_t err_len)
{
	(void)p;
	*out = NULL;
	snprintf(err, err_len, "not yet");
	return -ENOTSUP;
}

static const struct lt_snapshot *pcp_read(struct source *s, bool *end,
					  char *err, size_t err_len)
{
	(void)s;
	(void)end;
	(void)err;
	(void)err_len;
	return NULL;
}

static void pcp_set_interval(struct source *s, unsigned int ms)
{
	(void)s;
	(void)ms;
}

static void pcp_close(struct source *s)
{
	(void)s;
}

const struct source_ops source_pcp = {
	.name = "pcp",
	.open = pcp_open,
	.read = pcp_read,
	.set_interval = pcp_set_interval,
	.close = pcp_close,
	.recorded = false,
	.local = false,
};
