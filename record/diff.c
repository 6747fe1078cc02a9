// SPDX-License-Identifier: GPL-2.0-or-later
/* locktop diff: its options, and the command that compares two recordings
 * (diff_cmp.c) and prints the comparison (diff_text.c, diff_json.c). */
#include <argp.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include "diff_priv.h"

/* ---- the command ---- */

#define MAX_GATES 32

static struct diff_env {
	bool markdown;
	bool json;
	bool all_kinds;
	long limit; /* -1: default */
	const char *plot;
	const char *output;
	const char *paths[2];
	size_t n_paths;
	struct diff_rule rule;
	struct diff_gate gates[MAX_GATES];
	size_t n_gates;
	bool has_ops; /* --ops */
	double ops[2];
} denv;

enum {
	OPT_PLOT = 0x200,
	OPT_SIGMA,
	OPT_THRESHOLD,
	OPT_OPS,
};

/* Where --help's text takes the metrics' list (diff_help_filter()). */
#define METRICS_MARK "@METRICS@"

static const char diff_doc[] =
	"locktop diff -- compare two recordings of locktop record.\n"
	"\n"
	"Matches locks by their key (kind, file and offset, or image and "
	"offset), never by address or PID, and prints for each kind and each "
	"lock the waits, wait time, hold time and p99 wait before and after, "
	"the change, and a verdict: better, worse, same when the change is "
	"within the noise of the recorded intervals, or unclear when the "
	"records hold too little to judge by: unclear (2 intervals), "
	"unclear (6 waits), or unclear (noise ±150%) when the noise hides "
	"a change of twofold or more. A figure new in AFTER, or gone from "
	"it, is worse or better. The output opens with the elapsed time and "
	"the CPU time (user+sys: the command's and --pid's processes'), "
	"before → after.\n"
	"\n"
	"With --ops (or the records' own counts, locktop record --ops-file) "
	"it opens with the throughput and the lock that changed most, shows "
	"the figures per operation beside the totals and judges those. Locks "
	"whose keys differ only in their kind are one row, each file's locks "
	"have a total, and rows too small to change a verdict are left out "
	"(--limit 0 shows them).\n"
	"\n"
	"EXAMPLES:\n"
	"  locktop diff fcntl.rec mutex.rec\n"
	"  locktop diff --ops 101816,129456 smb-fcntl.rec smb-mutex.rec\n"
	"  locktop diff --markdown --plot waits.svg a.rec b.rec > report.md\n"
	"  locktop diff --fail-if 'wait_time>+10%' base.rec new.rec\n"
	"\v"
	"--fail-if takes [KIND.]METRIC[/op] OP VALUE. METRIC is one of " METRICS_MARK
	"; KIND (futex, fcntl, "
	"...) narrows it to one kind, the default is all lock kinds; /op "
	"takes the figure per operation (with --ops). OP is > "
	"or <. VALUE is a change in percent (+10%), a change in units (+5ms, "
	"-100) or, unsigned, the after figure itself (2ms). Times take ns, "
	"us, ms or s.\n"
	"\n"
	"Exit status: 0 when no threshold is crossed, 1 when one is, 2 on bad "
	"input (a file that is unreadable, corrupt or of another version, a "
	"bad --fail-if) or an output that cannot be written.";

static const struct argp_option diff_options[] = {
	{ "markdown", 'm', NULL, 0, "Markdown tables instead of text", 0 },
	{ "json", 'j', NULL, 0, "One JSON object instead of text", 0 },
	{ "fail-if", 'F', "EXPR", 0,
	  "Exit 1 when EXPR holds, e.g. 'wait_time>+10%' (repeatable)", 0 },
	{ "plot", OPT_PLOT, "FILE.svg", 0,
	  "Chart the wait time per interval, before and after (gnuplot)", 0 },
	{ "output", 'o', "FILE", 0,
	  "Write to FILE instead of stdout ('-' is stdout)", 0 },
	{ "all", 'a', NULL, 0, "Include condition-like waits (futex-cond)", 0 },
	{ "limit", 'l', "N", 0,
	  "At most N locks (default 20 in text and Markdown, all in JSON; "
	  "0: all)",
	  0 },
	{ "sigma", OPT_SIGMA, "K", 0,
	  "Noise band: K standard errors of the per-interval spread "
	  "(default 2)",
	  0 },
	{ "threshold", OPT_THRESHOLD, "PCT", 0,
	  "Changes within PCT percent are the same anyway (default 5)", 0 },
	{ "ops", OPT_OPS, "N1,N2", 0,
	  "The operations each run did (transactions, opens, loops): "
	  "figures per operation, and throughput; overrides the records' own "
	  "counts",
	  0 },
	{},
};

