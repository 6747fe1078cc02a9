/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Maps and helpers every probe object shares. Each object declares the
 * maps; the collector loads the futex object first and hands its map
 * descriptors to the others (bpf_map__reuse_fd), so all probes count into
 * one set of maps.
 */
#ifndef LOCKTOP_PROBES_COMMON_BPF_H
#define LOCKTOP_PROBES_COMMON_BPF_H

#include "common.h"

const volatile bool targ_filter = false; /* only the `traced` set */
const volatile __u32 targ_self = 0; /* our own tgid, never traced */
const volatile bool targ_stacks = false; /* record stacks of waits */
const volatile bool targ_hold_exact = false; /* time every file lock hold */
const volatile __u32 targ_obj = 0; /* enum lt_probe_obj: which this is */

/*
 * locktop's PID namespace (the inode of /proc/self/ns/pid) and its depth
 * (1 for a child of the initial one), set only when it is not the
 * initial one: the probes then name processes and threads as that
 * namespace does, as its /proc and its user do. Left 0, every branch on
 * them goes at load.
 */
const volatile __u64 targ_pidns_ino = 0;
const volatile __u32 targ_pidns_level = 0;

/* Advanced by the collector once per interval; see struct lt_lock_stat. */
__u64 epoch = 0;

/*
 * Advanced by the collector when it chooses the slots of long-idle locks
 * to take back (a full map would refuse new locks), and again when it
 * takes their names away: a slot kept in a thread's cache, in a wait in
 * flight or beside a held range since an earlier value is looked up
 * again by its lock's key, so none is used after it went back and was
 * handed to another lock.
 */
__u32 slot_gen = 0;

/*
 * Per-lock figures live in a per-CPU array, one slot per lock: a probe
 * that knows a lock's slot (a thread's cached futex word, a held file
 * range) reaches its figures without hashing. lock_slots names each
 * lock's slot; free_slots holds the ones not in use, which the
 * collector fills when the probes load and refills, zeroed, when it
 * forgets a lock.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, LT_MAX_LOCKS);
	__type(key, __u32);
	__type(value, struct lt_lock_stat);
} stat_map SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LT_MAX_LOCKS);
	__type(key, struct lt_lock_key);
	__type(value, __u32);
} lock_slots SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_QUEUE);
	__uint(max_entries, LT_MAX_LOCKS);
	__type(value, __u32);
} free_slots SEC(".maps");

/*
 * Each slot's key, written before the key is named, so the reader can
 * walk the slots in order (their figures lie in that order in memory)
 * and still say whose figures it found. slot_high keeps one past the
 * highest slot ever handed out, of locks, parties and files (enum
 * lt_high, common.h).
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, LT_MAX_LOCKS);
	__type(key, __u32);
	__type(value, struct lt_lock_key);
} slot_keys SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, LT_HIGH_NR);
	__type(key, __u32);
	__type(value, __u64); /* the width of the older BPF's atomics */
} slot_high SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, LT_SLOT_USE_NR);
	__type(key, __u32);
	__type(value, __u64);
} slot_use SEC(".maps");

/* Holders and waiters per lock, in slots like the locks' figures;
 * holders are keyed by TID (see role). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, LT_MAX_PARTIES);
	__type(key, __u32);
	__type(value, struct lt_party_stat);
} parties SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LT_MAX_PARTIES);
	__type(key, struct lt_party_key);
	__type(value, __u32);
} party_slots SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_QUEUE);
	__uint(max_entries, LT_MAX_PARTIES);
	__type(value, __u32);
} free_party_slots SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, LT_MAX_PARTIES);
	__type(key, __u32);
	__type(value, struct lt_party_key);
} party_keys SEC(".maps");

/* Each thread's wait, held file locks and futex identities. */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct lt_thread);
} threads SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LT_MAX_TRACED);
	__type(key, __u32);
	__type(value, __u8);
} traced SEC(".maps");

