/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * User stacks (--stacks), for the probes that see locks' two sides (futex,
 * filelock): a wait's stack as it ends, and a release's that ended
 * waits, each counted per (lock, stack, role) in lock_stacks with a
 * snapshot of its first event for the collector to unwind. The maps are
 * maps.bpf.h's, shared by every object.
 */
#ifndef LOCKTOP_PROBES_STACKS_BPF_H
#define LOCKTOP_PROBES_STACKS_BPF_H

#include "globals.bpf.h"
#include "maps.bpf.h"
#include "probe_counts.bpf.h"
#include "slots.bpf.h"

static long vma_end_cb(struct task_struct *task, struct vm_area_struct *vma,
		       void *data)
{
	*(__u64 *)data = vma->vm_end;
	return 0;
}

/*
 * Keeps the user registers and the top of the user stack of a new
 * (lock, stack) pair. The kernel's own walk follows frame pointers and
 * stops at the first frame of code built without them (Debian's glibc);
 * the collector unwinds this copy with the modules' CFI instead.
 */
static __always_inline bool snap_stack(const struct lt_stack_key *sk,
				       __u32 tgid)
{
#ifdef __TARGET_ARCH_x86
	struct snap_scratch *sc;
	struct lt_stack_snap *sn;
	struct pt_regs *regs;
	__u64 sp, end, len, off, piece;
	__u32 zero = 0, i;
	long err;

	sc = bpf_map_lookup_elem(&snap_scratch, &zero);
	if (!sc)
		return false;
	sn = &sc->snap;
	regs = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
	sp = BPF_CORE_READ(regs, sp);
	sn->regs[LT_REG_IP] = BPF_CORE_READ(regs, ip);
	sn->regs[LT_REG_SP] = sp;
	sn->regs[LT_REG_BP] = BPF_CORE_READ(regs, bp);
	sn->regs[LT_REG_BX] = BPF_CORE_READ(regs, bx);
	sn->regs[LT_REG_R12] = BPF_CORE_READ(regs, r12);
	sn->regs[LT_REG_R13] = BPF_CORE_READ(regs, r13);
	sn->regs[LT_REG_R14] = BPF_CORE_READ(regs, r14);
	sn->regs[LT_REG_R15] = BPF_CORE_READ(regs, r15);
	sn->tgid = tgid;
	/* Up to the end of the stack's mapping: past it a copy faults. The
	 * lookup only tries the process's mmap lock; while another thread
	 * holds it (an allocator mapping memory), the copy runs until the
	 * first page that is not there. */
	end = sp;
	if (bpf_find_vma(bpf_get_current_task_btf(), sp, vma_end_cb, &end, 0) ||
	    end <= sp)
		end = sp + LT_SNAP_BYTES;
	len = end - sp;
	if (len > LT_SNAP_BYTES)
		len = LT_SNAP_BYTES;
	/*
	 * Page by page, up to the first page that is not there: the gap
	 * the kernel leaves at random above a main thread's first frame
	 * may never have been touched, and a copy that meets it fails.
	 */
	off = 0;
	for (i = 0; i < LT_SNAP_BYTES / LT_PAGE + 1 && off < len; i++) {
		piece = LT_PAGE - ((sp + off) & (LT_PAGE - 1));
		if (piece > len - off)
			piece = len - off;
		/* The verifier's bounds: off < LT_SNAP_BYTES, piece <= a
		 * page, inside the slack past the data. No-ops. */
		off &= LT_SNAP_BYTES - 1;
		piece &= 2 * LT_PAGE - 1;
		if (piece > LT_PAGE || !piece ||
		    bpf_probe_read_user(&sn->data[off], piece,
					(void *)(sp + off)))
			break;
		off += piece;
	}
	sn->len = off;
	if (!off)
		return false; /* nothing to unwind: the next wait tries again */
	err = bpf_map_update_elem(&stack_snaps, sk, sn, BPF_NOEXIST);
	if (!err)
		bpf_map_push_elem(&new_snaps, sk, 0);
	return !err || err == -17; /* -EEXIST: another CPU's is kept */
#else
	return true;
#endif
}

/* Marks a (lock, stack) as kept on every CPU: no CPU snapshots it again. */
static long mark_snapped(__u32 cpu, void *sk)
{
	struct lt_stack_stat *ss =
		bpf_map_lookup_percpu_elem(&lock_stacks, sk, cpu);

	if (!ss)
		return 1; /* past the last possible CPU */
	ss->snapped = 1;
	return 0;
}

/* The figures of a (lock, stack) pair, made on first use with tgid as
 * the process to symbolize it in; NULL, a drop, when the map is full. */
