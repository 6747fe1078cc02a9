// SPDX-License-Identifier: GPL-2.0-or-later
/* Unit tests of what the PCP agent chooses to export: no pmcd, no BPF. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include "model.h"

#define N_LOCKS 30

struct fake {
	struct lt_snapshot snap;
	struct lt_lock locks[N_LOCKS + 1];
	pid_t pids[N_LOCKS + 1];
};

static void fake_init(struct fake *f, size_t n)
{
	size_t i;

	memset(f, 0, sizeof(*f));
	for (i = 0; i < n; i++) {
		struct lt_lock *l = &f->locks[i];

		l->id = i + 1;
		l->kind = LT_KIND_FUTEX;
		snprintf(l->name, sizeof(l->name), "lock%zu", i);
		snprintf(l->key, sizeof(l->key), "pid:1:0x%zx", i);
		f->pids[i] = 100 + (pid_t)i;
		l->pids = &f->pids[i];
		l->n_pids = 1;
	}
	f->snap.locks = f->locks;
	f->snap.n_locks = n;
	f->snap.interval_s = 1.0;
}

/* One interval in which lock i waited wait[i] ns. */
static void fake_interval(struct fake *f, const uint64_t *wait)
{
	size_t i;

	for (i = 0; i < f->snap.n_locks; i++) {
		struct lt_lock *l = &f->locks[i];

		memset(&l->delta, 0, sizeof(l->delta));
		l->delta.wait_ns = wait[i];
		l->delta.waits = wait[i] ? 1 : 0;
		l->delta.max_wait_ns = wait[i];
		l->delta.wait_hist[3] = wait[i] ? 1 : 0;
		l->total.wait_ns += wait[i];
		l->total.waits += l->delta.waits;
		l->total.wait_hist[3] += l->delta.wait_hist[3];
		if (wait[i] > l->total.max_wait_ns)
			l->total.max_wait_ns = wait[i];
	}
}

static void test_top_n_and_other(void **state)
{
	static struct fake f;
	struct ltpm_model m;
	uint64_t wait[N_LOCKS], sum_other = 0;
	size_t i;

	(void)state;
	fake_init(&f, N_LOCKS);
	for (i = 0; i < N_LOCKS; i++)
		wait[i] = 1000 * (i + 1); /* the last is the busiest */
	fake_interval(&f, wait);

	assert_int_equal(ltpm_model_init(&m, 5), 0);
	assert_int_equal(ltpm_model_update(&m, &f.snap), 0);
	assert_int_equal(m.n_locks, 5);
	for (i = 0; i < 5; i++)
		assert_int_equal(m.locks[i]->id, N_LOCKS - i);
	for (i = 0; i < N_LOCKS - 5; i++)
		sum_other += wait[i];
	assert_int_equal(m.other.total.wait_ns, sum_other);
	assert_int_equal(m.other.delta.wait_ns, sum_other);
	assert_int_equal(m.other.total.waits, N_LOCKS - 5);
	assert_int_equal(m.other.delta.max_wait_ns, wait[N_LOCKS - 6]);
	/* Every waiting lock's histogram, kept or not. */
	assert_int_equal(m.hist_wait[3], N_LOCKS);
	ltpm_model_free(&m);
}

static void test_other_only_grows(void **state)
{
	static struct fake f;
	struct ltpm_model m;
	uint64_t wait[N_LOCKS] = { 0 }, before;
	int round;

	(void)state;
	fake_init(&f, N_LOCKS);
	ltpm_model_init(&m, 3);
	/* The busy set moves every round: locks leave and join the top. */
	for (round = 0; round < 8; round++) {
		size_t i;

		for (i = 0; i < N_LOCKS; i++)
			wait[i] = (i + round) % 7 == 0 ? 5000000 : 10;
		fake_interval(&f, wait);
		before = m.other.total.wait_ns;
		assert_int_equal(ltpm_model_update(&m, &f.snap), 0);
		assert_true(m.other.total.wait_ns >= before);
		assert_true(m.n_locks <= 3);
	}
	ltpm_model_free(&m);
}

