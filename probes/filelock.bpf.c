// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * fcntl (POSIX and OFD) and flock(2) locks, per lock: acquisitions,
 * conflicts, try-lock failures, wait and hold time, and the holder.
 *
 * The syscall tracepoints bracket the call; the filelock tracepoints,
 * which fire inside it, say which lock, whether it conflicted, and with
 * whom (the blocker's pid). Hold time runs from the grant to the unlock
 * of the same range by the same owner, or to the close or exit that
 * releases it.
 *
 * fcntl locks always enter the kernel, so this path stays lean: the call
 * in progress lives in task storage (no hashing, no bucket lock), and
 * only a call that blocks is published where the collector can see it.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "common.bpf.h"
#include "filelock.h"

#define F_SETLK 6
#define F_SETLKW 7
#define F_OFD_SETLK 37
#define F_OFD_SETLKW 38
#define F_UNLCK 2
#define FL_OFDLCK 1024
#define OFFSET_MAX 0x7fffffffffffffffLL
#define EAGAIN 11
#define EACCES 13
#define EDEADLK 35

#define CMD_FLOCK 0x10000 /* lt_inflight.cmd: flock(2) op in the low bits */

/* lt_inflight.flags */
#define IF_KEYED 1 /* a filelock tracepoint named the lock */
#define IF_CONFLICT 2 /* the request met a conflicting lock */
#define IF_DEADLOCK 8 /* the kernel refused a cycle */
#define IF_RANGE 16 /* the range came from the caller's struct flock */
#define IF_PUBLISHED 32 /* also in `inflight`, for the collector */

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LT_MAX_OWNERS);
	__type(key, struct lt_owner_key);
	__type(value, struct lt_owner_locks);
} owned SEC(".maps");

/* The lock call each thread is in. */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct lt_inflight);
} calls SEC(".maps");

static __always_inline bool is_setlk(long cmd)
{
	return cmd == F_SETLK || cmd == F_SETLKW || cmd == F_OFD_SETLK ||
	       cmd == F_OFD_SETLKW;
}

static __always_inline struct lt_inflight *call_begin(__u32 tgid)
{
	struct lt_inflight *call;

	call = bpf_task_storage_get(&calls, bpf_get_current_task_btf(), NULL,
				    BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!call) {
		count_drop(LT_DROP_START_FULL);
		return NULL;
	}
	__builtin_memset(call, 0, sizeof(*call));
	call->tgid = tgid;
	return call;
}

static __always_inline struct lt_inflight *call_now(void)
{
	struct lt_inflight *call;

	call = bpf_task_storage_get(&calls, bpf_get_current_task_btf(), NULL,
				    0);
	return call && call->ts ? call : NULL;
}

SEC("tracepoint/syscalls/sys_enter_fcntl")
int lt_fcntl_enter(struct trace_event_raw_sys_enter *ctx)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct lt_inflight *call;
	struct flock fl;

	if (!is_setlk(ctx->args[1]) || !wanted(tgid))
		return 0;
	call = call_begin(tgid);
	if (!call)
		return 0;
	/*
	 * The kernel merges a grant with the owner's adjacent ranges, and
	 * the tracepoint then shows the merged range: the request itself
	 * names the lock. Only SEEK_SET ranges are known without the file.
	 */
	if (!bpf_probe_read_user(&fl, sizeof(fl), (void *)ctx->args[2]) &&
	    fl.l_whence == 0 /* SEEK_SET */) {
		if (fl.l_len > 0) {
			call->lock.start = fl.l_start;
			call->lock.end = fl.l_start + fl.l_len - 1;
		} else if (fl.l_len == 0) {
			call->lock.start = fl.l_start;
			call->lock.end = OFFSET_MAX;
		} else {
			call->lock.start = fl.l_start + fl.l_len;
			call->lock.end = fl.l_start - 1;
		}
		call->flags |= IF_RANGE;
	}
	call->cmd = ctx->args[1];
	call->uaddr = ctx->args[0]; /* the descriptor, for naming */
	call->ts = bpf_ktime_get_ns();
	return 0;
}

SEC("tracepoint/syscalls/sys_enter_flock")
int lt_flock_enter(struct trace_event_raw_sys_enter *ctx)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct lt_inflight *call;

	if (!wanted(tgid))
		return 0;
	call = call_begin(tgid);
	if (!call)
		return 0;
	call->cmd = CMD_FLOCK | (ctx->args[1] & 0xffff);
	call->uaddr = ctx->args[0];
	call->ts = bpf_ktime_get_ns();
	return 0;
}

static __always_inline bool same_lock(const struct lt_lock_key *a,
				      const struct lt_lock_key *b)
{
	return a->dev_or_tgid == b->dev_or_tgid && a->ino == b->ino &&
	       a->start == b->start && a->end == b->end && a->kind == b->kind;
}

