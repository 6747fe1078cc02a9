// SPDX-License-Identifier: GPL-2.0-or-later
/* Unit tests of the collector's pure helpers: no BPF needed. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <ftw.h>
#include <stdio.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <cmocka.h>
#include "collector.h"
#include <sys/mman.h>
#include "internal.h"
#include "providers.h"
#include "futex.h"

static void test_parse_file_mapping(void **state)
{
	char line[] = "7f1c2a000000-7f1c2a022000 r--p 00001000 fe:01 1234   "
		      "/usr/lib/x86_64-linux-gnu/libc.so.6\n";
	struct lt_vma v;

	(void)state;
	assert_int_equal(lt_parse_maps_line(line, &v), 0);
	assert_true(v.start == 0x7f1c2a000000ULL);
	assert_true(v.end == 0x7f1c2a022000ULL);
	assert_true(v.pgoff == 0x1000);
	/* The device as the kernel keeps it, as the probes see it. */
	assert_int_equal(v.dev, 0xfe << 20 | 1);
	assert_int_equal(v.ino, 1234);
	assert_string_equal(v.perms, "r--p");
	assert_string_equal(v.path, "/usr/lib/x86_64-linux-gnu/libc.so.6");
}

static void test_parse_anon_and_garbage(void **state)
{
	char anon[] = "7ffd1000-7ffd2000 rw-p 00000000 00:00 0 \n";
	char bare[] = "7ffd1000-7ffd2000 rw-p 00000000 00:00 0";
	char garbage[] = "not a maps line\n", empty[] = "";
	char cut[] = "7ffd1000-7ffd2000 rw-p 00000000 00:";
	char deleted[] = "10000-11000 rw-s 00002000 00:01 77 /dev/zero "
			 "(deleted)\n";
	struct lt_vma v;

	(void)state;
	assert_int_equal(lt_parse_maps_line(anon, &v), 0);
	assert_string_equal(v.path, "");
	assert_int_equal(v.ino, 0);
	assert_int_equal(lt_parse_maps_line(bare, &v), 0);
	assert_string_equal(v.path, "");
	assert_int_equal(lt_parse_maps_line(deleted, &v), 0);
	assert_string_equal(v.path, "/dev/zero (deleted)");
	assert_int_equal(v.ino, 77);
	assert_int_equal(v.dev, 1);
	assert_int_equal(lt_parse_maps_line(garbage, &v), -1);
	assert_int_equal(lt_parse_maps_line(empty, &v), -1);
	assert_int_equal(lt_parse_maps_line(cut, &v), -1);
}

static void test_names(void **state)
{
	struct lt_vma v = { .start = 0x1000, .end = 0x3000, .pgoff = 0x2000 };
	char buf[LT_NAME_LEN];

	(void)state;
	/* A private image: its base name and the offset in the file. */
	strcpy(v.perms, "rw-p");
	v.path = "/usr/lib/libc.so.6";
	lt_name_address(&v, 0x1040, buf, sizeof(buf));
	assert_string_equal(buf, "libc.so.6+0x2040");

	/* A shared data file keeps its path; a deleted one loses the tag. */
	strcpy(v.perms, "rw-s");
	v.path = "/tmp/table.db (deleted)";
	lt_name_address(&v, 0x1010, buf, sizeof(buf));
	assert_string_equal(buf, "/tmp/table.db+0x2010");

	v.path = "[heap]";
	lt_name_address(&v, 0x1ff0, buf, sizeof(buf));
	assert_string_equal(buf, "[heap]+0xff0");

	/* Anonymous memory: the mapping's start and the offset in it; a
	 * bare address only where no mapping covers it. */
	v.path = "";
	lt_name_address(&v, 0x1ff0, buf, sizeof(buf));
	assert_string_equal(buf, "[anon@0x1000]+0xff0");
	lt_name_address(NULL, 0xabc, buf, sizeof(buf));
	assert_string_equal(buf, "0xabc");
}