/* Process names, written once per process so exited ones keep theirs. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, LT_MAX_TRACED);
	__type(key, __u32);
	__type(value, char[LT_COMM_LEN]);
} comms SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, LT_DROP_NR);
	__type(key, __u32);
	__type(value, __u64);
} drops SEC(".maps");

/*
 * Runs of each probe object's programs, counted by the programs. The
 * kernel's statistics count runs only while they are on, and the
 * collector turns them on only in sampling windows: they cost every BPF
 * program on the host two clock reads a run.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, LT_OBJ_NR);
	__type(key, __u32);
	__type(value, __u64);
} runs SEC(".maps");

/* How to name each lock; see struct lt_where. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LT_MAX_LOCKS);
	__type(key, struct lt_lock_key);
	__type(value, struct lt_where);
} wheres SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, LT_MAX_STACKS);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, LT_STACK_DEPTH * sizeof(__u64));
} stacks SEC(".maps");

/* Wait count and time per (lock, stack), only with targ_stacks. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, LT_MAX_STACKS);
	__type(key, struct lt_stack_key);
	__type(value, struct lt_stack_stat);
} lock_stacks SEC(".maps");

/* The first wait of each (lock, stack): its registers and stack top,
 * until the collector has unwound it. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	/*
	 * Preallocated: an entry allocated at the update would come from a
	 * cache of one element per CPU refilled later, and in atomic
	 * context, so a burst of new stacks would find it empty. The
	 * collector sizes it to one entry without --stacks.
	 */
	__uint(max_entries, LT_MAX_SNAPS);
	__type(key, struct lt_stack_key);
	__type(value, struct lt_stack_snap);
} stack_snaps SEC(".maps");

/* A snapshot being taken, with room for a page copied past its end. */
struct snap_scratch {
	struct lt_stack_snap snap;
	__u8 slack[LT_PAGE];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct snap_scratch);
} snap_scratch SEC(".maps");

/* Each lock's latest release that may end waits, by slot (--stacks;
 * one entry without). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, LT_MAX_LOCKS);
	__type(key, __u32);
	__type(value, struct lt_release);
} releases SEC(".maps");

/* A stack key being made off the BPF stack, where a path is short of it. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct lt_stack_key);
} key_scratch SEC(".maps");

/* New snapshots, for the collector to unwind while the process lives. */
struct {
	__uint(type, BPF_MAP_TYPE_QUEUE);
	__uint(max_entries, LT_MAX_SNAPS);
	__type(value, struct lt_stack_key);
} new_snaps SEC(".maps");

extern void *bpf_rdonly_cast(const void *obj, __u32 btf_id) __ksym __weak;

/*
 * The current task's open file fd, or NULL. The walk to the table is
 * plain loads through BTF pointers; the slot itself, at an offset the
 * verifier cannot bound, is one read, and its file is typed again.
 */
static __always_inline struct file *fd_file(int fd)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct fdtable *fdt = task->files->fdt;
	struct file *f = NULL;

	if (fd < 0 || (unsigned int)fd >= fdt->max_fds)
		return NULL;
	bpf_probe_read_kernel(&f, sizeof(f), &fdt->fd[fd]);
	if (!f)
		return NULL;
	return bpf_rdonly_cast(f, bpf_core_type_id_kernel(struct file));
}

/* task's state; created when create is set. */
static __always_inline struct lt_thread *task_thread(struct task_struct *task,
						     bool create)
{
	return bpf_task_storage_get(&threads, task, NULL,
				    create ? BPF_LOCAL_STORAGE_GET_F_CREATE :
					     0);
}

/* The current thread's state; created when create is set. */
static __always_inline struct lt_thread *this_thread(bool create)
{
	return task_thread(bpf_get_current_task_btf(), create);
}

static __always_inline void count_run(void)
{
	__u32 k = targ_obj;
	__u64 *n = bpf_map_lookup_elem(&runs, &k);

	if (n)
		(*n)++;
}

static __always_inline void count_drop(__u32 reason)
{
	__u64 *n;

	if (reason >= LT_DROP_NR)
		return; /* LT_DROP_NONE */
	n = bpf_map_lookup_elem(&drops, &reason);
	if (n)
		(*n)++;
}

