// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * One snapshot through every consumer's choice of locks: batch output
 * (output_rank() and the JSON it writes), the screen's lock rows, the
 * locks a record keeps (its writer, read back by its loader) and the PCP
 * agent's lock instances. Each shows the locks this file expects, which
 * are lt_lock_shown()'s, and the ones that order them do it alike.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <json-c/json.h>
#include "model.h"
#include "output.h"
#include "record.h"
#include "screen_priv.h"

#define N_LOCKS 16

/*
 * The snapshot's locks, lock i having id i + 1: what each has, and
 * whether a view of the interval (delta) or of the whole run (total)
 * shows it. Event waits (futex-cond) show only with all kinds.
 */
struct want {
	const char *what;
	enum lt_kind kind;
	bool delta, total;
	/* The screen and batch text show it too: a figure in their
	 * columns (lt_lock_waited()), in the interval, in the run. */
	bool text_delta, text_total;
};

static const struct want wants[N_LOCKS] = {
	{ "busy mutex", LT_KIND_FUTEX, true, true, true, true },
	{ "idle mutex", LT_KIND_FUTEX, false, false, false, false },
	{ "acquisitions only", LT_KIND_FCNTL, true, true, false, false },
	{ "try-lock failures only", LT_KIND_FCNTL, true, true, false, false },
	{ "busy before this interval", LT_KIND_OFD, false, true, false, true },
	{ "condition variable", LT_KIND_FUTEX_COND, true, true, true, true },
	{ "folded ranges", LT_KIND_FCNTL, true, true, true, true },
	{ "waiters now only", LT_KIND_FUTEX, true, true, true, true },
	{ "refused deadlock only", LT_KIND_FLOCK, true, true, false, false },
	{ "idle kernel lock", LT_KIND_KERNEL, false, false, false, false },
	{ "wakes only this interval", LT_KIND_FUTEX, true, true, false, true },
	{ "I/O under it only", LT_KIND_FCNTL, true, true, false, false },
	{ "spin, as long as the busy mutex", LT_KIND_SPIN, true, true, true,
	  true },
	{ "contended only", LT_KIND_FUTEX_PI, true, true, false, false },
	{ "idle condition variable", LT_KIND_FUTEX_COND, false, false, false,
	  false },
	{ "acquired before this interval", LT_KIND_FCNTL, false, true, false,
	  false },
};

static struct lt_lock locks[N_LOCKS];
static pid_t pids[N_LOCKS];
static struct lt_snapshot snap;

static void set_waits(struct lt_figures *f, uint64_t waits, uint64_t ns)
{
	f->waits = waits;
	f->wait_ns = ns;
	f->max_wait_ns = waits ? ns / waits : 0;
	f->wait_hist[10] = waits;
}

/* Deltas as wanted; totals are the deltas and what came before. */
static void fill_figures(void)
{
	struct lt_lock *l = locks;

	set_waits(&l[0].delta, 10, 5000);
	set_waits(&l[0].total, 40, 20000);
	l[2].delta.acquires = l[2].total.acquires = 3;
	l[2].delta.hold_ns = l[2].total.hold_ns = 900;
	l[2].delta.holds_estimated = l[2].total.holds_estimated = 2;
	l[3].delta.trylock_failures = l[3].total.trylock_failures = 2;
	set_waits(&l[4].total, 5, 7000);
	set_waits(&l[5].delta, 4, 9000);
	set_waits(&l[5].total, 4, 9000);
	set_waits(&l[6].delta, 1, 3000);
	set_waits(&l[6].total, 2, 6000);
	l[6].delta.contended = 1;
	l[6].total.contended = 2;
	l[6].delta.acquires = 6;
	l[6].total.acquires = 12;
	l[7].waiters_now = 2;
	l[8].delta.deadlocks = l[8].total.deadlocks = 1;
	l[10].delta.wakes = 3;
	set_waits(&l[10].total, 2, 100);
	l[10].total.wakes = 3;
	l[11].delta.io_under_lock_ns = l[11].total.io_under_lock_ns = 500;
	set_waits(&l[12].delta, 2, 5000);
	set_waits(&l[12].total, 2, 5000);
	l[13].delta.contended = l[13].total.contended = 1;
	l[15].total.acquires = 1;
}

