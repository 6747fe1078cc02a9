// SPDX-License-Identifier: GPL-2.0-or-later
/* locktop diff as text and as Markdown: the headline, the runs, kinds,
 * files and locks. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "diff_priv.h"

void diff_fmt_value(enum rec_metric m, double v, char *buf, size_t len)
{
	if (rec_metric_is_time(m))
		lt_format_ns(v >= 1.8e19 ? UINT64_MAX : (uint64_t)v, buf, len);
	else
		snprintf(buf, len, "%.0f", v);
}

void diff_fmt_per_op(enum rec_metric m, double v, char *buf, size_t len)
{
	if (rec_metric_is_time(m))
		lt_format_ns(v >= 1.8e19 ? UINT64_MAX : (uint64_t)(v + 0.5),
			     buf, len);
	else if (v == 0)
		snprintf(buf, len, "0");
	else
		snprintf(buf, len, "%.3g", v);
}

void diff_fmt_change(double b, double a, char *buf, size_t len)
{
	if (b > 0)
		snprintf(buf, len, "%+.1f%%", (a - b) / b * 100);
	else if (a > 0)
		snprintf(buf, len, "new");
	else
		snprintf(buf, len, "0.0%%");
}

bool diff_metric_shown(const struct diff_row *r, enum rec_metric m)
{
	bool spin = r->kind == LT_KIND_SPIN;

	if (spin ? m == REC_WAIT_TIME || m == REC_SAMPLES : m <= REC_P99)
		return true;
	return r->side[m][0].value > 0 || r->side[m][1].value > 0;
}

const char *diff_metric_label(const struct diff_row *r, enum rec_metric m)
{
	if (r->kind == LT_KIND_SPIN && m == REC_WAIT_TIME)
		return "spin time";
	return rec_metric_label(m);
}

const char *diff_presence(const struct diff_row *r)
{
	if (r->type == DIFF_ROW_KIND || (r->in[0] && r->in[1]))
		return "";
	return r->in[0] ? " (before only)" : " (after only)";
}

/* After a kernel lock's label: " [rwsem-write, caller f]"; else "". */
#define KWHAT_LEN (LT_KTYPE_LEN + LT_CALLER_LEN + 16)
static const char *kernel_what(const struct diff_row *r, char *buf, size_t len)
{
	buf[0] = '\0';
	if (r->kernel_type[0] || r->caller[0])
		snprintf(buf, len, " [%s, caller %s]",
			 r->kernel_type[0] ? r->kernel_type : "?",
			 r->caller[0] ? r->caller : "?");
	return buf;
}

/* A Markdown table cell must not contain a bare '|'. */
static void md_cell(FILE *out, const char *s)
{
	for (; *s; s++) {
		if (*s == '|')
			fputc('\\', out);
		fputc(*s, out);
	}
}

/* One metric of a row as strings: totals, change, per op, verdict. */
struct cells {
	char bv[24], av[24], ch[24];
	char pb[24], pa[24], pch[24]; /* "" without a figure per op */
	char vd[48];
};

static void cells(const struct diff_cmp *c, const struct diff_row *r,
		  enum rec_metric m, struct cells *o)
{
	diff_fmt_value(m, r->side[m][0].value, o->bv, sizeof(o->bv));
	diff_fmt_value(m, r->side[m][1].value, o->av, sizeof(o->av));
	diff_fmt_change(r->side[m][0].value, r->side[m][1].value, o->ch,
			sizeof(o->ch));
	o->pb[0] = o->pa[0] = o->pch[0] = '\0';
	if (c->per_op && diff_metric_per_op(m)) {
		diff_fmt_per_op(m, r->per_op[m][0].value, o->pb, sizeof(o->pb));
		diff_fmt_per_op(m, r->per_op[m][1].value, o->pa, sizeof(o->pa));
		diff_fmt_change(r->per_op[m][0].value, r->per_op[m][1].value,
				o->pch, sizeof(o->pch));
	}
	diff_judgement_text(&r->judged[m], o->vd, sizeof(o->vd));
}

