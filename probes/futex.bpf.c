// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * futex waits and wakes, aggregated in the kernel per lock.
 *
 * sys_enter_futex resolves the lock's identity and stamps the wait;
 * sys_exit_futex adds the elapsed time to that lock's per-CPU entry and
 * credits the waiter and, where the futex word names one, the holder.
 * Only the contended path of a futex mutex enters the kernel, so an
 * uncontended lock costs nothing here.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "common.bpf.h"
#include "stacks.bpf.h"
#include "futex.h"
#include "where.bpf.h"
#include "owner.bpf.h"
#include "sites.bpf.h"

#define FUTEX_WAIT 0
#define FUTEX_WAKE 1
#define FUTEX_REQUEUE 3
#define FUTEX_CMP_REQUEUE 4
#define FUTEX_WAKE_OP 5
#define FUTEX_LOCK_PI 6
#define FUTEX_UNLOCK_PI 7
#define FUTEX_TRYLOCK_PI 8
#define FUTEX_WAIT_BITSET 9
#define FUTEX_WAKE_BITSET 10
#define FUTEX_WAIT_REQUEUE_PI 11
#define FUTEX_CMP_REQUEUE_PI 12
#define FUTEX_LOCK_PI2 13
#define FUTEX_PRIVATE_FLAG 128
#define FUTEX_CLOCK_REALTIME 256
#define FUTEX_CMD_MASK ~(FUTEX_PRIVATE_FLAG | FUTEX_CLOCK_REALTIME)
#define FUTEX2_PRIVATE 128
#define EOWNERDEAD 130

/* lt_inflight.flags */
#define IF_ROBUST 1 /* the word carried an owner: check OWNER_DIED after */
#define IF_UNJUDGED 2 /* its site had no verdict yet: ask again at the end */
/* its shared word's place unknown: ask again at the end */
#define IF_UNPLACED 4
/* its lock's mapping unread (lt_ident.where_unread): read again at the end,
 * where a lock made at the end is read too */
#define IF_UNNAMED 8

/* Per process: a word shared by every process is an entry in each. */
#define LT_MAX_IDENTS (4 * LT_MAX_LOCKS)

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, LT_MAX_IDENTS);
	__type(key, struct lt_ident_key);
	__type(value, struct lt_lock_key);
} ident SEC(".maps");

/* Processes that ended since the collector last looked. */
struct {
	__uint(type, BPF_MAP_TYPE_QUEUE);
	__uint(max_entries, LT_MAX_EXITED);
	__type(value, __u32);
} exited SEC(".maps");

/*
 * Threads that ended while their process went on, as TID << 32 | tgid: a
 * holder is named by the TID in its lock word, and another process may
 * get that TID next.
 */
struct {
	__uint(type, BPF_MAP_TYPE_QUEUE);
	__uint(max_entries, LT_MAX_EXITED);
	__type(value, __u64);
} ended_threads SEC(".maps");

/* The slots kept for an identity, when its kind changes. */
static __always_inline void forget_slots(struct lt_ident *c)
{
	c->slot = LT_NO_SLOT;
	c->waiter_slot = LT_NO_SLOT;
	c->holder_slot = LT_NO_SLOT;
}

/* The thread's cached identity of the word at uaddr, or NULL. The
 * addresses are side by side: one cache line, read whole. */
static __always_inline struct lt_ident *cached_ident(struct lt_thread *th,
						     __u64 uaddr)
{
	__u32 i;

	for (i = 0; i < LT_IDENT_CACHE; i++)
		if (th->ident_uaddr[i] == uaddr)
			return &th->ident[i];
	return NULL;
}

/*
 * A private futex is (process, address). A shared one is where it lives
 * in its file or shmem object, the same in every process that maps it.
 * The thread keeps the last few it saw, so a wake after a wait on the
 * same word, or a word used again and again, looks nothing up; the entry
 * also keeps where the lock's figures are, once known. key->kind is the
 * kind the word last had in this thread, LT_PK_FUTEX when new. Returns
 * the cache entry, or NULL when th is.
 */
/*
 * Where a shared word lives: its file or shmem object and offset, into
 * key (whose kind stays). False when the mapping could not be read now
 * (another thread holds the process's mmap lock to change its maps):
 * then key is left as it was.
 */
