// SPDX-License-Identifier: LGPL-2.1-or-later
/* Servers' lock probes: a flat table, one row per probe. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "providers.h"

/*
 * PostgreSQL (built with --enable-dtrace, as Debian's is). Waits only
 * by default: an LWLock's or a heavyweight lock's wait, from start to
 * done, and the deadlocks found by the waiting backend.
 */
const struct lt_provider_probe lt_provider_probes[] = {
	{ "postgres", "postgresql", "lwlock__wait__start", LT_USDT_START,
	  LT_KIND_PG_LWLOCK, "name,mode", true },
	{ "postgres", "postgresql", "lwlock__wait__done", LT_USDT_DONE,
	  LT_KIND_PG_LWLOCK, "name,mode", true },
	{ "postgres", "postgresql", "lock__wait__start", LT_USDT_START,
	  LT_KIND_PG_LOCK, "f1,f2,f3,f4,type,mode", true },
	{ "postgres", "postgresql", "lock__wait__done", LT_USDT_DONE,
	  LT_KIND_PG_LOCK, "f1,f2,f3,f4,type,mode", true },
	{ "postgres", "postgresql", "deadlock__found", LT_USDT_DEADLOCK,
	  LT_KIND_PG_LOCK, "", true },
};

const size_t lt_n_provider_probes =
	sizeof(lt_provider_probes) / sizeof(lt_provider_probes[0]);

/*
 * A backend that finds a row updated or locked by a transaction still
 * running waits for that transaction's end in XactLockTableWait(xid,
 * Relation, ctid, oper), which first pushes an error context: a frame
 * {previous, callback, arg} on error_context_stack whose callback is
 * XactLockTableWaitErrorCb and whose arg points to its
 * XactLockTableWaitInfo {oper, Relation, ctid}. The relation names the
 * wait (PostgreSQL 9.4 on).
 */
const struct lt_provider_context lt_provider_contexts[] = {
	{ "postgres", "postgresql", "lock__wait__start", LT_KIND_PG_LOCK,
	  "error_context_stack", "XactLockTableWait", 8, 16, 8 },
};

const size_t lt_n_provider_contexts =
	sizeof(lt_provider_contexts) / sizeof(lt_provider_contexts[0]);

/* LWLockMode */
static const char *const pg_lwlock_modes[] = { "exclusive", "shared",
					       "wait-until-free" };

/* LOCKMODE */
static const char *const pg_lock_modes[] = {
	"NoLock",
	"AccessShareLock",
	"RowShareLock",
	"RowExclusiveLock",
	"ShareUpdateExclusiveLock",
	"ShareLock",
	"ShareRowExclusiveLock",
	"ExclusiveLock",
	"AccessExclusiveLock",
};

/*
 * LockTagType, with the fields that name the object. A page or tuple is
 * its relation's (one row per relation, not per tuple version); a
 * virtual transaction or speculative insertion is any (one row). A
 * transaction's end, waited for on a row, is the row's relation's (its
 * context); other waits for a transaction's end are one row.
 */
static const struct lt_provider_type pg_lock_types[] = {
	{ "relation", 0x3, true },
	{ "extend", 0x3, true },
	{ "frozenid", 0x1, false },
	{ "page", 0x3, true },
	{ "tuple", 0x3, true },
	{ "transactionid", LT_KEEP_CONTEXT, true },
	{ "virtualxid", 0x0, false },
	{ "spectoken", 0x0, false },
	{ "object", 0xf, false },
	{ "userlock", 0xf, false },
	{ "advisory", 0xf, false },
};

#define N(a) (sizeof(a) / sizeof((a)[0]))

const struct lt_provider_kind lt_provider_kinds[] = {
	{ LT_KIND_PG_LWLOCK, pg_lwlock_modes, N(pg_lwlock_modes), NULL, 0 },
	/* A Relation is a RelationData *: rd_node's (rd_locator's)
	 * dbNode, rd_id, and rd_rel, whose oid is rd_id again (PostgreSQL
	 * 13 to 17 on 64-bit machines; elsewhere the check fails and the
	 * waits are named without their relation); rd_node's spcNode and
	 * relNode, the relation's file; rd_rel's relname, after its oid. */
	{ LT_KIND_PG_LOCK,
	  pg_lock_modes,
	  N(pg_lock_modes),
	  pg_lock_types,
	  N(pg_lock_types),
	  { [LT_AT_F1] = 4,
	    [LT_AT_F2] = 72,
	    [LT_AT_CHECK] = 56,
	    [LT_AT_SPACE] = 0,
	    [LT_AT_FILE] = 8,
	    [LT_AT_NAME] = 4 } },
};

const size_t lt_n_provider_kinds = N(lt_provider_kinds);

const struct lt_provider_kind *lt_provider_kind_of(enum lt_kind kind)
{
	size_t i;

	for (i = 0; i < lt_n_provider_kinds; i++)
		if (lt_provider_kinds[i].kind == kind)
			return &lt_provider_kinds[i];
	return NULL;
}

static int arg_meaning(const char *s, size_t len)
{
	static const char *const names[] = {
		[LT_ARG_NONE] = "-",	[LT_ARG_NAME] = "name",
		[LT_ARG_F1] = "f1",	[LT_ARG_F2] = "f2",
		[LT_ARG_F3] = "f3",	[LT_ARG_F4] = "f4",
		[LT_ARG_TYPE] = "type", [LT_ARG_MODE] = "mode",
	};
	size_t i;

	for (i = 0; i < N(names); i++)
		if (strlen(names[i]) == len && !strncmp(s, names[i], len))
			return (int)i;
	return -1;
}

const char *lt_provider_exe(int pid, char *path, size_t len)
{
	char link[32], *base;
	ssize_t n;
	size_t i;

	snprintf(link, sizeof(link), "/proc/%d/exe", pid);
	n = readlink(link, path, len - 1);
	if (n <= 0)
		return NULL;
	path[n] = '\0';
	if (strstr(path, " (deleted)"))
		return NULL;
	base = strrchr(path, '/');
	base = base ? base + 1 : path;
	for (i = 0; i < lt_n_provider_probes; i++)
		if (lt_provider_probes[i].on &&
		    !strcmp(lt_provider_probes[i].binary, base))
			return lt_provider_probes[i].binary;
	return NULL;
}

uint64_t lt_provider_cookie(const struct lt_provider_probe *p)
{
	uint64_t cookie = (uint64_t)p->kind | (uint64_t)p->event << 8;
	const char *s = p->args;
	size_t i, len;
	int m;

	if ((int)p->kind < (int)LT_PK_USDT_FIRST || p->kind >= LT_KIND_NR)
		return 0;
	for (i = 0; *s; i++) {
		len = strcspn(s, ",");
		m = arg_meaning(s, len);
		if (m < 0 || i >= LT_USDT_ARGS)
			return 0;
		cookie |= (uint64_t)m << (16 + 4 * i);
		s += len + (s[len] == ',');
	}
	return cookie;
}