/* The current thread's state, made if new, for an event that starts
 * something (a wait, an I/O); NULL, counted as a drop, when there is no
 * room for it. */
static __always_inline struct lt_thread *starting_thread(void)
{
	struct lt_thread *th = this_thread(true);

	if (!th)
		count_drop(LT_DROP_START_FULL);
	return th;
}

extern struct task_struct *bpf_task_from_pid(s32 pid) __ksym __weak;
extern void bpf_task_release(struct task_struct *p) __ksym __weak;

/*
 * The number pid p has in locktop's namespace, or 0 when it has none
 * there (a task of an outer namespace). A pid has a number in its own
 * namespace and in each one above it, at each one's depth: plain loads
 * at a place fixed at load, no helper.
 */
static __always_inline __u32 pid_nr_here(struct pid *p)
{
	if (!p || p->level < targ_pidns_level)
		return 0;
	if (p->numbers[targ_pidns_level].ns->ns.inum != targ_pidns_ino)
		return 0; /* a sibling namespace at the same depth */
	return p->numbers[targ_pidns_level].nr;
}

/* task's tgid << 32 | pid in locktop's namespace; see pid_nr_here(). */
static __always_inline __u64 task_ids_here(struct task_struct *task)
{
	__u32 tgid = pid_nr_here(task->signal->pids[PIDTYPE_TGID]);

	if (!tgid)
		return 0;
	return (__u64)tgid << 32 | pid_nr_here(task->thread_pid);
}

/*
 * The current thread's tgid << 32 | pid as bpf_get_current_pid_tgid()
 * gives them, but in locktop's namespace when that is not the initial
 * one: the numbers the collector finds in /proc and the user gives. 0
 * for a thread of an outer namespace, which locktop cannot name.
 */
static __always_inline __u64 current_ids(void)
{
	if (!targ_pidns_ino)
		return bpf_get_current_pid_tgid();
	return task_ids_here(bpf_get_current_task_btf());
}

/*
 * A tgid the kernel gives in its own numbering (the initial
 * namespace's: a file lock's flc_pid), in locktop's; 0 when the process
 * is gone or has no number there.
 */
static __always_inline __u32 kernel_tgid_here(__s32 tgid)
{
	struct task_struct *task;
	__u64 ids;

	if (!targ_pidns_ino)
		return (__u32)tgid;
	if (tgid <= 0)
		return 0;
	task = bpf_task_from_pid(tgid);
	if (!task)
		return 0;
	ids = task_ids_here(task);
	bpf_task_release(task);
	return ids >> 32;
}

static __always_inline bool wanted(__u32 tgid)
{
	/* 0: a process of a namespace outside locktop's (current_ids()).
	 * No task that makes these calls is 0 to the kernel itself. */
	if (!tgid || tgid == targ_self)
		return false;
	return !targ_filter || bpf_map_lookup_elem(&traced, &tgid);
}

static __always_inline __u32 log2_slot(__u64 v)
{
	__u32 r = 0;

	/* Unrolled binary search: the verifier likes bounded shifts. */
	if (v >> 32) {
		v >>= 32;
		r += 32;
	}
	if (v >> 16) {
		v >>= 16;
		r += 16;
	}
	if (v >> 8) {
		v >>= 8;
		r += 8;
	}
	if (v >> 4) {
		v >>= 4;
		r += 4;
	}
	if (v >> 2) {
		v >>= 2;
		r += 2;
	}
	if (v >> 1)
		r += 1;
	return r < LT_HIST_SLOTS ? r : LT_HIST_SLOTS - 1;
}

/* Whether a slot found when slot_gen was gen is still its lock's: once
 * slot_gen moves, a slot kept since may have gone to another lock. */
static __always_inline bool slot_current(__u32 gen)
{
	return gen == slot_gen;
}

/* The figures in a slot, marked as changed in this epoch for the reader;
 * NULL for LT_NO_SLOT. */
static __always_inline struct lt_lock_stat *stat_at(__s32 slot)
{
	__u32 k = (__u32)slot;
	struct lt_lock_stat *st;

	if (slot < 0)
		return NULL;
	st = bpf_map_lookup_elem(&stat_map, &k);
	if (st)
		st->touched = epoch;
	return st;
}