static __always_inline bool place_shared(__u64 uaddr, struct lt_lock_key *key)
{
	struct where_ctx ctx = { .addr = uaddr };

	if (bpf_find_vma(bpf_get_current_task_btf(), uaddr, where_cb, &ctx, 0))
		return false;
	if ((ctx.w.flags & (LT_VMA_FILE | LT_VMA_SHARED)) ==
	    (LT_VMA_FILE | LT_VMA_SHARED)) {
		key->dev_or_tgid = ctx.w.dev;
		key->ino = ctx.w.ino;
		key->start = ctx.w.offset;
		key->shared = 1;
	}
	return true;
}

static __always_inline struct lt_ident *
identify(struct lt_thread *th, __u64 uaddr, __u32 tgid, bool private,
	 struct lt_lock_key *key, bool *unplaced)
{
	struct lt_ident_key ik = { .uaddr = uaddr, .tgid = tgid };
	struct lt_lock_key *known;
	struct lt_ident *c;
	__u32 i;

	if (th && uaddr) {
		c = cached_ident(th, uaddr);
		if (c) {
			if (!slot_current(c->gen)) {
				forget_slots(c);
				c->gen = slot_gen;
			}
			*key = c->key;
			return c;
		}
	}
	__builtin_memset(key, 0, sizeof(*key));
	key->kind = LT_PK_FUTEX;
	key->dev_or_tgid = tgid;
	key->start = uaddr;
	if (!private) {
		known = bpf_map_lookup_elem(&ident, &ik);
		if (known) {
			*key = *known;
		} else if (place_shared(uaddr, key)) {
			bpf_map_update_elem(&ident, &ik, key, BPF_ANY);
		} else {
			/* Not known yet, and not kept as if it were: as
			 * the process's own word until asked again. */
			*unplaced = true;
			return NULL;
		}
	}
	if (!th || !uaddr)
		return NULL;
	i = th->ident_next++ & (LT_IDENT_CACHE - 1);
	th->ident_uaddr[i] = uaddr;
	c = &th->ident[i];
	c->key = *key;
	forget_slots(c);
	c->gen = slot_gen;
	c->where_unread = 0;
	return c;
}

#define LT_PK_BY_SITE 0xff /* wait_begin: classify_wait() decides */

static __always_inline bool futex_kind(__u32 kind)
{
	return kind == LT_PK_FUTEX || kind == LT_PK_FUTEX_PI ||
	       kind == LT_PK_FUTEX_COND;
}

static __always_inline int wait_begin(__u64 uaddr, __u32 val, bool private,
				      __u32 kind, __u32 cmd)
{
	__u32 tgid = current_ids() >> 32;
	struct lt_inflight *in;
	struct lt_thread *th;
	struct lt_ident *c;
	__u32 holder = 0, flags = 0;
	bool created = false, judged, unplaced = false;

	if (!wanted(tgid))
		return 0;
	th = starting_thread();
	if (!th)
		return 0;
	/* Inside a server's own wait: its semaphore, that same wait. */
	if (th->wait.ts && th->wait.lock.kind >= LT_PK_USDT_FIRST)
		return 0;
	in = &th->wait;
	c = identify(th, uaddr, tgid, private, &in->lock, &unplaced);
	if (kind == LT_PK_FUTEX_PI) {
		/* The PI word is the owner's TID: read it as we block. */
		if (bpf_probe_read_user(&val, sizeof(val), (void *)uaddr))
			val = 0;
		holder = val & FUTEX_TID_MASK;
	} else if (kind == LT_PK_BY_SITE && word_names_owner(val, &in->lock)) {
		/* A robust mutex's word: a lock whoever waits on it. */
		kind = LT_PK_FUTEX;
		holder = val & FUTEX_TID_MASK;
		flags |= IF_ROBUST;
	} else if (kind == LT_PK_BY_SITE) {
		kind = classify_wait(th, val, tgid, &judged);
		if (!judged)
			flags |= IF_UNJUDGED;
	}
	in->lock.kind = kind;
	in->slot = LT_NO_SLOT;
	if (c) {
		if (c->key.kind != kind) {
			c->key.kind = kind;
			forget_slots(c);
		}
		in->slot = c->slot;
	}
	if (unplaced) {
		/* Its lock is found at the end, where the word lives. */
		flags |= IF_UNPLACED;
	} else if (in->slot == LT_NO_SLOT) {
		/*
		 * The word's first wait here: its slot now, so that the wake
		 * that ends this very wait finds the lock and names the
		 * waker as its holder. Kept for the next wait. When the map
		 * is full, the wait's end tries again, and counts the drop.
		 */
		in->slot = slot_try(&in->lock, &created);
		if (c)
			c->slot = in->slot;
		if (created) {
			remember_comm(tgid);
			if (!remember_where(&in->lock, uaddr, tgid) && c)
				c->where_unread = 1;
		}
	}
	if (c && c->where_unread)
		flags |= IF_UNNAMED;
	in->gen = slot_gen;
	in->holder = holder;
	in->flags = flags;
	in->tgid = tgid;
	in->cmd = cmd;
	in->uaddr = uaddr;
	/* Last: the reader takes a stamp as a whole wait. */
	in->ts = bpf_ktime_get_ns();
	return 0;
}