/* A site's label cut to a column keeps its process count whole. */
static void test_label_fit(void **state)
{
	struct lt_lock l = { .procs = 4 };
	char buf[LT_NAME_LEN + 32];

	(void)state;
	strcpy(l.name, "[anon@0x604000000000]+0x10");
	strcpy(l.comm, "sitelock");
	lt_lock_label_fit(&l, buf, sizeof(buf), 36);
	assert_int_equal(strlen(buf), 36);
	assert_string_equal(buf, "..@0x604000000000]+0x10 (4 sitelock)");
	lt_lock_label_fit(&l, buf, sizeof(buf), 60);
	assert_string_equal(buf, "[anon@0x604000000000]+0x10 (4 sitelock)");
	/* One process's lock, a file's: its end kept, as the screen keeps
	 * it, so that the chain names the lock. */
	l.procs = 1;
	strcpy(l.name, "/tmp/locktop-smb.2iKy8y/lock/locking.tdb chain 2954");
	lt_lock_label_fit(&l, buf, sizeof(buf), 36);
	assert_int_equal(strlen(buf), 36);
	assert_string_equal(buf, "..2iKy8y/lock/locking.tdb chain 2954");
	/* A name of wider characters is left whole, for the table to cut. */
	strcpy(l.name, "/srv/d\xc3\xa9p\xc3\xb4t/lock/locking.tdb chain 2954");
	lt_lock_label_fit(&l, buf, sizeof(buf), 10);
	assert_string_equal(buf, l.name);
}

/* The probe's record names anonymous memory as the live maps do. */
static void test_name_where(void **state)
{
	struct lt_where w = { .vm_start = 0x1000 };
	struct lt_vma v = { .start = 0x1000, .end = 0x3000, .path = "" };
	char live[LT_NAME_LEN], gone[LT_NAME_LEN];

	(void)state;
	strcpy(v.perms, "rw-p");
	assert_true(lt_name_where(&w, 0x1ff0, gone, sizeof(gone)));
	lt_name_address(&v, 0x1ff0, live, sizeof(live));
	assert_string_equal(gone, live);
	w.flags = LT_VMA_HEAP;
	v.path = "[heap]";
	assert_true(lt_name_where(&w, 0x1ff0, gone, sizeof(gone)));
	lt_name_address(&v, 0x1ff0, live, sizeof(live));
	assert_string_equal(gone, "[heap]+0xff0");
	assert_string_equal(gone, live);
	/* A shared file is named by its path, which the record lacks. */
	w.flags = LT_VMA_FILE | LT_VMA_SHARED;
	assert_false(lt_name_where(&w, 0x1ff0, gone, sizeof(gone)));
}

/* A place in an image keys judgements shared by every process mapping
 * it; writable or anonymous memory keys none. */
static void test_image_memo(void **state)
{
	struct lt_vma code = { .start = 0x1000,
			       .end = 0x3000,
			       .pgoff = 0x4000,
			       .ino = 9,
			       .dev = 3,
			       .path = "/lib/x.so" };
	struct lt_vma heap = { .start = 0x1000, .end = 0x3000, .path = "" };
	struct {
		struct lt_image_key k;
		int v;
	} * st, *st2;
	struct lt_image_memo m = { 0 };
	struct lt_image_key k, k2;
	bool created;

	(void)state;
	strcpy(code.perms, "r-xp");
	strcpy(heap.perms, "rw-p");
	assert_true(lt_image_key_of(&code, 0x1010, 0, &k));
	assert_true(k.off == 0x4010 && k.ino == 9 && k.dev == 3);
	assert_false(lt_image_key_of(&heap, 0x1010, 0, &k2));
	assert_false(lt_image_key_of(&code, 0x3000, 0, &k2));
	strcpy(code.perms, "rw-p");
	assert_false(lt_image_key_of(&code, 0x1010, 0, &k2));
	st = lt_image_memo_state(&m, sizeof(*st), &k, &created);
	assert_non_null(st);
	assert_true(created);
	st->v = 7;
	/* The same place mapped elsewhere in another process. */
	strcpy(code.perms, "r-xp");
	code.start = 0x7000;
	code.end = 0x9000;
	assert_true(lt_image_key_of(&code, 0x7010, 0, &k2));
	st2 = lt_image_memo_state(&m, sizeof(*st2), &k2, &created);
	assert_false(created);
	assert_int_equal(st2->v, 7);
	lt_image_memo_free(&m);
}

