// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * locktop diff's comparison: the rows (all kinds, each kind, each file
 * with locks, each lock), their figures before and after, in total and
 * per operation, their noise, and the verdicts.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "diff_priv.h"

/*
 * Kinds whose rows pair across kinds: a lock a store takes by fcntl in
 * one run and as a mutex in the other has one layout key, and one row.
 */
static bool pairs_across(enum lt_kind k)
{
	return k == LT_KIND_FUTEX || k == LT_KIND_FUTEX_PI ||
	       k == LT_KIND_FCNTL || k == LT_KIND_OFD || k == LT_KIND_FLOCK;
}

/* The part of key after "KIND:" for its own kind, or NULL. */
static const char *after_kind(enum lt_kind kind, const char *key)
{
	size_t n = strlen(lt_kind_name(kind));

	if (strncmp(key, lt_kind_name(kind), n) || key[n] != ':')
		return NULL;
	return key + n + 1;
}

/* Whether s is made only of characters of set, and is not empty. */
static bool only_of(const char *s, const char *set)
{
	return *s && strspn(s, set) == strlen(s);
}

/* Cuts a "+0xOFF", "+0xA-0xB" or "+0xA-EOF" off name's end. */
static bool cut_offset(char *name)
{
	char *p = strrchr(name, '+'), *dash;

	if (!p || p == name || strncmp(p + 1, "0x", 2))
		return false;
	dash = strchr(p + 3, '-');
	if (dash) {
		*dash = '\0';
		if (strcmp(dash + 1, "EOF") &&
		    (strncmp(dash + 1, "0x", 2) ||
		     !only_of(dash + 3, "0123456789abcdefABCDEF"))) {
			*dash = '-';
			return false;
		}
	}
	if (!only_of(p + 3, "0123456789abcdefABCDEF")) {
		if (dash)
			*dash = '-';
		return false;
	}
	*p = '\0';
	return true;
}

/* Cuts a ":START", ":START-END" or ":START-EOF" off name's end. */
static bool cut_range(char *name)
{
	char *p = strrchr(name, ':'), *dash;

	if (!p || p == name)
		return false;
	dash = strchr(p + 1, '-');
	if (dash && strcmp(dash + 1, "EOF") && !only_of(dash + 1, "0123456789"))
		return false;
	if (dash)
		*dash = '\0';
	if (!only_of(p + 1, "0123456789")) {
		if (dash)
			*dash = '-';
		return false;
	}
	*p = '\0';
	return true;
}

/*
 * A lock's identity in the comparison: for the kinds that pair, and a
 * key that names what the lock is, its layout key, the key without its
 * kind ("futex:t.tdb chain 5" and "fcntl:t.tdb chain 5" are "t.tdb chain
 * 5"; a key with no kind in it, "tdb:t.tdb chain 5", is itself), in
 * group -1. A key that ends in a bare offset or byte range
 * ("futex:t.tdb+0x1040", "fcntl:t.tdb:4096") stays in the group of its
 * kind: a lock word's offset and a byte range's are different things,
 * however alike their numbers. Other kinds' keys are in their kind's.
 */
static void layout_key(enum lt_kind kind, const char *key, char *id, size_t len,
		       int *group)
{
	const char *rest = pairs_across(kind) ? after_kind(kind, key) : NULL;
	char name[LT_NAME_LEN];
	size_t n;

	snprintf(id, len, "%s", rest ? rest : key);
	*group = (int)kind;
	if (!pairs_across(kind))
		return;
	snprintf(name, sizeof(name), "%s", id);
	n = strlen(name);
	if ((n > 15 && !strcmp(name + n - 15, " (other ranges)")) ||
	    cut_offset(name) || cut_range(name))
		return;
	*group = -1;
}