/*
 * A wait whose site had no verdict when it began takes the verdict given
 * meanwhile (a tenth of a second at most after the site's first wait):
 * a long first wait is counted as what its site is.
 */
static __always_inline void rejudge(struct lt_thread *th,
				    struct lt_inflight *in)
{
	bool judged;
	__u32 kind = classify_wait(th, 0, in->tgid, &judged);

	if (judged && kind != in->lock.kind) {
		in->lock.kind = kind;
		in->slot = LT_NO_SLOT;
	}
}

/*
 * A wait whose shared word could not be placed when it began (its
 * process's maps were changing) is placed now, and the place kept: else
 * it stays the process's own word, a lock apart, counted.
 */
static __always_inline void place_late(struct lt_inflight *in)
{
	struct lt_ident_key ik = { .uaddr = in->uaddr, .tgid = in->tgid };
	struct lt_lock_key key = in->lock;

	if (!place_shared(in->uaddr, &key))
		return;
	in->lock = key;
	in->slot = LT_NO_SLOT;
	key.kind = LT_PK_FUTEX; /* as identify() keeps it */
	bpf_map_update_elem(&ident, &ik, &key, BPF_ANY);
}

static __always_inline int wait_end(void *ctx, long ret)
{
	struct lt_inflight *in;
	struct lt_lock_stat *st;
	struct lt_thread *th;
	struct lt_ident *c;
	bool created = false, named;
	__u64 delta, uaddr;
	__s32 no_slot = LT_NO_SLOT;
	__u32 word, tgid;

	th = this_thread(false);
	if (!th || !th->wait.ts || !futex_kind(th->wait.lock.kind))
		return 0;
	in = &th->wait;
	tgid = in->tgid; /* as wait_begin() named it */
	delta = bpf_ktime_get_ns() - in->ts;
	uaddr = in->uaddr;
	if (!slot_current(in->gen))
		in->slot = LT_NO_SLOT; /* found again below, by its key */
	if (in->flags & IF_UNJUDGED)
		rejudge(th, in);
	if (in->flags & IF_UNPLACED)
		place_late(in);
	/* The word's cache entry, if it still holds the word as waited on. */
	c = uaddr ? cached_ident(th, uaddr) : NULL;
	if (c && c->key.kind != in->lock.kind)
		c = NULL;
	if (c && !slot_current(c->gen)) {
		/* Its slots may have gone back while it slept. */
		forget_slots(c);
		c->gen = slot_gen;
	}
	if (in->slot == LT_NO_SLOT) {
		/* None when it began (a full map), or one from before
		 * slot_gen moved: found by its key, kept for the next. */
		in->slot = slot_of(&in->lock, &created);
		if (c)
			c->slot = in->slot;
	}
	st = stat_at(in->slot);
	if (!st)
		goto out;
	if (created)
		remember_comm(tgid);
	if (created || (in->flags & IF_UNNAMED)) {
		named = remember_where(&in->lock, uaddr, tgid);
		if (c)
			c->where_unread = !named;
	}
	add_wait(st, delta);
	if (ret == -11)
		st->value_changed++;
	else if (ret == -110)
		st->timeouts++;
	else if (interrupted_ret(ret))
		st->interrupted++;
	else if (ret == -EOWNERDEAD)
		st->owner_died++;
	else if (!ret && (in->flags & IF_ROBUST) &&
		 !bpf_probe_read_user(&word, sizeof(word), (void *)uaddr) &&
		 (word & FUTEX_OWNER_DIED))
		st->owner_died++;

	if (in->lock.kind != LT_PK_FUTEX_COND) {
		/* Waits until this thread's own unlock are one acquisition;
		 * a wait that found the word changed did not sleep. */
		if (ret != -11 && th->episode != uaddr) {
			st->contended++;
			th->episode = uaddr;
		}
		if (in->holder) {
			st->owner_named++;
			st->last_holder = in->holder;
			credit(&in->lock, in->holder, LT_ROLE_HOLDER, delta);
		}
		record_stack(ctx, &in->lock, tgid, delta);
		/* Woken: a release ended it. */
		if (!ret)
			release_charge(&in->lock, in->slot, delta);
	}
	credit_at(&in->lock, tgid, LT_ROLE_WAITER, delta,
		  c ? &c->waiter_slot : &no_slot);
out:
	in->ts = 0;
	return 0;
}