static void test_format_ns(void **state)
{
	char b[16];

	(void)state;
	assert_string_equal(lt_format_ns(999, b, sizeof(b)), "999ns");
	assert_string_equal(lt_format_ns(1500, b, sizeof(b)), "1.5us");
	assert_string_equal(lt_format_ns(812300000, b, sizeof(b)), "812.3ms");
	assert_string_equal(lt_format_ns(2500000000ULL, b, sizeof(b)), "2.50s");
}

static void test_quantile(void **state)
{
	uint64_t h[LT_HIST_BUCKETS] = { 0 };

	(void)state;
	assert_true(lt_hist_quantile(h, LT_HIST_BUCKETS, 0.5) == 0);
	h[10] = 90; /* [1024, 2048) ns */
	h[20] = 10; /* [1 Mi, 2 Mi) ns */
	assert_true(lt_hist_quantile(h, LT_HIST_BUCKETS, 0.5) == 2047);
	assert_true(lt_hist_quantile(h, LT_HIST_BUCKETS, 0.90) == 2047);
	assert_true(lt_hist_quantile(h, LT_HIST_BUCKETS, 0.99) ==
		    (2u << 20) - 1);
}

/* Untimed holds count at the mean of the interval's samples, else of the
 * lock's samples so far, else not at all. */
static void test_hold_estimate(void **state)
{
	(void)state;
	assert_int_equal(lt_hold_estimate(0, 4, 4000, 4, 4000), 0);
	assert_int_equal(lt_hold_estimate(15, 1, 1000, 9, 90000), 15000);
	assert_int_equal(lt_hold_estimate(30, 0, 0, 4, 2000), 15000);
	assert_int_equal(lt_hold_estimate(3, 2, 3, 2, 3),
			 5); /* 4.5 rounds up */
	assert_int_equal(lt_hold_estimate(7, 0, 0, 0, 0), 0);
}

static void test_kinds(void **state)
{
	(void)state;
	assert_string_equal(lt_kind_name(LT_KIND_FUTEX), "futex");
	assert_string_equal(lt_kind_name(LT_KIND_FUTEX_COND), "futex-cond");
	assert_string_equal(lt_kind_name(LT_KIND_FUTEX_PI), "futex-pi");
	assert_string_equal(lt_kind_name(LT_KIND_OFD), "ofd");
	assert_string_equal(lt_kind_name(LT_KIND_NR), "?");
	assert_int_equal(lt_kind_parse("flock"), LT_KIND_FLOCK);
	assert_int_equal(lt_kind_parse("futex-cond"), LT_KIND_FUTEX_COND);
	assert_int_equal(lt_kind_parse("nonsense"), -1);
	assert_true(lt_kind_is_lock(LT_KIND_FUTEX));
	assert_false(lt_kind_is_lock(LT_KIND_FUTEX_COND));
}

