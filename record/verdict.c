// SPDX-License-Identifier: GPL-2.0-or-later
/* locktop diff's verdicts: the noise of a recorded total, and the rules. */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "verdict.h"

const char *diff_verdict_name(enum diff_verdict v)
{
	switch (v) {
	case DIFF_BETTER:
		return "better";
	case DIFF_WORSE:
		return "worse";
	case DIFF_UNCLEAR:
		return "unclear";
	default:
		return "same";
	}
}

uint64_t diff_events(const struct rec_fig *f, enum rec_metric m)
{
	/* A spin lock's wait time is its samples' time. */
	if (m == REC_WAIT_TIME)
		return f->waits + f->samples;
	switch (m) {
#define LT_DIFF(NAME, UNIT, PART, ID, METRIC, LABEL, EVENTS, ONE, MANY) \
	case REC_##ID:                                                  \
		return f->EVENTS;
#include "figures.def"
	default: /* the p99 wait */
		return f->waits;
	}
}

static const char *event_word(enum rec_metric m, uint64_t n, bool sampled)
{
	if (sampled)
		m = REC_SAMPLES;
	switch (m) {
#define LT_DIFF(NAME, UNIT, PART, ID, METRIC, LABEL, EVENTS, ONE, MANY) \
	case REC_##ID:                                                  \
		return n == 1 ? ONE : MANY;
#include "figures.def"
	default: /* the p99 wait */
		return n == 1 ? "wait" : "waits";
	}
}

