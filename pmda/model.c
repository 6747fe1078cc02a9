// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Chooses what the PCP agent exports from each snapshot and keeps the
 * sums that must only grow. No PCP calls here.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "model.h"

/* A score below this (in ns of waiting, decayed) is forgotten. */
#define SCORE_FLOOR 1.0

static uint64_t mix(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	k ^= k >> 33;
	return k;
}

static void scores_free(struct ltpm_scores *t)
{
	free(t->keys);
	free(t->vals);
	memset(t, 0, sizeof(*t));
}

static double scores_get(const struct ltpm_scores *t, uint64_t key)
{
	size_t s;

	if (!t->size)
		return 0;
	for (s = mix(key) & (t->size - 1); t->keys[s];
	     s = (s + 1) & (t->size - 1))
		if (t->keys[s] == key + 1)
			return t->vals[s];
	return 0;
}

/* Only into a table built for this round: every key is new. */
static void scores_put(struct ltpm_scores *t, uint64_t key, double val)
{
	size_t s = mix(key) & (t->size - 1);

	while (t->keys[s] && t->keys[s] != key + 1)
		s = (s + 1) & (t->size - 1);
	if (!t->keys[s])
		t->n++;
	t->keys[s] = key + 1;
	t->vals[s] = val;
}

static int scores_new(struct ltpm_scores *t, size_t entries)
{
	size_t size = 64;

	while (size < entries * 2)
		size *= 2;
	t->keys = calloc(size, sizeof(*t->keys));
	t->vals = calloc(size, sizeof(*t->vals));
	t->size = size;
	t->n = 0;
	if (!t->keys || !t->vals) {
		scores_free(t);
		return -ENOMEM;
	}
	return 0;
}

struct ranked {
	double score;
	uint64_t tie; /* larger first when scores are equal */
	uint64_t order; /* then smaller first: stable */
	size_t index;
	const struct lt_lock *lock; /* a lock's: ties in lt_lock_order() */
};

static int ranked_cmp(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;

	if (x->score != y->score)
		return x->score > y->score ? -1 : 1;
	if (x->lock && y->lock)
		return lt_lock_order(x->lock, y->lock, true);
	if (x->tie != y->tie)
		return x->tie > y->tie ? -1 : 1;
	if (x->order != y->order)
		return x->order < y->order ? -1 : 1;
	return 0;
}

/*
 * Decays the old scores by the interval, adds each entry's new weight,
 * keeps the scores that still matter in a fresh table and sorts.
 */
struct rank_input {
	uint64_t key;
	double weight;
	uint64_t tie;
	bool eligible;
	const struct lt_lock *lock; /* NULL but for locks */
};

static int rank(struct ltpm_scores *scores, double decay,
		const struct rank_input *in, size_t n, struct ranked *out,
		size_t *n_out)
{
	struct ltpm_scores next;
	size_t i, k = 0;
	int err;

	err = scores_new(&next, n);
	if (err)
		return err;
	for (i = 0; i < n; i++) {
		double s = scores_get(scores, in[i].key) * decay + in[i].weight;

		if (s >= SCORE_FLOOR)
			scores_put(&next, in[i].key, s);
		else
			s = 0;
		if (!in[i].eligible)
			continue;
		out[k].score = s;
		out[k].tie = in[i].tie;
		out[k].order = in[i].key;
		out[k].index = i;
		out[k].lock = in[i].lock;
		k++;
	}
	scores_free(scores);
	*scores = next;
	qsort(out, k, sizeof(*out), ranked_cmp);
	*n_out = k;
	return 0;
}

int ltpm_model_init(struct ltpm_model *m, size_t top_n)
{
	memset(m, 0, sizeof(*m));
	m->decay_s = LTPM_DECAY_S;
	ltpm_model_set_top(m, top_n);
	snprintf(m->other.name, sizeof(m->other.name), "other");
	snprintf(m->other.key, sizeof(m->other.key), "other");
	return 0;
}

void ltpm_model_free(struct ltpm_model *m)
{
	scores_free(&m->lock_scores);
	scores_free(&m->proc_scores);
	scores_free(&m->file_scores);
	free(m->locks);
	free(m->procs);
	free(m->files);
	memset(m, 0, sizeof(*m));
}