/* ---- the headline ---- */

static double ops_per_s(const struct diff_cmp *c, int s)
{
	double t = c->rec[s]->final.elapsed_s;

	return t > 0 ? c->ops[s] / t : 0;
}

/* "locking.tdb chain 5 (fcntl → futex): wait time per op 1.2ms → 80us
 * (-93.3%, better)" */
static void most_text(const struct diff_cmp *c, char *buf, size_t len)
{
	const struct diff_row *r = c->most;
	const struct diff_side *sd = diff_judged_sides(c, r, REC_WAIT_TIME);
	char b[24], a[24], ch[24], vd[48];

	if (c->per_op) {
		diff_fmt_per_op(REC_WAIT_TIME, sd[0].value, b, sizeof(b));
		diff_fmt_per_op(REC_WAIT_TIME, sd[1].value, a, sizeof(a));
	} else {
		diff_fmt_value(REC_WAIT_TIME, sd[0].value, b, sizeof(b));
		diff_fmt_value(REC_WAIT_TIME, sd[1].value, a, sizeof(a));
	}
	diff_fmt_change(sd[0].value, sd[1].value, ch, sizeof(ch));
	snprintf(buf, len, "%s%s: %s%s %s → %s (%s, %s)", r->label,
		 diff_presence(r), diff_metric_label(r, REC_WAIT_TIME),
		 c->per_op ? " per op" : "", b, a, ch,
		 diff_judgement_text(&r->judged[REC_WAIT_TIME], vd,
				     sizeof(vd)));
}

/* The lock that changed most, in the headline or above the kinds. */
static void most_line_text(FILE *out, const struct diff_cmp *c)
{
	char buf[LT_NAME_LEN + 256];

	if (!c->most)
		return;
	most_text(c, buf, sizeof(buf));
	fprintf(out, "changed most: %s\n", buf);
}

void diff_headline_text(FILE *out, const struct diff_cmp *c)
{
	char b[24], a[24], ch[24];

	if (!c->per_op)
		return;
	snprintf(b, sizeof(b), "%.0f/s", ops_per_s(c, 0));
	snprintf(a, sizeof(a), "%.0f/s", ops_per_s(c, 1));
	diff_fmt_change(ops_per_s(c, 0), ops_per_s(c, 1), ch, sizeof(ch));
	fprintf(out, "%-20s %12s → %-12s %9s  %.0f → %.0f operations\n",
		"throughput", b, a, ch, c->ops[0], c->ops[1]);
	most_line_text(out, c);
}
static void most_line_markdown(FILE *out, const struct diff_cmp *c)
{
	char buf[LT_NAME_LEN + 256];

	if (!c->most)
		return;
	most_text(c, buf, sizeof(buf));
	fputs("\nChanged most: ", out);
	md_cell(out, buf);
	fputs("\n", out);
}

void diff_headline_markdown(FILE *out, const struct diff_cmp *c)
{
	char ch[24];

	if (!c->per_op)
		return;
	diff_fmt_change(ops_per_s(c, 0), ops_per_s(c, 1), ch, sizeof(ch));
	fprintf(out,
		"**Throughput %.0f/s → %.0f/s (%s)**, %.0f → %.0f operations.\n",
		ops_per_s(c, 0), ops_per_s(c, 1), ch, c->ops[0], c->ops[1]);
	most_line_markdown(out, c);
	fputc('\n', out);
}

/* ---- the runs ---- */

static void describe(FILE *out, const char *what, const char *path,
		     const struct record *r, bool md)
{
	const struct rec_set *f = &r->final;

	if (md) {
		fprintf(out, "| %s | `", what);
		md_cell(out, path);
		fputs("` | ", out);
		md_cell(out, r->host);
		fputs(" | ", out);
		md_cell(out, r->kernel[0] ? r->kernel : "?");
		fputs(" | ", out);
		md_cell(out, r->start);
		fprintf(out, " | %.2f s, %zu intervals |\n", f->elapsed_s,
			r->n_intervals);
		return;
	}
	fprintf(out, "%-7s %s: %s, %s, %s, %.2f s, %zu intervals", what, path,
		r->host[0] ? r->host : "?", r->start,
		r->kernel[0] ? r->kernel : "?", f->elapsed_s, r->n_intervals);
	if (f->drops)
		fprintf(out, ", %" PRIu64 " events dropped", f->drops);
	fputc('\n', out);
	if (r->cmdline[0])
		fprintf(out, "        %s\n", r->cmdline);
}

