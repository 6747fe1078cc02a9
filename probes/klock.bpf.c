// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Kernel-internal lock contention, from the lock tracepoints
 * contention_begin and contention_end. Per lock address, in the shared
 * lock slots (kind LT_PK_KERNEL): waits, wait time, maxima and the
 * histogram; the processes that waited; the owner where the lock keeps
 * one (a mutex, an rwsem held for writing). A lock's first wait keeps
 * its type, its kernel stack and what it guards where that can be told
 * from the address alone (an inode's i_rwsem, the waiter's mmap_lock),
 * for the collector to name it.
 *
 * A spinning wait cannot sleep, so its start lives in a per-CPU entry;
 * a sleeping wait's in the task's storage (a task sleeps on one lock at
 * a time). A spinning wait may come inside a sleeping one (a mutex's
 * wait_lock while the mutex is contended), and an interrupt's inside a
 * spinning one; a begin that finds its place taken is not counted, and
 * an end ends the wait in progress on its lock: this CPU's spinning one,
 * else the task's sleeping one.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "common.bpf.h"
#include "klock.bpf.h"

/*
 * One wait in progress, and where its figures go: found by its begin,
 * for its end to add to (see place_wait()).
 */
struct kwait {
	__u64 lock; /* 0: none */
	__u64 ts;
	__u32 flags;
	__u32 owner; /* the owner's TID at the start, 0 when not known */
	__u32 owner_tgid;
	__u32 tgid; /* the waiting process */
	__s32 slot; /* the lock's figures */
	__s32 waiter_slot; /* the waiting process's */
	__s32 owner_slot; /* the owner's process's, if there is an owner */
	__u32 gen; /* slot_gen when they were found */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct kwait);
} kspin SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct kwait);
} ksleep SEC(".maps");

/*
 * The locks this CPU counted waits on lately, and the processes that
 * waited on them, with where their figures are: a contended lock is met
 * again and again, by many processes in turn, and its waits then count
 * without hashing. Each table is indexed by a hash, a lock by its
 * address and a waiter by the lock and its process, so that a lock met
 * once in a while takes one entry from the hot ones, not the slots of
 * all their waiters. On Samba 83% of kernel lock waits fall on two
 * spinlocks, and one CPU's wait is on another lock than its last 42% of
 * the time (docs/cost.md). Slots found before slot_gen moved are looked
 * up again.
 */
#define KLOCKS 16 /* a power of two */
#define KWAITERS 512 /* a power of two */

struct kcache {
	struct {
		__u64 lock;
		__s32 slot;
		__u32 gen;
	} locks[KLOCKS];
	struct {
		__u64 lock;
		__u32 tgid;
		__s32 slot;
		__u32 gen;
		__u32 pad;
	} waiters[KWAITERS];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct kcache);
} kcache SEC(".maps");

/* How to name each kernel lock, by address; see struct lt_kwhere. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, LT_MAX_KWHERES);
	__type(key, __u64);
	__type(value, struct lt_kwhere);
} kwheres SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct lt_kwhere);
} kwhere_scratch SEC(".maps");

static __always_inline bool spinning(__u32 flags)
{
	return (flags & (LT_LCB_F_SPIN | LT_LCB_F_MUTEX)) == LT_LCB_F_SPIN;
}

/*
 * Set once the kernel has reported a spinning wait, by any task: some
 * kernels spin without reaching the tracepoint (a guest without
 * paravirtual spinlocks spins in virt_spin_lock()), and the collector
 * tells its user so (kspin.c). Written once, so that the busiest
 * spinlock does not bounce its cache line between CPUs.
 */
__u32 spin_reported = 0;

/* An rwsem that is neither per-CPU nor a real-time one. */
static __always_inline bool plain_rwsem(__u32 flags)
{
	return flags == LT_LCB_F_READ || flags == LT_LCB_F_WRITE;
}

/*
 * Who holds the lock, where it says: a mutex's owner, an rwsem's
 * writer (the low bits are flags; a reader-owned rwsem names only its
 * latest reader, which may be gone).
 */