/* Every probe of the table of providers has a cookie and a named kind. */
static void test_providers(void **state)
{
	const struct lt_provider_probe *p;
	uint64_t cookie;
	size_t i;

	(void)state;
	assert_int_equal(lt_kind_parse("pg-lwlock"), LT_KIND_PG_LWLOCK);
	assert_int_equal(lt_kind_parse("pg-lock"), LT_KIND_PG_LOCK);
	assert_true(lt_kind_is_lock(LT_KIND_PG_LWLOCK));
	assert_true(lt_kind_is_lock(LT_KIND_PG_LOCK));
	for (i = 0; i < lt_n_provider_probes; i++) {
		p = &lt_provider_probes[i];
		cookie = lt_provider_cookie(p);
		assert_true(cookie != 0);
		assert_int_equal(LT_USDT_COOKIE_KIND(cookie), p->kind);
		assert_int_equal(LT_USDT_COOKIE_EVENT(cookie), p->event);
		assert_non_null(lt_provider_kind_of(p->kind));
	}
	cookie = lt_provider_cookie(&lt_provider_probes[0]); /* lwlock start */
	assert_int_equal(LT_USDT_COOKIE_ARG(cookie, 0), LT_ARG_NAME);
	assert_int_equal(LT_USDT_COOKIE_ARG(cookie, 1), LT_ARG_MODE);
	assert_int_equal(LT_USDT_COOKIE_ARG(cookie, 2), LT_ARG_NONE);
	cookie = lt_provider_cookie(&lt_provider_probes[2]); /* lock start */
	assert_int_equal(LT_USDT_COOKIE_ARG(cookie, 3), LT_ARG_F4);
	assert_int_equal(LT_USDT_COOKIE_ARG(cookie, 4), LT_ARG_TYPE);
	assert_int_equal(LT_USDT_COOKIE_ARG(cookie, 5), LT_ARG_MODE);
	/* A context row: its kind says where the object's fields, name
	 * and file are; a binary without its symbols has no context. */
	for (i = 0; i < lt_n_provider_contexts; i++) {
		const struct lt_provider_context *pc = &lt_provider_contexts[i];
		struct lt_usdt_ctx_site site;

		assert_non_null(lt_provider_kind_of(pc->kind));
		assert_true(lt_provider_kind_of(pc->kind)->object_at[1] != 0);
		assert_true(
			lt_provider_kind_of(pc->kind)->object_at[LT_AT_NAME] !=
			0);
		assert_true(pc->fn_at != pc->arg_at);
		assert_int_equal(lt_usdt_ctx_site("/nonexistent", pc, &site),
				 -1);
		assert_int_equal(lt_usdt_ctx_site("/bin/true", pc, &site), -1);
	}
	/* A row whose arguments do not parse is not attached. */
	p = &(struct lt_provider_probe){
		"x", "y", "z", LT_USDT_START, LT_KIND_PG_LOCK, "f1,bogus", true
	};
	assert_true(lt_provider_cookie(p) == 0);
	p = &(struct lt_provider_probe){ "x",		"y",	       "z",
					 LT_USDT_START, LT_KIND_FUTEX, "name",
					 true };
	assert_true(lt_provider_cookie(p) == 0);
	assert_null(lt_provider_kind_of(LT_KIND_FUTEX));
}

static bool everything(const struct lt_lock *l, void *arg)
{
	(void)l;
	(void)arg;
	return true;
}

static void test_top(void **state)
{
	struct lt_lock locks[6] = { 0 };
	struct lt_snapshot s = { .n_locks = 6, .locks = locks };
	const struct lt_lock *out[10];
	struct lt_figures other;
	uint64_t ns[6] = { 50, 10, 70, 30, 20, 60 };
	size_t i, n;

	(void)state;
	for (i = 0; i < 6; i++) {
		locks[i].id = i + 1;
		locks[i].kind = LT_KIND_FUTEX;
		locks[i].delta.waits = 1;
		locks[i].delta.wait_ns = ns[i];
	}
	locks[2].kind = LT_KIND_FUTEX_COND; /* 70: hidden by default */

	n = lt_snapshot_top(&s, false, 3, NULL, NULL, out, &other);
	assert_int_equal(n, 3);
	assert_true(out[0]->delta.wait_ns == 60);
	assert_true(out[1]->delta.wait_ns == 50);
	assert_true(out[2]->delta.wait_ns == 30);
	assert_true(other.wait_ns == 30 && other.waits == 2);

	n = lt_snapshot_top(&s, false, 3, everything, NULL, out, &other);
	assert_true(out[0]->delta.wait_ns == 70);
	assert_true(other.wait_ns == 60 && other.waits == 3);

	n = lt_snapshot_top(&s, false, 10, NULL, NULL, out, NULL);
	assert_int_equal(n, 5);
}

#define CYCLES_ROOM 8

/* The deadlocks among edges, with room for CYCLES_ROOM. */
static size_t cycles(const struct lt_wait_edge *edges, size_t n,
		     struct lt_deadlock *out)
{
	memset(out, 0, CYCLES_ROOM * sizeof(*out));
	return lt_find_cycles(edges, n, out, CYCLES_ROOM);
}

/* d holds members pids[0..n), each waiting on locks[i], in that order. */
static void assert_cycle(const struct lt_deadlock *d, size_t n,
			 const pid_t *pids, const uint64_t *locks)
{
	size_t i;

	assert_int_equal(d->n, n);
	for (i = 0; i < n; i++) {
		assert_int_equal(d->pids[i], pids[i]);
		assert_int_equal(d->locks[i], locks[i]);
		assert_string_equal(d->comms[i], "");
	}
}