/* ---- the rows ---- */

static void text_rows(FILE *out, const struct diff_cmp *c,
		      const struct diff_row *rows, size_t n)
{
	char kw[KWHAT_LEN];
	struct cells o;
	size_t i;
	int m;

	for (i = 0; i < n; i++) {
		const struct diff_row *r = &rows[i];

		fprintf(out, "%s%s%s\n", r->label, diff_presence(r),
			kernel_what(r, kw, sizeof(kw)));
		for (m = 0; m < REC_METRIC_NR; m++) {
			if (!diff_metric_shown(r, m))
				continue;
			cells(c, r, m, &o);
			if (c->per_op)
				fprintf(out,
					"  %-18s %12s → %-12s %9s  %10s %s "
					"%-10s %9s  %s\n",
					diff_metric_label(r, m), o.bv, o.av,
					o.ch, o.pb, o.pb[0] ? "→" : " ", o.pa,
					o.pch, o.vd);
			else
				fprintf(out, "  %-18s %12s → %-12s %9s  %s\n",
					diff_metric_label(r, m), o.bv, o.av,
					o.ch, o.vd);
		}
	}
}

static void md_head(FILE *out, const struct diff_cmp *c, const char *first)
{
	if (c->per_op) {
		fprintf(out,
			"| %s | metric | before | after | change | per op "
			"before | per op after | change per op | verdict "
			"(per op) |\n",
			first);
		fprintf(out, "| --- | --- | ---: | ---: | ---: | ---: | ---: "
			     "| ---: | --- |\n");
		return;
	}
	fprintf(out, "| %s | metric | before | after | change | verdict |\n",
		first);
	fprintf(out, "| --- | --- | ---: | ---: | ---: | --- |\n");
}

static void md_rows(FILE *out, const struct diff_cmp *c,
		    const struct diff_row *rows, size_t n, const char *first)
{
	char kw[KWHAT_LEN];
	struct cells o;
	size_t i;
	int m;

	md_head(out, c, first);
	for (i = 0; i < n; i++) {
		const struct diff_row *r = &rows[i];

		for (m = 0; m < REC_METRIC_NR; m++) {
			enum diff_verdict v = r->judged[m].verdict;
			/* Better and worse stand out. */
			const char *em =
				v == DIFF_BETTER || v == DIFF_WORSE ? "**" : "";

			if (!diff_metric_shown(r, m))
				continue;
			cells(c, r, m, &o);
			/* The label on every line: rows stay greppable. */
			fputs("| `", out);
			md_cell(out, r->label);
			fputc('`', out);
			fputs(diff_presence(r), out);
			md_cell(out, kernel_what(r, kw, sizeof(kw)));
			fprintf(out, " | %s | %s | %s | %s | ",
				diff_metric_label(r, m), o.bv, o.av, o.ch);
			if (c->per_op)
				fprintf(out, "%s | %s | %s | ", o.pb, o.pa,
					o.pch);
			fprintf(out, "%s%s%s |\n", em, o.vd, em);
		}
	}
}

/*
 * "5 of 350, most wait time first; 345 too small to change a verdict
 * (...) left out", or "come last" when some of them are shown.
 */
static void shown_note(FILE *out, size_t shown, size_t n, size_t small)
{
	fprintf(out, "%zu of %zu, most wait time first", shown, n);
	if (small)
		fprintf(out,
			"; %zu too small to change a verdict (fewer than %d "
			"waits, or under %g%% of all wait time) %s",
			small, VERDICT_MIN_EVENTS, DIFF_SMALL_SHARE * 100,
			shown + small > n ? "come last" : "left out");
}

