/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Servers' own lock probes (USDT): what the collector tells the usdt
 * object about each probe it attaches, in the attachment's cookie.
 *
 *   bits 0-7     the kind (enum lt_probe_kind, from LT_PK_USDT_FIRST)
 *   bits 8-11    the event (enum lt_usdt_event)
 *   bits 16-63   what argument i means, 4 bits each (enum lt_usdt_arg)
 *
 * A wait's lock is named by its arguments:
 *   dev_or_tgid  field 1 << 32 | field 2
 *   ino          field 3 << 32 | field 4
 *   start        a hash of the name argument (0 when there is none)
 *   end          type << 32 | mode
 * The fields a type keeps are in targ_keep (the others read as 0), so
 * that, say, the waits for any transaction's end are one lock. A type
 * with LT_KEEP_CONTEXT keeps none of its own: a wait inside a context
 * that names an object (struct lt_usdt_ctx_site) has fields 1 and 2 of
 * that object (PostgreSQL: the relation of the row for which a
 * transaction's end is waited for), and other waits have none.
 */
#ifndef LOCKTOP_PROBES_USDT_H
#define LOCKTOP_PROBES_USDT_H

enum lt_usdt_event {
	LT_USDT_NONE = 0,
	LT_USDT_START, /* a thread starts to wait */
	LT_USDT_DONE, /* ... and ends the wait */
	LT_USDT_DEADLOCK, /* the waiting thread found a deadlock */
};

enum lt_usdt_arg {
	LT_ARG_NONE = 0,
	LT_ARG_NAME, /* a string: the lock's name */
	LT_ARG_F1, /* the fields of the object waited for */
	LT_ARG_F2,
	LT_ARG_F3,
	LT_ARG_F4,
	LT_ARG_TYPE, /* the object's type, which fields it keeps */
	LT_ARG_MODE, /* how it is wanted */
};

#define LT_KEEP_CONTEXT 0x10 /* targ_keep: fields from the context */

/*
 * Where a wait's context is, read at its start (map ctx_sites, one entry
 * per binary and start probe): the server keeps a chain of frames, the
 * innermost at the global variable at global, each beginning with a
 * pointer to the one before it and holding a function (at fn_at) and its
 * argument (at arg_at). The frame whose function is at fn, pushed by the
 * server's function that the wait is inside of, has at its argument, at
 * obj_at, a pointer to the wait's object. Addresses are the binary's
 * own, before its load bias; site is the start probe's, which tells the
 * bias from where the probe is hit. kind 0: an entry not in use.
 */
struct lt_usdt_ctx_site {
	__u64 site;
	__u64 global;
	__u64 fn;
	__u16 fn_at;
	__u16 arg_at;
	__u16 obj_at;
	__u16 kind;
};

#define LT_USDT_CTX_SITES 8 /* binaries with contexts, at most */
#define LT_USDT_CTX_DEPTH 4 /* frames looked through, innermost first */

/*
 * Where a context's object holds what it says of the object, by offset
 * (targ_object_at; the table of kinds' object_at). The structure at the
 * pointer at LT_AT_CHECK begins with field 2 again, or the structure is
 * not of the layout expected and names nothing. Its storage and name
 * are learned only where LT_AT_NAME is not 0.
 */
enum lt_object_at {
	LT_AT_F1 = 0, /* field 1 */
	LT_AT_F2, /* field 2 */
	LT_AT_CHECK, /* a pointer to a structure that begins with field 2 */
	LT_AT_SPACE, /* where the object's storage is: its space ... */
	LT_AT_FILE, /* ... and its file number in that space */
	LT_AT_NAME, /* in the checked structure: the object's name */
	LT_OBJECT_AT
};

#define LT_OBJECT_NAME_LEN 64
#define LT_USDT_OBJECTS 2048 /* objects learned at most */

/* An object learned by a context (map objects): of a kind, fields 1, 2. */
struct lt_usdt_object_key {
	__u32 kind;
	__u32 field[2];
};

struct lt_usdt_object {
	__u32 space;
	__u32 file;
	char name[LT_OBJECT_NAME_LEN]; /* NUL-terminated */
	/* Last, not part of what the object is: the process that told
	 * it (PostgreSQL's data directory is its working directory), and
	 * when it was last read, in units of 2^30 ns (about a second). */
	__u32 tgid;
	__u32 read_at;
};

#define LT_USDT_ARGS 12 /* a USDT probe has this many at most */
#define LT_USDT_KINDS 4 /* kinds from LT_PK_USDT_FIRST */
#define LT_USDT_TYPES 16 /* object types per kind */

#define LT_USDT_COOKIE_KIND(c) ((__u32)((c)&0xff))
#define LT_USDT_COOKIE_EVENT(c) ((__u32)(((c) >> 8) & 0xf))
#define LT_USDT_COOKIE_ARG(c, i) ((__u32)(((c) >> (16 + 4 * (i))) & 0xf))

#endif /* LOCKTOP_PROBES_USDT_H */
