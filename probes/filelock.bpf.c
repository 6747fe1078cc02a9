// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * fcntl (POSIX and OFD) and flock(2) locks, per lock: acquisitions,
 * conflicts, try-lock failures, wait and hold time, and the holder.
 *
 * The filelock tracepoints carry everything: posix_lock_inode and
 * flock_lock_inode fire on each attempt inside the call and say which
 * lock, whether it conflicted, with whom (the blocker's pid) and how it
 * went (granted, refused, or deferred: the caller is about to sleep). A
 * wait runs from the first deferred attempt to the grant, and is one
 * only if the thread did sleep: a holder that lets go between the
 * deferral and the sleep leaves a call that never waited. A wait that
 * ends without a grant ends at the signal delivered to its thread (the
 * call then fails with EINTR, or is restarted and waits again), or at a
 * retry the kernel refuses. So a lock call's return needs no probe of
 * its own: the grant, the unlock and the refusal are the only runs on
 * the path every call takes. Hold time runs from the grant to the
 * unlock of the same range by the same owner, or to the close or exit
 * that releases it.
 *
 * A store like tdb locks a byte at each record's offset, and records
 * move, so it meets tens of thousands of ranges a minute. While the lock
 * or party map is LT_FOLD_AT percent full, a range with no slot of its
 * own is counted with its file's other ranges (one key per file and
 * kind, LT_FOLD_START): the file's figures stay whole, the map keeps
 * room, and the held range keeps its own bounds for its unlock.
 *
 * fcntl locks always enter the kernel, so this path stays lean: no
 * probe on fcntl's entry or return, and a call's wait lives in the thread's
 * storage (no hashing, no bucket lock), where the collector's reader
 * finds it.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "common.bpf.h"
#include "stacks.bpf.h"
#include "filelock.h"
#include "klock.bpf.h"

#define F_SETLK 6
#define F_SETLKW 7
#define F_OFD_SETLK 37
#define F_OFD_SETLKW 38
#define F_UNLCK 2
#define FL_OFDLCK 1024
#define OFFSET_MAX 0x7fffffffffffffffLL
#define FILE_LOCK_DEFERRED 1
#define EAGAIN 11
#define EACCES 13
#define EDEADLK 35

/* The x86-64 syscall numbers of the two lock calls. */
#define NR_FCNTL 72
#define NR_FLOCK 73

#include "filelock_hold.bpf.h"

static __always_inline bool is_setlk(long cmd)
{
	return cmd == F_SETLK || cmd == F_SETLKW || cmd == F_OFD_SETLK ||
	       cmd == F_OFD_SETLKW;
}

static __always_inline bool file_kind(__u32 kind)
{
	return kind == LT_PK_FCNTL || kind == LT_PK_OFD || kind == LT_PK_FLOCK;
}

/* The thread's file lock wait in progress, or NULL. */
static __always_inline struct lt_inflight *waiting_call(struct lt_thread *th)
{
	return th && th->wait.ts && file_kind(th->wait.lock.kind) ? &th->wait :
								    NULL;
}

/* The user registers of the syscall the current thread is in. */
static __always_inline struct pt_regs *syscall_regs(long *nr)
{
#ifdef __TARGET_ARCH_x86
	struct pt_regs *regs;

	regs = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
	*nr = BPF_CORE_READ(regs, orig_ax);
	return regs;
#else
	*nr = -1;
	return NULL;
#endif
}

/* The descriptor the lock call named, or -1: for naming the lock. */
static __always_inline int call_fd(void)
{
#ifdef __TARGET_ARCH_x86
	struct pt_regs *regs;
	long nr;

	regs = syscall_regs(&nr);
	if (regs && (nr == NR_FCNTL || nr == NR_FLOCK))
		return (int)BPF_CORE_READ(regs, di);
#endif
	return -1;
}

/*
 * The range the caller asked for, from its struct flock. The kernel
 * merges a grant with the owner's adjacent ranges of the same type and
 * the tracepoint then shows the merged range, while the request is what
 * names the lock. Only SEEK_SET ranges are known without the file.
 */
