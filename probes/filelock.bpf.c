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
#define LOCK_NB 4
#define LOCK_UN 8
#define OFFSET_MAX 0x7fffffffffffffffLL
#define EAGAIN 11
#define EACCES 13
#define EWOULDBLOCK EAGAIN
#define EDEADLK 35

#define CMD_FLOCK 0x10000 /* lt_inflight.cmd: flock(2) op in the low bits */

/* lt_inflight.flags */
#define IF_RANGE 16 /* the range came from the caller's struct flock */
#define IF_KEYED 1 /* a filelock tracepoint named the lock */
#define IF_CONFLICT 2 /* the request met a conflicting lock */
#define IF_UNLOCK 4
#define IF_DEADLOCK 8

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LT_MAX_HELD);
	__type(key, struct lt_held_key);
	__type(value, struct lt_held);
} held SEC(".maps");

static __always_inline bool is_setlk(long cmd)
{
	return cmd == F_SETLK || cmd == F_SETLKW || cmd == F_OFD_SETLK ||
	       cmd == F_OFD_SETLKW;
}

SEC("tracepoint/syscalls/sys_enter_fcntl")
int lt_fcntl_enter(struct trace_event_raw_sys_enter *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id, tgid = id >> 32;
	struct lt_inflight in = {};
	struct flock fl;

	if (!is_setlk(ctx->args[1]) || !wanted(tgid))
		return 0;
	/*
	 * The kernel merges a grant with the owner's adjacent ranges, and
	 * the tracepoint then shows the merged range: the request itself
	 * names the lock. Only SEEK_SET ranges are known without the file.
	 */
	if (!bpf_probe_read_user(&fl, sizeof(fl), (void *)ctx->args[2]) &&
	    fl.l_whence == 0 /* SEEK_SET */) {
		if (fl.l_len > 0) {
			in.lock.start = fl.l_start;
			in.lock.end = fl.l_start + fl.l_len - 1;
		} else if (fl.l_len == 0) {
			in.lock.start = fl.l_start;
			in.lock.end = OFFSET_MAX;
		} else {
			in.lock.start = fl.l_start + fl.l_len;
			in.lock.end = fl.l_start - 1;
		}
		in.flags |= IF_RANGE;
	}
	in.ts = bpf_ktime_get_ns();
	in.tgid = tgid;
	in.cmd = ctx->args[1];
	in.uaddr = ctx->args[0]; /* the descriptor, for naming */
	if (bpf_map_update_elem(&inflight, &tid, &in, BPF_ANY))
		count_drop(LT_DROP_START_FULL);
	return 0;
}

SEC("tracepoint/syscalls/sys_enter_flock")
int lt_flock_enter(struct trace_event_raw_sys_enter *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id, tgid = id >> 32;
	struct lt_inflight in = {};

	if (!wanted(tgid))
		return 0;
	in.ts = bpf_ktime_get_ns();
	in.tgid = tgid;
	in.cmd = CMD_FLOCK | (ctx->args[1] & 0xffff);
	in.uaddr = ctx->args[0];
	if (bpf_map_update_elem(&inflight, &tid, &in, BPF_ANY))
		count_drop(LT_DROP_START_FULL);
	return 0;
}

struct release_ctx {
	struct lt_held_key want; /* owner, dev, ino and the range */
	__u32 n;
	struct lt_held_key found[4];
};

static long find_released(struct bpf_map *map, struct lt_held_key *key,
			  struct lt_held *val, struct release_ctx *ctx)
{
	if (key->owner != ctx->want.owner || key->dev != ctx->want.dev ||
	    key->ino != ctx->want.ino)
		return 0;
	if (key->start < ctx->want.start || key->end > ctx->want.end)
		return 0;
	if (ctx->n < 4)
		ctx->found[ctx->n++] = *key;
	return ctx->n >= 4;
}

static __always_inline bool same_lock(const struct lt_lock_key *a,
				      const struct lt_lock_key *b)
{
	return a->dev_or_tgid == b->dev_or_tgid && a->ino == b->ino &&
	       a->start == b->start && a->end == b->end && a->kind == b->kind;
}

/* Takes lock off the thread's held stack, wherever it sits. */
static __always_inline void forget_thread_lock(__u32 tid,
					       const struct lt_lock_key *lock)
{
	struct lt_thread_locks *tl = bpf_map_lookup_elem(&thread_lock, &tid);
	__u32 i, j, n;

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
	if (!tl->n)
		bpf_map_delete_elem(&thread_lock, &tid);
}

static __always_inline void end_hold(struct lt_held_key *hk, __u64 now)
{
	struct lt_held *h = bpf_map_lookup_elem(&held, hk);
	struct lt_lock_stat *st;

	if (!h)
		return;
	st = bpf_map_lookup_elem(&stat_map, &h->lock);
	if (st)
		add_hold(st, now - h->ts);
	forget_thread_lock(h->tid, &h->lock);
	bpf_map_delete_elem(&held, hk);
}

/*
 * An unlock: of exactly one granted range (the usual case, one lookup),
 * or of everything the owner holds in the range (close, exit, a wide
 * unlock), found by walking the held locks.
 */
static __always_inline void release(__u64 owner, __u64 dev, __u64 ino,
				    __u64 start, __u64 end)
{
	struct release_ctx rc = {};
	__u64 now = bpf_ktime_get_ns();
	__u32 i;

	rc.want.owner = owner;
	rc.want.dev = dev;
	rc.want.ino = ino;
	rc.want.start = start;
	rc.want.end = end;
	if (bpf_map_lookup_elem(&held, &rc.want)) {
		end_hold(&rc.want, now);
		return;
	}
	bpf_for_each_map_elem(&held, find_released, &rc, 0);
	for (i = 0; i < 4 && i < rc.n; i++)
		end_hold(&rc.found[i], now);
}