/*
 * A release of a lock (--stacks): its user stack, kept as the lock's
 * latest release, and in the thread until the call returns. Only the
 * calls that release a lock and say whether they ended a wait.
 */
static __always_inline void release_start(void *ctx, struct lt_thread *th,
					  const struct lt_lock_key *key,
					  __s32 slot, __u32 tgid, __u32 cmd)
{
	if (!th || (cmd != FUTEX_WAKE && cmd != FUTEX_WAKE_BITSET &&
		    cmd != FUTEX_UNLOCK_PI))
		return;
	th->release.stack_id = release_begin(ctx, key, slot, tgid);
	if (th->release.stack_id < 0)
		return;
	th->release.lock = *key;
	th->release.cmd = cmd;
	th->release.tgid = tgid;
}

/*
 * The end of a release begun by release_start(): one release that ended
 * waits for its stack when it woke a waiter (a wake returns how many it
 * woke; an unlock of a PI lock, called only with waiters, hands the lock
 * to one and returns 0).
 */
static __always_inline void release_end(long ret)
{
	struct lt_thread *th = this_thread(false);

	if (!th || !th->release.tgid)
		return;
	if (th->release.cmd == FUTEX_UNLOCK_PI ? !ret : ret > 0)
		release_ended(&th->release.lock, th->release.stack_id,
			      th->release.tgid);
	th->release.tgid = 0;
}

/*
 * A wake names the waking thread as the lock's last holder, unless the
 * lock's word names its owner (robust and PI mutexes). Only locks
 * someone has waited on have an entry to credit; the kind of the word's
 * latest wait seen by this thread is looked up first.
 */
static __always_inline int wake(void *ctx, __u64 uaddr, bool private, __u32 cmd)
{
	static const __u32 kinds[3] = { LT_PK_FUTEX, LT_PK_FUTEX_COND,
					LT_PK_FUTEX_PI };
	__u64 ids = current_ids();
	__u32 tgid = ids >> 32, first, i;
	struct lt_lock_key key;
	struct lt_lock_stat *st;
	struct lt_thread *th;
	struct lt_ident *c;
	__s32 slot, no_slot = LT_NO_SLOT;
	bool unplaced = false;

	if (!wanted(tgid))
		return 0;
	th = this_thread(true);
	if (th && th->episode == uaddr)
		th->episode = 0;
	c = identify(th, uaddr, tgid, private, &key, &unplaced);
	first = key.kind;
	slot = c && c->slot != LT_NO_SLOT ? c->slot : slot_find(&key);
	st = stat_at(slot);
	for (i = 0; !st && i < 3; i++) {
		if (kinds[i] == first)
			continue;
		key.kind = kinds[i];
		slot = slot_find(&key);
		st = stat_at(slot);
	}
	if (!st)
		return 0;
	if (c) {
		if (c->key.kind != key.kind) {
			c->key.kind = key.kind;
			forget_slots(c);
		}
		c->slot = slot;
	}
	st->wakes++;
	if (targ_stacks && key.kind != LT_PK_FUTEX_COND)
		release_start(ctx, th, &key, slot, tgid, cmd);
	/* Where the word names the owner, its waiters credit the holder,
	 * with the wait it caused: the waker adds nothing to that. */
	if (key.kind != LT_PK_FUTEX_COND && !st->owner_named) {
		/* By thread, as a word's owner is: a thread that ends
		 * before the read is known by its exit. */
		__u32 tid = (__u32)ids;

		st->last_holder = tid;
		/* Named at its first credit the thread's cache misses. */
		if (!c || c->holder_slot == LT_NO_SLOT)
			name_thread(tid, bpf_get_current_task_btf());
		credit_at(&key, tid, LT_ROLE_HOLDER, 0,
			  c ? &c->holder_slot : &no_slot);
	}
	return 0;
}