static __always_inline bool asked_range(__u64 *start, __u64 *end)
{
#ifdef __TARGET_ARCH_x86
	struct pt_regs *regs;
	struct flock fl;
	long nr;

	regs = syscall_regs(&nr);
	if (!regs || nr != NR_FCNTL || !is_setlk(BPF_CORE_READ(regs, si)))
		return false;
	if (bpf_probe_read_user(&fl, sizeof(fl),
				(void *)BPF_CORE_READ(regs, dx)) ||
	    fl.l_whence != 0 /* SEEK_SET */)
		return false;
	if (fl.l_len > 0) {
		*start = fl.l_start;
		*end = fl.l_start + fl.l_len - 1;
	} else if (fl.l_len == 0) {
		*start = fl.l_start;
		*end = OFFSET_MAX;
	} else {
		*start = fl.l_start + fl.l_len;
		*end = fl.l_start - 1;
	}
	return true;
#else
	return false;
#endif
}

static __always_inline void name_lock(const struct lt_lock_key *lock,
				      struct file_lock *fl, __u32 tgid)
{
	struct file_lock_context *flctx = fl->c.flc_file->f_inode->i_flctx;
	struct lt_where w = {
		.tgid = tgid,
		.fd = call_fd(),
		.dev = lock->dev_or_tgid,
		.ino = lock->ino,
	};
	__u64 flc;

	bpf_probe_read_kernel_str(w.file, sizeof(w.file),
				  fl->c.flc_file->f_path.dentry->d_name.name);
	remember_comm(tgid);
	bpf_map_update_elem(&wheres, lock, &w, BPF_NOEXIST);
	/* The file's spinlock, for the kernel lock probe to name. */
	if (flctx) {
		struct lt_flc_name n = {
			.dev = w.dev,
			.ino = w.ino,
			.tgid = tgid,
			.fd = w.fd,
		};

		__builtin_memcpy(n.file, w.file, sizeof(n.file));
		flc = (__u64)&flctx->flc_lock;
		bpf_map_update_elem(&flc_names, &flc, &n, BPF_ANY);
	}
}

/*
 * The thread's cache entry for lock, taken over (its slots not known yet)
 * when it has none; NULL when th is. A lock met again, as a process
 * takes the same ranges over and over, finds its figures and its parties
 * without hashing. Slots found before slot_gen moved are forgotten.
 */
static __always_inline int file_ident_at(struct lt_thread *th,
					 const struct lt_lock_key *lock)
{
	struct lt_file_ident *c;
	__u32 i;

	if (!th || !lock)
		return -1;
	for (i = 0; i < LT_FILE_CACHE; i++) {
		c = &th->file[i];
		if (!same_lock(&c->key, lock))
			continue;
		if (!slot_current(c->gen)) {
			c->slot = LT_NO_SLOT;
			c->waiter_slot = LT_NO_SLOT;
			c->holder_slot = LT_NO_SLOT;
			c->gen = slot_gen;
		}
		return (int)i;
	}
	i = th->file_next++ & (LT_FILE_CACHE - 1);
	c = &th->file[i];
	c->key = *lock;
	c->slot = LT_NO_SLOT;
	c->waiter_slot = LT_NO_SLOT;
	c->holder_slot = LT_NO_SLOT;
	c->holder = 0;
	c->gen = slot_gen;
	return (int)i;
}

static __always_inline struct lt_file_ident *
file_ident(struct lt_thread *th, const struct lt_lock_key *lock)
{
	int i;

	if (!th)
		return NULL;
	i = file_ident_at(th, lock);
	return i < 0 ? NULL : &th->file[i & (LT_FILE_CACHE - 1)];
}

/* The thread's cache entry for lock when it holds the lock's current
 * slot, else NULL: such a lock has figures of its own, never folded. */
