// SPDX-License-Identifier: GPL-2.0-or-later
/* Unit tests of the record format's pure helpers: the normalised lock keys,
 * what the loader keeps of a kernel lock, and locktop diff's metrics. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "record.h"

struct key_case {
	const char *key;
	const char *want;
};

static void check_keys(const struct key_case *c, size_t n, size_t len)
{
	char out[2 * LT_NAME_LEN];
	size_t i;

	assert_true(len <= sizeof(out));
	for (i = 0; i < n; i++) {
		memset(out, 'X', sizeof(out));
		record_normalize_key(c[i].key, out, len);
		assert_string_equal(out, c[i].want);
	}
}

/* A file's directories and " (deleted)" go; other names stay as they are. */
static void test_files(void **state)
{
	static const struct key_case c[] = {
		{ "futex:/srv/db/t.tdb+0x1000", "futex:t.tdb+0x1000" },
		{ "futex:libc.so.6+0x2040", "futex:libc.so.6+0x2040" },
		{ "futex:[heap]+0x40", "futex:[heap]+0x40" },
		{ "kernel:rtnl_mutex", "kernel:rtnl_mutex" },
		{ "fcntl:x (deleted) (deleted)", "fcntl:x" },
		{ "fcntl:t.tdb (deleted", "fcntl:t.tdb (deleted" },
		{ "fcntl:/tmp (deleted)/x", "fcntl:x" },
		{ "fcntl:/", "fcntl:" },
		{ "/dir/file:4096", "/dir/file:4096" },
		{ "", "" },
	};

	(void)state;
	check_keys(c, sizeof(c) / sizeof(c[0]), LT_NAME_LEN);
}

/* lockbench's mkstemp table name, wherever a name starts, and only there. */
static void test_lockbench(void **state)
{
	static const struct key_case c[] = {
		{ "fcntl:/tmp/lockbench-Ab3dE9.tdb (deleted)+0x1000",
		  "fcntl:lockbench-*.tdb+0x1000" },
		{ "fcntl:lockbench-zz81Qx.tdb+0x1000",
		  "fcntl:lockbench-*.tdb+0x1000" },
		{ "futex:/tmp/lockbench-Ab3dE9.tdb+0x1040",
		  "futex:lockbench-*.tdb+0x1040" },
		{ "flock:/a/b/lockbench-000000.tdb (deleted)",
		  "flock:lockbench-*.tdb" },
		{ "lockbench-Ab3dE9.tdb", "lockbench-*.tdb" },
		{ "a/lockbench-Ab3dE9.tdb", "a/lockbench-*.tdb" },
		{ "fcntl:lockbench-aaaaaa.tdb:lockbench-bbbbbb.tdb",
		  "fcntl:lockbench-*.tdb:lockbench-*.tdb" },
		{ "fcntl:lockbench-Ab3dE9.tdbx", "fcntl:lockbench-*.tdbx" },
		/* Not a name's start, in the key as given. */
		{ "fcntl:mylockbench-Ab3dE9.tdb:0",
		  "fcntl:mylockbench-Ab3dE9.tdb:0" },
		{ " (deleted)lockbench-Ab3dE9.tdb", "lockbench-Ab3dE9.tdb" },
		/* Not six letters or digits and ".tdb". */
		{ "fcntl:lockbench-Ab3dE.tdb:0",
		  "fcntl:lockbench-Ab3dE.tdb:0" },
		{ "fcntl:lockbench-Ab3dE99.tdb:0",
		  "fcntl:lockbench-Ab3dE99.tdb:0" },
		{ "fcntl:lockbench-Ab_dE9.tdb:0",
		  "fcntl:lockbench-Ab_dE9.tdb:0" },
		{ "fcntl:lockbench-Ab3dE9.db:0",
		  "fcntl:lockbench-Ab3dE9.db:0" },
		{ "fcntl:LOCKBENCH-Ab3dE9.tdb:0",
		  "fcntl:LOCKBENCH-Ab3dE9.tdb:0" },
		{ "fcntl:lockbench-", "fcntl:lockbench-" },
	};

	(void)state;
	check_keys(c, sizeof(c) / sizeof(c[0]), LT_NAME_LEN);
}

/* A short buffer keeps what fits, a replacement cut short included. */
static void test_short_buffer(void **state)
{
	static const char k[] = "fcntl:lockbench-Ab3dE9.tdb+0x1000";
	static const struct {
		size_t len;
		const char *want;
	} c[] = {
		{ 22, "fcntl:lockbench-*.tdb" },
		{ 21, "fcntl:lockbench-*.td" },
		{ 10, "fcntl:loc" },
		{ 7, "fcntl:" },
		{ 6, "fcntl" },
		{ 1, "" },
	};
	char out[LT_NAME_LEN];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		const struct key_case one = { k, c[i].want };

		check_keys(&one, 1, c[i].len);
	}
	memset(out, 'X', sizeof(out));
	record_normalize_key("fcntl:x (deleted):1", out, 8);
	assert_string_equal(out, "fcntl:x");
	/* No room at all: out is left alone. */
	memset(out, 'X', sizeof(out));
	record_normalize_key(k, out, 0);
	assert_int_equal(out[0], 'X');
}

