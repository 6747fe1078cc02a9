/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The bench tools' count options: one parser, one message. */
#ifndef LOCKTOP_BENCH_COUNT_ARG_H
#define LOCKTOP_BENCH_COUNT_ARG_H
#include <argp.h>
#include <errno.h>
#include <stdlib.h>

/* A count of at least 1 into *out, or an argp error. */
static inline error_t parse_count(const char *arg, struct argp_state *state,
				  unsigned long *out)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(arg, &end, 0);
	if (errno || end == arg || *end || v < 1 || arg[0] == '-') {
		argp_error(state, "invalid count '%s'", arg);
		return EINVAL;
	}
	*out = v;
	return 0;
}

#endif /* LOCKTOP_BENCH_COUNT_ARG_H */