static __always_inline struct lt_file_ident *
known_ident(struct lt_thread *th, const struct lt_lock_key *lock)
{
	struct lt_file_ident *c;
	__u32 i;

	if (!th)
		return NULL;
	for (i = 0; i < LT_FILE_CACHE; i++) {
		c = &th->file[i];
		if (same_lock(&c->key, lock) && slot_current(c->gen) &&
		    c->slot != LT_NO_SLOT)
			return c;
	}
	return NULL;
}

/*
 * The lock's figures, named when they are new; *slot is where they are.
 * c, the thread's cache entry for the lock or NULL, keeps the slot.
 */
static __always_inline struct lt_lock_stat *
lock_stat(struct lt_file_ident *c, const struct lt_lock_key *lock,
	  struct file_lock *fl, __u32 tgid, __s32 *slot)
{
	struct lt_lock_stat *st;
	bool created;

	if (c && c->slot != LT_NO_SLOT) {
		*slot = c->slot;
		return stat_at(*slot);
	}
	st = stat_of(lock, &created, slot);
	if (created)
		name_lock(lock, fl, tgid);
	if (c)
		c->slot = *slot;
	return st;
}

/*
 * The key lock's figures go to: its own, or while the maps are crowded
 * and it has no slot, its file's other ranges (flock has one key per
 * file). Below the mark this costs a few array loads, no hashing.
 */
static __always_inline void fold(const struct lt_lock_key *lock,
				 struct lt_lock_key *fig)
{
	*fig = *lock;
	if (lock->kind == LT_PK_FLOCK ||
	    !(crowded(LT_HIGH_LOCKS, LT_MAX_LOCKS) ||
	      crowded(LT_HIGH_PARTIES, LT_MAX_PARTIES)) ||
	    slot_find(lock) != LT_NO_SLOT)
		return;
	fig->start = LT_FOLD_START;
	fig->end = LT_FOLD_END;
}

/*
 * credit_at(), but while the party map is crowded a range's new holder or
 * waiter is its file's other ranges' (whose row is made, and named, if
 * need be), so that the file's holders and waiters stay whole.
 */
static __always_inline void credit_file(const struct lt_lock_key *fig,
					struct file_lock *fl, __u32 tgid,
					__u32 id, __u32 role, __u64 ns,
					__s32 *slot)
{
	struct lt_party_key pk = { .lock = *fig, .tgid = id, .role = role };
	__s32 fslot;

	if (*slot == LT_NO_SLOT && fig->kind != LT_PK_FLOCK &&
	    !LT_KEY_FOLDED(fig) && crowded(LT_HIGH_PARTIES, LT_MAX_PARTIES) &&
	    named_slot(&party_slots, &pk) == LT_NO_SLOT) {
		pk.lock.start = LT_FOLD_START;
		pk.lock.end = LT_FOLD_END;
		lock_stat(NULL, &pk.lock, fl, tgid, &fslot);
	}
	credit_at(&pk.lock, id, role, ns, slot);
}

/* The call will sleep: its wait starts now, unless it already had. */
static __always_inline void deferred(struct task_struct *task,
				     const struct lt_lock_key *lock,
				     struct file_lock *fl, __u32 tgid,
				     struct file_lock_core *blocker)
{
	struct lt_thread *th = task_thread(task, true);
	struct lt_inflight *call;
	struct lt_lock_key fig;

	if (!th) {
		count_drop(LT_DROP_START_FULL);
		return;
	}
	call = &th->wait;
	/* Woken, it tries again and may sleep behind another holder.
	 * flc_pid is the kernel's own (initial namespace) tgid. */
	call->holder = blocker ? kernel_tgid_here(blocker->flc_pid) : 0;
	if (!call->ts || !file_kind(call->lock.kind)) {
		/* Named while the file is at hand. */
		fold(lock, &fig);
		lock_stat(file_ident(th, &fig), &fig, fl, tgid, &call->slot);
		call->gen = slot_gen;
		call->lock = fig;
		call->tgid = tgid;
		call->flags = 0;
		/* File locks: the thread's voluntary switches before it
		 * sleeps. */
		call->uaddr = task->nvcsw;
		/* Last: the reader takes a stamp as a whole wait. */
		call->ts = bpf_ktime_get_ns();
	}
	if (targ_stacks && blocker && slot_current(call->gen))
		wait_behind((__u64)blocker->flc_owner, lock, call->slot);
}