/* The innermost lock is the one I/O is charged to. */
static __always_inline void push_thread_lock(__u32 tid,
					     const struct lt_lock_key *lock)
{
	static const struct lt_thread_locks zero;
	struct lt_thread_locks *tl;
	__u32 n;

	tl = bpf_map_lookup_elem(&thread_lock, &tid);
	if (!tl) {
		bpf_map_update_elem(&thread_lock, &tid, &zero, BPF_NOEXIST);
		tl = bpf_map_lookup_elem(&thread_lock, &tid);
		if (!tl)
			return;
	}
	n = tl->n;
	if (n < LT_HELD_DEPTH) {
		tl->keys[n] = *lock;
		tl->n = n + 1;
	}
}

static __always_inline void grant(const struct lt_lock_key *lock, __u64 owner,
				  __u32 tid, __u32 tgid)
{
	struct lt_held_key hk = {
		.owner = owner,
		.dev = lock->dev_or_tgid,
		.ino = lock->ino,
		.start = lock->start,
		.end = lock->end,
	};
	struct lt_held h = { .lock = *lock, .tid = tid, .tgid = tgid };

	h.ts = bpf_ktime_get_ns();
	/* A re-grant of a range already held keeps the first grant's time. */
	if (bpf_map_update_elem(&held, &hk, &h, BPF_NOEXIST) &&
	    !bpf_map_lookup_elem(&held, &hk))
		count_drop(LT_DROP_HELD_FULL);
	push_thread_lock(tid, lock);
}

static __always_inline int
on_lock_inode(struct trace_event_raw_filelock_lock *ctx, __u32 kind)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id, tgid = id >> 32;
	__u64 dev = ctx->s_dev, ino = ctx->i_ino, owner = (__u64)ctx->owner;
	__u64 start = 0, end = 0;
	struct lt_inflight *in;
	int ret = ctx->ret;

	if (!wanted(tgid))
		return 0;
	if (kind != LT_PK_FLOCK) {
		start = ctx->fl_start;
		end = ctx->fl_end;
		if (ctx->flags & FL_OFDLCK)
			kind = LT_PK_OFD;
	}
	in = bpf_map_lookup_elem(&inflight, &tid);
	if (in && (in->flags & IF_RANGE)) {
		start = in->lock.start;
		end = in->lock.end;
	}
	if (ctx->type == F_UNLCK) {
		/* Unlocks from close and exit come outside any syscall we
		 * bracket; they still end holds. */
		if (kind == LT_PK_FLOCK)
			end = OFFSET_MAX;
		release(owner, dev, ino, start, end);
		return 0;
	}
	if (!in)
		return 0;
	in->lock.dev_or_tgid = dev;
	in->lock.ino = ino;
	in->lock.start = start;
	in->lock.end = end;
	in->lock.kind = kind;
	in->lock.shared = 1;
	in->flags |= IF_KEYED;
	if (ctx->blocker) {
		in->flags |= IF_CONFLICT;
		in->holder = BPF_CORE_READ(ctx->blocker, flc_pid);
	}
	if (ret == -EDEADLK)
		in->flags |= IF_DEADLOCK;
	if (!ret)
		grant(&in->lock, owner, tid, tgid);
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

static __always_inline int lock_call_end(void *ctx, long ret)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id, tgid = id >> 32;
	struct lt_inflight *in;
	struct lt_lock_stat *st;
	bool created;
	__u64 delta;

	in = bpf_map_lookup_elem(&inflight, &tid);
	if (!in)
		return 0;
	if (!(in->flags & IF_KEYED))
		goto out; /* an unlock, or refused before the lock code */
	delta = bpf_ktime_get_ns() - in->ts;
	st = stat_of(&in->lock, &created);
	if (!st)
		goto out;
	if (created) {
		struct lt_where w = { .tgid = tgid, .fd = (__s32)in->uaddr };

		struct file *f = fd_file(w.fd);

		w.dev = in->lock.dev_or_tgid;
		w.ino = in->lock.ino;
		if (f)
			bpf_probe_read_kernel_str(
				w.file, sizeof(w.file),
				BPF_CORE_READ(f, f_path.dentry, d_name.name));
		remember_comm(tgid);
		bpf_map_update_elem(&wheres, &in->lock, &w, BPF_NOEXIST);
	}
	if (!ret) {
		st->acquires++;
		if (in->flags & IF_CONFLICT) {
			st->contended++;
			add_wait(st, delta);
			credit(&in->lock, tgid, LT_ROLE_WAITER, delta);
			record_stack(ctx, &in->lock, tgid, delta);
		}
	} else if (ret == -EAGAIN || ret == -EACCES) {
		st->trylock_failures++;
	} else if (interrupted_ret(ret)) {
		st->interrupted++;
		if (in->flags & IF_CONFLICT)
			add_wait(st, delta);
	} else if (ret == -EDEADLK || (in->flags & IF_DEADLOCK)) {
		st->deadlocks++;
	}
	if (in->holder) {
		/* flc_pid is the holding process. */
		st->last_holder = in->holder;
		credit(&in->lock, in->holder, LT_ROLE_HOLDER_PROC,
		       (in->flags & IF_CONFLICT) ? delta : 0);
	}
out:
	bpf_map_delete_elem(&inflight, &tid);
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
