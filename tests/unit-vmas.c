// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests of processes' mappings: found by address, read from /proc,
 * and kept across the collector's reads in its cache. No BPF needed.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <cmocka.h>
#include "internal.h"

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

/* This program's own code is in a mapping of its file (its .bss may lie
 * past the file's last page, in anonymous memory). */
static void test_vmas_of_self(void **state)
{
	struct lt_vmas vm;
	const struct lt_vma *v;

	(void)state;
	assert_int_equal(lt_vmas_load(getpid(), &vm), 0);
	assert_true(vm.n > 3);
	v = lt_vmas_find(&vm, (uint64_t)(uintptr_t)&test_vmas_of_self);
	assert_non_null(v);
	assert_non_null(strstr(v->path, "unit-vmas"));
	lt_vmas_free(&vm);
	assert_int_equal(lt_vmas_load(-5, &vm), -ENOENT);
}

/*
 * The cache keeps a process's maps across reads, reads them again where
 * what it kept has no mapping for an address, and once per read at most;
 * an ended process's entry goes.
 */
static void test_vma_cache(void **state)
{
	static struct lt_vma_cache vc;
	const struct lt_vmas *first, *again;
	const struct lt_vma *v;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	unsigned long long loaded;
	void *late;

	(void)state;
	first = lt_vma_cache_get(&vc, getpid());
	assert_false(first->gone);
	loaded = first->read;
	lt_vma_cache_next_read(&vc);
	/* An earlier read's entry serves what it has. */
	again = lt_vma_cache_get(&vc, getpid());
	assert_ptr_equal(again, first);
	assert_true(again->read == loaded);
	/* A mapping made since: found by reading again, now. */
	late = mmap(NULL, page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(late != MAP_FAILED);
	assert_null(lt_vmas_find(again, (uint64_t)(uintptr_t)late));
	v = lt_vma_cache_find(&vc, getpid(), (uint64_t)(uintptr_t)late);
	assert_non_null(v);
	assert_true(lt_vma_cache_get(&vc, getpid())->read == vc.read);
	/* Fresh within the read: not read a third time. */
	assert_ptr_equal(lt_vma_cache_fresh(&vc, getpid())->v, again->v);
	munmap(late, page);
	/* A process that cannot be read is gone, with no mappings. */
	assert_true(lt_vma_cache_get(&vc, -5)->gone);
	assert_int_equal(vc.n, 2);
	lt_vma_cache_drop(&vc, -5);
	assert_int_equal(vc.n, 1);
	lt_vma_cache_forget(&vc);
	assert_int_equal(vc.n, 0);
}

/* A full cache makes room with the entry least used, this process's
 * maps too (LeakSanitizer sees what it held). */
static void test_vma_cache_full(void **state)
{
	static struct lt_vma_cache vc;
	size_t i;
	pid_t p;

	(void)state;
	assert_false(lt_vma_cache_get(&vc, getpid())->gone);
	for (p = -1; p >= -(pid_t)LT_VMA_CACHE; p--)
		assert_true(lt_vma_cache_get(&vc, p)->gone);
	assert_int_equal(vc.n, LT_VMA_CACHE);
	for (i = 0; i < vc.n; i++)
		assert_true(vc.v[i].pid != getpid());
	/* -1 is the least used now, and goes for this process again. */
	assert_false(lt_vma_cache_get(&vc, getpid())->gone);
	for (i = 0; i < vc.n; i++)
		assert_true(vc.v[i].pid != -1);
	lt_vma_cache_forget(&vc);
}

/*
 * Maps read during a read may be older than a lock found later in it,
 * or (on kernels that read maps under per-VMA locks) miss a mapping
 * split or merged meanwhile: a fresh entry with no mapping for an
 * address is read once more, once a read at most.
 */
static void test_vma_cache_again(void **state)
{
	static struct lt_vma_cache vc;
	const struct lt_vmas *vmas;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	void *late, *later;

	(void)state;
	assert_false(lt_vma_cache_fresh(&vc, getpid())->gone);
	late = mmap(NULL, page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(late != MAP_FAILED);
	assert_null(lt_vmas_find(lt_vma_cache_fresh(&vc, getpid()),
				 (uint64_t)(uintptr_t)late));
	assert_non_null(lt_vma_cache_find_fresh(
		&vc, getpid(), (uint64_t)(uintptr_t)late, &vmas));
	assert_ptr_equal(vmas, lt_vma_cache_get(&vc, getpid()));
	/* Once a read: a second miss is not read again ... */
	later = mmap(NULL, page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(later != MAP_FAILED);
	assert_null(lt_vma_cache_find_fresh(&vc, getpid(),
					    (uint64_t)(uintptr_t)later, &vmas));
	/* ... until the next read. */
	lt_vma_cache_next_read(&vc);
	assert_non_null(lt_vma_cache_find_fresh(
		&vc, getpid(), (uint64_t)(uintptr_t)later, &vmas));
	/* A process that cannot be read is not read again. */
	assert_null(lt_vma_cache_find_fresh(&vc, -5, 0x1000, &vmas));
	assert_true(vmas->gone);
	munmap(late, page);
	munmap(later, page);
	lt_vma_cache_forget(&vc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vma_find),
		cmocka_unit_test(test_vmas_of_self),
		cmocka_unit_test(test_vma_cache),
		cmocka_unit_test(test_vma_cache_again),
		cmocka_unit_test(test_vma_cache_full),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