static __always_inline void owner_of(__u64 lock, struct kwait *w)
{
	char comm[LT_COMM_LEN];
	struct task_struct *t;
	long owner = 0;
	__u64 ids;

	w->owner = 0;
	if (w->flags & LT_LCB_F_MUTEX) {
		struct mutex *m = bpf_rdonly_cast(
			(void *)lock, bpf_core_type_id_kernel(struct mutex));

		owner = m->owner.counter;
	} else if (plain_rwsem(w->flags)) {
		struct rw_semaphore *s = bpf_rdonly_cast(
			(void *)lock,
			bpf_core_type_id_kernel(struct rw_semaphore));

		owner = s->owner.counter;
		if (owner & 1) /* RWSEM_READER_OWNED */
			return;
	}
	owner &= ~7L;
	if (!owner)
		return;
	t = bpf_rdonly_cast((void *)owner,
			    bpf_core_type_id_kernel(struct task_struct));
	if (targ_pidns_ino)
		ids = task_ids_here(t);
	else
		ids = (__u64)t->tgid << 32 | (__u32)t->pid;
	w->owner = (__u32)ids;
	w->owner_tgid = ids >> 32;
	/* Named now, not at the end, which runs inside the critical
	 * section others wait for: the holder's credit would name it after
	 * the current task. A lookup first spares the copy and the bucket
	 * lock of an update that would fail. */
	if (w->owner_tgid && !bpf_map_lookup_elem(&comms, &w->owner_tgid)) {
		bpf_probe_read_kernel_str(comm, sizeof(comm), t->comm);
		bpf_map_update_elem(&comms, &w->owner_tgid, comm, BPF_NOEXIST);
	}
}

/*
 * A spinning wait in progress longer than this is one whose end was not
 * seen: the end of a wait on a map's lock inside this probe's own end,
 * which the kernel does not run the probe for again. A new wait takes
 * its place.
 */
#define SPIN_STALE_NS 100000000ULL

/*
 * The names of dentry d and its parents up to its filesystem's root, so
 * that the collector finds its path however the waiter named it.
 */
static __always_inline void name_chain(struct dentry *d, struct lt_kwhere *kw)
{
	struct dentry *p;
	__u32 i;

	for (i = 0; i < LT_KDIRS; i++) {
		p = BPF_CORE_READ(d, d_parent);
		if (!p || p == d)
			break;
		bpf_probe_read_kernel_str(kw->dirs[i], LT_KDIR_LEN,
					  BPF_CORE_READ(d, d_name.name));
		kw->ndirs = i + 1;
		d = p;
	}
	kw->rooted = d && BPF_CORE_READ(d, d_parent) == d;
}

/* Whether lock is the i_rwsem of inode: then kw names that file. */
static __always_inline bool inode_is(__u64 lock, struct inode *in,
				     struct dentry *d, struct lt_kwhere *kw)
{
	if (!in || (__u64)&in->i_rwsem != lock)
		return false;
	kw->named = LT_KN_I_RWSEM;
	kw->dev = BPF_CORE_READ(in, i_sb, s_dev);
	kw->ino = BPF_CORE_READ(in, i_ino);
	if (d) {
		bpf_probe_read_kernel_str(kw->file, sizeof(kw->file),
					  BPF_CORE_READ(d, d_name.name));
		name_chain(d, kw);
	}
	return true;
}

/*
 * Whether lock is the i_rwsem of an inode with a dentry, whatever the
 * system call named: the inode the lock would be in, if it is one, is
 * that dentry's.
 */
static __always_inline bool lock_inode(__u64 lock, struct lt_kwhere *kw)
{
	struct inode *in =
		(void *)(lock - bpf_core_field_offset(struct inode, i_rwsem));
	struct hlist_node *alias = BPF_CORE_READ(in, i_dentry.first);
	struct dentry *d;

	if (!alias)
		return false;
	d = (void *)((__u64)alias -
		     bpf_core_field_offset(struct dentry, d_u.d_alias));
	if (BPF_CORE_READ(d, d_inode) != in)
		return false;
	return inode_is(lock, in, d, kw);
}

/*
 * An inode's i_rwsem, found from the system call in progress: the file
 * of its first argument taken as a descriptor (write, fallocate), that
 * file's directory, the directory it names (openat, unlinkat, mkdirat),
 * or the working directory (a relative path); else from the lock, as a
 * directory's is by a path from elsewhere.
 */