/* The innermost lock is the one I/O is charged to. */
static __always_inline void push_thread_lock(const struct lt_lock_key *lock)
{
	struct lt_thread_locks *tl;
	__u32 n;

	tl = bpf_task_storage_get(&thread_lock, bpf_get_current_task_btf(),
				  NULL, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!tl)
		return;
	n = tl->n;
	if (n < LT_HELD_DEPTH) {
		tl->keys[n] = *lock;
		tl->n = n + 1;
	}
}

/*
 * Takes lock off the current thread's held stack, wherever it sits. A
 * lock released by another thread (a close elsewhere in the process) is
 * left on its stack until that thread next locks or unlocks past it.
 */
static __always_inline void forget_thread_lock(const struct lt_lock_key *lock)
{
	struct lt_thread_locks *tl;
	__u32 i, j, n;

	tl = bpf_task_storage_get(&thread_lock, bpf_get_current_task_btf(),
				  NULL, 0);
	if (!tl)
		return;
	n = tl->n < LT_HELD_DEPTH ? tl->n : LT_HELD_DEPTH;
	for (i = 0; i < LT_HELD_DEPTH && i < n; i++) {
		if (!same_lock(&tl->keys[i], lock))
			continue;
		for (j = i; j + 1 < LT_HELD_DEPTH && j + 1 < n; j++)
			tl->keys[j] = tl->keys[j + 1];
		tl->n = n - 1;
		break;
	}
}

static __always_inline void end_hold(const struct lt_owner_key *ok,
				     const struct lt_owned *r, __u64 now)
{
	struct lt_lock_key lock = {
		.dev_or_tgid = ok->dev,
		.ino = ok->ino,
		.start = r->start,
		.end = r->end,
		.kind = r->kind,
		.shared = 1,
	};
	struct lt_lock_stat *st = bpf_map_lookup_elem(&stat_map, &lock);

	if (st)
		add_hold(st, now - r->ts);
	if (r->tid == (__u32)bpf_get_current_pid_tgid())
		forget_thread_lock(&lock);
}

/*
 * An unlock of [start, end] by owner ends the holds of every range it
 * covers. Close and exit unlock the whole file, so they end them all.
 */
static __always_inline void release(__u64 owner, __u64 dev, __u64 ino,
				    __u64 start, __u64 end)
{
	struct lt_owner_key ok = { .owner = owner, .dev = dev, .ino = ino };
	struct lt_owner_locks *ol = bpf_map_lookup_elem(&owned, &ok);
	__u64 now;
	__u32 i, kept = 0, n;

	if (!ol)
		return;
	now = bpf_ktime_get_ns();
	n = ol->n;
	for (i = 0; i < LT_OWNER_RANGES && i < n; i++) {
		if (ol->r[i].start >= start && ol->r[i].end <= end) {
			end_hold(&ok, &ol->r[i], now);
			continue;
		}
		if (kept != i && kept < LT_OWNER_RANGES)
			ol->r[kept] = ol->r[i];
		kept++;
	}
	ol->n = kept;
	/* An ordinary unlock keeps the entry for the owner's next lock; a
	 * close or exit (the whole file) ends the owner's use of it. */
	if (!kept && !start && end >= OFFSET_MAX)
		bpf_map_delete_elem(&owned, &ok);
}

static __always_inline void grant(const struct lt_lock_key *lock, __u64 owner,
				  __u32 tid)
{
	static const struct lt_owner_locks zero;
	struct lt_owner_key ok = {
		.owner = owner,
		.dev = lock->dev_or_tgid,
		.ino = lock->ino,
	};
	struct lt_owner_locks *ol;
	__u32 i, n;

	ol = bpf_map_lookup_elem(&owned, &ok);
	if (!ol) {
		bpf_map_update_elem(&owned, &ok, &zero, BPF_NOEXIST);
		ol = bpf_map_lookup_elem(&owned, &ok);
		if (!ol) {
			count_drop(LT_DROP_HELD_FULL);
			return;
		}
	}
	n = ol->n;
	/* A re-grant of a range already held keeps the first grant's time. */
	for (i = 0; i < LT_OWNER_RANGES && i < n; i++)
		if (ol->r[i].start == lock->start && ol->r[i].end == lock->end)
			return;
	if (n >= LT_OWNER_RANGES) {
		count_drop(LT_DROP_HELD_FULL);
		return;
	}
	ol->r[n].start = lock->start;
	ol->r[n].end = lock->end;
	ol->r[n].ts = bpf_ktime_get_ns();
	ol->r[n].tid = tid;
	ol->r[n].kind = lock->kind;
	ol->n = n + 1;
	push_thread_lock(lock);
}

