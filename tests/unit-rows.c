// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests of the collector's rows: a lock's figures merged from the
 * reader's records, its slot given back, rows retired, and the processes
 * of the threads rows name. A collector made by hand, with no probes: no
 * BPF needed.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>
#include <cmocka.h>
#include "state.h"

/* Rows retired at once, at least (retire.c's RETIRE_MIN). */
#define RETIRE_AT_ONCE 256

/* A collector with its rows and indexes as opening one makes them, and
 * no probes; lt_collector_close() frees it. */
static struct lt_collector *bare_collector(void)
{
	struct lt_collector *c = calloc(1, sizeof(*c));
	size_t i;

	assert_non_null(c);
	c->cost.stats_fd = -1;
	c->opts.ncpus = 1;
	assert_int_equal(lt_index_init(&c->locktab.lock_ix,
				       sizeof(struct lt_lock_key),
				       sizeof(struct lock_state)),
			 0);
	assert_int_equal(lt_index_init(&c->proctab.proc_ix, sizeof(__u32),
				       sizeof(struct proc_state)),
			 0);
	assert_int_equal(lt_index_init(&c->filetab.file_ix,
				       sizeof(struct lt_file_key),
				       sizeof(struct file_state)),
			 0);
	assert_int_equal(lt_index_init(&c->parties.party_ix,
				       sizeof(struct lt_party_key),
				       sizeof(struct party_state)),
			 0);
	assert_int_equal(lt_index_init(&c->parties.side_ix,
				       sizeof(struct side_key),
				       sizeof(struct side_state)),
			 0);
	for (i = 0; i < LT_MAX_LOCKS; i++)
		c->slots.slot_row[i] = -1;
	for (i = 0; i < LT_MAX_PARTIES; i++)
		c->slots.party_row[i] = -1;
	for (i = 0; i < LT_MAX_FILES; i++)
		c->slots.file_row[i] = -1;
	return c;
}

/* What read.c does before it merges: a new read, no deltas yet. */
static void next_read(struct lt_collector *c, uint64_t ns)
{
	c->reading.reads++;
	c->reading.read_ns = ns;
	c->locktab.n_live = 0;
	memset(c->snap.kind_delta, 0, sizeof(c->snap.kind_delta));
}

/* A private futex of process tgid at addr, as the reader sums it. */
static struct lt_lock_rec futex_rec(__u32 tgid, __u64 addr, __u32 slot)
{
	struct lt_lock_rec r = { .slot = slot };

	r.key.kind = LT_PK_FUTEX;
	r.key.dev_or_tgid = tgid;
	r.key.start = addr;
	return r;
}

/* n waits of ns each so far, all in histogram slot b. */
static void waited(struct lt_lock_rec *r, uint64_t n, uint64_t ns, size_t b)
{
	r->sum.waits = n;
	r->sum.wait_ns = n * ns;
	r->sum.hist[b] = (__u32)n;
	r->sum.hist_used |= 1ULL << b;
	r->sum.max_ns = ns;
	r->sum.max_total_ns = ns;
}

static void test_merge_two_reads(void **state)
{
	struct lt_collector *c = bare_collector();
	struct lt_lock_rec r = futex_rec(1000, 0x7f0010, 5);
	const struct lt_lock *l;

	(void)state;
	next_read(c, 1000);
	waited(&r, 10, 100, 3);
	r.sum.acquires = 40;
	r.sum.last_holder = 1001;
	assert_int_equal(locks_merge(c, &r), 0);
	assert_int_equal(c->locktab.n_locks, 1);
	assert_int_equal(c->slots.slot_row[5], 0);
	assert_int_equal(c->locktab.n_live, 1);
	assert_int_equal(c->locktab.n_fresh, 1);
	l = &c->locktab.locks[0];
	assert_int_equal(l->id, 1);
	assert_int_equal(l->kind, LT_KIND_FUTEX);
	assert_int_equal(l->address, 0x7f0010);
	assert_int_equal(l->delta.waits, 10);
	assert_int_equal(l->total.waits, 10);
	assert_int_equal(l->delta.wait_ns, 1000);
	assert_int_equal(l->delta.acquires, 40);
	assert_int_equal(l->delta.wait_hist[3], 10);
	assert_int_equal(l->delta.max_wait_ns, 100);
	assert_int_equal(c->locktab.lstate[0].slot, 5);
	assert_int_equal(c->locktab.lstate[0].moved_at, 1000);
	assert_int_equal(c->snap.kind_delta[LT_KIND_FUTEX].waits, 10);
	assert_int_equal(c->snap.kind_total[LT_KIND_FUTEX].waits, 10);

	/* The next read: 5 more waits, 2 in slot 3 and 3 in slot 4. */
	next_read(c, 2000);
	r.sum.waits = 15;
	r.sum.wait_ns = 1600;
	r.sum.hist[3] = 12;
	r.sum.hist[4] = 3;
	r.sum.hist_used |= 1ULL << 4;
	r.sum.max_ns = 250;
	r.sum.max_total_ns = 250;
	r.sum.acquires = 52;
	r.sum.last_holder = 0; /* none named since: the last one stays */
	assert_int_equal(locks_merge(c, &r), 0);
	assert_int_equal(c->locktab.n_locks, 1);
	assert_int_equal(c->locktab.n_live, 1);
	assert_int_equal(l->delta.waits, 5);
	assert_int_equal(l->total.waits, 15);
	assert_int_equal(l->delta.wait_ns, 600);
	assert_int_equal(l->total.wait_ns, 1600);
	assert_int_equal(l->delta.acquires, 12);
	assert_int_equal(l->total.acquires, 52);
	assert_int_equal(l->delta.wait_hist[3], 2);
	assert_int_equal(l->delta.wait_hist[4], 3);
	assert_int_equal(l->total.wait_hist[3], 12);
	assert_int_equal(l->total.wait_hist[4], 3);
	assert_int_equal(l->delta.max_wait_ns, 250);
	assert_int_equal(l->total.max_wait_ns, 250);
	assert_int_equal(c->locktab.lstate[0].raw.last_holder, 1001);
	assert_int_equal(c->locktab.lstate[0].moved_at, 2000);
	assert_int_equal(c->snap.kind_delta[LT_KIND_FUTEX].waits, 5);
	assert_int_equal(c->snap.kind_total[LT_KIND_FUTEX].waits, 15);
	assert_int_equal(c->snap.kind_total[LT_KIND_FUTEX].wait_ns, 1600);
	lt_collector_close(c);
}