/*
 * The file a lock is in, from its key: "fcntl:t.tdb:4096",
 * "futex:t.tdb+0x1040", "fcntl:t.tdb (other ranges)", "flock:t.tdb",
 * "futex:t.tdb chain 5" and a store's layout key "tdb:t.tdb chain 5"
 * (the file is up to the first blank) are in t.tdb. False for a lock of no file: another kind,
 * a heap, stack or anonymous word ("[heap]+0x10", "[anon@0x7f0000]+0x10"),
 * a bare address.
 */
static bool lock_file(enum lt_kind kind, const char *key, char *file,
		      size_t len)
{
	const char *rest = after_kind(kind, key), *colon;
	size_t n;

	if (!pairs_across(kind))
		return false;
	if (!rest) {
		colon = strchr(key, ':');
		if (!colon)
			return false;
		n = strcspn(colon + 1, " ");
		snprintf(file, len, "%.*s", (int)n, colon + 1);
	} else {
		snprintf(file, len, "%s", rest);
		n = strlen(file);
		if (n > 15 && !strcmp(file + n - 15, " (other ranges)"))
			file[n - 15] = '\0';
		else if (!cut_offset(file) && !cut_range(file))
			file[strcspn(file, " ")] = '\0'; /* "t.tdb chain 5" */
	}
	return file[0] && file[0] != '[' && strncmp(file, "0x", 2);
}

/* ---- the rows ---- */

static int cmp_identity(const void *a, const void *b)
{
	const struct diff_row *x = a, *y = b;

	if (x->group != y->group)
		return x->group < y->group ? -1 : 1;
	return strcmp(x->id, y->id);
}

static struct diff_row *find_row(struct diff_row *rows, size_t n, int group,
				 const char *id)
{
	struct diff_row probe;

	probe.group = group;
	snprintf(probe.id, sizeof(probe.id), "%s", id);
	return bsearch(&probe, rows, n, sizeof(*rows), cmp_identity);
}

/* Sorts rows by identity and keeps one of each; returns how many. */
static size_t unique_rows(struct diff_row *rows, size_t n)
{
	size_t i, j = 0;

	qsort(rows, n, sizeof(*rows), cmp_identity);
	for (i = 0; i < n; i++) {
		if (j && !cmp_identity(&rows[j - 1], &rows[i]))
			continue;
		if (i != j)
			rows[j] = rows[i];
		j++;
	}
	return j;
}

/* The lock and file rows of both records' locks, by identity. */
static void list_rows(struct diff_cmp *c)
{
	const struct rec_lock *l;
	struct diff_row *r;
	size_t i;
	int s;

	for (s = 0; s < 2; s++) {
		const struct rec_set *f = &c->rec[s]->final;

		for (i = 0; i < f->n_locks; i++) {
			l = &f->locks[i];
			if (!lt_kind_in_view(l->kind, c->all_kinds))
				continue;
			r = &c->locks[c->n_locks++];
			r->type = DIFF_ROW_LOCK;
			r->file = -1;
			layout_key(l->kind, l->key, r->id, sizeof(r->id),
				   &r->group);
			r = &c->files[c->n_files];
			if (lock_file(l->kind, l->key, r->id, sizeof(r->id))) {
				r->type = DIFF_ROW_FILE;
				r->group = -1;
				c->n_files++;
			}
		}
	}
	c->n_locks = unique_rows(c->locks, c->n_locks);
	c->n_files = unique_rows(c->files, c->n_files);
}

/* Adds one lock of a set into its rows; with final, notes its kind. */
static void add_lock(struct diff_cmp *c, const struct rec_lock *l,
		     struct rec_fig *figs, int s, bool final)
{
	char id[LT_NAME_LEN];
	struct diff_row *r, *f;
	int group;