static int setup(void **state)
{
	size_t i;

	(void)state;
	memset(locks, 0, sizeof(locks));
	for (i = 0; i < N_LOCKS; i++) {
		struct lt_lock *l = &locks[i];

		l->id = i + 1;
		l->kind = wants[i].kind;
		snprintf(l->name, sizeof(l->name), "lock%zu", i + 1);
		snprintf(l->key, sizeof(l->key), "%s:lock%zu",
			 lt_kind_name(l->kind), i + 1);
		pids[i] = 100 + (pid_t)i;
		l->pids = &pids[i];
		l->n_pids = 1;
	}
	snprintf(locks[6].name, sizeof(locks[6].name),
		 "/srv/t.tdb (other ranges)");
	fill_figures();
	memset(&snap, 0, sizeof(snap));
	snap.time = 1767225600;
	snap.interval_s = 1;
	snap.elapsed_s = 4;
	snap.locks = locks;
	snap.n_locks = N_LOCKS;
	return 0;
}

/* ---- each consumer's choice, as lock ids ---- */

struct ids {
	uint64_t id[N_LOCKS];
	size_t n;
};

static void output_ids(bool totals, bool all_kinds, size_t limit, bool text,
		       struct ids *out, size_t *n_all)
{
	struct output_opts o = { .all_kinds = all_kinds, .limit = limit };
	const struct lt_lock **rows;
	size_t i;

	assert_int_equal(
		output_rank(&o, &snap, totals, text, &rows, &out->n, n_all), 0);
	for (i = 0; i < out->n; i++)
		out->id[i] = rows[i]->id;
	free(rows);
}

/* The ids of the "locks" of what batch JSON writes. */
static void json_ids(bool totals, bool all_kinds, struct ids *out)
{
	struct output_opts o = { .json = true, .all_kinds = all_kinds };
	json_object *root, *a;
	char *buf = NULL;
	size_t len = 0, i;

	o.out = open_memstream(&buf, &len);
	assert_non_null(o.out);
	if (totals)
		assert_int_equal(output_final(&o, &snap, -1), 0);
	else
		assert_int_equal(output_interval(&o, &snap), 0);
	fclose(o.out);
	root = json_tokener_parse(buf);
	assert_non_null(root);
	assert_true(json_object_object_get_ex(root, "locks", &a));
	out->n = json_object_array_length(a);
	assert_true(out->n <= N_LOCKS);
	for (i = 0; i < out->n; i++) {
		json_object *id;

		assert_true(json_object_object_get_ex(
			json_object_array_get_idx(a, i), "id", &id));
		out->id[i] = json_object_get_uint64(id);
	}
	json_object_put(root);
	free(buf);
}

/* The screen's rows of the Locks view, by its first sort, no filter. */
static void screen_ids(bool totals, bool all_kinds, struct ids *out)
{
	struct screen sc;
	size_t i;

	memset(&sc, 0, sizeof(sc));
	sc.cx.snap = &snap;
	sc.cx.cumulative = totals;
	sc.o.all_kinds = all_kinds;
	sc.view = VIEW_LOCKS;
	sc.sort[VIEW_LOCKS] = views[VIEW_LOCKS].default_sort;
	sc.kind_filter = -1;
	screen_table_build_rows(&sc);
	out->n = sc.n_rows;
	assert_true(out->n <= N_LOCKS);
	for (i = 0; i < out->n; i++)
		out->id[i] = ((const struct lt_lock *)sc.rows[i].item)->id;
	free(sc.rows);
}

static void record_keep_ids(bool totals, struct ids *out)
{
	size_t i;

	out->n = 0;
	for (i = 0; i < N_LOCKS; i++)
		if (record_keeps(&locks[i], totals))
			out->id[out->n++] = locks[i].id;
}

/* A record set's locks, by the number in their keys. */
static void set_ids(const struct rec_set *s, struct ids *out)
{
	size_t i;

	assert_true(s->n_locks <= N_LOCKS);
	out->n = s->n_locks;
	for (i = 0; i < s->n_locks; i++) {
		const char *colon = strchr(s->locks[i].key, ':');
		unsigned int id = 0;

		assert_non_null(colon);
		assert_int_equal(sscanf(colon + 1, "lock%u", &id), 1);
		out->id[i] = id;
	}
}

static void agent_ids(struct ltpm_model *m, struct ids *out)
{
	size_t i;

	out->n = m->n_locks;
	for (i = 0; i < m->n_locks; i++)
		out->id[i] = m->locks[i]->id;
}

/* ---- what they must give ---- */