static void test_reclaimed_slot_keeps_totals(void **state)
{
	struct lt_collector *c = bare_collector();
	struct lt_lock_rec r = futex_rec(1000, 0x7f0010, 5);
	const struct lt_lock *l;

	(void)state;
	next_read(c, 1000);
	waited(&r, 10, 100, 3);
	r.sum.last_holder = 1001;
	assert_int_equal(locks_merge(c, &r), 0);
	c->snap.lock_entries = 1;

	/* Its slot went back: the slot leads nowhere, the row has none
	 * and counts from zero, and keeps its totals and holder. */
	reclaim_forget_row(c, SLOT_LOCK, 0, 5);
	l = &c->locktab.locks[0];
	assert_int_equal(c->slots.slot_row[5], -1);
	assert_int_equal(c->locktab.lstate[0].slot, -1);
	assert_int_equal(c->locktab.lstate[0].raw.waits, 0);
	assert_int_equal(c->locktab.lstate[0].raw.last_holder, 1001);
	assert_int_equal(c->snap.lock_entries, 0);
	assert_int_equal(l->total.waits, 10);

	/* The lock comes back in another slot, its counters anew. */
	next_read(c, 2000);
	r = futex_rec(1000, 0x7f0010, 9);
	waited(&r, 3, 100, 3);
	assert_int_equal(locks_merge(c, &r), 0);
	assert_int_equal(c->locktab.n_locks, 1);
	assert_int_equal(c->slots.slot_row[9], 0);
	assert_int_equal(c->locktab.lstate[0].slot, 9);
	assert_int_equal(l->id, 1);
	assert_int_equal(l->delta.waits, 3);
	assert_int_equal(l->total.waits, 13);
	assert_int_equal(l->delta.wait_ns, 300);
	assert_int_equal(l->total.wait_ns, 1300);
	assert_int_equal(l->delta.wait_hist[3], 3);
	assert_int_equal(l->total.wait_hist[3], 13);
	assert_int_equal(c->snap.kind_total[LT_KIND_FUTEX].waits, 13);
	lt_collector_close(c);
}

