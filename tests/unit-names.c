// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests of lock names: known store layouts read from real file
 * headers (tdb in fcntl and mutex mode, LMDB's lock file, SQLite), the
 * image an anonymous mapping continues, and demangled symbol names.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <cmocka.h>
#include "state.h"

struct fixture {
	struct lt_collector *c;
	char path[64];
	struct lt_layout_place p;
};

/* A file whose first bytes are head, n of them; p names it. */
static void make_file(struct fixture *f, const void *head, size_t n)
{
	struct stat st;
	FILE *out;
	int fd;

	snprintf(f->path, sizeof(f->path), "/tmp/unit-names.XXXXXX");
	fd = mkstemp(f->path);
	assert_true(fd >= 0);
	out = fdopen(fd, "w");
	assert_non_null(out);
	assert_int_equal(fwrite(head, 1, n, out), n);
	fclose(out);
	assert_int_equal(stat(f->path, &st), 0);
	memset(&f->p, 0, sizeof(f->p));
	/* The kernel's device number, as the probes give it. */
	f->p.dev = ((uint64_t)major(st.st_dev) << 20) | minor(st.st_dev);
	f->p.ino = st.st_ino;
	f->p.path = f->path;
	f->c = calloc(1, sizeof(*f->c));
	assert_non_null(f->c);
}

static void drop_file(struct fixture *f)
{
	unlink(f->path);
	layouts_free(f->c);
	free(f->c);
}

/* What the layout calls place [start, end], "" when nothing. */
static const char *name_at(struct fixture *f, bool word, uint64_t start,
			   uint64_t end)
{
	static char what[64];
	const char *layout;

	f->p.word = word;
	f->p.start = start;
	f->p.end = end;
	layout = layouts_name(f->c, &f->p, what, sizeof(what));
	return layout ? what : "";
}

static void tdb_header(unsigned char *h, uint32_t hash, bool mutex)
{
	uint32_t v;

	memcpy(h, "TDB file\n", 10);
	v = hash;
	memcpy(h + 36, &v, 4);
	v = mutex;
	memcpy(h + 60, &v, 4);
	v = mutex ? 4096 : 0;
	memcpy(h + 64, &v, 4);
}

static void test_tdb_fcntl(void **state)
{
	unsigned char h[256] = { 0 };
	struct fixture f;

	(void)state;
	tdb_header(h, 3000, false);
	make_file(&f, h, sizeof(h));
	assert_string_equal(name_at(&f, false, 0, 0), "open lock");
	assert_string_equal(name_at(&f, false, 4, 4), "active lock");
	assert_string_equal(name_at(&f, false, 8, 8), "transaction lock");
	assert_string_equal(name_at(&f, false, 164, 164), "freelist");
	/* lock_offset(2558) = 168 + 4 * 2558 = 10400 */
	assert_string_equal(name_at(&f, false, 10400, 10400), "chain 2558");
	assert_string_equal(name_at(&f, false, 168, 168), "chain 0");
	assert_string_equal(name_at(&f, false, 168 + 4 * 2999, 168 + 4 * 2999),
			    "chain 2999");
	assert_string_equal(name_at(&f, false, 168, LT_OFFSET_EOF),
			    "allrecord lock");
	assert_string_equal(name_at(&f, false, 168 + 4 * 3000, LT_OFFSET_EOF),
			    "all records");
	assert_string_equal(name_at(&f, false, 168, 168 + 4 * 1500 - 1),
			    "chains 0..1499");
	assert_string_equal(name_at(&f, false, 0x4000, 0x4000),
			    "record 0x4000");
	/* Not a lock tdb takes there, and no mutexes in fcntl mode. */
	assert_string_equal(name_at(&f, false, 170, 170), "");
	assert_string_equal(name_at(&f, true, 256, 256), "");
	drop_file(&f);
}

static void test_tdb_mutex(void **state)
{
	unsigned char h[256] = { 0 };
	struct fixture f;

	(void)state;
	tdb_header(h, 7, true);
	make_file(&f, h, sizeof(h));
	/* struct tdb_mutexes: the header (168), allrecord_mutex (40),
	 * allrecord_lock, then hashchains[] from 216, 40 bytes each. */
	assert_string_equal(name_at(&f, true, 168, 168), "allrecord mutex");
	assert_string_equal(name_at(&f, true, 216, 216), "freelist");
	assert_string_equal(name_at(&f, true, 256, 256), "chain 0");
	assert_string_equal(name_at(&f, true, 216 + 40 * 7, 216 + 40 * 7),
			    "chain 6");
	assert_string_equal(name_at(&f, true, 216 + 40 * 8, 216 + 40 * 8), "");
	assert_string_equal(name_at(&f, true, 260, 260), "");
	/* Its fcntl locks are where they are in fcntl mode. */
	assert_string_equal(name_at(&f, false, 164, 164), "freelist");
	assert_string_equal(name_at(&f, false, 172, 172), "chain 1");
	drop_file(&f);
}

static void test_lmdb_sqlite(void **state)
{
	unsigned char h[128] = { 0xde, 0xc0, 0xef, 0xbe };
	struct fixture f;

	(void)state;
	make_file(&f, h, sizeof(h));
	assert_string_equal(name_at(&f, true, 0x40, 0x40), "writer mutex");
	assert_string_equal(name_at(&f, true, 8, 8), "reader table mutex");
	assert_string_equal(name_at(&f, false, 0, 0), "environment lock");
	assert_string_equal(name_at(&f, false, 4242, 4242), "reader pid 4242");
	assert_string_equal(name_at(&f, true, 0x48, 0x48), "");
	drop_file(&f);

	memset(h, 0, sizeof(h));
	memcpy(h, "SQLite format 3", 16);
	make_file(&f, h, sizeof(h));
	assert_string_equal(name_at(&f, false, 0x40000000, 0x40000000),
			    "pending byte");
	assert_string_equal(name_at(&f, false, 0x40000001, 0x40000001),
			    "reserved byte");
	assert_string_equal(name_at(&f, false, 0x40000002, 0x400001ff),
			    "shared range");
	assert_string_equal(name_at(&f, false, 0, 0), "");
	drop_file(&f);

	/* Another file: no name; nor one whose identity is not the path's. */
	make_file(&f, "hello", 5);
	assert_string_equal(name_at(&f, false, 0, 0), "");
	drop_file(&f);
	tdb_header(h, 3, false);
	make_file(&f, h, sizeof(h));
	f.p.ino++;
	assert_string_equal(name_at(&f, false, 0, 0), "");
	drop_file(&f);
}

static void test_image_of(void **state)
{
	struct lt_vma v[4] = {
		{ .start = 0x1000,
		  .end = 0x2000,
		  .perms = "r-xp",
		  .path = "/usr/bin/prog" },
		{ .start = 0x2000,
		  .end = 0x3000,
		  .perms = "rw-p",
		  .path = "/usr/bin/prog" },
		{ .start = 0x3000, .end = 0x9000, .perms = "rw-p", .path = "" },
		{ .start = 0xa000, .end = 0xb000, .perms = "rw-p", .path = "" },
	};
	struct lt_vmas vm = { .pid = 1, .v = v, .n = 4 };

	(void)state;
	assert_ptr_equal(lt_vmas_image(&vm, &v[0]), &v[0]);
	/* .bss past the file: the anonymous mapping right after. */
	assert_ptr_equal(lt_vmas_image(&vm, &v[2]), &v[1]);
	/* Not adjacent: an anonymous mapping of its own. */
	assert_null(lt_vmas_image(&vm, &v[3]));
	strcpy(v[1].perms, "rw-s");
	assert_null(lt_vmas_image(&vm, &v[1]));
	assert_null(lt_vmas_image(&vm, &v[2]));
}

static void test_demangle(void **state)
{
	char b[LT_SYM_LEN];

	(void)state;
	lt_demangle("_ZN8cxxlocks10table_lockE", b, sizeof(b));
	assert_string_equal(b, "cxxlocks::table_lock");
	lt_demangle("_ZN5tpool19thread_pool_generic14wait_for_tasksEv", b,
		    sizeof(b));
	assert_string_equal(b, "tpool::thread_pool_generic::wait_for_tasks()");
	lt_demangle("pthread_mutex_lock", b, sizeof(b));
	assert_string_equal(b, "pthread_mutex_lock");
	lt_demangle("_Znot_a_name", b, sizeof(b));
	assert_string_equal(b, "_Znot_a_name");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tdb_fcntl),
		cmocka_unit_test(test_tdb_mutex),
		cmocka_unit_test(test_lmdb_sqlite),
		cmocka_unit_test(test_image_of),
		cmocka_unit_test(test_demangle),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
