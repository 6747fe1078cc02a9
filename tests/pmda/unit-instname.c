// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests of the agent's instance names, on PCP's own instance cache
 * (in this process; no pmcd): no two live instances share the part of
 * their names before the first space, which is all PCP compares.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <pcp/pmapi.h>
#include <pcp/pmda.h>
#include "instname.h"

/* Lock rows as the collector names them, kinds apart. */
static const char *const rows[][2] = {
	{ "pg-lock", "transactionid ShareLock" },
	{ "pg-lock", "transactionid ExclusiveLock" },
	{ "pg-lock", "transactionid on 5/16393 ShareLock" },
	{ "pg-lock", "transactionid on 5/16387 ShareLock" },
	{ "pg-lock", "tuple 5/16387 ExclusiveLock base/5/16387" },
	{ "pg-lock", "tuple 5/16393 ExclusiveLock" },
	{ "pg-lwlock", "LockManager exclusive" },
	{ "pg-lwlock", "LockManager shared" },
	{ "pg-lwlock", "WALWrite exclusive" },
	{ "futex", "bench.tdb+0x1040" },
	{ "spin", "bench.tdb+0x1040" },
	{ "fcntl", "/tmp/my file.db 0-100" },
	{ "fcntl", "/tmp/my file.db 100-200" },
	/* A name that is another's tagged name. */
	{ "futex", "tuple[pid:7] x" },
	/* Relations named by their table and file too. */
	{ "pg-lock",
	  "tuple 5/16399 pgbench_tellers ExclusiveLock base/5/16402" },
	{ "pg-lock",
	  "transactionid on 5/16399 pgbench_tellers ShareLock base/5/16402" },
	{ "pg-lock", "relation 5/16406 my table AccessShareLock base/5/16406" },
};

#define N_ROWS (sizeof(rows) / sizeof(rows[0]))

static int activate_row(pmInDom indom, size_t i)
{
	char key[128], pidtag[32], idtag[32];
	const char *tags[] = { pidtag, idtag };
	int klen;

	klen = snprintf(key, sizeof(key), "%s|%s", rows[i][0], rows[i][1]);
	/* One process waited on them all: the pid tags collide too. */
	snprintf(pidtag, sizeof(pidtag), "pid:7");
	snprintf(idtag, sizeof(idtag), "id:%zu", i + 1);
	return ltpm_activate(indom, rows[i][1], key, klen, tags, 2);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The live instances' first words, all different; their count. */
static size_t assert_heads_unique(pmInDom indom)
{
	char *heads[64], *name;
	size_t n = 0, i;
	int inst;

	pmdaCacheOp(indom, PMDA_CACHE_WALK_REWIND);
	while ((inst = pmdaCacheOp(indom, PMDA_CACHE_WALK_NEXT)) >= 0 &&
	       n < 64) {
		assert_true(pmdaCacheLookup(indom, inst, &name, NULL) ==
			    PMDA_CACHE_ACTIVE);
		heads[n] = strndup(name, strcspn(name, " "));
		assert_non_null(heads[n]);
		n++;
	}
	qsort(heads, n, sizeof(heads[0]), cmp_str);
	for (i = 1; i < n; i++)
		if (!strcmp(heads[i - 1], heads[i]))
			fail_msg("two instances are \"%s ...\"", heads[i]);
	for (i = 0; i < n; i++)
		free(heads[i]);
	return n;
}

static void test_first_words(void **state)
{
	pmInDom indom = pmInDom_build(511, 1);
	int insts[N_ROWS], live[N_ROWS], inst;
	char *name;
	size_t i, n;

	(void)state;
	for (i = 0; i < N_ROWS; i++) {
		insts[i] = activate_row(indom, i);
		assert_true(insts[i] >= 0);
	}
	assert_int_equal(assert_heads_unique(indom), N_ROWS);
	/* The first of a name keeps it whole; a later one is tagged. */
	assert_int_equal(pmdaCacheLookup(indom, insts[0], &name, NULL),
			 PMDA_CACHE_ACTIVE);
	assert_string_equal(name, "transactionid ShareLock");
	assert_int_equal(pmdaCacheLookup(indom, insts[1], &name, NULL),
			 PMDA_CACHE_ACTIVE);
	assert_string_equal(name, "transactionid[pid:7] ExclusiveLock");
	assert_int_equal(pmdaCacheLookup(indom, insts[2], &name, NULL),
			 PMDA_CACHE_ACTIVE);
	assert_string_equal(name, "transactionid[id:3] on 5/16393 ShareLock");

	/* A later reading, in another order, with some gone, as the agent
	 * refreshes: the same instances, the gone ones hidden, still no two
	 * alike; then one that was gone comes back as itself. */
	n = 0;
	for (i = N_ROWS; i-- > 0;) {
		if (i % 3 == 1)
			continue;
		inst = activate_row(indom, i);
		assert_int_equal(inst, insts[i]);
		live[n++] = inst;
	}
	ltpm_hide_stale(indom, live, n);
	assert_int_equal(assert_heads_unique(indom), n);
	for (i = 0; i < N_ROWS; i++)
		assert_int_equal(pmdaCacheLookup(indom, insts[i], &name, NULL),
				 i % 3 == 1 ? PMDA_CACHE_INACTIVE :
					      PMDA_CACHE_ACTIVE);
	assert_int_equal(activate_row(indom, 1), insts[1]);
	assert_int_equal(pmdaCacheLookup(indom, insts[1], &name, NULL),
			 PMDA_CACHE_ACTIVE);
	assert_string_equal(name, "transactionid[pid:7] ExclusiveLock");
}

/*
 * A lock named again, its relation's table and file learned since: its
 * key is the same, so is its instance, which keeps the name it was
 * given first (PCP's names do not change).
 */
static void test_named_again(void **state)
{
	pmInDom indom = pmInDom_build(511, 2);
	static const char key[] = "pg-lock|tuple 5/16393 ExclusiveLock";
	char *name;
	int inst;

	(void)state;
	inst = ltpm_activate(indom, "tuple 5/16393 ExclusiveLock", key,
			     sizeof(key) - 1, NULL, 0);
	assert_true(inst >= 0);
	assert_int_equal(ltpm_activate(indom,
				       "tuple 5/16393 pgbench_branches "
				       "ExclusiveLock base/5/16397",
				       key, sizeof(key) - 1, NULL, 0),
			 inst);
	assert_int_equal(pmdaCacheLookup(indom, inst, &name, NULL),
			 PMDA_CACHE_ACTIVE);
	assert_string_equal(name, "tuple 5/16393 ExclusiveLock");
	assert_int_equal(assert_heads_unique(indom), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_first_words),
		cmocka_unit_test(test_named_again),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