	if (!lt_kind_in_view(l->kind, c->all_kinds))
		return;
	layout_key(l->kind, l->key, id, sizeof(id), &group);
	r = find_row(c->locks, c->n_locks, group, id);
	if (r) {
		rec_fig_add(&figs[r - c->rows], &l->fig);
		if (final) {
			r->in[s] = true;
			r->kinds[s] |= 1U << l->kind;
			if (!r->key[0] || s == 0)
				snprintf(r->key, sizeof(r->key), "%s", l->key);
			if (!r->kernel_type[0])
				memcpy(r->kernel_type, l->kernel_type,
				       sizeof(r->kernel_type));
			if (!r->caller[0])
				memcpy(r->caller, l->caller, sizeof(r->caller));
		}
	}
	if (!lock_file(l->kind, l->key, id, sizeof(id)))
		return;
	f = find_row(c->files, c->n_files, -1, id);
	if (!f)
		return;
	rec_fig_add(&figs[f - c->rows], &l->fig);
	if (final && r)
		r->file = f - c->rows;
	r = f;
	if (final) {
		r->in[s] = true;
		r->kinds[s] |= 1U << l->kind;
	}
}

/* Every row's figures in one set, into figs (one per row). */
static void set_figs(struct diff_cmp *c, const struct rec_set *set,
		     struct rec_fig *figs, int s, bool final)
{
	size_t i;

	memset(figs, 0, c->n_rows * sizeof(*figs));
	for (i = 0; i < c->n_kinds; i++)
		diff_row_fig(set, c->kinds[i].kind, NULL, c->all_kinds,
			     &figs[i]);
	for (i = 0; i < set->n_locks; i++)
		add_lock(c, &set->locks[i], figs, s, final);
}

/* The totals of one record, and their noise from its intervals. */
static int fill_side(struct diff_cmp *c, int s)
{
	const struct record *rec = c->rec[s];
	struct diff_spread *sp;
	struct rec_fig *figs;
	double len2, min_len = diff_usable_len(rec, &len2);
	size_t i, k;
	int m;

	figs = calloc(c->n_rows ? c->n_rows : 1, sizeof(*figs));
	sp = calloc(c->n_rows ? c->n_rows * REC_METRIC_NR : 1, sizeof(*sp));
	if (!figs || !sp) {
		free(figs);
		free(sp);
		return -ENOMEM;
	}
	for (i = 0; min_len > 0 && i < rec->n_intervals; i++) {
		const struct rec_set *iv = &rec->intervals[i];

		if (iv->interval_s < min_len || iv->interval_s <= 0)
			continue;
		set_figs(c, iv, figs, s, false);
		for (k = 0; k < c->n_rows; k++)
			for (m = 0; m < REC_METRIC_NR; m++)
				diff_spread_add(&sp[k * REC_METRIC_NR + m],
						&figs[k], iv->interval_s, m);
	}
	set_figs(c, &rec->final, figs, s, true);
	for (k = 0; k < c->n_rows; k++) {
		for (m = 0; m < REC_METRIC_NR; m++) {
			struct diff_side *sd = &c->rows[k].side[m][s];

			sd->value = (double)rec_fig_metric(&figs[k], m);
			sd->events = diff_events(&figs[k], m);
			sd->sampled = m == REC_WAIT_TIME && !figs[k].waits &&
				      figs[k].samples;
			sd->intervals = sp[k * REC_METRIC_NR + m].n;
			sd->noise = diff_spread_noise(
				&sp[k * REC_METRIC_NR + m], m, len2);
		}
	}
	free(figs);
	free(sp);
	return 0;
}

bool diff_metric_per_op(enum rec_metric m)
{
	return m != REC_P99;
}

const struct diff_side *diff_judged_sides(const struct diff_cmp *c,
					  const struct diff_row *r,
					  enum rec_metric m)
{
	return c->per_op ? r->per_op[m] : r->side[m];
}

/*
 * Whether a lock's or a file's row is too small to change a verdict: a
 * handful of waits on either side, or on both sides less wait time than
 * DIFF_SMALL_SHARE of all kinds' (kinds[0] is all of them).
 */
