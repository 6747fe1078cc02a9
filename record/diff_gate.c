// SPDX-License-Identifier: GPL-2.0-or-later
/* locktop diff --fail-if: the expressions and when they are crossed. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "diff.h"

/* A time's unit after its number: ns (the default), us, ms or s. */
static char *time_unit(char *p, double *scale)
{
	if (!strncmp(p, "ns", 2))
		return p + 2;
	if (!strncmp(p, "us", 2)) {
		*scale = 1e3;
		return p + 2;
	}
	if (!strncmp(p, "ms", 2)) {
		*scale = 1e6;
		return p + 2;
	}
	if (*p == 's') {
		*scale = 1e9;
		return p + 1;
	}
	return p;
}

/*
 * "[KIND.]METRIC[/op]" into g; 0, or -1 with a message in err. name is
 * the gate's own copy, text the whole expression for messages.
 */
static int parse_name(struct diff_gate *g, char *name, const char *text,
		      char *err, size_t err_len)
{
	char *dot = strchr(name, '.');
	size_t n = strlen(name);
	int m;

	if (n > 3 && !strcmp(name + n - 3, "/op")) {
		g->per_op = true;
		name[n - 3] = '\0';
	}
	if (dot) {
		int k;

		*dot = '\0';
		k = strcmp(name, "all") ? lt_kind_parse(name) : DIFF_KIND_ALL;
		if (k < 0 && strcmp(name, "all")) {
			snprintf(err, err_len,
				 "--fail-if '%s': unknown kind '%s' (futex, "
				 "futex-pi, fcntl, ofd, flock, kernel, spin, "
				 "futex-cond, pg-lwlock, pg-lock or all)",
				 text, name);
			return -1;
		}
		g->kind = k;
		memmove(name, dot + 1, strlen(dot + 1) + 1);
	}
	m = rec_metric_parse(name);
	if (m < 0) {
		snprintf(err, err_len,
			 "--fail-if '%s': unknown metric '%s' (%s; /op after "
			 "one but p99 for its figure per operation)",
			 text, name, rec_metric_list);
		return -1;
	}
	if (g->per_op && m == REC_P99) {
		snprintf(err, err_len,
			 "--fail-if '%s': p99 has no figure per operation",
			 text);
		return -1;
	}
	g->metric = (enum rec_metric)m;
	return 0;
}

int diff_gate_parse(const char *text, struct diff_gate *g, char *err,
		    size_t err_len)
{
	char name[64], *end;
	const char *p = text, *op;
	size_t n;
	double v, scale = 1;

	memset(g, 0, sizeof(*g));
	snprintf(g->text, sizeof(g->text), "%s", text);
	g->kind = DIFF_KIND_ALL;
	op = strpbrk(text, "<>");
	if (!op) {
		snprintf(err, err_len,
			 "--fail-if '%s': want METRIC>VALUE or METRIC<VALUE, "
			 "e.g. 'wait_time>+10%%'",
			 text);
		return -1;
	}
	g->op = *op;
	while (*p == ' ')
		p++;
	n = (size_t)(op - p);
	while (n && p[n - 1] == ' ')
		n--;
	if (!n || n >= sizeof(name)) {
		snprintf(err, err_len, "--fail-if '%s': no metric before '%c'",
			 text, g->op);
		return -1;
	}
	memcpy(name, p, n);
	name[n] = '\0';
	if (parse_name(g, name, text, err, err_len))
		return -1;
	p = op + 1;
	while (*p == ' ')
		p++;
	g->mode = (*p == '+' || *p == '-') ? GATE_DELTA : GATE_VALUE;
	errno = 0;
	v = strtod(p, &end);
	if (errno || end == p || !isfinite(v) || !strncasecmp(p, "nan", 3) ||
	    !strncasecmp(p + (*p == '+' || *p == '-'), "inf", 3)) {
		snprintf(err, err_len, "--fail-if '%s': '%s' is not a number",
			 text, p);
		return -1;
	}
	if (*end == '%') {
		g->mode = GATE_REL;
		end++;
	} else if (rec_metric_is_time(g->metric)) {
		end = time_unit(end, &scale);
	}
	while (*end == ' ')
		end++;
	if (*end) {
		snprintf(err, err_len,
			 "--fail-if '%s': unexpected '%s' after the value "
			 "(%s)",
			 text, end,
			 rec_metric_is_time(g->metric) ?
				 "a time takes ns, us, ms or s, or %" :
				 "a count takes no unit, or %");
		return -1;
	}
	if (g->mode == GATE_VALUE && v < 0) {
		snprintf(err, err_len, "--fail-if '%s': negative value", text);
		return -1;
	}
	g->value = v * scale;
	return 0;
}

bool diff_gate_crossed(const struct diff_gate *g, double b, double a,
		       double *seen)
{
	double x;

	switch (g->mode) {
	case GATE_REL:
		x = b > 0 ? (a - b) / b * 100 : a > 0 ? INFINITY : 0;
		break;
	case GATE_DELTA:
		x = a - b;
		break;
	default:
		x = a;
		break;
	}
	*seen = x;
	return g->op == '>' ? x > g->value : x < g->value;
}