void ltpm_model_forget(struct ltpm_model *m)
{
	scores_free(&m->lock_scores);
	scores_free(&m->proc_scores);
	scores_free(&m->file_scores);
	m->n_locks = m->n_procs = m->n_files = 0;
	memset(&m->other.delta, 0, sizeof(m->other.delta));
	m->other.waiters_now = 0;
	m->other.spinning_now = 0;
}

void ltpm_model_set_top(struct ltpm_model *m, size_t top_n)
{
	if (top_n < 1)
		top_n = 1;
	if (top_n > LTPM_TOP_MAX)
		top_n = LTPM_TOP_MAX;
	m->top_n = top_n;
}

static void add_hist(uint64_t *sum, const uint64_t *d)
{
	int b;

	for (b = 0; b < LT_HIST_BUCKETS; b++)
		sum[b] += d[b];
}

void ltpm_lock_add(struct lt_lock *sum, const struct lt_lock *l)
{
	lt_figures_add(&sum->total, &l->total);
	lt_figures_add(&sum->delta, &l->delta);
	sum->waiters_now += l->waiters_now;
	sum->spinning_now += l->spinning_now;
}

/* The three arrays share one room: each grows from it alike. */
static int ensure_room(struct ltpm_model *m, size_t n)
{
	size_t cap_locks = m->cap, cap_procs = m->cap, cap_files = m->cap;

	if (lt_grow((void **)&m->locks, &cap_locks, n, sizeof(*m->locks)) ||
	    lt_grow((void **)&m->procs, &cap_procs, n, sizeof(*m->procs)) ||
	    lt_grow((void **)&m->files, &cap_files, n, sizeof(*m->files)))
		return -ENOMEM;
	m->cap = cap_locks;
	return 0;
}

bool ltpm_lock_eligible(const struct lt_lock *l)
{
	/* Counters for the whole run: the run's figures decide. */
	struct lt_view v = { .totals = true };

	return lt_lock_shown(l, &v);
}

static int update_locks(struct ltpm_model *m, const struct lt_snapshot *s,
			double decay)
{
	struct rank_input *in;
	struct ranked *out;
	size_t i, n_out, kept, rows = lt_snapshot_rows(s);
	int err = -ENOMEM;

	in = calloc(rows ? rows : 1, sizeof(*in));
	out = calloc(rows ? rows : 1, sizeof(*out));
	if (!in || !out)
		goto done;
	/* Lock sites' rows too; their members are not eligible. */
	for (i = 0; i < rows; i++) {
		const struct lt_lock *l = lt_snapshot_row(s, i);

		in[i].key = l->id;
		in[i].weight = (double)l->delta.wait_ns;
		in[i].tie = l->total.wait_ns;
		in[i].eligible = ltpm_lock_eligible(l);
		in[i].lock = l;
		if (in[i].eligible) {
			add_hist(m->hist_wait, l->delta.wait_hist);
			add_hist(m->hist_hold, l->delta.hold_hist);
		}
	}
	err = rank(&m->lock_scores, decay, in, rows, out, &n_out);
	if (err)
		goto done;

	kept = n_out < m->top_n ? n_out : m->top_n;
	memset(&m->other.delta, 0, sizeof(m->other.delta));
	m->other.waiters_now = 0;
	m->other.spinning_now = 0;
	for (i = 0; i < n_out; i++) {
		const struct lt_lock *l = lt_snapshot_row(s, out[i].index);

		if (i < kept) {
			m->locks[i] = l;
			continue;
		}
		lt_figures_add(&m->other.delta, &l->delta);
		m->other.waiters_now += l->waiters_now;
		m->other.spinning_now += l->spinning_now;
		if (l->total.max_wait_ns > m->other.total.max_wait_ns)
			m->other.total.max_wait_ns = l->total.max_wait_ns;
		if (l->total.max_hold_ns > m->other.total.max_hold_ns)
			m->other.total.max_hold_ns = l->total.max_hold_ns;
	}
	/* lt_figures_add() also raises the all-time maxima by the
	 * interval's. */
	lt_figures_add(&m->other.total, &m->other.delta);
	m->n_locks = kept;
done:
	free(in);
	free(out);
	return err;
}

