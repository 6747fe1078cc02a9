// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The opening of locktop diff: the runs themselves, before → after, in
 * elapsed time and in CPU time: the command's, with --pid's processes'
 * added; per operation too when the operations are known.
 */
#include <inttypes.h>
#include <stdio.h>
#include "diff.h"

enum run_fig {
	RUN_ELAPSED,
	RUN_CPU,
	RUN_USER,
	RUN_SYS,
	RUN_PIDS, /* --pid's processes' user+sys */
	RUN_CPU_PER_OP,
	RUN_NR
};

static const char *const run_labels[RUN_NR] = {
	"elapsed", "CPU user+sys",	   "CPU user",
	"CPU sys", "CPU of --pid's trees", "CPU per op",
};

static bool has_cpu(const struct record *r)
{
	return r->has_cpu || r->has_pids_cpu;
}

/* The user (or system) seconds: the command's and --pid's processes'. */
static double cpu_part(const struct record *r, bool sys)
{
	double v = 0;

	if (r->has_cpu)
		v += sys ? r->cpu_sys_s : r->cpu_user_s;
	if (r->has_pids_cpu)
		v += sys ? r->pids_cpu_sys_s : r->pids_cpu_user_s;
	return v;
}

/*
 * One figure of the run in seconds; false when the record lacks it. ops
 * is the operations of the run, 0 when not known.
 */
static bool run_value(const struct record *r, enum run_fig f, double ops,
		      double *v)
{
	switch (f) {
	case RUN_ELAPSED:
		*v = r->final.elapsed_s;
		return true;
	case RUN_CPU:
		*v = cpu_part(r, false) + cpu_part(r, true);
		return has_cpu(r);
	case RUN_USER:
		*v = cpu_part(r, false);
		return has_cpu(r);
	case RUN_SYS:
		*v = cpu_part(r, true);
		return has_cpu(r);
	case RUN_PIDS:
		*v = r->pids_cpu_user_s + r->pids_cpu_sys_s;
		return r->has_pids_cpu;
	default:
		*v = ops > 0 ? (cpu_part(r, false) + cpu_part(r, true)) / ops :
			       0;
		return has_cpu(r) && ops > 0;
	}
}

/* Before, after and the change as text; "?" for what a record lacks. */
static void run_strings(const struct record *const rec[2], const double *ops,
			enum run_fig f, char bv[24], char av[24], char ch[24])
{
	double v[2];
	bool known[2];
	int s;

	for (s = 0; s < 2; s++) {
		known[s] = run_value(rec[s], f, ops ? ops[s] : 0, &v[s]);
		if (known[s])
			lt_format_ns((uint64_t)(v[s] * 1e9 + 0.5), s ? av : bv,
				     24);
		else
			snprintf(s ? av : bv, 24, "?");
	}
	if (known[0] && known[1] && v[0] > 0)
		snprintf(ch, 24, "%+.1f%%", (v[1] - v[0]) / v[0] * 100);
	else
		snprintf(ch, 24, "?");
}

/* Says which record has no CPU time, and why that can be; and which
 * lost some of its --pid processes' time. */
static void no_cpu_note(FILE *out, const struct record *const rec[2],
			const char *const path[2], const char *indent)
{
	int s;

	for (s = 0; s < 2; s++) {
		if (!has_cpu(rec[s]))
			fprintf(out,
				"%s%s holds no CPU time (recorded without a "
				"command or --pid, or by an older locktop)\n",
				indent, path[s]);
		if (rec[s]->has_pids_cpu && rec[s]->pids_unwaited)
			fprintf(out,
				"%s%s: %" PRIu64 " --pid process%s ended "
				"with no parent traced to wait for %s; the "
				"CPU time %s spent after the last interval's "
				"read is not counted\n",
				indent, path[s], rec[s]->pids_unwaited,
				rec[s]->pids_unwaited == 1 ? "" : "es",
				rec[s]->pids_unwaited == 1 ? "it" : "them",
				rec[s]->pids_unwaited == 1 ? "it" : "they");
	}
}

/* Whether both records have figure f (one has, for the --pid line). */
static bool run_line_shown(const struct record *const rec[2], const double *ops,
			   enum run_fig f)
{
	double v;

	if (f == RUN_PIDS)
		return rec[0]->has_pids_cpu || rec[1]->has_pids_cpu;
	if (f == RUN_CPU_PER_OP)
		return ops && (run_value(rec[0], f, ops[0], &v) ||
			       run_value(rec[1], f, ops[1], &v));
	return true;
}

void diff_run_text(FILE *out, const struct record *const rec[2],
		   const char *const path[2], const double *ops)
{
	char bv[2][24], av[2][24], ch[2][24];
	enum run_fig f;

	run_strings(rec, ops, RUN_ELAPSED, bv[0], av[0], ch[0]);
	fprintf(out, "%-20s %12s → %-12s %9s\n", run_labels[RUN_ELAPSED], bv[0],
		av[0], ch[0]);
	run_strings(rec, ops, RUN_CPU, bv[0], av[0], ch[0]);
	fprintf(out, "%-20s %12s → %-12s %9s", run_labels[RUN_CPU], bv[0],
		av[0], ch[0]);
	if (has_cpu(rec[0]) && has_cpu(rec[1])) {
		run_strings(rec, ops, RUN_USER, bv[0], av[0], ch[0]);
		run_strings(rec, ops, RUN_SYS, bv[1], av[1], ch[1]);
		fprintf(out, "  user %s → %s, sys %s → %s", bv[0], av[0], bv[1],
			av[1]);
	}
	fputc('\n', out);
	for (f = RUN_PIDS; f < RUN_NR; f++) {
		if (!run_line_shown(rec, ops, f))
			continue;
		run_strings(rec, ops, f, bv[0], av[0], ch[0]);
		fprintf(out, "%-20s %12s → %-12s %9s\n", run_labels[f], bv[0],
			av[0], ch[0]);
	}
	no_cpu_note(out, rec, path, "        ");
}

void diff_run_markdown(FILE *out, const struct record *const rec[2],
		       const char *const path[2], const double *ops)
{
	char bv[24], av[24], ch[24];
	enum run_fig f;

	fprintf(out, "| run | before | after | change |\n");
	fprintf(out, "| --- | ---: | ---: | ---: |\n");
	for (f = RUN_ELAPSED; f < RUN_NR; f++) {
		if (!run_line_shown(rec, ops, f))
			continue;
		run_strings(rec, ops, f, bv, av, ch);
		fprintf(out, "| %s | %s | %s | %s |\n", run_labels[f], bv, av,
			ch);
	}
	if (!has_cpu(rec[0]) || !has_cpu(rec[1]) || rec[0]->pids_unwaited ||
	    rec[1]->pids_unwaited)
		fputc('\n', out);
	no_cpu_note(out, rec, path, "");
}