static void test_recent_beats_old(void **state)
{
	static struct fake f;
	struct ltpm_model m;
	uint64_t wait[2];
	int round;

	(void)state;
	fake_init(&f, 2);
	ltpm_model_init(&m, 1);
	/* Lock 1 was busy once, long ago; lock 2 is moderately busy now. */
	wait[0] = 1000000000;
	wait[1] = 0;
	fake_interval(&f, wait);
	ltpm_model_update(&m, &f.snap);
	assert_int_equal(m.locks[0]->id, 1);
	wait[0] = 0;
	wait[1] = 20000000;
	for (round = 0; round < 300; round++) {
		fake_interval(&f, wait);
		ltpm_model_update(&m, &f.snap);
	}
	assert_int_equal(m.n_locks, 1);
	assert_int_equal(m.locks[0]->id, 2);
	ltpm_model_free(&m);
}

static void test_busy_lock_stays(void **state)
{
	static struct fake f;
	struct ltpm_model m;
	uint64_t wait[2];
	int round;

	(void)state;
	fake_init(&f, 2);
	ltpm_model_init(&m, 1);
	/* Lock 1 is steadily busy; lock 2 has one short burst: no flicker. */
	for (round = 0; round < 60; round++) {
		wait[0] = 50000000;
		wait[1] = round == 30 ? 80000000 : 0;
		fake_interval(&f, wait);
		ltpm_model_update(&m, &f.snap);
		assert_int_equal(m.locks[0]->id, 1);
	}
	ltpm_model_free(&m);
}

static void test_event_waits_left_out(void **state)
{
	static struct fake f;
	struct ltpm_model m;
	uint64_t wait[3] = { 100, 1000000, 100 };

	(void)state;
	fake_init(&f, 3);
	f.locks[1].kind = LT_KIND_FUTEX_COND;
	fake_interval(&f, wait);
	ltpm_model_init(&m, 10);
	ltpm_model_update(&m, &f.snap);
	assert_int_equal(m.n_locks, 2);
	assert_true(m.locks[0]->kind != LT_KIND_FUTEX_COND);
	assert_true(m.locks[1]->kind != LT_KIND_FUTEX_COND);
	assert_int_equal(m.other.total.wait_ns, 0);
	ltpm_model_free(&m);
}

static void test_forget_keeps_sums(void **state)
{
	static struct fake f;
	struct ltpm_model m;
	uint64_t wait[N_LOCKS];
	uint64_t other, hist;
	size_t i;

	(void)state;
	fake_init(&f, N_LOCKS);
	for (i = 0; i < N_LOCKS; i++)
		wait[i] = 1000;
	fake_interval(&f, wait);
	ltpm_model_init(&m, 2);
	ltpm_model_update(&m, &f.snap);
	other = m.other.total.wait_ns;
	hist = m.hist_wait[3];
	ltpm_model_forget(&m);
	assert_int_equal(m.n_locks, 0);
	assert_int_equal(m.other.total.wait_ns, other);
	assert_int_equal(m.hist_wait[3], hist);
	ltpm_model_free(&m);
}

static void test_empty_snapshot(void **state)
{
	struct lt_snapshot s = { .interval_s = 1 };
	struct ltpm_model m;

	(void)state;
	ltpm_model_init(&m, 20);
	assert_int_equal(ltpm_model_update(&m, &s), 0);
	assert_int_equal(m.n_locks, 0);
	assert_int_equal(m.n_procs, 0);
	assert_int_equal(m.n_files, 0);
	ltpm_model_free(&m);
}

static void test_procs_and_files_bounded(void **state)
{
	static struct lt_proc procs[50];
	static struct lt_file files[50];
	struct lt_snapshot s = { .interval_s = 1 };
	struct ltpm_model m;
	size_t i;

	(void)state;
	for (i = 0; i < 50; i++) {
		procs[i].pid = 1000 + (pid_t)i;
		procs[i].delta.wait_ns = procs[i].total.wait_ns = i * 10;
		files[i].ino = i + 1;
		files[i].delta.io_ns = files[i].total.io_ns = i * 10;
	}
	s.procs = procs;
	s.n_procs = 50;
	s.files = files;
	s.n_files = 50;
	ltpm_model_init(&m, 4);
	assert_int_equal(ltpm_model_update(&m, &s), 0);
	assert_int_equal(m.n_procs, 4);
	assert_int_equal(m.procs[0]->pid, 1049);
	assert_int_equal(m.n_files, 4);
	assert_int_equal(m.files[0]->ino, 50);
	ltpm_model_free(&m);
}