static void test_cycles_none(void **state)
{
	const struct lt_wait_edge chain[] = {
		{ 1, 2, 10 },
		{ 2, 3, 20 },
		{ 3, 4, 30 },
		{ 5, 3, 40 },
	};
	/* A holder not known (0 or less) ends the walk. */
	const struct lt_wait_edge unknown[] = {
		{ 1, 0, 10 },
		{ 2, -1, 20 },
		{ 3, 1, 30 },
		{ 4, 2, 40 },
	};
	struct lt_deadlock out[CYCLES_ROOM];

	(void)state;
	assert_int_equal(cycles(NULL, 0, out), 0);
	assert_int_equal(cycles(chain, 4, out), 0);
	assert_int_equal(cycles(unknown, 4, out), 0);
	assert_int_equal(lt_find_cycles(chain, 4, NULL, 0), 0);
}

static void test_cycles_two_and_three(void **state)
{
	const struct lt_wait_edge two[] = { { 20, 10, 2 }, { 10, 20, 1 } };
	const struct lt_wait_edge three[] = {
		{ 5, 7, 100 },
		{ 7, 3, 200 },
		{ 3, 5, 300 },
	};
	struct lt_deadlock out[CYCLES_ROOM];

	(void)state;
	/* Each member's walk finds it; it is reported once, from the
	 * first edge, members in the order of the walk. */
	assert_int_equal(cycles(two, 2, out), 1);
	assert_cycle(&out[0], 2, (pid_t[]){ 20, 10 }, (uint64_t[]){ 2, 1 });
	assert_int_equal(cycles(three, 3, out), 1);
	assert_cycle(&out[0], 3, (pid_t[]){ 5, 7, 3 },
		     (uint64_t[]){ 100, 200, 300 });
}

static void test_cycles_disjoint(void **state)
{
	const struct lt_wait_edge edges[] = {
		{ 1, 2, 12 }, { 3, 4, 34 }, { 2, 1, 21 },
		{ 4, 5, 45 }, { 5, 3, 53 }, { 6, 7, 67 },
	};
	struct lt_deadlock out[CYCLES_ROOM];

	(void)state;
	assert_int_equal(cycles(edges, 6, out), 2);
	assert_cycle(&out[0], 2, (pid_t[]){ 1, 2 }, (uint64_t[]){ 12, 21 });
	assert_cycle(&out[1], 3, (pid_t[]){ 3, 4, 5 },
		     (uint64_t[]){ 34, 45, 53 });
}

static void test_cycles_tail(void **state)
{
	/* 9 and 8 wait on a deadlocked pair, and are not part of it. */
	const struct lt_wait_edge edges[] = {
		{ 9, 8, 98 },
		{ 8, 1, 81 },
		{ 1, 2, 12 },
		{ 2, 1, 21 },
	};
	struct lt_deadlock out[CYCLES_ROOM];

	(void)state;
	assert_int_equal(cycles(edges, 4, out), 1);
	assert_cycle(&out[0], 2, (pid_t[]){ 1, 2 }, (uint64_t[]){ 12, 21 });
}

static void test_cycles_self_and_duplicates(void **state)
{
	/* A process waiting on itself is no deadlock between processes. */
	const struct lt_wait_edge self[] = { { 4, 4, 44 } };
	const struct lt_wait_edge mixed[] = {
		{ 4, 4, 44 }, { 1, 2, 12 }, { 1, 2, 12 },
		{ 2, 1, 21 }, { 2, 1, 21 }, { 4, 4, 44 },
	};
	/* A process met again takes its first edge: 3 -> 1 is a second
	 * cycle through 1, reported as its lowest PID is new. */
	const struct lt_wait_edge branch[] = {
		{ 5, 6, 56 },
		{ 5, 3, 53 },
		{ 6, 5, 65 },
		{ 3, 5, 35 },
	};
	struct lt_deadlock out[CYCLES_ROOM];

	(void)state;
	assert_int_equal(cycles(self, 1, out), 0);
	assert_int_equal(cycles(mixed, 6, out), 1);
	assert_cycle(&out[0], 2, (pid_t[]){ 1, 2 }, (uint64_t[]){ 12, 21 });
	assert_int_equal(cycles(branch, 4, out), 2);
	assert_cycle(&out[0], 2, (pid_t[]){ 5, 6 }, (uint64_t[]){ 56, 65 });
	assert_cycle(&out[1], 2, (pid_t[]){ 5, 3 }, (uint64_t[]){ 53, 35 });
}