/* A key longer than two names is cut at 2 * LT_NAME_LEN - 1 characters. */
static void test_long_key(void **state)
{
	char key[600], out[2 * LT_NAME_LEN];

	(void)state;
	memset(key, 'a', sizeof(key) - 1);
	key[sizeof(key) - 1] = '\0';
	memcpy(key, "fcntl:", 6);
	record_normalize_key(key, out, sizeof(out));
	assert_int_equal(strlen(out), 2 * LT_NAME_LEN - 1);
	assert_memory_equal(out, key, 2 * LT_NAME_LEN - 1);
}

/*
 * A kernel lock's type and caller are read back; a record written
 * before they were kept loads with both empty; two entries of one key
 * keep the type and caller the first lacks.
 */
static void test_kernel_lock(void **state)
{
	static const char rec[] =
		"{\"format\":\"locktop-record\",\"version\":1,"
		"\"intervals\":[],\"final\":{\"locks\":["
		"{\"key\":\"kernel:i_rwsem of a.dat\",\"kind\":\"kernel\","
		"\"kernel_type\":\"rwsem-write\",\"caller\":\"ext4_write\","
		"\"waits\":3},"
		"{\"key\":\"kernel:mmap_lock of kc\",\"kind\":\"kernel\","
		"\"waits\":1},"
		"{\"key\":\"kernel:mmap_lock of kc\",\"kind\":\"kernel\","
		"\"kernel_type\":\"rwsem-read\",\"caller\":\"do_fault\","
		"\"waits\":2},"
		"{\"key\":\"fcntl:t.tdb+0x0\",\"kind\":\"fcntl\",\"waits\":5}]}}";
	const struct rec_lock *l;
	struct record *r;
	char err[256];

	(void)state;
	assert_int_equal(
		record_parse(rec, sizeof(rec) - 1, &r, err, sizeof(err)), 0);
	l = rec_set_find(&r->final, "kernel:i_rwsem of a.dat");
	assert_non_null(l);
	assert_string_equal(l->kernel_type, "rwsem-write");
	assert_string_equal(l->caller, "ext4_write");
	l = rec_set_find(&r->final, "kernel:mmap_lock of kc");
	assert_non_null(l);
	assert_int_equal(l->fig.waits, 3);
	assert_string_equal(l->kernel_type, "rwsem-read");
	assert_string_equal(l->caller, "do_fault");
	l = rec_set_find(&r->final, "fcntl:t.tdb+0x0");
	assert_non_null(l);
	assert_string_equal(l->kernel_type, "");
	assert_string_equal(l->caller, "");
	record_free(r);
}

/*
 * locktop diff's metrics, made from figures.def: their names in --fail-if
 * and JSON, their order and which are times stay as they were.
 */
static void test_metrics(void **state)
{
	static const struct {
		const char *name;
		const char *label;
		bool time;
	} want[] = {
		{ "waits", "waits", false },
		{ "wait_time", "wait time", true },
		{ "hold_time", "hold time", true },
		{ "p99", "p99 wait", true },
		{ "contended", "contended", false },
		{ "trylock_failures", "trylock failures", false },
		{ "samples", "spin samples", false },
		{ "yields", "sched_yield calls", false },
	};
	int m;

	(void)state;
	assert_int_equal(REC_METRIC_NR, sizeof(want) / sizeof(want[0]));
	for (m = 0; m < REC_METRIC_NR; m++) {
		assert_string_equal(rec_metric_name(m), want[m].name);
		assert_string_equal(rec_metric_label(m), want[m].label);
		assert_int_equal(rec_metric_is_time(m), want[m].time);
		assert_int_equal(rec_metric_parse(want[m].name), m);
	}
	assert_int_equal(REC_WAITS, 0);
	assert_int_equal(REC_WAIT_TIME, 1);
	assert_int_equal(REC_P99, 3);
	assert_int_equal(REC_YIELDS, 7);
	assert_int_equal(rec_metric_parse("max_wait_ns"), -1);
	assert_string_equal(rec_metric_list,
			    "waits, wait_time, hold_time, p99, contended, "
			    "trylock_failures, samples, yields");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_files),
		cmocka_unit_test(test_lockbench),
		cmocka_unit_test(test_short_buffer),
		cmocka_unit_test(test_long_key),
		cmocka_unit_test(test_kernel_lock),
		cmocka_unit_test(test_metrics),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