static bool row_small(const struct diff_cmp *c, const struct diff_row *r)
{
	const struct diff_side *w = r->side[REC_WAIT_TIME];
	const struct diff_side *all = c->kinds[0].side[REC_WAIT_TIME];

	if (w[0].events < VERDICT_MIN_EVENTS &&
	    w[1].events < VERDICT_MIN_EVENTS)
		return true;
	return w[0].value <= DIFF_SMALL_SHARE * all[0].value &&
	       w[1].value <= DIFF_SMALL_SHARE * all[1].value;
}

/* The figures per operation, the verdicts, and whether the row is small. */
static void judge_row(struct diff_cmp *c, struct diff_row *r)
{
	int m, s;

	for (m = 0; m < REC_METRIC_NR; m++) {
		for (s = 0; s < 2; s++) {
			struct diff_side *p = &r->per_op[m][s];

			*p = r->side[m][s];
			if (c->per_op && diff_metric_per_op(m)) {
				p->value /= c->ops[s];
				p->noise /= c->ops[s];
			}
		}
		diff_judge(&c->rule, m, &diff_judged_sides(c, r, m)[0],
			   &diff_judged_sides(c, r, m)[1], &r->judged[m]);
	}
	r->small = r->type != DIFF_ROW_KIND && row_small(c, r);
}

/* "fcntl", "fcntl+futex"; "-" for none. */
static void kinds_text(diff_kinds k, char *buf, size_t len)
{
	size_t o = 0;
	int i;

	buf[0] = '\0';
	for (i = 0; i < LT_KIND_NR && o < len; i++)
		if (k & (1U << i))
			o += (size_t)snprintf(buf + o, len - o, "%s%s",
					      o ? "+" : "", lt_kind_name(i));
	if (!buf[0])
		snprintf(buf, len, "-");
}

/*
 * A lock row's label: its key when it is of one kind that its key
 * starts with, else its layout key and its kinds, before → after when
 * they differ: "t.tdb chain 5 (fcntl → futex)".
 */
static void label_lock(struct diff_row *r)
{
	diff_kinds all = r->kinds[0] | r->kinds[1];
	char kb[64], ka[64];

	r->kind = -1;
	for (int k = 0; k < LT_KIND_NR; k++)
		if (all == 1U << k)
			r->kind = k;
	if (r->kind >= 0 && after_kind(r->kind, r->key)) {
		snprintf(r->label, sizeof(r->label), "%s", r->key);
		return;
	}
	kinds_text(r->kinds[0], kb, sizeof(kb));
	kinds_text(r->kinds[1], ka, sizeof(ka));
	if (r->kind >= 0 || !strcmp(kb, ka) || !r->in[0] || !r->in[1])
		snprintf(r->label, sizeof(r->label), "%s (%s)", r->id,
			 r->in[0] ? kb : ka);
	else
		snprintf(r->label, sizeof(r->label), "%s (%s → %s)", r->id, kb,
			 ka);
}

static bool row_active(const struct diff_row *r)
{
	int m, s;

	for (m = 0; m < REC_METRIC_NR; m++)
		for (s = 0; s < 2; s++)
			if (r->side[m][s].value > 0)
				return true;
	return false;
}

/* Rows enough to change a verdict first, then most wait time first. */
static int cmp_shown(const void *a, const void *b)
{
	const struct diff_row *x = a, *y = b;
	double wx = fmax(x->side[REC_WAIT_TIME][0].value,
			 x->side[REC_WAIT_TIME][1].value);
	double wy = fmax(y->side[REC_WAIT_TIME][0].value,
			 y->side[REC_WAIT_TIME][1].value);

	if (x->small != y->small)
		return x->small ? 1 : -1;
	if (wx != wy)
		return wx < wy ? 1 : -1;
	return strcmp(x->label, y->label);
}

/* The row's change in wait time: per operation when known. */
static double wait_change(const struct diff_cmp *c, const struct diff_row *r)
{
	const struct diff_side *sd = diff_judged_sides(c, r, REC_WAIT_TIME);

	return fabs(sd[1].value - sd[0].value);
}