static void unclear(struct diff_judgement *out, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void unclear(struct diff_judgement *out, const char *fmt, ...)
{
	va_list ap;

	out->verdict = DIFF_UNCLEAR;
	va_start(ap, fmt);
	vsnprintf(out->reason, sizeof(out->reason), fmt, ap);
	va_end(ap);
}

/*
 * The noise a side is judged with. A side with too few intervals for an
 * estimate of its own is given its whole value: however figures that are
 * never negative spread over the intervals, the standard error of their
 * total comes out no larger than the total.
 */
static double judged_noise(const struct diff_side *s)
{
	if (s->intervals < VERDICT_MIN_INTERVALS)
		return fmax(s->noise, s->value);
	return s->noise;
}

/* The fewest usable intervals of a side short of them, if any is. */
static size_t short_intervals(const struct diff_side *b,
			      const struct diff_side *a, bool *any)
{
	size_t n = SIZE_MAX;

	if (b->intervals < VERDICT_MIN_INTERVALS)
		n = b->intervals;
	if (a->intervals < VERDICT_MIN_INTERVALS && a->intervals < n)
		n = a->intervals;
	*any = n != SIZE_MAX;
	return *any ? n : 0;
}

void diff_judge(const struct diff_rule *rule, enum rec_metric m,
		const struct diff_side *b, const struct diff_side *a,
		struct diff_judgement *out)
{
	double d = a->value - b->value, nb, na, band;
	uint64_t w;
	size_t n;
	bool few;

	out->verdict = DIFF_SAME;
	out->reason[0] = '\0';
	if (d == 0)
		return;
	if (b->value > 0 && fabs(d) / b->value * 100 <= rule->threshold_pct)
		return;
	/* From nothing or to nothing: the row is new, or gone. */
	if (b->value <= 0 || a->value <= 0) {
		out->verdict = d < 0 ? DIFF_BETTER : DIFF_WORSE;
		return;
	}
	/* A percentile needs waits on both sides, a total on one. */
	if (m == REC_P99)
		w = b->events < a->events ? b->events : a->events;
	else
		w = b->events > a->events ? b->events : a->events;
	if (w < VERDICT_MIN_EVENTS) {
		unclear(out, "%" PRIu64 " %s", w,
			event_word(m, w, b->sampled && a->sampled));
		return;
	}
	nb = judged_noise(b);
	na = judged_noise(a);
	band = rule->sigma * sqrt(nb * nb + na * na);
	if (fabs(d) > band) {
		out->verdict = d < 0 ? DIFF_BETTER : DIFF_WORSE;
		return;
	}
	/* Within the noise: same only when the noise is known and small. */
	n = short_intervals(b, a, &few);
	if (few) {
		unclear(out, "%zu interval%s", n, n == 1 ? "" : "s");
		return;
	}
	if (fmax(a->value, b->value) >=
	    VERDICT_SAME_RATIO * fmin(a->value, b->value))
		unclear(out, "noise ±%.0f%%", band / b->value * 100);
}

const char *diff_judgement_text(const struct diff_judgement *j, char *buf,
				size_t len)
{
	if (j->verdict == DIFF_UNCLEAR && j->reason[0])
		snprintf(buf, len, "unclear (%s)", j->reason);
	else
		snprintf(buf, len, "%s", diff_verdict_name(j->verdict));
	return buf;
}

void diff_row_fig(const struct rec_set *s, int kind, const char *key,
		  bool all_kinds, struct rec_fig *out)
{
	const struct rec_lock *l;
	int k;

	memset(out, 0, sizeof(*out));
	if (key) {
		/* Every kind recorded under the key. */
		for (l = rec_set_find(s, key);
		     l && l < s->locks + s->n_locks && !strcmp(l->key, key);
		     l++)
			rec_fig_add(out, &l->fig);
		return;
	}
	if (kind >= 0) {
		*out = s->kinds[kind];
		return;
	}
	for (k = 0; k < LT_KIND_NR; k++)
		if (lt_kind_in_view((enum lt_kind)k, all_kinds))
			rec_fig_add(out, &s->kinds[k]);
}

/*
 * A total is a sum of per-interval rates times the intervals' lengths:
 * with s the spread (standard deviation) of the rates, its standard error
 * is s * sqrt(sum of len^2), which is s * T / sqrt(n) for n equal
 * intervals. A percentile does not add up; its noise is the standard
 * error of the per-interval percentiles. Short intervals (the partial
 * last one) would exaggerate the spread and are left out of s: those
 * shorter than half the requested interval, or than half the longest
 * when it is shorter still (a run of one partial interval) or the
 * record does not say. A read that came late and made one interval
 * long leaves the others in.
 */
double diff_usable_len(const struct record *r, double *len2)
{
	double max_len = 0;
	size_t i;

	*len2 = 0;
	for (i = 0; i < r->n_intervals; i++) {
		double len = r->intervals[i].interval_s;

		if (len > max_len)
			max_len = len;
		*len2 += len * len;
	}
	if (max_len <= 0)
		return 0;
	return r->interval_s > 0 ? fmin(r->interval_s, max_len) / 2 :
				   max_len / 2;
}

void diff_spread_add(struct diff_spread *sp, const struct rec_fig *f,
		     double interval_s, enum rec_metric m)
{
	double x;

	if (m == REC_P99) {
		if (!f->waits)
			return;
		x = (double)rec_fig_metric(f, m);
	} else {
		x = (double)rec_fig_metric(f, m) / interval_s;
	}
	sp->sum += x;
	sp->sum2 += x * x;
	sp->n++;
}

double diff_spread_noise(const struct diff_spread *sp, enum rec_metric m,
			 double len2)
{
	double mean, var;

	if (sp->n < 2)
		return 0;
	mean = sp->sum / (double)sp->n;
	var = (sp->sum2 - (double)sp->n * mean * mean) / (double)(sp->n - 1);
	if (!(var > 0))
		return 0;
	if (m == REC_P99)
		return sqrt(var / (double)sp->n);
	return sqrt(var * len2);
}

double diff_noise_n(const struct record *r, int kind, const char *key,
		    bool all_kinds, enum rec_metric m, size_t *n_out)
{
	struct diff_spread sp = { 0 };
	double len2, min_len = diff_usable_len(r, &len2);
	struct rec_fig f;
	size_t i;

	*n_out = 0;
	if (min_len <= 0)
		return 0;
	for (i = 0; i < r->n_intervals; i++) {
		const struct rec_set *s = &r->intervals[i];

		if (s->interval_s < min_len || s->interval_s <= 0)
			continue;
		diff_row_fig(s, kind, key, all_kinds, &f);
		diff_spread_add(&sp, &f, s->interval_s, m);
	}
	*n_out = sp.n;
	return diff_spread_noise(&sp, m, len2);
}

double diff_noise(const struct record *r, int kind, const char *key,
		  bool all_kinds, enum rec_metric m)
{
	size_t n;

	return diff_noise_n(r, kind, key, all_kinds, m, &n);
}