/* A ring of n processes from first, each waiting on the next. */
static void ring(struct lt_wait_edge *edges, size_t n, pid_t first)
{
	size_t i;

	for (i = 0; i < n; i++) {
		edges[i].waiter = first + (pid_t)i;
		edges[i].holder = first + (pid_t)((i + 1) % n);
		edges[i].lock = 1000 + i;
	}
}

static void test_cycles_bounds(void **state)
{
	struct lt_wait_edge edges[LT_CYCLE_MAX + 1 + 6];
	struct lt_deadlock out[CYCLES_ROOM];
	size_t i;

	(void)state;
	/* A deadlock of LT_CYCLE_MAX members is found, a longer one not. */
	ring(edges, LT_CYCLE_MAX, 1);
	assert_int_equal(cycles(edges, LT_CYCLE_MAX, out), 1);
	assert_int_equal(out[0].n, LT_CYCLE_MAX);
	for (i = 0; i < LT_CYCLE_MAX; i++) {
		assert_int_equal(out[0].pids[i], 1 + (pid_t)i);
		assert_int_equal(out[0].locks[i], 1000 + i);
	}
	ring(edges, LT_CYCLE_MAX + 1, 1);
	assert_int_equal(cycles(edges, LT_CYCLE_MAX + 1, out), 0);

	/* Three pairs, with room for two: two written, and max + 1 says
	 * there was more; with room for all, the same two come first. */
	ring(edges, 2, 10);
	ring(edges + 2, 2, 20);
	ring(edges + 4, 2, 30);
	memset(out, 0, sizeof(out));
	assert_int_equal(lt_find_cycles(edges, 6, out, 2), 3);
	assert_cycle(&out[0], 2, (pid_t[]){ 10, 11 },
		     (uint64_t[]){ 1000, 1001 });
	assert_cycle(&out[1], 2, (pid_t[]){ 20, 21 },
		     (uint64_t[]){ 1000, 1001 });
	assert_int_equal(out[2].n, 0);
	assert_int_equal(lt_find_cycles(edges, 6, NULL, 0), 1);
	assert_int_equal(lt_find_cycles(edges, 6, out, 3), 3);
	assert_cycle(&out[2], 2, (pid_t[]){ 30, 31 },
		     (uint64_t[]){ 1000, 1001 });
}

static void *wait_on_pipe(void *arg)
{
	char c;

	return read(*(int *)arg, &c, 1) < 0 ? arg : NULL;
}

/* Threads and kernel threads from /proc, with a comm that holds the
 * stat file's ") ". */
static void test_proc_threads(void **state)
{
	char comm[16] = "";
	siginfo_t info;
	pid_t zombie;
	pthread_t t;
	int fds[2];

	(void)state;
	assert_int_equal(prctl(PR_GET_NAME, comm), 0);
	assert_int_equal(prctl(PR_SET_NAME, "a) b 7 (c"), 0);
	assert_int_equal(lt_proc_threads(getpid()), 1);
	assert_int_equal(pipe(fds), 0);
	assert_int_equal(pthread_create(&t, NULL, wait_on_pipe, &fds[0]), 0);
	assert_int_equal(lt_proc_threads(getpid()), 2);
	assert_int_equal(write(fds[1], "x", 1), 1);
	assert_int_equal(pthread_join(t, NULL), 0);
	close(fds[0]);
	close(fds[1]);
	prctl(PR_SET_NAME, comm);
	/* A process that is gone counts as one. */
	assert_int_equal(lt_proc_threads(INT_MAX), 1);
	/* kthreadd is a kernel thread; this process, and one ended but
	 * not yet reaped (no memory left, empty maps), are not. */
	assert_true(lt_proc_is_kthread(2));
	assert_false(lt_proc_is_kthread(getpid()));
	assert_false(lt_proc_is_kthread(INT_MAX));
	zombie = fork();
	if (zombie == 0)
		_exit(0);
	assert_true(zombie > 0);
	/* Until it has ended, not reaping it. */
	assert_int_equal(waitid(P_PID, (id_t)zombie, &info, WEXITED | WNOWAIT),
			 0);
	assert_false(lt_proc_is_kthread(zombie));
	assert_int_equal(waitpid(zombie, NULL, 0), zombie);
}