/* The lock whose wait time changed most, of those not small. */
static void find_most(struct diff_cmp *c)
{
	size_t i;

	c->most = NULL;
	for (i = 0; i < c->n_locks; i++) {
		const struct diff_row *r = &c->locks[i];

		if (r->small || wait_change(c, r) <= 0)
			continue;
		if (!c->most || wait_change(c, r) > wait_change(c, c->most))
			c->most = r;
	}
}

/* The kinds: all, then each in view that did something. */
static void list_kinds(struct diff_cmp *c)
{
	for (int k = DIFF_KIND_ALL; k < LT_KIND_NR; k++) {
		struct diff_row *r = &c->kinds[c->n_kinds];

		if (k >= 0 && !lt_kind_in_view(k, c->all_kinds))
			continue;
		r->type = DIFF_ROW_KIND;
		r->kind = k;
		r->in[0] = r->in[1] = true;
		snprintf(r->id, sizeof(r->id), "%s",
			 k < 0 ? "all" : lt_kind_name(k));
		snprintf(r->label, sizeof(r->label), "%s", r->id);
		c->n_kinds++;
	}
}

/* Drops the kinds that did nothing ("all" stays). */
static void prune_kinds(struct diff_cmp *c)
{
	size_t i, j = 1;

	for (i = 1; i < c->n_kinds; i++)
		if (row_active(&c->kinds[i]))
			c->kinds[j++] = c->kinds[i];
	c->n_kinds = j;
}

/* Files of one lock row are that row: only files of two rows or more. */
static void prune_files(struct diff_cmp *c)
{
	size_t i, n = 0;

	for (i = 0; i < c->n_locks; i++)
		if (c->locks[i].file >= 0)
			c->rows[c->locks[i].file].members++;
	for (i = 0; i < c->n_files; i++) {
		struct diff_row *f = &c->files[i];

		if (f->members < 2)
			continue;
		snprintf(f->label, sizeof(f->label), "%s, all locks", f->id);
		c->files[n++] = *f;
	}
	c->n_files = n;
}

int diff_compare(struct diff_cmp *c)
{
	size_t i, cap;

	cap = LT_KIND_NR + 1 +
	      2 * (c->rec[0]->final.n_locks + c->rec[1]->final.n_locks);
	c->rows = calloc(cap, sizeof(*c->rows));
	if (!c->rows)
		return -ENOMEM;
	c->kinds = c->rows;
	list_kinds(c);
	/* Room for every lock twice over: as a lock and as a file. */
	c->locks = c->kinds + c->n_kinds;
	c->files = c->locks + (cap - c->n_kinds) / 2;
	list_rows(c);
	/* Kinds, files and locks next to each other, as figs index them. */
	memmove(c->locks + c->n_locks, c->files,
		c->n_files * sizeof(*c->files));
	c->files = c->locks + c->n_locks;
	c->n_rows = c->n_kinds + c->n_locks + c->n_files;
	if (fill_side(c, 0) || fill_side(c, 1))
		return -ENOMEM;
	for (i = 0; i < c->n_rows; i++) {
		if (c->rows[i].type == DIFF_ROW_LOCK)
			label_lock(&c->rows[i]);
		judge_row(c, &c->rows[i]);
	}
	prune_files(c);
	prune_kinds(c);
	qsort(c->locks, c->n_locks, sizeof(*c->locks), cmp_shown);
	qsort(c->files, c->n_files, sizeof(*c->files), cmp_shown);
	for (i = 0; i < c->n_locks; i++)
		c->n_small_locks += c->locks[i].small;
	for (i = 0; i < c->n_files; i++)
		c->n_small_files += c->files[i].small;
	find_most(c);
	return 0;
}

void diff_cmp_free(struct diff_cmp *c)
{
	free(c->rows);
	c->rows = NULL;
}