static __always_inline struct lt_stack_stat *
stack_stat(const struct lt_stack_key *sk, __u32 tgid)
{
	struct lt_stack_stat *ss, fresh = { .tgid = tgid };

	ss = bpf_map_lookup_elem(&lock_stacks, sk);
	if (ss)
		return ss;
	bpf_map_update_elem(&lock_stacks, sk, &fresh, BPF_NOEXIST);
	ss = bpf_map_lookup_elem(&lock_stacks, sk);
	if (!ss)
		count_drop(LT_DROP_STACKS_FULL);
	return ss;
}

/*
 * Counts one event of the current thread's user stack sk, and keeps a
 * snapshot of it until one is kept (the map may be full for a while):
 * each event of the stack tries again; once one is kept, none does.
 */
static __always_inline struct lt_stack_stat *
stack_event(const struct lt_stack_key *sk, __u32 tgid)
{
	struct lt_stack_stat *ss = stack_stat(sk, tgid);

	if (!ss)
		return NULL;
	if (!ss->snapped && snap_stack(sk, tgid))
		bpf_loop(LT_MAX_CPUS, mark_snapped, (void *)sk, 0);
	ss->count++;
	ss->tgid = tgid;
	return ss;
}

/* The current thread's user stack, in `stacks`; negative when none. */
static __always_inline __s64 user_stack_id(void *ctx)
{
	return bpf_get_stackid(ctx, &stacks,
			       BPF_F_USER_STACK | BPF_F_REUSE_STACKID);
}

/*
 * The user stack of a contended wait, from the syscall's exit: the
 * thread is still in the call, so its user registers are the caller's.
 */
static __always_inline void
record_stack(void *ctx, const struct lt_lock_key *lock, __u32 tgid, __u64 ns)
{
	struct lt_stack_key sk = { .lock = *lock, .role = LT_STACK_WAIT };
	struct lt_stack_stat *ss;

	if (!targ_stacks)
		return;
	sk.stack_id = user_stack_id(ctx);
	if (sk.stack_id < 0)
		return;
	ss = stack_event(&sk, tgid);
	if (ss)
		ss->ns += ns;
}

/*
 * A release that may end waits on lock, in slot (a futex wake, a file
 * lock's unlock with waiters): the releasing thread's user stack
 * becomes the lock's latest release, which the waits it ends find at
 * their end, and its figures are made for them to add to. Taken before
 * the release, as a woken waiter may end its wait before the release
 * returns. Returns the stack, negative when none (or without --stacks).
 */
static __always_inline __s64 release_begin(void *ctx,
					   const struct lt_lock_key *lock,
					   __s32 slot, __u32 tgid)
{
	struct lt_stack_key sk = { .lock = *lock, .role = LT_STACK_RELEASE };
	struct lt_release *r;
	__u32 k = (__u32)slot;

	if (!targ_stacks || slot < 0)
		return -1;
	sk.stack_id = user_stack_id(ctx);
	if (sk.stack_id < 0 || !stack_stat(&sk, tgid))
		return -1;
	r = bpf_map_lookup_elem(&releases, &k);
	if (r) {
		r->stack_id = sk.stack_id;
		r->tgid = tgid;
		r->gen = slot_gen;
	}
	return sk.stack_id;
}

/* The release begun with stack_id ended a wait: one for its stack. */
static __always_inline void release_ended(const struct lt_lock_key *lock,
					  __s64 stack_id, __u32 tgid)
{
	struct lt_stack_key sk = {
		.lock = *lock,
		.stack_id = stack_id,
		.role = LT_STACK_RELEASE,
	};

	if (targ_stacks && stack_id >= 0)
		stack_event(&sk, tgid);
}

/*
 * A wait on the lock in slot that a release ended: its time goes to the
 * stack of the lock's latest release, whose figures release_begin()
 * made (the current thread is the waiter: its stack is not that one).
 * A global function, verified once on its own: inlined, it would add
 * its paths to those of a file lock's grant, already near the
 * verifier's limit. Returns 0.
 */
__attribute__((noinline)) int release_charge(const struct lt_lock_key *lock,
					     __s32 slot, __u64 ns)
{
	struct lt_stack_stat *ss;
	struct lt_stack_key *sk;
	struct lt_release *r;
	__u32 k = (__u32)slot;

	if (!targ_stacks || !lock || slot < 0)
		return 0;
	r = bpf_map_lookup_elem(&releases, &k);
	if (!r || !r->tgid || !slot_current(r->gen))
		return 0;
	k = 0;
	sk = bpf_map_lookup_elem(&key_scratch, &k);
	if (!sk)
		return 0;
	sk->lock = *lock;
	sk->stack_id = r->stack_id;
	sk->role = LT_STACK_RELEASE;
	sk->pad = 0;
	ss = bpf_map_lookup_elem(&lock_stacks, sk);
	if (ss)
		ss->ns += ns;
	return 0;
}

#endif /* LOCKTOP_PROBES_STACKS_BPF_H */