static int update_procs(struct ltpm_model *m, const struct lt_snapshot *s,
			double decay)
{
	struct rank_input *in;
	struct ranked *out;
	size_t i, n_out;
	int err = -ENOMEM;

	in = calloc(s->n_procs ? s->n_procs : 1, sizeof(*in));
	out = calloc(s->n_procs ? s->n_procs : 1, sizeof(*out));
	if (!in || !out)
		goto done;
	for (i = 0; i < s->n_procs; i++) {
		const struct lt_proc *p = &s->procs[i];

		in[i].key = (uint64_t)p->pid;
		in[i].weight = (double)(p->delta.wait_ns + p->delta.io_ns);
		in[i].tie = p->total.wait_ns + p->total.io_ns;
		in[i].eligible = true;
	}
	err = rank(&m->proc_scores, decay, in, s->n_procs, out, &n_out);
	if (err)
		goto done;
	m->n_procs = n_out < m->top_n ? n_out : m->top_n;
	for (i = 0; i < m->n_procs; i++)
		m->procs[i] = &s->procs[out[i].index];
done:
	free(in);
	free(out);
	return err;
}

static int update_files(struct ltpm_model *m, const struct lt_snapshot *s,
			double decay)
{
	struct rank_input *in;
	struct ranked *out;
	size_t i, n_out;
	int err = -ENOMEM;

	in = calloc(s->n_files ? s->n_files : 1, sizeof(*in));
	out = calloc(s->n_files ? s->n_files : 1, sizeof(*out));
	if (!in || !out)
		goto done;
	for (i = 0; i < s->n_files; i++) {
		const struct lt_file *f = &s->files[i];

		in[i].key = f->dev * 0x9e3779b97f4a7c15ULL ^ f->ino;
		in[i].weight = (double)f->delta.io_ns;
		in[i].tie = f->total.io_ns;
		in[i].eligible = true;
	}
	err = rank(&m->file_scores, decay, in, s->n_files, out, &n_out);
	if (err)
		goto done;
	m->n_files = n_out < m->top_n ? n_out : m->top_n;
	for (i = 0; i < m->n_files; i++)
		m->files[i] = &s->files[out[i].index];
done:
	free(in);
	free(out);
	return err;
}

int ltpm_model_update(struct ltpm_model *m, const struct lt_snapshot *s)
{
	double decay =
		exp(-(s->interval_s > 0 ? s->interval_s : 0) / m->decay_s);
	size_t most = lt_snapshot_rows(s);
	int err;

	if (s->n_procs > most)
		most = s->n_procs;
	if (s->n_files > most)
		most = s->n_files;
	err = ensure_room(m, most < m->top_n ? most : m->top_n);
	if (err)
		return err;
	m->n_locks = m->n_procs = m->n_files = 0;
	err = update_locks(m, s, decay);
	if (!err)
		err = update_procs(m, s, decay);
	if (!err)
		add_hist(m->hist_io, s->io_hist_delta);
	if (!err)
		err = update_files(m, s, decay);
	if (!err)
		m->updates++;
	return err;
}

void ltpm_bucket_name(unsigned int i, char *buf, size_t len)
{
	unsigned long long lo = i ? 1ULL << i : 0;
	unsigned long long hi = (1ULL << (i + 1)) - 1;

	snprintf(buf, len, "%llu-%llu", lo, hi);
}

void ltpm_unique_name(const char *base, const char *tag, char *buf, size_t len)
{
	size_t head = strcspn(base, " ");

	snprintf(buf, len, "%.*s[%s]%s", (int)head, base, tag, base + head);
}

int ltpm_parse_pids(const char *s, pid_t *pids, size_t max)
{
	size_t n = 0;
	char *end;
	long v;

	for (;;) {
		while (*s == ',' || isspace((unsigned char)*s))
			s++;
		if (!*s)
			return (int)n;
		errno = 0;
		v = strtol(s, &end, 10);
		if (end == s || errno || v <= 0 || v > 4194304 || n == max)
			return -1;
		pids[n++] = (pid_t)v;
		s = end;
	}
}