static void assert_wanted(const char *who, const struct ids *got, bool totals,
			  bool all_kinds, bool text)
{
	bool seen[N_LOCKS] = { false };
	size_t i, n = 0;

	for (i = 0; i < N_LOCKS; i++) {
		const struct want *w = &wants[i];
		struct lt_view v = { .totals = totals,
				     .all_kinds = all_kinds,
				     .waited_only = text };
		bool want =
			(totals ? w->total : w->delta) &&
			(!text || (totals ? w->text_total : w->text_delta)) &&
			(all_kinds || w->kind != LT_KIND_FUTEX_COND);

		assert_int_equal(lt_lock_shown(&locks[i], &v), want);
		n += want;
	}
	for (i = 0; i < got->n; i++) {
		uint64_t id = got->id[i];

		if (id < 1 || id > N_LOCKS || seen[id - 1])
			fail_msg(
				"%s: lock %llu is not one lock of the snapshot",
				who, (unsigned long long)id);
		seen[id - 1] = true;
		if (!lt_lock_shown(&locks[id - 1],
				   &(struct lt_view){ .totals = totals,
						      .all_kinds = all_kinds,
						      .waited_only = text }))
			fail_msg("%s (%s, %s kinds): shows lock %llu, %s", who,
				 totals ? "whole run" : "interval",
				 all_kinds ? "all" : "lock",
				 (unsigned long long)id, wants[id - 1].what);
	}
	if (got->n != n)
		fail_msg("%s (%s, %s kinds): %zu locks, not %zu", who,
			 totals ? "whole run" : "interval",
			 all_kinds ? "all" : "lock", got->n, n);
}

static void assert_same_order(const char *who, const struct ids *a,
			      const struct ids *b)
{
	size_t i;

	assert_int_equal(a->n, b->n);
	for (i = 0; i < a->n; i++)
		if (a->id[i] != b->id[i])
			fail_msg("%s: row %zu is lock %llu, not %llu", who, i,
				 (unsigned long long)a->id[i],
				 (unsigned long long)b->id[i]);
}

/* Batch text and JSON, the screen and the record, in one period. */
static void check_views(bool totals)
{
	struct ids out, text, json, screen, rec;
	size_t n_all;
	int all;

	for (all = 0; all < 2; all++) {
		output_ids(totals, all, 0, false, &out, &n_all);
		assert_int_equal(n_all, out.n);
		assert_wanted("batch output", &out, totals, all, false);
		json_ids(totals, all, &json);
		assert_same_order("JSON against batch output", &json, &out);
		/* Batch text and the screen leave out rows of zeros. */
		output_ids(totals, all, 0, true, &text, &n_all);
		assert_int_equal(n_all, text.n);
		assert_wanted("batch text", &text, totals, all, true);
		screen_ids(totals, all, &screen);
		assert_wanted("screen", &screen, totals, all, true);
		assert_same_order("screen against batch text", &screen, &text);
	}
	/* A record keeps every kind; diff leaves event waits out. */
	record_keep_ids(totals, &rec);
	assert_wanted("record", &rec, totals, true, false);
}

static void test_interval(void **state)
{
	(void)state;
	check_views(false);
}

static void test_whole_run(void **state)
{
	(void)state;
	check_views(true);
}

/* The agent's instances are the whole run's locks of lock kinds. */
static void test_agent(void **state)
{
	struct ltpm_model m;
	struct ids agent, out;
	size_t n_all;

	(void)state;
	assert_int_equal(ltpm_model_init(&m, LTPM_TOP_MAX), 0);
	assert_int_equal(ltpm_model_update(&m, &snap), 0);
	agent_ids(&m, &agent);
	assert_wanted("agent", &agent, true, false, false);
	output_ids(true, false, 0, false, &out, &n_all);
	assert_int_equal(agent.n, out.n);
	/* Nothing left over for "other". */
	assert_false(lt_figures_active(&m.other.total));
	ltpm_model_free(&m);
}

/* What the writer wrote, as its loader reads it back. */
static void test_record_file(void **state)
{
	char dir[] = "/tmp/unit-figures.XXXXXX", path[64], err[256];
	char *argv[] = { "locktop", NULL };
	struct record_meta meta = { .argv = argv, .argc = 1, .interval_s = 1 };
	struct recorder *w;
	struct record *r;
	struct ids got;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/f.rec", dir);
	meta.path = path;
	assert_int_equal(recorder_open(&meta, &w, err, sizeof(err)), 0);
	assert_int_equal(recorder_add(w, &snap), 0);
	assert_int_equal(
		recorder_finish(w, &snap, -1, "signal", err, sizeof(err)), 0);
	if (record_load(path, &r, err, sizeof(err)))
		fail_msg("%s", err);
	unlink(path);
	rmdir(dir);
	assert_int_equal(r->n_intervals, 1);
	set_ids(&r->intervals[0], &got);
	assert_wanted("record's interval", &got, false, true, false);
	set_ids(&r->final, &got);
	assert_wanted("record's final set", &got, true, true, false);
	/* Its kinds add up its locks: the mutexes' waits, here. */
	assert_int_equal(r->final.kinds[LT_KIND_FUTEX].waits, 42);
	assert_int_equal(r->intervals[0].kinds[LT_KIND_FUTEX].waits, 10);
	record_free(r);
}