static __always_inline void name_inode(__u64 lock, struct lt_kwhere *kw)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct dentry *d = NULL;
	struct file *f = NULL;
	long fd = -1;

#ifdef __TARGET_ARCH_x86
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(task);

	fd = BPF_CORE_READ(regs, di);
#endif
	if (fd >= 0 && fd < 0x7fffffff)
		f = fd_file((int)fd);
	if (f) {
		kw->fd = (__s32)fd;
		d = f->f_path.dentry;
		if (inode_is(lock, f->f_inode, d, kw))
			return;
		kw->fd = -1;
		if (d && inode_is(lock, d->d_parent->d_inode, d->d_parent, kw))
			return;
	}
	d = task->fs->pwd.dentry;
	if (d && inode_is(lock, d->d_inode, d, kw))
		return;
	lock_inode(lock, kw);
}

/* A new lock's naming facts, from its first counted wait. */
static __always_inline void name_klock(void *ctx, __u64 lock, __u32 flags,
				       __u32 tgid)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct mm_struct *mm = task->mm;
	struct lt_kwhere *kw;
	__u32 zero = 0;
	long n;

	kw = bpf_map_lookup_elem(&kwhere_scratch, &zero);
	if (!kw)
		return;
	__builtin_memset(kw, 0, sizeof(*kw));
	kw->flags = flags;
	kw->tgid = tgid;
	kw->fd = -1;
	n = bpf_get_stack(ctx, kw->frames, sizeof(kw->frames), 0);
	kw->nframes = n > 0 ? n / sizeof(__u64) : 0;
	if (mm && (__u64)&mm->mmap_lock == lock) {
		kw->named = LT_KN_MMAP_LOCK;
		bpf_get_current_comm(kw->comm, sizeof(kw->comm));
	} else if (plain_rwsem(flags)) {
		name_inode(lock, kw);
	}
	bpf_map_update_elem(&kwheres, &lock, kw, BPF_ANY);
}

/* A multiplicative hash: the high bits of x times 2^64 / phi. */
static __always_inline __u32 khash(__u64 x)
{
	return (__u32)((x * 0x9e3779b97f4a7c15ULL) >> 40);
}

/*
 * The slot of key's figures, through this CPU's cache c (when there is
 * one), which then keeps the lock; *created when the lock is new. When
 * the cache keeps it, *waiter_slot points to where it keeps the slot of
 * the waiting process tgid's figures (LT_NO_SLOT until it is found).
 */
static __always_inline __s32 cached_slot(struct kcache *c,
					 const struct lt_lock_key *key,
					 __u32 tgid, bool *created,
					 __s32 **waiter_slot)
{
	__u64 lock = key->start;
	__u32 l = khash(lock) & (KLOCKS - 1);
	__u32 w = khash(lock ^ ((__u64)tgid << 32 | tgid)) & (KWAITERS - 1);
	__s32 slot;

	*created = false;
	if (!c)
		return slot_of(key, created);
	if (c->locks[l].lock != lock || !slot_current(c->locks[l].gen)) {
		slot = slot_of(key, created);
		if (slot == LT_NO_SLOT)
			return slot;
		c->locks[l].lock = lock;
		c->locks[l].slot = slot;
		c->locks[l].gen = slot_gen;
	}
	if (c->waiters[w].lock != lock || c->waiters[w].tgid != tgid ||
	    !slot_current(c->waiters[w].gen)) {
		c->waiters[w].lock = lock;
		c->waiters[w].tgid = tgid;
		c->waiters[w].slot = LT_NO_SLOT;
		c->waiters[w].gen = slot_gen;
	}
	*waiter_slot = &c->waiters[w].slot;
	return c->locks[l].slot;
}

static __always_inline struct lt_lock_key klock_key(__u64 lock)
{
	struct lt_lock_key key = {
		.start = lock,
		.kind = LT_PK_KERNEL,
		.shared = 1,
	};

	return key;
}

/*
 * Where the wait w starts to count: its lock's figures, its waiting
 * process's and its owner's, found (a new lock named) at the begin. A spinning wait's
 * end runs with the lock taken, so that every CPU spinning behind it
 * waits out what the end costs, while the begin runs as another holds
 * the lock. Touched here, the figures are in this CPU's cache for the
 * end, which only adds to them.
 */