static double parse_pos(struct argp_state *state, const char *what,
			const char *arg, double max)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (errno || end == arg || *end || !isfinite(v) || v < 0 || v > max)
		argp_error(state, "invalid %s '%s': give a number from 0 to %g",
			   what, arg, max);
	return v;
}

/* --ops N1,N2: two whole numbers above 0. */
static void parse_ops(struct argp_state *state, const char *arg)
{
	const char *p = arg;
	char *end;
	int s;

	for (s = 0; s < 2; s++) {
		errno = 0;
		denv.ops[s] = strtod(p, &end);
		if (errno || end == p || !(denv.ops[s] >= 1) ||
		    denv.ops[s] > 1e18 || denv.ops[s] != floor(denv.ops[s]) ||
		    *end != (s ? '\0' : ','))
			argp_error(state,
				   "invalid --ops '%s': give the operations "
				   "of each run, N1,N2, whole numbers from 1",
				   arg);
		p = end + 1;
	}
	denv.has_ops = true;
}

static error_t diff_parse(int key, char *arg, struct argp_state *state)
{
	char msg[256];

	switch (key) {
	case 'm':
		denv.markdown = true;
		break;
	case 'j':
		denv.json = true;
		break;
	case 'F':
		if (denv.n_gates == MAX_GATES)
			argp_error(state, "at most %d --fail-if", MAX_GATES);
		if (diff_gate_parse(arg, &denv.gates[denv.n_gates], msg,
				    sizeof(msg)))
			argp_error(state, "%s", msg);
		denv.n_gates++;
		break;
	case OPT_PLOT:
		denv.plot = arg;
		break;
	case 'o':
		denv.output = arg;
		break;
	case 'a':
		denv.all_kinds = true;
		break;
	case 'l':
		denv.limit = (long)parse_pos(state, "limit", arg, 1e9);
		break;
	case OPT_SIGMA:
		denv.rule.sigma = parse_pos(state, "--sigma", arg, 100);
		break;
	case OPT_THRESHOLD:
		denv.rule.threshold_pct =
			parse_pos(state, "--threshold", arg, 1000);
		break;
	case OPT_OPS:
		parse_ops(state, arg);
		break;
	case ARGP_KEY_ARG:
		if (denv.n_paths == 2)
			argp_error(state, "give two records: BEFORE AFTER");
		denv.paths[denv.n_paths++] = arg;
		break;
	case ARGP_KEY_END:
		if (denv.n_paths != 2)
			argp_error(state, "give two records: BEFORE AFTER");
		if (denv.markdown && denv.json)
			argp_error(state,
				   "give --markdown or --json, not both");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

/* The figures a gate looks at: its kind's row, or 0 → 0 if it has none. */
static bool eval_gate(const struct diff_cmp *c, const struct diff_gate *g,
		      double *b, double *a, double *seen)
{
	size_t k;

	*b = *a = 0;
	for (k = 0; k < c->n_kinds; k++)
		if (c->kinds[k].kind == g->kind) {
			const struct diff_row *r = &c->kinds[k];
			const struct diff_side *sd =
				g->per_op ? r->per_op[g->metric] :
					    r->side[g->metric];

			*b = sd[0].value;
			*a = sd[1].value;
		}
	return diff_gate_crossed(g, *b, *a, seen);
}

static json_object *gates_json(const struct diff_cmp *c, bool *crossed_any)
{
	json_object *arr = json_object_new_array();
	size_t i;

	*crossed_any = false;
	for (i = 0; i < denv.n_gates; i++) {
		const struct diff_gate *g = &denv.gates[i];
		json_object *o = json_object_new_object();
		double b, a, seen;
		bool crossed = eval_gate(c, g, &b, &a, &seen);

		*crossed_any = *crossed_any || crossed;
		json_object_object_add(o, "expr",
				       json_object_new_string(g->text));
		json_object_object_add(o, "before", diff_j_figure(b));
		json_object_object_add(o, "after", diff_j_figure(a));
		json_object_object_add(o, "seen",
				       isfinite(seen) ?
					       json_object_new_double(seen) :
					       json_object_new_string("inf"));
		json_object_object_add(o, "crossed",
				       json_object_new_boolean(crossed));
		json_object_array_add(arr, o);
	}
	return arr;
}

/* Names each crossed gate on stderr; returns whether any was. */
static bool report_gates(const struct diff_cmp *c)
{
	char bv[24], av[24], ch[24];
	bool any = false;
	size_t i;

	for (i = 0; i < denv.n_gates; i++) {
		const struct diff_gate *g = &denv.gates[i];
		double b, a, seen;

		if (!eval_gate(c, g, &b, &a, &seen))
			continue;
		any = true;
		(g->per_op ? diff_fmt_per_op : diff_fmt_value)(g->metric, b, bv,
							       sizeof(bv));
		(g->per_op ? diff_fmt_per_op : diff_fmt_value)(g->metric, a, av,
							       sizeof(av));
		diff_fmt_change(b, a, ch, sizeof(ch));
		fprintf(stderr,
			"locktop diff: --fail-if '%s' crossed: %s %s%s %s → %s "
			"(%s)\n",
			g->text, g->kind < 0 ? "all" : lt_kind_name(g->kind),
			rec_metric_label(g->metric), g->per_op ? " per op" : "",
			bv, av, ch);
	}
	return any;
}

/* Loads both records into c; false (after saying why) when one fails. */
static bool load_records(struct diff_cmp *c, struct record *rec[2])
{
	char msg[512];
	int s;

	for (s = 0; s < 2; s++) {
		if (record_load(denv.paths[s], &rec[s], msg, sizeof(msg))) {
			fprintf(stderr, "locktop diff: %s\n", msg);
			return false;
		}
		c->rec[s] = rec[s];
		c->path[s] = denv.paths[s];
		/* Lost events make a record's figures low: say so. */
		if (rec[s]->final.drops)
			fprintf(stderr,
				"locktop diff: warning: %s dropped %" PRIu64
				" events (full maps); its figures are low\n",
				denv.paths[s], rec[s]->final.drops);
	}
	return true;
}

/*
 * The operations of each run: --ops, else the records' own counts when
 * both have one. A count on one side only compares with nothing.
 */
static void set_ops(struct diff_cmp *c)
{
	int s;

	if (denv.has_ops) {
		c->per_op = true;
		c->ops[0] = denv.ops[0];
		c->ops[1] = denv.ops[1];
		return;
	}
	c->per_op = c->rec[0]->has_ops && c->rec[1]->has_ops &&
		    c->rec[0]->ops > 0 && c->rec[1]->ops > 0;
	for (s = 0; s < 2; s++) {
		c->ops[s] = (double)c->rec[s]->ops;
		if (!c->per_op && c->rec[s]->has_ops)
			fprintf(stderr,
				"locktop diff: %s holds an operation count "
				"and %s none (or 0): the figures are totals; "
				"give --ops N1,N2 for figures per operation\n",
				c->path[s], c->path[!s]);
	}
}

/* A gate on a figure per operation needs both runs' counts. */
static bool gates_have_ops(const struct diff_cmp *c)
{
	for (size_t i = 0; i < denv.n_gates; i++)
		if (denv.gates[i].per_op && !c->per_op) {
			fprintf(stderr,
				"locktop diff: --fail-if '%s' needs both runs' "
				"operations: give --ops N1,N2\n",
				denv.gates[i].text);
			return false;
		}
	return true;
}

/* The output in its format; false when it cannot be written. */
static bool print_all(FILE *out, const struct diff_cmp *c, bool *crossed)
{
	size_t n_locks = c->n_locks, n_files = c->n_files;
	size_t deflimit = denv.json ? 0 : 20;
	size_t limit = denv.limit >= 0 ? (size_t)denv.limit : deflimit;
	json_object *gates;

	/* Text and Markdown leave small rows out, but with --limit 0. */
	if (!denv.json && denv.limit != 0) {
		n_files -= c->n_small_files;
		n_locks -= c->n_small_locks;
	}
	if (limit && limit < n_locks)
		n_locks = limit;
	if (limit && limit < n_files)
		n_files = limit;
	gates = gates_json(c, crossed);
	if (denv.json)
		diff_print_json(out, c, n_files, n_locks, gates, *crossed);
	else if (denv.markdown)
		diff_print_markdown(out, c, n_files, n_locks);
	else
		diff_print_text(out, c, n_files, n_locks);
	if (!denv.json)
		json_object_put(gates);
	if (fflush(out) || ferror(out)) {
		fprintf(stderr, "locktop diff: writing the output: %s\n",
			strerror(errno));
		return false;
	}
	return true;
}

/* --help's metrics: the list --fail-if takes, made from figures.def. */
static char *diff_help_filter(int key, const char *text, void *input)
{
	const char *at = text ? strstr(text, METRICS_MARK) : NULL;
	size_t len;
	char *out;

	(void)input;
	if (key != ARGP_KEY_HELP_POST_DOC || !at)
		return (char *)text;
	len = strlen(text) - strlen(METRICS_MARK) + strlen(rec_metric_list);
	out = malloc(len + 1);
	if (!out)
		return (char *)text;
	snprintf(out, len + 1, "%.*s%s%s", (int)(at - text), text,
		 rec_metric_list, at + strlen(METRICS_MARK));
	return out;
}

int diff_main(int argc, char **argv)
{
	static const struct argp argp = { diff_options,	  diff_parse,
					  "BEFORE AFTER", diff_doc,
					  NULL,		  diff_help_filter };
	struct diff_cmp c = { 0 };
	struct record *rec[2] = { NULL, NULL };
	char msg[512];
	FILE *out = stdout;
	bool crossed = false;
	int ret = DIFF_EXIT_BAD;

	denv.limit = -1;
	denv.rule.sigma = 2;
	denv.rule.threshold_pct = 5;
	argp_err_exit_status = DIFF_EXIT_BAD;
	argv[0] = "locktop diff"; /* argp's name in messages */
	if (argp_parse(&argp, argc, argv, 0, NULL, NULL))
		return DIFF_EXIT_BAD;
	if (!load_records(&c, rec))
		goto out;
	c.rule = denv.rule;
	c.all_kinds = denv.all_kinds;
	set_ops(&c);
	if (!gates_have_ops(&c))
		goto out;
	if (diff_compare(&c)) {
		fprintf(stderr, "locktop diff: out of memory\n");
		goto out;
	}
	if (denv.output && strcmp(denv.output, "-")) {
		out = fopen(denv.output, "we");
		if (!out) {
			fprintf(stderr, "locktop diff: cannot write '%s': %s\n",
				denv.output, strerror(errno));
			out = stdout;
			goto out;
		}
	}
	if (!print_all(out, &c, &crossed))
		goto out;
	if (denv.plot && diff_plot(c.rec, c.path, c.all_kinds, denv.plot, msg,
				   sizeof(msg))) {
		fprintf(stderr, "locktop diff: %s\n", msg);
		goto out;
	}
	ret = report_gates(&c) ? DIFF_EXIT_CROSSED : 0;
out:
	if (out != stdout && fclose(out) && ret != DIFF_EXIT_BAD) {
		fprintf(stderr, "locktop diff: writing '%s': %s\n", denv.output,
			strerror(errno));
		ret = DIFF_EXIT_BAD;
	}
	diff_cmp_free(&c);
	record_free(rec[0]);
	record_free(rec[1]);
	return ret;
}