static __always_inline void granted(void *ctx, struct task_struct *task,
				    struct lt_lock_key *lock,
				    struct file_lock *fl, __u64 owner,
				    __u32 tgid)
{
	struct lt_owner_key ok = {
		.owner = owner,
		.dev = lock->dev_or_tgid,
		.ino = lock->ino,
	};
	struct lt_thread *th = task_thread(task, true);
	struct lt_inflight *call = waiting_call(th);
	struct lt_owner_locks *ol = owner_locks(th, &ok, true);
	struct lt_file_ident *c;
	struct lt_lock_stat *st;
	struct lt_lock_key fig;
	__u64 now = 0, delta;
	__s32 slot, no_waiter = LT_NO_SLOT, no_holder = LT_NO_SLOT;

	/* The range it slept on is the one it asked for; a folded wait kept
	 * only its file's key, so its range is read from the call, as is
	 * that of a grant the kernel may have merged with a held range. */
	if (call && !LT_KEY_FOLDED(&call->lock)) {
		lock->start = call->lock.start;
		lock->end = call->lock.end;
	} else if (call ||
		   (ol && lock->kind != LT_PK_FLOCK &&
		    may_merge(ol, lock->kind, lock->start, lock->end))) {
		asked_range(&lock->start, &lock->end);
	}
	/* The clock for a wait that ends here; for a hold, see hold(). */
	if (call)
		now = bpf_ktime_get_ns();
	c = known_ident(th, lock);
	if (c) {
		fig = *lock;
	} else {
		fold(lock, &fig);
		c = file_ident(th, &fig);
	}
	st = lock_stat(c, &fig, fl, tgid, &slot);
	if (st) {
		st->acquires++;
		if (call && task->nvcsw != call->uaddr) {
			delta = now - call->ts;
			st->contended++;
			add_wait(st, delta);
			credit_file(&fig, fl, tgid, tgid, LT_ROLE_WAITER, delta,
				    c ? &c->waiter_slot : &no_waiter);
			if (call->holder) {
				/* flc_pid is the holding process. */
				st->last_holder = call->holder;
				if (c && c->holder != call->holder) {
					c->holder = call->holder;
					c->holder_slot = LT_NO_SLOT;
				}
				credit_file(&fig, fl, tgid, call->holder,
					    LT_ROLE_HOLDER_PROC, delta,
					    c ? &c->holder_slot : &no_holder);
			}
			record_stack(ctx, &fig, tgid, delta);
			release_charge(&fig, slot, delta);
			if (ol)
				wait_in_holds(ol, delta);
		}
	}
	if (call)
		call->ts = 0;
	if (ol)
		hold(th, task, ol, lock, &fig, st, slot, now);
}

/*
 * Ends the thread's lock call in progress, if it waited: with the wait
 * counted as interrupted when a signal ended it (a wait that ends in a
 * grant is counted by granted(), one the kernel refuses on its retry
 * not at all).
 */
static __always_inline void end_call(struct lt_thread *th, bool interrupted)
{
	struct lt_inflight *call = waiting_call(th);
	struct lt_lock_stat *st;

	if (!call)
		return;
	if (interrupted) {
		st = stat_kept(call->slot, call->gen, &call->lock);
		if (st) {
			st->interrupted++;
			add_wait(st, bpf_ktime_get_ns() - call->ts);
		}
	}
	call->ts = 0;
}