/* The slot names gives key, or LT_NO_SLOT while it has none. */
static __always_inline __s32 named_slot(void *names, const void *key)
{
	__u32 *slot = bpf_map_lookup_elem(names, key);

	return slot ? (__s32)*slot : LT_NO_SLOT;
}

/* Raises slot_high's entry which past slot; a few tries, then a drop. */
static __always_inline void raise_high(__u32 which, __u32 slot)
{
	__u64 *high = bpf_map_lookup_elem(&slot_high, &which), old;
	int i;

	if (!high)
		return;
	for (i = 0; i < 8; i++) {
		old = *high;
		if (old > slot || __sync_val_compare_and_swap(
					  high, old, (__u64)slot + 1) == old)
			return;
	}
	count_drop(LT_DROP_RACE);
}

/*
 * key's slot in names, given one from the queue free on first use
 * (*created is then set); LT_NO_SLOT, and a drop of reason full, when
 * none is free. The slot's key goes into keys first, and which entry of
 * slot_high is raised. Of two CPUs that meet a new key at once, one
 * names its slot and the other hands its own back.
 */
static __always_inline __s32 take_slot(void *names, void *free, void *keys,
				       __u32 which, const void *key, __u32 full,
				       bool *created)
{
	__s32 slot = named_slot(names, key);
	__u32 fresh;

	*created = false;
	if (slot != LT_NO_SLOT)
		return slot;
	if (bpf_map_pop_elem(free, &fresh)) {
		count_drop(full);
		return LT_NO_SLOT;
	}
	bpf_map_update_elem(keys, &fresh, key, BPF_ANY);
	raise_high(which, fresh);
	if (!bpf_map_update_elem(names, key, &fresh, BPF_NOEXIST)) {
		__u32 k = 2 * which;
		__u64 *taken = bpf_map_lookup_elem(&slot_use, &k);

		if (taken)
			__sync_fetch_and_add(taken, 1);
		*created = true;
		return (__s32)fresh;
	}
	bpf_map_push_elem(free, &fresh, 0);
	slot = named_slot(names, key);
	if (slot == LT_NO_SLOT)
		count_drop(full);
	return slot;
}

/* Whether LT_FOLD_AT percent of a map's size slots of kind which are in
 * use: taken, less given back. */
static __always_inline bool crowded(__u32 which, __u64 size)
{
	__u32 t = 2 * which, b = t + 1;
	__u64 *taken = bpf_map_lookup_elem(&slot_use, &t);
	__u64 *back = bpf_map_lookup_elem(&slot_use, &b);

	return taken && back && (*taken - *back) * 100 >= size * LT_FOLD_AT;
}

/* The lock's slot, or LT_NO_SLOT while it has none. */
static __always_inline __s32 slot_find(const struct lt_lock_key *key)
{
	return named_slot(&lock_slots, key);
}

/* The lock's figures, if it has a slot. */
static __always_inline struct lt_lock_stat *
stat_find(const struct lt_lock_key *key)
{
	return stat_at(slot_find(key));
}

/* The lock's slot, given one on first use (*created is then set). */
static __always_inline __s32 slot_of(const struct lt_lock_key *key,
				     bool *created)
{
	return take_slot(&lock_slots, &free_slots, &slot_keys, LT_HIGH_LOCKS,
			 key, LT_DROP_LOCKS_FULL, created);
}

/* A reason that counts nothing: the caller tries again later. */
#define LT_DROP_NONE LT_DROP_NR

/* slot_of(), but a full map is not a drop yet: the caller tries again. */
static __always_inline __s32 slot_try(const struct lt_lock_key *key,
				      bool *created)
{
	return take_slot(&lock_slots, &free_slots, &slot_keys, LT_HIGH_LOCKS,
			 key, LT_DROP_NONE, created);
}

/* The lock's figures, created on first use; NULL (and a drop) when full.
 * *slot is where they are, for the caller to keep. */