static void verdict_note(FILE *out, const struct diff_cmp *c, bool md)
{
	fprintf(out,
		md ? "\nVerdict: *same* when the change is within %g standard "
		     "errors of the per-interval spread, or within %g%%; "
		     "*unclear* when a record has fewer than %d intervals or "
		     "%d waits to judge by, or the noise hides a change of %gx "
		     "or more%s.\n\n" :
		     "verdict: same when the change is within %g standard "
		     "errors of the per-interval spread, or within %g%%; "
		     "unclear when a record has fewer than %d intervals or %d "
		     "waits to judge by, or the noise hides a change of %gx or "
		     "more%s\n\n",
		c->rule.sigma, c->rule.threshold_pct, VERDICT_MIN_INTERVALS,
		VERDICT_MIN_EVENTS, VERDICT_SAME_RATIO,
		c->per_op ? md ? "; verdicts compare the figures *per "
				 "operation*" :
				 "; verdicts compare the figures per "
				 "operation" :
			    "");
}

void diff_print_text(FILE *out, const struct diff_cmp *c, size_t n_files,
		     size_t n_locks)
{
	diff_headline_text(out, c);
	diff_run_text(out, c->rec, c->path, c->per_op ? c->ops : NULL);
	describe(out, "before", c->path[0], c->rec[0], false);
	describe(out, "after", c->path[1], c->rec[1], false);
	verdict_note(out, c, false);
	if (!c->per_op && c->most) {
		most_line_text(out, c);
		fputc('\n', out);
	}
	fprintf(out, "KINDS%*s%12s   %-12s %9s  ", 16, "", "BEFORE", "AFTER",
		"CHANGE");
	if (c->per_op)
		fprintf(out, "%10s   %-10s %9s  ", "PER OP", "", "CHANGE");
	fprintf(out, "VERDICT\n");
	text_rows(out, c, c->kinds, c->n_kinds);
	if (n_files) {
		fprintf(out, "\nFILES, all locks in each across kinds (");
		shown_note(out, n_files, c->n_files, c->n_small_files);
		fprintf(out, ")\n");
		text_rows(out, c, c->files, n_files);
	}
	fprintf(out, "\nLOCKS (");
	shown_note(out, n_locks, c->n_locks, c->n_small_locks);
	fprintf(out, ")\n");
	text_rows(out, c, c->locks, n_locks);
}

void diff_print_markdown(FILE *out, const struct diff_cmp *c, size_t n_files,
			 size_t n_locks)
{
	fprintf(out, "# locktop diff\n\n");
	diff_headline_markdown(out, c);
	diff_run_markdown(out, c->rec, c->path, c->per_op ? c->ops : NULL);
	if (!c->per_op)
		most_line_markdown(out, c);
	fprintf(out, "\n| | record | host | kernel | start | length |\n");
	fprintf(out, "| --- | --- | --- | --- | --- | --- |\n");
	describe(out, "before", c->path[0], c->rec[0], true);
	describe(out, "after", c->path[1], c->rec[1], true);
	for (int s = 0; s < 2; s++)
		if (c->rec[s]->cmdline[0]) {
			fprintf(out, "\n%s: `", s ? "After" : "Before");
			md_cell(out, c->rec[s]->cmdline);
			fprintf(out, "`\n");
		}
	verdict_note(out, c, true);
	fprintf(out, "## Kinds\n\n");
	md_rows(out, c, c->kinds, c->n_kinds, "kind");
	if (n_files) {
		fprintf(out, "\n## Files\n\nAll locks in each file, across "
			     "kinds; ");
		shown_note(out, n_files, c->n_files, c->n_small_files);
		fprintf(out, ".\n\n");
		if (n_files)
			md_rows(out, c, c->files, n_files, "file");
	}
	fprintf(out, "\n## Locks\n\n");
	shown_note(out, n_locks, c->n_locks, c->n_small_locks);
	fprintf(out, ".\n\n");
	if (n_locks)
		md_rows(out, c, c->locks, n_locks, "lock");
}