/*
 * Fewer rows are the same order cut short: batch output's limit is the
 * screen's first rows. The agent keeps its best by score (the figures of
 * this one interval here, as it has no past) and adds the other locks it
 * could show into "other".
 */
static void test_fewer_rows(void **state)
{
	struct ids cut, screen, agent;
	struct lt_figures rest;
	struct ltpm_model m;
	bool kept[N_LOCKS] = { false };
	size_t n_all, i;

	(void)state;
	output_ids(false, false, 3, true, &cut, &n_all);
	screen_ids(false, false, &screen);
	assert_int_equal(cut.n, 3);
	assert_int_equal(n_all, screen.n);
	screen.n = 3;
	assert_same_order("batch output's limit", &cut, &screen);
	/* Equal wait time: more waits first. */
	assert_int_equal(cut.id[0], 1);
	assert_int_equal(cut.id[1], 13);
	assert_int_equal(cut.id[2], 7);

	assert_int_equal(ltpm_model_init(&m, 3), 0);
	assert_int_equal(ltpm_model_update(&m, &snap), 0);
	agent_ids(&m, &agent);
	assert_int_equal(agent.n, 3);
	for (i = 0; i < agent.n; i++) {
		assert_true(ltpm_lock_eligible(&locks[agent.id[i] - 1]));
		kept[agent.id[i] - 1] = true;
	}
	memset(&rest, 0, sizeof(rest));
	for (i = 0; i < N_LOCKS; i++)
		if (!kept[i] && ltpm_lock_eligible(&locks[i]))
			lt_figures_add(&rest, &locks[i].delta);
	assert_memory_equal(&m.other.delta, &rest, sizeof(rest));
	ltpm_model_free(&m);
}

/* One lock's figures into another's: counts add, maxima the larger. */
static void test_add(void **state)
{
	struct lt_figures a = { 0 }, b = { 0 };
	struct lt_kind_figures kinds[LT_KIND_NR];

	(void)state;
	set_waits(&a, 2, 100);
	a.max_hold_ns = 70;
	a.hold_hist[4] = 1;
	set_waits(&b, 3, 900);
	b.max_hold_ns = 50;
	b.deadlocks = 1;
	b.wakes = 2;
	lt_figures_add(&a, &b);
	assert_int_equal(a.waits, 5);
	assert_int_equal(a.wait_ns, 1000);
	assert_int_equal(a.max_wait_ns, 300);
	assert_int_equal(a.max_hold_ns, 70);
	assert_int_equal(a.wait_hist[10], 5);
	assert_int_equal(a.hold_hist[4], 1);
	assert_int_equal(a.deadlocks, 1);
	assert_int_equal(a.wakes, 2);
	assert_true(lt_figures_active(&a));
	memset(&b, 0, sizeof(b));
	b.max_wait_ns = 5; /* a maximum alone: nothing moved */
	assert_false(lt_figures_active(&b));

	/* Without the source's own sums, the kinds sum the locks. */
	lt_snapshot_kinds(&snap, true, kinds);
	assert_int_equal(kinds[LT_KIND_FUTEX].waits, 42);
	assert_int_equal(kinds[LT_KIND_FUTEX].wait_ns, 20100);
	assert_int_equal(kinds[LT_KIND_FUTEX_COND].waits, 4);
	snap.kind_delta[LT_KIND_OFD].waits = 7;
	lt_snapshot_kinds(&snap, false, kinds);
	assert_int_equal(kinds[LT_KIND_OFD].waits, 7);
	assert_int_equal(kinds[LT_KIND_FUTEX].waits, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_interval, setup),
		cmocka_unit_test_setup(test_whole_run, setup),
		cmocka_unit_test_setup(test_agent, setup),
		cmocka_unit_test_setup(test_record_file, setup),
		cmocka_unit_test_setup(test_fewer_rows, setup),
		cmocka_unit_test_setup(test_add, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