static __always_inline struct lt_lock_stat *
stat_of(const struct lt_lock_key *key, bool *created, __s32 *slot)
{
	*slot = slot_of(key, created);
	return stat_at(*slot);
}

static __always_inline void add_wait(struct lt_lock_stat *st, __u64 delta)
{
	__u32 b = log2_slot(delta);

	st->waits++;
	st->wait_ns += delta;
	st->hist[b]++;
	st->hist_used |= 1ULL << b;
	if (st->max_epoch != epoch) {
		st->max_epoch = epoch;
		st->max_ns = delta;
	} else if (delta > st->max_ns) {
		st->max_ns = delta;
	}
	if (delta > st->max_total_ns)
		st->max_total_ns = delta;
}

/* A hold timed, standing for weight holds in the histogram (a sample
 * stands for LT_HOLD_EVERY). */
static __always_inline void add_hold(struct lt_lock_stat *st, __u64 delta,
				     __u32 weight)
{
	__u32 b = log2_slot(delta);

	st->hold_ns += delta;
	st->hold_hist[b] += weight;
	st->hold_used |= 1ULL << b;
	if (delta > st->max_hold_ns)
		st->max_hold_ns = delta;
}

static __always_inline void remember_comm(__u32 tgid)
{
	char comm[LT_COMM_LEN];

	if (bpf_map_lookup_elem(&comms, &tgid))
		return;
	bpf_get_current_comm(comm, sizeof(comm));
	bpf_map_update_elem(&comms, &tgid, comm, BPF_NOEXIST);
}

/*
 * A party of the lock's figures, given a slot on first use. *slot is
 * where they are, when the caller kept it (LT_NO_SLOT when not), and is
 * set to it after; NULL when the party map is full.
 */
static __always_inline struct lt_party_stat *
party_at(const struct lt_lock_key *lock, __u32 id, __u32 role, __s32 *slot)
{
	struct lt_party_key pk = { .lock = *lock, .tgid = id, .role = role };
	bool created = false;
	__u32 k;

	if (*slot == LT_NO_SLOT)
		*slot = take_slot(&party_slots, &free_party_slots, &party_keys,
				  LT_HIGH_PARTIES, &pk, LT_DROP_PARTIES_FULL,
				  &created);
	if (*slot == LT_NO_SLOT)
		return NULL;
	/* A waiter is the current task: named while it lives. A holder is
	 * the current task when it wakes its waiters (a futex, by thread),
	 * not when a waiter credits it (a file lock's blocker, a kernel
	 * lock's owner, a futex word's owner): the current task's name
	 * would be the waiter's. */
	if (created &&
	    (role == LT_ROLE_WAITER ||
	     (role == LT_ROLE_HOLDER_PROC && id == current_ids() >> 32)))
		remember_comm(id);
	else if (created && role == LT_ROLE_HOLDER &&
		 id == (__u32)current_ids())
		remember_comm(current_ids() >> 32);
	k = (__u32)*slot;
	return bpf_map_lookup_elem(&parties, &k);
}

/* Adds one event of ns to a party's figures, if there are any. */
static __always_inline void party_add(struct lt_party_stat *ps, __u64 ns)
{
	if (!ps)
		return;
	ps->count++;
	ps->ns += ns;
	ps->touched = epoch;
}

/* Adds one event of ns to a party of the lock; *slot as for party_at(). */
static __always_inline void credit_at(const struct lt_lock_key *lock, __u32 id,
				      __u32 role, __u64 ns, __s32 *slot)
{
	party_add(party_at(lock, id, role, slot), ns);
}

static __always_inline void credit(const struct lt_lock_key *lock, __u32 id,
				   __u32 role, __u64 ns)
{
	__s32 slot = LT_NO_SLOT;

	credit_at(lock, id, role, ns, &slot);
}

/* Interrupted: EINTR, or one of the kernel's restart codes. */
static __always_inline bool interrupted_ret(long ret)
{
	return ret == -4 || ret == -512 || ret == -513 || ret == -514 ||
	       ret == -516;
}

#endif /* LOCKTOP_PROBES_COMMON_BPF_H */
