// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * uprobe-hit: calls a function whose first instruction is a one-byte
 * nop, as at a USDT probe site, N times, timed. Untraced a call costs a
 * few nanoseconds; with a uprobe on the function (lt_probe_site) each
 * call takes the uprobe's trap, so the difference is what one hit costs
 * on this machine before any program runs. bench/uprobe-floor.sh runs
 * it both ways; bench/pg-cost.sh sets the figure beside a server's hits
 * per transaction.
 *
 *   uprobe-hit [-n CALLS] [-j]
 */
#include <argp.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "bench_tool.h"
#include "count_arg.h"

static struct {
	unsigned long calls;
	bool json;
} env = { .calls = 200000 };

static const struct argp_option options[] = {
	{ "calls", 'n', "N", 0, "Timed calls (default 200000)", 0 },
	{ "json", 'j', NULL, 0, "Print one JSON object", 0 },
	{},
};

static error_t parse_arg(int key, char *arg, struct argp_state *state)
{
	switch (key) {
	case 'n':
		return parse_count(arg, state, &env.calls);
	case 'j':
		env.json = true;
		return 0;
	case ARGP_KEY_ARG:
		argp_error(state, "unexpected argument '%s'", arg);
		return EINVAL;
	default:
		return ARGP_ERR_UNKNOWN;
	}
}

static const struct argp argp = {
	.options = options,
	.parser = parse_arg,
	.doc = "Times calls of lt_probe_site, a function that starts with a "
	       "one-byte nop as a USDT site does, and prints the nanoseconds "
	       "per call: with a uprobe on it, what one hit costs."
	       "\v"
	       "EXAMPLES:\n"
	       "  uprobe-hit -j\n"
	       "  bpftrace -e 'uprobe:./uprobe-hit:lt_probe_site "
	       "{ @n = count(); }' &\n"
	       "  uprobe-hit -n 100000",
};

/* The probed function: a nop where the uprobe goes, as in <sys/sdt.h>. */
__attribute__((noinline, used)) unsigned long lt_probe_site(unsigned long x)
{
	__asm__ volatile("nop" ::: "memory");
	return x + 1;
}

int main(int argc, char **argv)
{
	unsigned long (*volatile site)(unsigned long) = lt_probe_site;
	unsigned long i, sum = 0;
	double t0, ns;

	if (argp_parse(&argp, argc, argv, 0, NULL, NULL))
		return 2;
	/* Warm-up: the uprobe's out-of-line area, the caches. */
	for (i = 0; i < 1000; i++)
		sum += site(i);
	t0 = bench_now_ns();
	for (i = 0; i < env.calls; i++)
		sum += site(i);
	ns = (bench_now_ns() - t0) / (double)env.calls;
	if (env.json)
		printf("{\"calls\": %lu, \"ns_per_call\": %.1f, \"sum\": %lu}\n",
		       env.calls, ns, sum);
	else
		printf("%lu calls: %.1f ns per call\n", env.calls, ns);
	return 0;
}