/* Kernel symbols: the one an address falls in, data bounds, lock text. */
static void test_ksyms(void **state)
{
	char path[] = "/tmp/unit-ksyms.XXXXXX";
	static const char text[] = "ffffffff81000000 T _stext\n"
				   "ffffffff81000100 T do_thing\n"
				   "ffffffff82000000 T __lock_text_start\n"
				   "ffffffff82000010 T _raw_spin_lock\n"
				   "ffffffff82000100 T __lock_text_end\n"
				   "ffffffff83000000 D _sdata\n"
				   "ffffffff83000040 d file_rwsem\n"
				   "ffffffff84000000 B _end\n"
				   "ffffffffc0000000 t mod_fn\t[mod]\n"
				   "0000000000000000 T hidden\n";
	struct lt_ksyms *k;
	const char *name;
	uint64_t off;
	char type;
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, sizeof(text) - 1),
			 (ssize_t)sizeof(text) - 1);
	close(fd);
	k = lt_ksyms_load(path);
	unlink(path);
	assert_non_null(k);
	name = lt_ksyms_find(k, 0xffffffff81000123ULL, &type, &off);
	assert_string_equal(name, "do_thing");
	assert_int_equal(type, 'T');
	assert_int_equal(off, 0x23);
	name = lt_ksyms_find(k, 0xffffffff83000048ULL, &type, &off);
	assert_string_equal(name, "file_rwsem");
	assert_int_equal(off, 8);
	assert_true(lt_ksyms_static(k, 0xffffffff83000048ULL));
	assert_false(lt_ksyms_static(k, 0xffff888100000000ULL));
	assert_true(lt_ksyms_lock_text(k, 0xffffffff82000020ULL));
	assert_false(lt_ksyms_lock_text(k, 0xffffffff81000123ULL));
	assert_string_equal(
		lt_ksyms_find(k, 0xffffffffc0000004ULL, &type, &off), "mod_fn");
	assert_null(lt_ksyms_find(k, 0x1000, &type, &off));
	lt_ksyms_free(k);
}