static __always_inline void place_wait(void *ctx, struct kwait *w, __u64 lock,
				       __u32 flags)
{
	struct lt_lock_key key = klock_key(lock);
	__s32 none = LT_NO_SLOT, *waiter_slot = &none;
	struct lt_party_stat *ps;
	__u32 zero = 0;
	bool created;

	w->slot = cached_slot(bpf_map_lookup_elem(&kcache, &zero), &key,
			      w->tgid, &created, &waiter_slot);
	w->gen = slot_gen;
	w->waiter_slot = LT_NO_SLOT;
	w->owner_slot = LT_NO_SLOT;
	if (!stat_at(w->slot))
		return;
	if (created)
		name_klock(ctx, lock, flags, w->tgid);
	ps = party_at(&key, w->tgid, LT_ROLE_WAITER, waiter_slot);
	if (ps)
		ps->touched = epoch;
	w->waiter_slot = *waiter_slot;
	/* Named by owner_of(): see there. */
	if (w->owner)
		party_at(&key, w->owner_tgid, LT_ROLE_HOLDER_PROC,
			 &w->owner_slot);
}

/* Adds one event of ns to the party figures in slot, if it has any. */
static __always_inline void party_add_at(__s32 slot, __u64 ns)
{
	__u32 k = (__u32)slot;

	if (slot != LT_NO_SLOT)
		party_add(bpf_map_lookup_elem(&parties, &k), ns);
}

SEC("tp_btf/contention_begin")
int BPF_PROG(lt_kbegin, void *lock, unsigned int flags)
{
	__u32 tgid = current_ids() >> 32;
	struct kwait *w;
	__u32 zero = 0;
	__u64 now;

	count_run();
	if (spinning(flags) && !spin_reported)
		spin_reported = 1;
	if (!wanted(tgid))
		return 0;
	if (spinning(flags)) {
		w = bpf_map_lookup_elem(&kspin, &zero);
	} else {
		w = bpf_task_storage_get(&ksleep, bpf_get_current_task_btf(),
					 NULL, BPF_LOCAL_STORAGE_GET_F_CREATE);
		if (!w)
			count_drop(LT_DROP_START_FULL);
	}
	if (!w)
		return 0;
	/* The wait starts here: what the begin costs is the waiter's. */
	now = bpf_ktime_get_ns();
	if (w->lock && (!spinning(flags) || now - w->ts < SPIN_STALE_NS))
		return 0; /* nested: see above */
	w->lock = 0; /* a stale one ends here */
	w->flags = flags;
	w->owner = 0;
	w->tgid = tgid;
	if (!spinning(flags))
		owner_of((__u64)lock, w);
	place_wait(ctx, w, (__u64)lock, flags);
	w->ts = now;
	w->lock = (__u64)lock;
	return 0;
}

/* A wait ended: its figures, its waiter and the owner it waited on. */
static __always_inline void count_wait(void *ctx, struct kwait *w, __u64 delta)
{
	struct lt_lock_stat *st;

	/* Slots given back since the begin: found again. */
	if (!slot_current(w->gen))
		place_wait(ctx, w, w->lock, w->flags);
	st = stat_at(w->slot);
	if (!st)
		return;
	add_wait(st, delta);
	st->contended++;
	party_add_at(w->waiter_slot, delta);
	if (!w->owner)
		return;
	st->last_holder = w->owner;
	party_add_at(w->owner_slot, delta);
}

SEC("tp_btf/contention_end")
int BPF_PROG(lt_kend, void *lock, int ret)
{
	struct kwait *w, done;
	__u32 zero = 0;
	__u64 now;

	count_run();
	/* A spinning wait in progress on this CPU is the innermost; else
	 * the task's sleeping one. */
	w = bpf_map_lookup_elem(&kspin, &zero);
	if (!w || w->lock != (__u64)lock)
		w = bpf_task_storage_get(&ksleep, bpf_get_current_task_btf(),
					 NULL, 0);
	if (!w || w->lock != (__u64)lock)
		return 0;
	now = bpf_ktime_get_ns();
	done = *w;
	w->lock = 0;
	count_wait(ctx, &done, now - done.ts);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
