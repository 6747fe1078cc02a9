/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Holds: the ranges each (owner, file) pair holds, and how each is timed. */
#ifndef LOCKTOP_PROBES_FILELOCK_HOLD_BPF_H
#define LOCKTOP_PROBES_FILELOCK_HOLD_BPF_H

/* Included by filelock.bpf.c alone, after its includes and defines. */

/*
 * The ranges each (owner, file) pair holds, in slots: owner_slots names
 * a pair's slot in owned, and free_owner_slots holds the slots not in
 * use, filled by the collector when the probes load. A thread keeps the
 * slots of the pairs it last locked with, so its next lock and its
 * unlock reach their ranges without hashing; the slot's own key says
 * whether it still is that pair's.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, LT_MAX_OWNERS);
	__type(key, __u32);
	__type(value, struct lt_owner_locks);
} owned SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LT_MAX_OWNERS);
	__type(key, struct lt_owner_key);
	__type(value, __u32);
} owner_slots SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_QUEUE);
	__uint(max_entries, LT_MAX_OWNERS);
	__type(value, __u32);
} free_owner_slots SEC(".maps");

/* Without a branch per field: the verifier walks the caches' loops in
 * far fewer states. */
static __always_inline bool same_lock(const struct lt_lock_key *a,
				      const struct lt_lock_key *b)
{
	return !((a->dev_or_tgid ^ b->dev_or_tgid) | (a->ino ^ b->ino) |
		 (a->start ^ b->start) | (a->end ^ b->end) |
		 (__u64)(a->kind ^ b->kind));
}

/* The innermost lock is the one I/O is charged to: with its slot, for
 * the pread path to find its figures without hashing. */
static __always_inline void push_thread_lock(struct lt_thread *th,
					     const struct lt_lock_key *lock,
					     __s32 slot)
{
	struct lt_thread_locks *tl;
	__u32 n;

	if (!th)
		return;
	tl = &th->held;
	n = tl->n;
	if (n < LT_HELD_DEPTH) {
		tl->held[n].key = *lock;
		tl->held[n].slot = slot;
		tl->held[n].gen = slot_gen;
		tl->n = n + 1;
	}
}

/*
 * Takes lock off the current thread's held stack, wherever it sits. A
 * lock released by another thread (a close elsewhere in the process) is
 * left on its stack until that thread next locks or unlocks past it.
 */
static __always_inline void forget_thread_lock(struct lt_thread *th,
					       const struct lt_lock_key *lock)
{
	struct lt_thread_locks *tl;
	__u32 i, j, n;

	if (!th)
		return;
	tl = &th->held;
	n = tl->n < LT_HELD_DEPTH ? tl->n : LT_HELD_DEPTH;
	for (i = 0; i < LT_HELD_DEPTH && i < n; i++) {
		if (!same_lock(&tl->held[i].key, lock))
			continue;
		for (j = i; j + 1 < LT_HELD_DEPTH && j + 1 < n; j++)
			tl->held[j] = tl->held[j + 1];
		tl->n = n - 1;
		break;
	}
}

/*
 * The time the task's CPU was taken by its hypervisor, as the scheduler
 * last accounted it (0 where the kernel does not account steal time).
 */
static __always_inline __u64 cpu_steal(struct task_struct *task)
{
	struct rq *rq = task->se.cfs_rq->rq;

	/* A load through the task's pointers, not a probe read: this is
	 * on every uncontended lock and unlock. */
	if (!bpf_core_field_exists(rq->prev_steal_time_rq))
		return 0;
	return rq->prev_steal_time_rq;
}

/*
 * The figures of a hold that ended (see LT_HOLD_EVERY): a timed hold its
 * time, a sample also as one, and an untimed one its count and the time
 * its holder was kept off the CPU: by other tasks (its run-queue wait)
 * or, never switched out, by the hypervisor (the CPU's steal time). A
 * hold kept off the CPU is no sample of the others. A holder that
 * slept, seen by its own thread's release, ends the sampling of the lock.
 */