static __always_inline int on_lock_inode(void *ctx, struct inode *inode,
					 struct file_lock *fl, int ret,
					 __u32 kind)
{
	/* One helper call for the task: its ids and its state are loads
	 * from it, where each call costs a return on this path. */
	struct task_struct *task = bpf_get_current_task_btf();
	__u32 tgid = task->tgid;
	struct lt_lock_key lock = {
		.kind = kind,
		.shared = 1,
	};
	struct lt_lock_stat *st;
	struct lt_thread *th;
	struct lt_lock_key fig;
	__s32 slot;

	if (!fl)
		return 0;
	lock.dev_or_tgid = inode->i_sb->s_dev;
	lock.ino = inode->i_ino;
	if (kind != LT_PK_FLOCK) {
		lock.start = fl->fl_start;
		lock.end = fl->fl_end;
		if (fl->c.flc_flags & FL_OFDLCK)
			lock.kind = LT_PK_OFD;
	}
	if (fl->c.flc_type == F_UNLCK) {
		/* Unlocks from close and exit come outside any lock call;
		 * they still end holds. An unlock is never merged. */
		release(ctx, task, (__u64)fl->c.flc_owner, lock.dev_or_tgid,
			lock.ino, lock.start,
			kind == LT_PK_FLOCK ? OFFSET_MAX : lock.end);
		return 0;
	}
	/* Releases come first: an exit's comes after the process has left
	 * the traced set, and only holds it took are in the map. */
	if (targ_pidns_ino)
		tgid = task_ids_here(task) >> 32; /* tid stays the kernel's */
	if (!wanted(tgid))
		return 0;
	if (!ret) {
		granted(ctx, task, &lock, fl, (__u64)fl->c.flc_owner, tgid);
		return 0;
	}
	if (ret == FILE_LOCK_DEFERRED) {
		/* A conflict is found before any merge: the range is the
		 * request's. */
		deferred(task, &lock, fl, tgid, fl->c.flc_blocker);
		return 0;
	}
	/* A refusal ends the call, and a wait it had: uncounted, as a
	 * wait is one only where it ends in a grant or a signal. */
	th = task_thread(task, true);
	end_call(th, false);
	if (ret != -EAGAIN && ret != -EACCES && ret != -EDEADLK)
		return 0;
	/* A try that failed: the blocking call that follows finds the
	 * lock's slot in the thread's cache. */
	fold(&lock, &fig);
	st = lock_stat(file_ident(th, &fig), &fig, fl, tgid, &slot);
	if (!st)
		return 0;
	if (ret == -EDEADLK)
		st->deadlocks++; /* the kernel refused a cycle */
	else
		st->trylock_failures++;
	return 0;
}

/* BTF tracepoints: the arguments as they are, no event record built. */
SEC("tp_btf/posix_lock_inode")
int BPF_PROG(lt_posix_lock, struct inode *inode, struct file_lock *fl, int ret)
{
	count_run();
	return on_lock_inode(ctx, inode, fl, ret, LT_PK_FCNTL);
}

SEC("tp_btf/flock_lock_inode")
int BPF_PROG(lt_flock_lock, struct inode *inode, struct file_lock *fl, int ret)
{
	count_run();
	return on_lock_inode(ctx, inode, fl, ret, LT_PK_FLOCK);
}

/*
 * A signal delivered to a thread in the middle of a lock call: the call
 * returns for it, so a wait it had ends here, interrupted. Only a
 * thread's own wait ends: the signal is delivered by the thread that
 * takes it, on its way back to user space.
 */
SEC("tp_btf/signal_deliver")
int BPF_PROG(lt_lock_signal, int sig, struct kernel_siginfo *info,
	     struct k_sigaction *ka)
{
	count_run();
	end_call(this_thread(false), true);
	return 0;
}

/*
 * Every owner slot is free when the probes load: run once by the
 * collector, never attached, it queues each in order in one call.
 */
__u32 owners_fill_failed = 0; /* slots the queue would not take */

static long push_owner_slot(__u32 i, void *ctx)
{
	if (bpf_map_push_elem(&free_owner_slots, &i, 0))
		owners_fill_failed++;
	return 0;
}

SEC("raw_tp")
int lt_fill_owners(void *ctx)
{
	owners_fill_failed = 0;
	bpf_loop(LT_MAX_OWNERS, push_owner_slot, NULL, 0);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
