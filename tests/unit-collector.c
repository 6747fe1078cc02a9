// SPDX-License-Identifier: GPL-2.0-or-later
/* Unit tests of the collector's pure helpers: no BPF needed. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <cmocka.h>
#include "collector.h"
#include "internal.h"

static void test_parse_file_mapping(void **state)
{
	struct lt_vma v;

	(void)state;
	assert_int_equal(
		lt_parse_maps_line("7f1c2a000000-7f1c2a022000 r--p "
				   "00001000 fe:01 1234   "
				   "/usr/lib/x86_64-linux-gnu/libc.so.6\n",
				   &v),
		0);
	assert_true(v.start == 0x7f1c2a000000ULL);
	assert_true(v.end == 0x7f1c2a022000ULL);
	assert_true(v.pgoff == 0x1000);
	assert_string_equal(v.perms, "r--p");
	assert_string_equal(v.path, "/usr/lib/x86_64-linux-gnu/libc.so.6");
}

static void test_parse_anon_and_garbage(void **state)
{
	struct lt_vma v;

	(void)state;
	assert_int_equal(lt_parse_maps_line("7ffd1000-7ffd2000 rw-p 00000000 "
					    "00:00 0 \n",
					    &v),
			 0);
	assert_string_equal(v.path, "");
	assert_int_equal(lt_parse_maps_line("not a maps line\n", &v), -1);
	assert_int_equal(lt_parse_maps_line("", &v), -1);
}

static void test_names(void **state)
{
	struct lt_vma v = { .start = 0x1000, .end = 0x3000, .pgoff = 0x2000 };
	char buf[LT_NAME_LEN];

	(void)state;
	/* A private image: its base name and the offset in the file. */
	strcpy(v.perms, "rw-p");
	strcpy(v.path, "/usr/lib/libc.so.6");
	lt_name_address(&v, 0x1040, buf, sizeof(buf));
	assert_string_equal(buf, "libc.so.6+0x2040");

	/* A shared data file keeps its path; a deleted one loses the tag. */
	strcpy(v.perms, "rw-s");
	strcpy(v.path, "/tmp/table.db (deleted)");
	lt_name_address(&v, 0x1010, buf, sizeof(buf));
	assert_string_equal(buf, "/tmp/table.db+0x2010");

	strcpy(v.path, "[heap]");
	lt_name_address(&v, 0x1ff0, buf, sizeof(buf));
	assert_string_equal(buf, "[heap]+0xff0");

	v.path[0] = '\0';
	lt_name_address(&v, 0x1ff0, buf, sizeof(buf));
	assert_string_equal(buf, "0x1ff0");
	lt_name_address(NULL, 0xabc, buf, sizeof(buf));
	assert_string_equal(buf, "0xabc");
}

static void test_vma_find(void **state)
{
	struct lt_vma v[3] = {
		{ .start = 0x1000, .end = 0x2000 },
		{ .start = 0x2000, .end = 0x4000 },
		{ .start = 0x8000, .end = 0x9000 },
	};
	struct lt_vmas vm = { .pid = 1, .v = v, .n = 3 };

	(void)state;
	assert_ptr_equal(lt_vmas_find(&vm, 0x1000), &v[0]);
	assert_ptr_equal(lt_vmas_find(&vm, 0x1fff), &v[0]);
	assert_ptr_equal(lt_vmas_find(&vm, 0x2000), &v[1]);
	assert_ptr_equal(lt_vmas_find(&vm, 0x8fff), &v[2]);
	assert_null(lt_vmas_find(&vm, 0x4000));
	assert_null(lt_vmas_find(&vm, 0x9000));
	assert_null(lt_vmas_find(&vm, 0x10));
}

static void test_vmas_of_self(void **state)
{
	static int here;
	struct lt_vmas vm;
	const struct lt_vma *v;

	(void)state;
	assert_int_equal(lt_vmas_load(getpid(), &vm), 0);
	assert_true(vm.n > 3);
	v = lt_vmas_find(&vm, (uint64_t)(uintptr_t)&here);
	assert_non_null(v);
	assert_non_null(strstr(v->path, "unit-collector"));
	lt_vmas_free(&vm);
	assert_int_equal(lt_vmas_load(-5, &vm), -ENOENT);
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

static void *wait_on_pipe(void *arg)
{
	char c;

	return read(*(int *)arg, &c, 1) < 0 ? arg : NULL;
}

/* Threads from /proc, with a comm that holds the stat file's ") ". */
static void test_proc_threads(void **state)
{
	char comm[16] = "";
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
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_file_mapping),
		cmocka_unit_test(test_parse_anon_and_garbage),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_vma_find),
		cmocka_unit_test(test_vmas_of_self),
		cmocka_unit_test(test_format_ns),
		cmocka_unit_test(test_quantile),
		cmocka_unit_test(test_hold_estimate),
		cmocka_unit_test(test_kinds),
		cmocka_unit_test(test_top),
		cmocka_unit_test(test_proc_threads),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