static __always_inline void count_hold(struct lt_lock_stat *st,
				       struct task_struct *task,
				       const struct lt_owned *r, __u64 now)
{
	bool own = r->tid == task->pid;
	bool slept = own && (__u32)task->nvcsw != r->nvcsw;
	bool preempted = own && (__u32)task->nivcsw != r->nivcsw;
	__u64 d, stolen = 0;

	/* Never switched out, it never left the grant's CPU. Only an
	 * untimed hold or a sample needs it. */
	if ((!r->ts || r->sampled) && own && !slept && !preempted)
		stolen = cpu_steal(task) - r->steal;
	if (slept)
		st->hold_slept++;
	if (!r->ts) {
		st->hold_skipped++;
		if (slept || preempted)
			st->hold_ns +=
				task->sched_info.run_delay - r->run_delay;
		st->hold_ns += stolen;
		return;
	}
	d = now - r->ts;
	if (r->sampled && !slept && !preempted && !stolen) {
		st->hold_samples++;
		st->hold_sample_ns += d;
		add_hold(st, d, LT_HOLD_EVERY);
		return;
	}
	add_hold(st, d, 1);
}

static __always_inline void end_hold(struct lt_thread *th,
				     struct task_struct *task,
				     const struct lt_owner_key *ok,
				     const struct lt_owned *r, __u64 now)
{
	struct lt_lock_key lock = {
		.dev_or_tgid = ok->dev,
		.ino = ok->ino,
		.start = r->folded ? LT_FOLD_START : r->start,
		.end = r->folded ? LT_FOLD_END : r->end,
		.kind = r->kind,
		.shared = 1,
	};
	/* A hold longer than the lock's idle time may outlive its slot. */
	struct lt_lock_stat *st = stat_kept(r->slot, r->gen, &lock);

	if (st)
		count_hold(st, task, r, now);
	if (r->tid == task->pid)
		forget_thread_lock(th, &lock);
}

static __always_inline bool same_owner(const struct lt_owner_key *a,
				       const struct lt_owner_key *b)
{
	return !((a->owner ^ b->owner) | (a->dev ^ b->dev) | (a->ino ^ b->ino));
}

/* The pair's entry in owned, if the thread's cache knows its slot. */
static __always_inline struct lt_owner_locks *
cached_owner(struct lt_thread *th, const struct lt_owner_key *ok)
{
	struct lt_owner_locks *ol;
	__u32 i, slot;

	if (!th)
		return NULL;
	for (i = 0; i < LT_OWNER_CACHE; i++) {
		if ((th->owner[i].owner ^ ok->owner) |
		    (th->owner[i].dev ^ ok->dev) | (th->owner[i].ino ^ ok->ino))
			continue;
		slot = th->owner[i].slot;
		ol = bpf_map_lookup_elem(&owned, &slot);
		/* The slot may have gone back, and to another pair. */
		return ol && same_owner(&ol->key, ok) ? ol : NULL;
	}
	return NULL;
}

/*
 * The owner's held ranges on the file: through the thread's cache, else
 * by the pair's name, given a free slot when create is set and it has
 * none (a drop when none is free). The thread remembers the slot.
 */
static __always_inline struct lt_owner_locks *
owner_locks(struct lt_thread *th, const struct lt_owner_key *ok, bool create)
{
	struct lt_owner_locks *ol = cached_owner(th, ok);
	__u32 slot, *named, i;

	if (ol)
		return ol;
	named = bpf_map_lookup_elem(&owner_slots, ok);
	if (named) {
		slot = *named;
	} else {
		if (!create)
			return NULL;
		if (bpf_map_pop_elem(&free_owner_slots, &slot)) {
			count_drop(LT_DROP_HELD_FULL);
			return NULL;
		}
		ol = bpf_map_lookup_elem(&owned, &slot);
		if (!ol)
			return NULL;
		/* Keyed before it is named: no one finds it half made. */
		ol->n = 0;
		ol->key = *ok;
		if (bpf_map_update_elem(&owner_slots, ok, &slot, BPF_NOEXIST)) {
			/* Another CPU named the pair first: its slot. */
			__builtin_memset(&ol->key, 0, sizeof(ol->key));
			bpf_map_push_elem(&free_owner_slots, &slot, 0);
			named = bpf_map_lookup_elem(&owner_slots, ok);
			if (!named)
				return NULL;
			slot = *named;
		}
	}
	ol = bpf_map_lookup_elem(&owned, &slot);
	if (!ol || !same_owner(&ol->key, ok))
		return NULL;
	if (th) {
		i = th->owner_next++ & (LT_OWNER_CACHE - 1);
		th->owner[i].owner = ok->owner;
		th->owner[i].dev = ok->dev;
		th->owner[i].ino = ok->ino;
		th->owner[i].slot = slot;
	}
	return ol;
}