SEC("tracepoint/syscalls/sys_enter_futex")
int lt_futex_enter(struct trace_event_raw_sys_enter *ctx)
{
	int op = (int)ctx->args[1];
	int cmd = op & FUTEX_CMD_MASK;
	bool private = op & FUTEX_PRIVATE_FLAG;
	__u64 uaddr = ctx->args[0];
	__u32 val = (__u32)ctx->args[2];

	count_run();
	switch (cmd) {
	case FUTEX_WAIT:
	case FUTEX_WAIT_BITSET:
		return wait_begin(uaddr, val, private, LT_PK_BY_SITE, cmd);
	case FUTEX_LOCK_PI:
	case FUTEX_LOCK_PI2:
	case FUTEX_TRYLOCK_PI:
		return wait_begin(uaddr, val, private, LT_PK_FUTEX_PI, cmd);
	case FUTEX_WAIT_REQUEUE_PI:
		/* A condition variable whose mutex is PI: an event wait. */
		return wait_begin(uaddr, val, private, LT_PK_FUTEX_COND, cmd);
	case FUTEX_WAKE:
	case FUTEX_WAKE_BITSET:
	case FUTEX_WAKE_OP:
	case FUTEX_UNLOCK_PI:
	case FUTEX_REQUEUE:
	case FUTEX_CMP_REQUEUE:
	case FUTEX_CMP_REQUEUE_PI:
		return wake(ctx, uaddr, private, cmd);
	}
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_futex")
int lt_futex_exit(struct trace_event_raw_sys_exit *ctx)
{
	count_run();
	if (targ_stacks)
		release_end(ctx->ret);
	return wait_end(ctx, ctx->ret);
}

/* futex_wait(uaddr, val, mask, flags, timeout, clockid) */
SEC("tracepoint/syscalls/sys_enter_futex_wait")
int lt_futex2_wait(struct trace_event_raw_sys_enter *ctx)
{
	__u32 val = (__u32)ctx->args[1];

	count_run();
	return wait_begin(ctx->args[0], val, ctx->args[3] & FUTEX2_PRIVATE,
			  LT_PK_BY_SITE, FUTEX_WAIT);
}

SEC("tracepoint/syscalls/sys_exit_futex_wait")
int lt_futex2_wait_x(struct trace_event_raw_sys_exit *ctx)
{
	count_run();
	return wait_end(ctx, ctx->ret);
}

/* futex_waitv(waiters, nr, ...): an event wait on several words. */
SEC("tracepoint/syscalls/sys_enter_futex_waitv")
int lt_futex_waitv(struct trace_event_raw_sys_enter *ctx)
{
	struct futex_waitv first;

	count_run();
	if (bpf_probe_read_user(&first, sizeof(first), (void *)ctx->args[0]))
		return 0;
	return wait_begin(first.uaddr, (__u32)first.val,
			  first.flags & FUTEX2_PRIVATE, LT_PK_FUTEX_COND,
			  FUTEX_WAIT);
}

SEC("tracepoint/syscalls/sys_exit_futex_waitv")
int lt_futex_waitv_x(struct trace_event_raw_sys_exit *ctx)
{
	count_run();
	return wait_end(ctx, ctx->ret);
}

/* futex_wake(uaddr, mask, nr, flags) */
SEC("tracepoint/syscalls/sys_enter_futex_wake")
int lt_futex2_wake(struct trace_event_raw_sys_enter *ctx)
{
	count_run();
	return wake(ctx, ctx->args[0], ctx->args[3] & FUTEX2_PRIVATE,
		    FUTEX_WAKE);
}

/* Loaded with --stacks only: the end of a release. */
SEC("tracepoint/syscalls/sys_exit_futex_wake")
int lt_futex2_wake_x(struct trace_event_raw_sys_exit *ctx)
{
	count_run();
	release_end(ctx->ret);
	return 0;
}

/* Children of traced processes are traced too. */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(lt_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = parent->tgid, ctgid = child->tgid;
	__u8 one = 1;

	count_run();
	if (!targ_filter || ptgid == ctgid)
		return 0;
	if (targ_pidns_ino) {
		/* The traced set holds the numbers of locktop's namespace. */
		ptgid = task_ids_here(parent) >> 32;
		ctgid = task_ids_here(child) >> 32;
		if (!ptgid || !ctgid)
			return 0;
	}
	if (!bpf_map_lookup_elem(&traced, &ptgid))
		return 0;
	if (bpf_map_update_elem(&traced, &ctgid, &one, BPF_ANY))
		count_drop(LT_DROP_TRACED_FULL);
	return 0;
}

/* Processes whose remembered name an exec changed; see lt_exec. */
__u64 renamed;

/* Processes that exec'd since the collector last looked: what it kept of
 * their maps and images is another program's now. */
struct {
	__uint(type, BPF_MAP_TYPE_QUEUE);
	__uint(max_entries, LT_MAX_EXITED);
	__type(value, __u32);
} execed SEC(".maps");

/*
 * A process is named by what the probes remembered of it (comms). One
 * seen before it exec'd (a shell that becomes the traced program) takes
 * its new name, and the collector, seeing renamed move, reads them anew.
 * Every exec of a traced process is queued (execed).
 */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(lt_exec, struct task_struct *task)
{
	__u32 tgid = task->tgid;
	char comm[LT_COMM_LEN];

	count_run();
	owner_thread_ended(task); /* another program: it maps other things */
	if (targ_pidns_ino) {
		tgid = task_ids_here(task) >> 32;
		if (!tgid)
			return 0;
	}
	if (!wanted(tgid))
		return 0;
	bpf_map_push_elem(&execed, &tgid, BPF_EXIST);
	if (!bpf_map_lookup_elem(&comms, &tgid))
		return 0;
	bpf_get_current_comm(comm, sizeof(comm));
	if (!bpf_map_update_elem(&comms, &tgid, comm, BPF_EXIST))
		__sync_fetch_and_add(&renamed, 1);
	return 0;
}

/*
 * A thread's state goes with it (task storage), and so does a verdict
 * on words naming it (owners_seen); a thread that ends before its
 * process is queued for the collector, which then forgets its TID. A
 * process that ends is queued for the collector, which drops its private
 * locks from the maps once their last figures are read: a long-running
 * agent does not fill them with the dead. When a queue is full the
 * oldest exit makes room.
 */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(lt_exit, struct task_struct *task, bool group_dead)
{
	__u32 tgid = task->tgid, tid = task->pid;
	__u64 ended, ids;

	count_run();
	owner_thread_ended(task); /* its TID may be another thread's next */
	if (targ_pidns_ino) {
		/* Named as the probes named it while it ran. */
		ids = task_ids_here(task);
		tgid = ids >> 32;
		tid = (__u32)ids;
		if (!tgid)
			return 0; /* never seen: outside locktop's namespace */
	}
	ended = (__u64)tid << 32 | tgid;
	if (!group_dead) {
		if (tid != tgid && wanted(tgid))
			bpf_map_push_elem(&ended_threads, &ended, BPF_EXIST);
		return 0;
	}
	if (targ_filter)
		bpf_map_delete_elem(&traced, &tgid);
	bpf_map_push_elem(&exited, &tgid, BPF_EXIST);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
