// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The opening of locktop diff: the runs themselves, before → after, in
 * elapsed time and in the command's CPU time.
 */
#include <stdio.h>
#include "diff.h"

enum run_fig { RUN_ELAPSED, RUN_CPU, RUN_USER, RUN_SYS, RUN_NR };

static const char *const run_labels[RUN_NR] = { "elapsed", "CPU user+sys",
						"CPU user", "CPU sys" };

/* One figure of the run in seconds; false when the record lacks it. */
static bool run_value(const struct record *r, enum run_fig f, double *v)
{
	*v = f == RUN_ELAPSED ? r->final.elapsed_s :
	     f == RUN_CPU     ? r->cpu_user_s + r->cpu_sys_s :
	     f == RUN_USER    ? r->cpu_user_s :
				r->cpu_sys_s;
	return f == RUN_ELAPSED || r->has_cpu;
}

/* Before, after and the change as text; "?" for what a record lacks. */
static void run_strings(const struct record *const rec[2], enum run_fig f,
			char bv[24], char av[24], char ch[24])
{
	double v[2];
	bool known[2];
	int s;

	for (s = 0; s < 2; s++) {
		known[s] = run_value(rec[s], f, &v[s]);
		if (known[s])
			lt_format_ns((uint64_t)(v[s] * 1e9), s ? av : bv, 24);
		else
			snprintf(s ? av : bv, 24, "?");
	}
	if (known[0] && known[1] && v[0] > 0)
		snprintf(ch, 24, "%+.1f%%", (v[1] - v[0]) / v[0] * 100);
	else
		snprintf(ch, 24, "?");
}

/* Says which record has no CPU time, and why that can be. */
static void no_cpu_note(FILE *out, const struct record *const rec[2],
			const char *const path[2], const char *indent)
{
	int s;

	for (s = 0; s < 2; s++)
		if (!rec[s]->has_cpu)
			fprintf(out,
				"%s%s holds no CPU time (recorded without a "
				"command, or by an older locktop)\n",
				indent, path[s]);
}

void diff_run_text(FILE *out, const struct record *const rec[2],
		   const char *const path[2])
{
	char bv[2][24], av[2][24], ch[2][24];

	run_strings(rec, RUN_ELAPSED, bv[0], av[0], ch[0]);
	fprintf(out, "%-20s %12s → %-12s %9s\n", run_labels[RUN_ELAPSED], bv[0],
		av[0], ch[0]);
	run_strings(rec, RUN_CPU, bv[0], av[0], ch[0]);
	fprintf(out, "%-20s %12s → %-12s %9s", run_labels[RUN_CPU], bv[0],
		av[0], ch[0]);
	if (rec[0]->has_cpu && rec[1]->has_cpu) {
		run_strings(rec, RUN_USER, bv[0], av[0], ch[0]);
		run_strings(rec, RUN_SYS, bv[1], av[1], ch[1]);
		fprintf(out, "  user %s → %s, sys %s → %s", bv[0], av[0], bv[1],
			av[1]);
	}
	fputc('\n', out);
	no_cpu_note(out, rec, path, "        ");
}

void diff_run_markdown(FILE *out, const struct record *const rec[2],
		       const char *const path[2])
{
	char bv[24], av[24], ch[24];
	enum run_fig f;

	fprintf(out, "| run | before | after | change |\n");
	fprintf(out, "| --- | ---: | ---: | ---: |\n");
	for (f = RUN_ELAPSED; f < RUN_NR; f++) {
		run_strings(rec, f, bv, av, ch);
		fprintf(out, "| %s | %s | %s | %s |\n", run_labels[f], bv, av,
			ch);
	}
	if (!rec[0]->has_cpu || !rec[1]->has_cpu)
		fputc('\n', out);
	no_cpu_note(out, rec, path, "");
}