/* The pair holds nothing more: its slot goes back, once. */
static __always_inline void forget_owner(const struct lt_owner_key *ok,
					 struct lt_owner_locks *ol)
{
	__u32 *named = bpf_map_lookup_elem(&owner_slots, ok);
	__u32 slot;

	if (!named)
		return;
	slot = *named;
	if (bpf_map_delete_elem(&owner_slots, ok))
		return; /* another CPU forgot it first */
	__builtin_memset(&ol->key, 0, sizeof(ol->key));
	bpf_map_push_elem(&free_owner_slots, &slot, 0);
}

/*
 * The slot of the lock whose waiter the current release ends (--stacks),
 * kept out of the release's loop: a register there would multiply the
 * states the verifier walks.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __s32);
} ended_wait SEC(".maps");

/* The current release's ended wait: its lock's slot, set, or read. */
static __always_inline __s32 ended_wait_at(bool set, __s32 wslot)
{
	__u32 zero = 0;
	__s32 *at = bpf_map_lookup_elem(&ended_wait, &zero);

	if (!at)
		return LT_NO_SLOT;
	if (set)
		*at = wslot;
	return *at;
}

/*
 * A waiter deferred on lock (its slot wslot) behind owner (--stacks):
 * the owner's ranges it waits for say so, so that their release takes
 * its stack.
 */
static __always_inline void
wait_behind(__u64 owner, const struct lt_lock_key *lock, __s32 wslot)
{
	struct lt_owner_key ok = {
		.owner = owner,
		.dev = lock->dev_or_tgid,
		.ino = lock->ino,
	};
	struct lt_owner_locks *ol;
	__u32 i, n;

	if (!targ_stacks || !owner || wslot < 0)
		return;
	ol = owner_locks(NULL, &ok, false);
	if (!ol)
		return;
	n = ol->n;
	for (i = 0; i < LT_OWNER_RANGES && i < n; i++) {
		if (ol->r[i].start > lock->end || lock->start > ol->r[i].end)
			continue;
		ol->r[i].wslot = wslot;
		ol->r[i].wgen = slot_gen;
	}
}

/* A release that ended a wait on the lock in wslot: its stack. */
static __always_inline void release_waited(void *ctx, __s32 wslot)
{
	struct lt_lock_key *key, lock;
	__u32 k = (__u32)wslot, tgid = current_ids() >> 32;

	key = bpf_map_lookup_elem(&slot_keys, &k);
	if (!key || !tgid)
		return;
	lock = *key;
	release_ended(&lock, release_begin(ctx, &lock, wslot, tgid), tgid);
}

/*
 * An unlock of [start, end] by owner ends the holds of every range it
 * covers. Close and exit unlock the whole file, so they end them all.
 * With --stacks, one that a waiter waited for takes its user stack.
 */
static __always_inline void release(void *ctx, struct task_struct *task,
				    __u64 owner, __u64 dev, __u64 ino,
				    __u64 start, __u64 end)
{
	__s32 wslot;
	struct lt_owner_key ok = { .owner = owner, .dev = dev, .ino = ino };
	struct lt_thread *th = task_thread(task, false);
	struct lt_owner_locks *ol = owner_locks(th, &ok, false);
	__u64 now = 0;
	__u32 i, kept = 0, n;

	if (!ol)
		return;
	if (targ_stacks)
		ended_wait_at(true, LT_NO_SLOT);
	n = ol->n;
	for (i = 0; i < LT_OWNER_RANGES && i < n; i++) {
		if (ol->r[i].start >= start && ol->r[i].end <= end) {
			/* The clock only for a timed hold. */
			if (ol->r[i].ts && !now)
				now = bpf_ktime_get_ns();
			end_hold(th, task, &ok, &ol->r[i], now);
			if (targ_stacks && ol->r[i].wslot != LT_NO_SLOT &&
			    slot_current(ol->r[i].wgen))
				ended_wait_at(true, ol->r[i].wslot);
			continue;
		}
		if (kept != i && kept < LT_OWNER_RANGES)
			ol->r[kept] = ol->r[i];
		kept++;
	}
	ol->n = kept;
	/* An ordinary unlock keeps the slot for the owner's next lock; a
	 * close or exit (the whole file) ends the owner's use of it. */
	if (!kept && !start && end >= OFFSET_MAX)
		forget_owner(&ok, ol);
	if (!targ_stacks)
		return;
	wslot = ended_wait_at(false, 0);
	if (wslot != LT_NO_SLOT)
		release_waited(ctx, wslot);
}

