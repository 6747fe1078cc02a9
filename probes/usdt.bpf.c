// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Servers' own lock waits, from their USDT probes: a wait's start and
 * done, and a deadlock its waiter found. One program serves every
 * probe; the attachment's cookie says what the probe is and what its
 * arguments mean (usdt.h), from the collector's table of providers.
 *
 * A wait in flight is the thread's lt_thread.wait, as a futex wait's
 * is, so the collector sees its waiters now. A server may start a wait
 * inside another (PostgreSQL takes an LWLock on its way out of a
 * heavyweight lock's wait): the outer one is kept aside until the inner
 * one is done.
 *
 * A wait inside a function of the server that tells its object in a
 * frame of the server's own (PostgreSQL's XactLockTableWait, the
 * relation whose row made the backend wait for a transaction's end, in
 * its error context) is named by that object, read at the wait's start
 * where ctx_sites says: no probe of its own, no trap. The object's name
 * and storage (the table's name and file) are learned too, for the
 * collector to name every lock of that object by (map objects).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include <bpf/usdt.bpf.h>
#include "common.bpf.h"
#include "stacks.bpf.h"
#include "usdt.h"

/* Per kind and type, bit i: field i + 1 of the object is its identity. */
const volatile __u8 targ_keep[LT_USDT_KINDS][LT_USDT_TYPES] = {};
/* Per kind: where an object argument holds what it says of the object
 * (enum lt_object_at). */
const volatile __u16 targ_object_at[LT_USDT_KINDS][LT_OBJECT_AT] = {};

/* The objects' names and storage, as contexts told them. A plain hash:
 * a lookup costs less than an LRU hash's, and a table waited on stays. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LT_USDT_OBJECTS);
	__type(key, struct lt_usdt_object_key);
	__type(value, struct lt_usdt_object);
} objects SEC(".maps");

/* Bumped at each change of objects: the collector names again. */
__u64 objects_changed = 0;

/* A wait started while another was in flight: the outer one. */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct lt_inflight);
} outer SEC(".maps");

/* Where waits' contexts are, per binary and start probe: filled by the
 * collector as it attaches (struct lt_usdt_ctx_site). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, LT_USDT_CTX_SITES);
	__type(key, __u32);
	__type(value, struct lt_usdt_ctx_site);
} ctx_sites SEC(".maps");

struct usdt_args {
	__u64 field[4];
	__u64 name; /* the name's address in the process, or 0 */
	__u64 type;
	__u64 mode;
	bool typed;
};