/* Writes text into a new temporary file named by path (a template). */
static void write_tmp(char *path, const char *text)
{
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

/*
 * Without data symbols in kallsyms, a System.map gives them, moved by
 * KASLR's offset (here 0x19000000); one of another build is refused.
 */
static void test_ksyms_map(void **state)
{
	char kall[] = "/tmp/unit-kall.XXXXXX", map[] = "/tmp/unit-map.XXXXXX";
	char other[] = "/tmp/unit-map.XXXXXX";
	static const char kallsyms[] = "ffffffff9a000000 T _stext\n"
				       "ffffffff9a000000 T _text\n"
				       "ffffffff9a000100 T do_thing\n"
				       "ffffffff9b400000 D __start_rodata\n"
				       "ffffffff9c000000 T start_kernel\n";
	static const char sysmap[] = "ffffffff81000000 T _stext\n"
				     "ffffffff81000000 T _text\n"
				     "ffffffff81000100 T do_thing\n"
				     "ffffffff82400000 D __start_rodata\n"
				     "ffffffff83000000 T start_kernel\n"
				     "ffffffff83100000 D _sdata\n"
				     "ffffffff83100040 d file_rwsem\n"
				     "ffffffff83100080 b spare\n"
				     "ffffffff84000000 B _end\n";
	static const char otherbuild[] = "ffffffff81000000 T _text\n"
					 "ffffffff83000010 T start_kernel\n"
					 "ffffffff83100000 D _sdata\n"
					 "ffffffff83100040 d file_rwsem\n"
					 "ffffffff84000000 B _end\n";
	const uint64_t lock = 0xffffffff9c100048ULL;
	struct lt_ksyms *k;
	const char *name;
	uint64_t off;
	char type;

	(void)state;
	write_tmp(kall, kallsyms);
	write_tmp(map, sysmap);
	write_tmp(other, otherbuild);
	k = lt_ksyms_load(kall);
	assert_non_null(k);
	assert_false(lt_ksyms_static(k, lock));
	assert_int_equal(lt_ksyms_add_map(k, other), -1);
	assert_false(lt_ksyms_static(k, lock));
	assert_int_equal(lt_ksyms_add_map(k, "/nonexistent/System.map"), -1);
	assert_int_equal(lt_ksyms_add_map(k, map), 0);
	assert_true(lt_ksyms_static(k, lock));
	name = lt_ksyms_find(k, lock, &type, &off);
	assert_string_equal(name, "file_rwsem");
	assert_int_equal(type, 'd');
	assert_int_equal(off, 8);
	/* The text stays kallsyms' own. */
	name = lt_ksyms_find(k, 0xffffffff9a000104ULL, &type, &off);
	assert_string_equal(name, "do_thing");
	assert_int_equal(off, 4);
	assert_false(lt_ksyms_static(k, 0xffffffff9a000104ULL));
	lt_ksyms_free(k);
	unlink(kall);
	unlink(map);
	unlink(other);
}

/* Writes len bytes to dir/rel, making its directories. */
static void put_file(const char *dir, const char *rel, size_t len)
{
	char path[PATH_MAX], *slash;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	for (slash = path + strlen(dir) + 1; (slash = strchr(slash, '/'));
	     slash++) {
		*slash = '\0';
		assert_true(!mkdir(path, 0700) || errno == EEXIST);
		*slash = '/';
	}
	f = fopen(path, "w");
	assert_non_null(f);
	while (len--)
		fputc('x', f);
	fclose(f);
}

static int remove_entry(const char *path, const struct stat *st, int flag,
			struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/*
 * A PostgreSQL relation's file under a data directory: by its
 * tablespace, database and file number; one without data (a rewritten
 * relation's old file) or missing is none.
 */
static void test_relation_file(void **state)
{
	char dir[] = "/tmp/unit-pgdata.XXXXXX", out[128];

	(void)state;
	assert_non_null(mkdtemp(dir));
	put_file(dir, "base/5/16420", 8192);
	put_file(dir, "base/5/16397", 0);
	put_file(dir, "global/1262", 8192);
	put_file(dir, "pg_tblspc/17000/PG_14_202107181/5/17001", 0);
	put_file(dir, "pg_tblspc/17000/PG_15_202209061/5/17001", 8192);
	assert_true(lt_relation_file(dir, 1663, 5, 16420, out, sizeof(out)));
	assert_string_equal(out, "base/5/16420");
	assert_false(lt_relation_file(dir, 1663, 5, 16397, out, sizeof(out)));
	assert_false(lt_relation_file(dir, 1663, 5, 16398, out, sizeof(out)));
	assert_false(lt_relation_file(dir, 1663, 6, 16420, out, sizeof(out)));
	assert_true(lt_relation_file(dir, 1664, 0, 1262, out, sizeof(out)));
	assert_string_equal(out, "global/1262");
	assert_false(lt_relation_file(dir, 1664, 0, 1263, out, sizeof(out)));
	/* A tablespace: the version's directory that has the file. */
	assert_true(lt_relation_file(dir, 17000, 5, 17001, out, sizeof(out)));
	assert_string_equal(out, "pg_tblspc/17000/PG_15_202209061/5/17001");
	assert_false(lt_relation_file(dir, 17000, 5, 17002, out, sizeof(out)));
	assert_false(lt_relation_file(dir, 17001, 5, 17001, out, sizeof(out)));
	assert_int_equal(nftw(dir, remove_entry, 8, FTW_DEPTH | FTW_PHYS), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_file_mapping),
		cmocka_unit_test(test_parse_anon_and_garbage),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_name_where),
		cmocka_unit_test(test_label_fit),
		cmocka_unit_test(test_image_memo),
		cmocka_unit_test(test_format_ns),
		cmocka_unit_test(test_ksyms),
		cmocka_unit_test(test_ksyms_map),
		cmocka_unit_test(test_quantile),
		cmocka_unit_test(test_hold_estimate),
		cmocka_unit_test(test_kinds),
		cmocka_unit_test(test_top),
		cmocka_unit_test(test_cycles_none),
		cmocka_unit_test(test_cycles_two_and_three),
		cmocka_unit_test(test_cycles_disjoint),
		cmocka_unit_test(test_cycles_tail),
		cmocka_unit_test(test_cycles_self_and_duplicates),
		cmocka_unit_test(test_cycles_bounds),
		cmocka_unit_test(test_proc_threads),
		cmocka_unit_test(test_providers),
		cmocka_unit_test(test_relation_file),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
