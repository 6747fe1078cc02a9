/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Servers whose lock probes (USDT) the collector attaches: one row per
 * probe, and how each kind's locks are named. Another server's probes
 * are rows of these tables (providers.c); not installed.
 */
#ifndef LOCKTOP_COLLECTOR_PROVIDERS_H
#define LOCKTOP_COLLECTOR_PROVIDERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>
#include "collector.h"
#include "common.h"
#include "usdt.h"

struct lt_provider_probe {
	const char *binary; /* the executable's base name */
	const char *provider;
	const char *probe;
	enum lt_usdt_event event;
	enum lt_kind kind;
	/* What each argument means, in order, comma-separated: name
	 * (a string), f1 to f4 (the object's fields), type, mode, or -
	 * (usdt.h). */
	const char *args;
	bool on; /* attached by default */
};

/*
 * A context that names the object of waits inside a function of the
 * server, read at the waits' start probe (struct lt_usdt_ctx_site): the
 * global variable that holds the innermost frame of the chain, the
 * function whose frame it is (its code takes the address of the frame's
 * function, and of no other code), and the offsets in the frame and in
 * its argument.
 */
struct lt_provider_context {
	const char *binary;
	const char *provider;
	const char *probe; /* the start probe, of one site */
	enum lt_kind kind;
	const char *global;
	const char *within;
	uint16_t fn_at, arg_at, obj_at;
};

/* An object type of a kind: its name, and which fields name it. */
struct lt_provider_type {
	const char *name;
	uint8_t keep; /* bit i: field i + 1; or LT_KEEP_CONTEXT */
	/* Fields 1 and 2 are a database and a relation OID: the
	 * relation's name and file, when its context told them, or
	 * else its file base/DB/REL under the data directory. */
	bool relation;
};

struct lt_provider_kind {
	enum lt_kind kind;
	const char *const *modes; /* by mode number */
	size_t n_modes;
	const struct lt_provider_type *types; /* by type; NULL: untyped */
	size_t n_types;
	/* Where an object argument holds fields 1 and 2, a pointer to
	 * field 2 again (a check of the structure's layout), the
	 * object's storage and its name (enum lt_object_at). */
	uint16_t object_at[LT_OBJECT_AT];
};

extern const struct lt_provider_probe lt_provider_probes[];
extern const size_t lt_n_provider_probes;
extern const struct lt_provider_context lt_provider_contexts[];
extern const size_t lt_n_provider_contexts;
extern const struct lt_provider_kind lt_provider_kinds[];
extern const size_t lt_n_provider_kinds;

/* A kind from a server's probes: lt_provider_kinds' row, or NULL. */
const struct lt_provider_kind *lt_provider_kind_of(enum lt_kind kind);

/* Where the context of the binary at path is (usdtctx.c); -1 when the
 * binary lacks what it needs. */
int lt_usdt_ctx_site(const char *path, const struct lt_provider_context *pc,
		     struct lt_usdt_ctx_site *out);

/*
 * Whether process pid runs a server whose probes are on by default: the
 * table's binary name, and its executable's path in path; else NULL (an
 * executable replaced since it started has no probes at that path).
 */
const char *lt_provider_exe(int pid, char *path, size_t len);

/* The cookie (usdt.h) of a row; 0 when its args do not parse. */
uint64_t lt_provider_cookie(const struct lt_provider_probe *p);

#endif /* LOCKTOP_COLLECTOR_PROVIDERS_H */