/* FNV-1a of a string of the process, which is also copied into out. */
static __always_inline __u64 name_hash(__u64 addr, char *out, __u32 len)
{
	__u64 h = 0xcbf29ce484222325ULL;
	__u32 i;

	if (bpf_probe_read_user_str(out, len, (const void *)addr) <= 0)
		return 0;
	for (i = 0; i < LT_WHERE_NAME_LEN && i < len && out[i]; i++) {
		h ^= (__u8)out[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

static __always_inline void read_args(struct pt_regs *ctx, __u64 cookie,
				      struct usdt_args *a)
{
	__u32 i, m;
	long v;

	for (i = 0; i < LT_USDT_ARGS; i++) {
		m = LT_USDT_COOKIE_ARG(cookie, i);
		if (m == LT_ARG_NONE || bpf_usdt_arg(ctx, i, &v))
			continue;
		if (m == LT_ARG_NAME)
			a->name = (__u64)v;
		else if (m >= LT_ARG_F1 && m <= LT_ARG_F4)
			a->field[(m - LT_ARG_F1) & 3] = (__u32)v;
		else if (m == LT_ARG_TYPE)
			a->type = (__u32)v, a->typed = true;
		else if (m == LT_ARG_MODE)
			a->mode = (__u32)v;
	}
}

static __always_inline void learn_object(__u32 kind, const volatile __u16 *at,
					 __u64 obj, __u64 p, const __u32 *f);

/*
 * Fields 1 and 2 of the object at obj into f, and its name learned; false
 * when the structure is not of the layout expected (its check fails).
 */
static __always_inline bool object_fields(__u32 kind, __u64 obj, __u32 *f)
{
	const volatile __u16 *at;
	__u32 check = 0;
	__u64 p = 0;

	at = targ_object_at[(kind - LT_PK_USDT_FIRST) & (LT_USDT_KINDS - 1)];
	if (!obj ||
	    bpf_probe_read_user(&f[0], 4, (const void *)(obj + at[LT_AT_F1])) ||
	    bpf_probe_read_user(&f[1], 4, (const void *)(obj + at[LT_AT_F2])) ||
	    bpf_probe_read_user(&p, 8, (const void *)(obj + at[LT_AT_CHECK])) ||
	    bpf_probe_read_user(&check, 4, (const void *)p) || check != f[1])
		return false;
	learn_object(kind, at, obj, p, f);
	return true;
}

/*
 * The object of the context frame whose function is at fn, among the
 * innermost LT_USDT_CTX_DEPTH frames of the chain whose innermost is at
 * the variable at head; 0: none. A function of its own, verified once.
 */
__noinline __u64 lt_context_object(__u64 head, __u64 fn, __u32 fn_at,
				   __u32 arg_at, __u32 obj_at)
{
	__u64 frame = 0, f = 0, arg = 0, obj = 0;
	__u32 i;

	if (bpf_probe_read_user(&frame, 8, (const void *)head))
		return 0;
	for (i = 0; i < LT_USDT_CTX_DEPTH && frame; i++) {
		if (bpf_probe_read_user(&f, 8, (const void *)(frame + fn_at)))
			return 0;
		if (f == fn) {
			if (bpf_probe_read_user(
				    &arg, 8, (const void *)(frame + arg_at)) ||
			    bpf_probe_read_user(&obj, 8,
						(const void *)(arg + obj_at)))
				return 0;
			return obj;
		}
		/* The next frame out: each begins with the one before. */
		if (bpf_probe_read_user(&frame, 8, (const void *)frame))
			return 0;
	}
	return 0;
}

/*
 * A wait whose context names its object (see ctx_sites) has that
 * object's fields 1 and 2; another has none. The fields to keep. The
 * binary is the one whose start probe, moved by a whole number of pages
 * (its load bias), is where this one was hit.
 */
static __always_inline __u8 from_context(struct pt_regs *ctx, __u32 kind,
					 struct usdt_args *a)
{
	__u64 ip = PT_REGS_IP(ctx), base, obj;
	struct lt_usdt_ctx_site *s = NULL;
	__u32 i, k, f[2] = {};

	for (i = 0; i < LT_USDT_CTX_SITES; i++) {
		k = i; /* the counter stays in a register */
		s = bpf_map_lookup_elem(&ctx_sites, &k);
		if (s && s->site && s->kind == kind &&
		    !((ip - s->site) & 0xfff))
			break;
	}
	if (i >= LT_USDT_CTX_SITES || !s)
		return 0;
	base = ip - s->site;
	obj = lt_context_object(base + s->global, base + s->fn, s->fn_at,
				s->arg_at, s->obj_at);
	if (!object_fields(kind, obj, f))
		return 0;
	a->field[0] = f[0];
	a->field[1] = f[1];
	return 0x3;
}

/* The lock a probe's arguments name; its name string into name. */
static __always_inline void lock_of(struct pt_regs *ctx, __u64 cookie,
				    struct lt_lock_key *key, char *name)
{
	struct usdt_args a = {};
	__u32 kind = LT_USDT_COOKIE_KIND(cookie), i;
	__u8 keep = 0xf;

	read_args(ctx, cookie, &a);
	if (a.typed)
		keep = targ_keep[(kind - LT_PK_USDT_FIRST) & (LT_USDT_KINDS - 1)]
				[a.type & (LT_USDT_TYPES - 1)];
	if (keep & LT_KEEP_CONTEXT)
		keep = from_context(ctx, kind, &a);
	for (i = 0; i < 4; i++)
		if (!(keep & (1U << i)))
			a.field[i] = 0;
	key->dev_or_tgid = a.field[0] << 32 | a.field[1];
	key->ino = a.field[2] << 32 | a.field[3];
	key->start = a.name ? name_hash(a.name, name, LT_WHERE_NAME_LEN) : 0;
	key->end = a.type << 32 | a.mode;
	key->kind = kind;
	key->shared = 1;
}

static __always_inline void remember_name(const struct lt_lock_key *key,
					  const char *name, __u32 tgid)
{
	struct lt_where w = { .tgid = tgid, .fd = -1 };

	__builtin_memcpy(w.file, name, sizeof(w.file));
	bpf_map_update_elem(&wheres, key, &w, BPF_NOEXIST);
}

static __always_inline int wait_start(struct pt_regs *ctx, __u64 cookie)
{
	char name[LT_WHERE_NAME_LEN] = {};
	__u32 tgid = current_ids() >> 32;
	struct lt_inflight *in, *out;
	struct lt_thread *th;
	bool created = false;

	if (!wanted(tgid))
		return 0;
	th = starting_thread();
	if (!th)
		return 0;
	in = &th->wait;
	if (in->ts && in->lock.kind >= LT_PK_USDT_FIRST) {
		out = bpf_task_storage_get(&outer, bpf_get_current_task_btf(),
					   NULL,
					   BPF_LOCAL_STORAGE_GET_F_CREATE);
		if (out)
			*out = *in;
	}
	lock_of(ctx, cookie, &in->lock, name);
	in->slot = slot_try(&in->lock, &created);
	if (created) {
		remember_comm(tgid);
		remember_name(&in->lock, name, tgid);
	}
	in->gen = slot_gen;
	in->holder = 0;
	in->flags = 0;
	in->tgid = tgid;
	in->cmd = 0;
	in->uaddr = 0;
	/* Last: the reader takes a stamp as a whole wait. */
	in->ts = bpf_ktime_get_ns();
	return 0;
}

/* Ends the wait in, and counts it. */
static __always_inline void wait_end(struct pt_regs *ctx,
				     struct lt_inflight *in)
{
	__u64 delta = bpf_ktime_get_ns() - in->ts;
	struct lt_lock_stat *st;
	bool created = false;
	__s32 no_slot = LT_NO_SLOT;

	if (!slot_current(in->gen) || in->slot == LT_NO_SLOT)
		in->slot = slot_of(&in->lock, &created);
	st = stat_at(in->slot);
	if (st) {
		if (created)
			remember_comm(in->tgid);
		add_wait(st, delta);
		st->contended++;
		record_stack(ctx, &in->lock, in->tgid, delta);
		credit_at(&in->lock, in->tgid, LT_ROLE_WAITER, delta, &no_slot);
	}
	in->ts = 0;
}

static __always_inline int wait_done(struct pt_regs *ctx, __u64 cookie)
{
	__u32 kind = LT_USDT_COOKIE_KIND(cookie);
	struct task_struct *task = bpf_get_current_task_btf();
	struct lt_inflight *out;
	struct lt_thread *th;

	th = this_thread(false);
	if (!th)
		return 0;
	out = bpf_task_storage_get(&outer, task, NULL, 0);
	if (th->wait.ts && th->wait.lock.kind == kind) {
		wait_end(ctx, &th->wait);
		if (out && out->ts) {
			th->wait = *out; /* the outer wait goes on */
			out->ts = 0;
		}
	} else if (out && out->ts && out->lock.kind == kind) {
		wait_end(ctx, out); /* the inner one's done was missed */
	}
	return 0;
}

/* A deadlock, found by a thread that waits on one of its locks. */
static __always_inline int deadlock(__u64 cookie)
{
	struct lt_thread *th = this_thread(false);
	struct lt_lock_stat *st;
	bool created = false;

	if (!th || !th->wait.ts ||
	    th->wait.lock.kind != LT_USDT_COOKIE_KIND(cookie))
		return 0;
	st = stat_at(slot_of(&th->wait.lock, &created));
	if (st)
		st->deadlocks++;
	return 0;
}

/* The same object: all but who told it and when. */
static __always_inline bool same_object(const struct lt_usdt_object *a,
					const struct lt_usdt_object *b)
{
	const __u32 *x = (const __u32 *)a, *y = (const __u32 *)b;
	__u32 i;

	for (i = 0; i < __builtin_offsetof(struct lt_usdt_object, tgid) /
				sizeof(__u32);
	     i++)
		if (x[i] != y[i])
			return false;
	return true;
}

/*
 * The name and storage of the object at obj, whose checked structure
 * is at p, into objects: only when new or changed (a rename, a new
 * file), so that the collector names its locks again. An object known
 * is read again at most about once a second: most entries cost a
 * lookup.
 */
static __always_inline void learn_object(__u32 kind, const volatile __u16 *at,
					 __u64 obj, __u64 p, const __u32 *f)
{
	struct lt_usdt_object_key key = { .kind = kind,
					  .field = { f[0], f[1] } };
	struct lt_usdt_object o = {}, *old;
	__u32 now = (__u32)(bpf_ktime_get_ns() >> 30);

	if (!at[LT_AT_NAME])
		return;
	old = bpf_map_lookup_elem(&objects, &key);
	if (old && old->read_at == now)
		return;
	if (bpf_probe_read_user(&o.space, 4,
				(const void *)(obj + at[LT_AT_SPACE])) ||
	    bpf_probe_read_user(&o.file, 4,
				(const void *)(obj + at[LT_AT_FILE])) ||
	    bpf_probe_read_user_str(o.name, sizeof(o.name),
				    (const void *)(p + at[LT_AT_NAME])) <= 0)
		return;
	if (old && same_object(old, &o)) {
		old->read_at = now;
		return;
	}
	o.tgid = current_ids() >> 32;
	o.read_at = now;
	if (!bpf_map_update_elem(&objects, &key, &o, BPF_ANY))
		__sync_fetch_and_add(&objects_changed, 1);
}

SEC("usdt")
int lt_usdt(struct pt_regs *ctx)
{
	__u64 cookie = bpf_usdt_cookie(ctx);

	count_run();
	switch (LT_USDT_COOKIE_EVENT(cookie)) {
	case LT_USDT_START:
		return wait_start(ctx, cookie);
	case LT_USDT_DONE:
		return wait_done(ctx, cookie);
	case LT_USDT_DEADLOCK:
		return deadlock(cookie);
	}
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