static __always_inline int
on_lock_inode(struct trace_event_raw_filelock_lock *ctx, __u32 kind)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id, tgid = id >> 32;
	__u64 dev = ctx->s_dev, ino = ctx->i_ino, owner = (__u64)ctx->owner;
	__u64 start = 0, end = 0;
	struct lt_inflight *call;
	int ret = ctx->ret;

	if (!wanted(tgid))
		return 0;
	if (kind != LT_PK_FLOCK) {
		start = ctx->fl_start;
		end = ctx->fl_end;
		if (ctx->flags & FL_OFDLCK)
			kind = LT_PK_OFD;
	}
	call = call_now();
	if (call && (call->flags & IF_RANGE)) {
		start = call->lock.start;
		end = call->lock.end;
	}
	if (ctx->type == F_UNLCK) {
		/* Unlocks from close and exit come outside any call we
		 * bracket; they still end holds. */
		if (kind == LT_PK_FLOCK)
			end = OFFSET_MAX;
		release(owner, dev, ino, start, end);
		return 0;
	}
	if (!call)
		return 0;
	call->lock.dev_or_tgid = dev;
	call->lock.ino = ino;
	call->lock.start = start;
	call->lock.end = end;
	call->lock.kind = kind;
	call->lock.shared = 1;
	call->flags |= IF_KEYED;
	if (ctx->blocker) {
		call->flags |= IF_CONFLICT;
		call->holder = BPF_CORE_READ(ctx->blocker, flc_pid);
		/* It will block: let the collector see it waiting. */
		if (ret > 0 && !(call->flags & IF_PUBLISHED)) {
			call->flags |= IF_PUBLISHED;
			if (bpf_map_update_elem(&inflight, &tid, call, BPF_ANY))
				count_drop(LT_DROP_START_FULL);
		}
	}
	if (ret == -EDEADLK)
		call->flags |= IF_DEADLOCK;
	if (!ret)
		grant(&call->lock, owner, tid);
	return 0;
}

SEC("tracepoint/filelock/posix_lock_inode")
int lt_posix_lock(struct trace_event_raw_filelock_lock *ctx)
{
	return on_lock_inode(ctx, LT_PK_FCNTL);
}

SEC("tracepoint/filelock/flock_lock_inode")
int lt_flock_lock(struct trace_event_raw_filelock_lock *ctx)
{
	return on_lock_inode(ctx, LT_PK_FLOCK);
}

static __always_inline void name_lock(const struct lt_inflight *call,
				      __u32 tgid)
{
	struct lt_where w = { .tgid = tgid, .fd = (__s32)call->uaddr };
	struct file *f = fd_file(w.fd);

	w.dev = call->lock.dev_or_tgid;
	w.ino = call->lock.ino;
	if (f)
		bpf_probe_read_kernel_str(w.file, sizeof(w.file),
					  BPF_CORE_READ(f, f_path.dentry,
							d_name.name));
	remember_comm(tgid);
	bpf_map_update_elem(&wheres, &call->lock, &w, BPF_NOEXIST);
}

static __always_inline int lock_call_end(void *ctx, long ret)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id, tgid = id >> 32;
	struct lt_inflight *call = call_now();
	struct lt_lock_stat *st;
	bool created;
	__u64 delta;

	if (!call)
		return 0;
	if (call->flags & IF_PUBLISHED)
		bpf_map_delete_elem(&inflight, &tid);
	if (!(call->flags & IF_KEYED))
		goto out; /* an unlock, or refused before the lock code */
	delta = bpf_ktime_get_ns() - call->ts;
	st = stat_of(&call->lock, &created);
	if (!st)
		goto out;
	if (created)
		name_lock(call, tgid);
	if (!ret) {
		st->acquires++;
		if (call->flags & IF_CONFLICT) {
			st->contended++;
			add_wait(st, delta);
			credit(&call->lock, tgid, LT_ROLE_WAITER, delta);
			record_stack(ctx, &call->lock, tgid, delta);
		}
	} else if (ret == -EAGAIN || ret == -EACCES) {
		st->trylock_failures++;
	} else if (interrupted_ret(ret)) {
		st->interrupted++;
		if (call->flags & IF_CONFLICT)
			add_wait(st, delta);
	} else if (ret == -EDEADLK || (call->flags & IF_DEADLOCK)) {
		st->deadlocks++;
	}
	if (call->holder && (call->flags & IF_CONFLICT)) {
		/* flc_pid is the holding process. */
		st->last_holder = call->holder;
		credit(&call->lock, call->holder, LT_ROLE_HOLDER_PROC, delta);
	}
out:
	call->ts = 0;
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_fcntl")
int lt_fcntl_exit(struct trace_event_raw_sys_exit *ctx)
{
	return lock_call_end(ctx, ctx->ret);
}

SEC("tracepoint/syscalls/sys_exit_flock")
int lt_flock_exit(struct trace_event_raw_sys_exit *ctx)
{
	return lock_call_end(ctx, ctx->ret);
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