static void test_retire_quiet_ended_rows(void **state)
{
	const size_t n_ended = RETIRE_AT_ONCE + 44;
	struct lt_collector *c = bare_collector();
	struct lt_lock_rec r, live, late;
	uint64_t waits_before;
	size_t i;

	(void)state;
	c->opts.retire_s = 1;
	/* Read 1: the locks of processes that then end, and two more. */
	next_read(c, 1000);
	for (i = 0; i < n_ended; i++) {
		r = futex_rec(2000 + (__u32)i, 0x1000, (__u32)i);
		waited(&r, 1, 100, 3);
		assert_int_equal(locks_merge(c, &r), 0);
	}
	live = futex_rec(5000, 0x2000, (__u32)n_ended);
	late = futex_rec(5001, 0x3000, (__u32)n_ended + 1);
	waited(&live, 1, 100, 3);
	waited(&late, 1, 100, 3);
	assert_int_equal(locks_merge(c, &live), 0);
	assert_int_equal(locks_merge(c, &late), 0);
	assert_int_equal(c->locktab.n_locks, n_ended + 2);

	/* Read 2: the two move; the others' processes ended long ago
	 * (at time 1, the retire time is a second), and so has the last
	 * one's, but it moved in this read: it stays a read longer. */
	next_read(c, 2000);
	waited(&live, 2, 100, 3);
	waited(&late, 2, 100, 3);
	assert_int_equal(locks_merge(c, &live), 0);
	assert_int_equal(locks_merge(c, &late), 0);
	for (i = 0; i <= n_ended + 1; i++) {
		if (i == n_ended)
			continue;
		c->locktab.lstate[i].dead_at = 1;
		c->retire.n_dead++;
	}
	waits_before = c->snap.kind_total[LT_KIND_FUTEX].waits;

	retire_rows(c);
	assert_int_equal(c->locktab.n_locks, 2);
	assert_int_equal(c->retire.n_dead, 1);
	assert_int_equal(c->locktab.locks[0].id, n_ended + 1);
	assert_int_equal(c->locktab.locks[1].id, n_ended + 2);
	assert_int_equal(c->locktab.locks[0].total.waits, 2);
	assert_int_equal(c->locktab.lstate[1].dead_at, 1);
	/* Every position of a row is renumbered: slots, index, lists. */
	assert_int_equal(c->slots.slot_row[0], -1);
	assert_int_equal(c->slots.slot_row[n_ended - 1], -1);
	assert_int_equal(c->slots.slot_row[n_ended], 0);
	assert_int_equal(c->slots.slot_row[n_ended + 1], 1);
	assert_int_equal(lt_index_find(&c->locktab.lock_ix, &live.key,
				       c->locktab.lstate),
			 0);
	assert_int_equal(lt_index_find(&c->locktab.lock_ix, &late.key,
				       c->locktab.lstate),
			 1);
	r = futex_rec(2000, 0x1000, 0);
	assert_int_equal(lt_index_find(&c->locktab.lock_ix, &r.key,
				       c->locktab.lstate),
			 -1);
	assert_int_equal(c->locktab.n_live, 2);
	assert_int_equal(c->locktab.live[0], 0);
	assert_int_equal(c->locktab.live[1], 1);
	assert_int_equal(c->locktab.n_fresh, 2);
	/* The kind's totals keep the retired rows' figures. */
	assert_int_equal(c->snap.kind_total[LT_KIND_FUTEX].waits, waits_before);

	/* A lock that retired and comes back is a new row. */
	next_read(c, 3000);
	r = futex_rec(2000, 0x1000, 0);
	waited(&r, 1, 100, 3);
	assert_int_equal(locks_merge(c, &r), 0);
	assert_int_equal(c->locktab.n_locks, 3);
	assert_int_equal(c->locktab.locks[2].id, n_ended + 3);
	assert_int_equal(c->locktab.locks[2].total.waits, 1);
	lt_collector_close(c);
}

static void test_thread_processes(void **state)
{
	struct lt_collector *c = bare_collector();
	/* Threads that ended, as TID << 32 | tgid, in the order taken. */
	__u64 ended[] = { 900ULL << 32 | 90, 7ULL << 32 | 70,
			  500ULL << 32 | 50 };
	const __u32 gone = 0x7ffffff0; /* no such TID in /proc */

	(void)state;
	assert_int_equal(lt_index_init(&c->tidtab.tid_ix, sizeof(__u32),
				       sizeof(struct tid_entry)),
			 0);
	qsort(ended, 3, sizeof(ended[0]), tids_order);
	assert_int_equal(ended[0] >> 32, 7);
	assert_int_equal(tids_ended_tgid(ended, 3, 500), 50);
	assert_int_equal(tids_ended_tgid(ended, 3, 501), 0);
	assert_int_equal(tids_ended_tgid(NULL, 0, 500), 0);

	/* A live thread's process is read once, then remembered. */
	assert_int_equal(tids_tgid_of(c, (__u32)getpid()), getpid());
	assert_int_equal(c->tidtab.n_tids, 1);
	assert_int_equal(tids_tgid_of(c, (__u32)getpid()), getpid());
	assert_int_equal(c->tidtab.n_tids, 1);

	/* One /proc no longer has: by its exit, else taken for a PID. */
	c->exits.gone_tids = malloc(sizeof(ended));
	assert_non_null(c->exits.gone_tids);
	memcpy(c->exits.gone_tids, ended, sizeof(ended));
	c->exits.n_gone_tids = 3;
	assert_int_equal(tids_tgid_of(c, 900), 90);
	c->exits.stale_tids = malloc(sizeof(*c->exits.stale_tids));
	assert_non_null(c->exits.stale_tids);
	c->exits.stale_tids[0] = (__u64)gone << 32 | 4242;
	c->exits.n_stale_tids = 1;
	assert_int_equal(tids_tgid_of(c, gone), 4242);
	assert_int_equal(tids_tgid_of(c, gone - 1), (pid_t)(gone - 1));
	assert_int_equal(c->tidtab.n_tids, 1);
	lt_collector_close(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_merge_two_reads),
		cmocka_unit_test(test_reclaimed_slot_keeps_totals),
		cmocka_unit_test(test_retire_quiet_ended_rows),
		cmocka_unit_test(test_thread_processes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