/* Whether the owner holds a range of this kind next to or over [s, e]. */
static __always_inline bool may_merge(const struct lt_owner_locks *ol,
				      __u32 kind, __u64 s, __u64 e)
{
	__u32 i, n = ol->n;

	for (i = 0; i < LT_OWNER_RANGES && i < n; i++)
		if (ol->r[i].kind == kind && ol->r[i].start <= e + 1 &&
		    s <= ol->r[i].end + 1)
			return true;
	return false;
}

/*
 * A wait for another range of the file, by an owner holding untimed
 * ranges there, is time they were held: their releases count it with
 * their holder's run-queue wait (see count_hold()).
 */
static __always_inline void wait_in_holds(struct lt_owner_locks *ol,
					  __u64 delta)
{
	__u32 i, n = ol->n;

	for (i = 0; i < LT_OWNER_RANGES && i < n; i++)
		if (!ol->r[i].ts)
			ol->r[i].run_delay -= delta;
}

/* Whether anything else waits to run on the task's CPU. */
static __always_inline bool cpu_shared(struct task_struct *task)
{
	return task->se.cfs_rq->rq->nr_running > 1;
}

/* Whether a hold that could go untimed is a sample: one in LT_HOLD_EVERY,
 * by the thread's own xorshift, which costs no helper call. */
static __always_inline bool hold_sample(struct lt_thread *th, __u32 tid)
{
	__u32 x = th->hold_rng ? th->hold_rng : tid | 1;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	th->hold_rng = x;
	return x < 0xffffffffU / LT_HOLD_EVERY;
}

/*
 * Starts the hold of a granted range, whose figures are fig's, in st.
 * now is the grant's time when the call read the clock (it waited), else
 * 0; the hold is then timed in full, as a sample, or not (LT_HOLD_EVERY).
 */
static __always_inline void hold(struct lt_thread *th, struct task_struct *task,
				 struct lt_owner_locks *ol,
				 const struct lt_lock_key *lock,
				 const struct lt_lock_key *fig,
				 struct lt_lock_stat *st, __s32 slot, __u64 now)
{
	__u32 i, n = ol->n;
	bool sample = false;

	/* A re-grant of a range already held keeps the first grant's time. */
	for (i = 0; i < LT_OWNER_RANGES && i < n; i++)
		if (ol->r[i].start == lock->start && ol->r[i].end == lock->end)
			return;
	if (n >= LT_OWNER_RANGES) {
		count_drop(LT_DROP_HELD_FULL);
		return;
	}
	if (!now && !targ_hold_exact && th && st &&
	    st->acquires > LT_HOLD_EXACT && !st->hold_slept &&
	    !cpu_shared(task)) {
		sample = hold_sample(th, task->pid);
		if (sample)
			now = bpf_ktime_get_ns();
	} else if (!now) {
		now = bpf_ktime_get_ns();
	}
	ol->r[n].start = lock->start;
	ol->r[n].end = lock->end;
	ol->r[n].ts = now;
	/* What an untimed hold or a sample is judged by at its end. */
	if (!now || sample) {
		ol->r[n].run_delay = task->sched_info.run_delay;
		ol->r[n].steal = cpu_steal(task);
	}
	ol->r[n].tid = task->pid;
	ol->r[n].nvcsw = (__u32)task->nvcsw;
	ol->r[n].nivcsw = (__u32)task->nivcsw;
	ol->r[n].kind = (__u16)lock->kind;
	ol->r[n].folded = LT_KEY_FOLDED(fig);
	ol->r[n].sampled = sample;
	ol->r[n].slot = slot;
	ol->r[n].gen = slot_gen;
	ol->r[n].wslot = LT_NO_SLOT;
	ol->n = n + 1;
	push_thread_lock(th, fig, slot);
}

#endif /* LOCKTOP_PROBES_FILELOCK_HOLD_BPF_H */