static void test_top_clamped(void **state)
{
	struct ltpm_model m;

	(void)state;
	ltpm_model_init(&m, 0);
	assert_int_equal(m.top_n, 1);
	ltpm_model_set_top(&m, 100000);
	assert_int_equal(m.top_n, LTPM_TOP_MAX);
	ltpm_model_free(&m);
}

/* Two locks that are one instance: counters add, maxima are the larger. */
static void test_lock_add(void **state)
{
	struct lt_lock sum = { 0 }, l = { 0 };

	(void)state;
	sum.total.waits = 10;
	sum.total.wait_ns = 1000;
	sum.total.max_wait_ns = 500;
	sum.total.wait_hist[3] = 10;
	sum.delta.waits = 0;
	sum.waiters_now = 1;
	l.total.waits = 4;
	l.total.wait_ns = 4000;
	l.total.max_wait_ns = 2000;
	l.total.wait_hist[3] = 1;
	l.total.wait_hist[5] = 3;
	l.total.deadlocks = 1;
	l.delta.waits = 4;
	l.delta.wait_ns = 4000;
	l.waiters_now = 2;
	ltpm_lock_add(&sum, &l);
	assert_int_equal(sum.total.waits, 14);
	assert_int_equal(sum.total.wait_ns, 5000);
	assert_int_equal(sum.total.max_wait_ns, 2000);
	assert_int_equal(sum.total.wait_hist[3], 11);
	assert_int_equal(sum.total.wait_hist[5], 3);
	assert_int_equal(sum.total.deadlocks, 1);
	assert_int_equal(sum.delta.waits, 4);
	assert_int_equal(sum.delta.wait_ns, 4000);
	assert_int_equal(sum.waiters_now, 3);
}

static void test_bucket_names(void **state)
{
	char buf[64];

	(void)state;
	ltpm_bucket_name(0, buf, sizeof(buf));
	assert_string_equal(buf, "0-1");
	ltpm_bucket_name(10, buf, sizeof(buf));
	assert_string_equal(buf, "1024-2047");
	ltpm_bucket_name(LT_HIST_BUCKETS - 1, buf, sizeof(buf));
	assert_string_equal(buf, "549755813888-1099511627775");
}

static void test_unique_names(void **state)
{
	char buf[LT_NAME_LEN + 64];

	(void)state;
	ltpm_unique_name("table.db+0x1000", "pid:42", buf, sizeof(buf));
	assert_string_equal(buf, "table.db+0x1000[pid:42]");
	/* The tag must come before the first space to tell names apart. */
	ltpm_unique_name("/tmp/my file.db+0x10", "id:7", buf, sizeof(buf));
	assert_string_equal(buf, "/tmp/my[id:7] file.db+0x10");
}

static void test_parse_pids(void **state)
{
	pid_t p[4];

	(void)state;
	assert_int_equal(ltpm_parse_pids("", p, 4), 0);
	assert_int_equal(ltpm_parse_pids("  ", p, 4), 0);
	assert_int_equal(ltpm_parse_pids("12, 34 56", p, 4), 3);
	assert_int_equal(p[0], 12);
	assert_int_equal(p[2], 56);
	assert_int_equal(ltpm_parse_pids("1,2,3,4,5", p, 4), -1);
	assert_int_equal(ltpm_parse_pids("12x", p, 4), -1);
	assert_int_equal(ltpm_parse_pids("-3", p, 4), -1);
	assert_int_equal(ltpm_parse_pids("0", p, 4), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_top_n_and_other),
		cmocka_unit_test(test_other_only_grows),
		cmocka_unit_test(test_recent_beats_old),
		cmocka_unit_test(test_busy_lock_stays),
		cmocka_unit_test(test_event_waits_left_out),
		cmocka_unit_test(test_forget_keeps_sums),
		cmocka_unit_test(test_empty_snapshot),
		cmocka_unit_test(test_procs_and_files_bounded),
		cmocka_unit_test(test_top_clamped),
		cmocka_unit_test(test_lock_add),
		cmocka_unit_test(test_bucket_names),
		cmocka_unit_test(test_unique_names),
		cmocka_unit_test(test_parse_pids),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
