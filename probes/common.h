/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Types every probe shares with the collector: the lock identity, the
 * per-lock aggregate and the drop reasons. The includer provides
 * __u32/__u64 (vmlinux.h or <linux/types.h>).
 */
#ifndef LOCKTOP_PROBES_COMMON_H
#define LOCKTOP_PROBES_COMMON_H

#include "sizes.h"

#define LT_MAX_LOCKS 16384 /* distinct locks the kernel side can hold */
#define LT_NO_SLOT (-1) /* a lock not (yet) given a slot in stat_map */
#define LT_MAX_THREADS 65536 /* threads that can wait at the same time */
#define LT_MAX_TRACED 8192 /* processes in a --pid / -- COMMAND tree */
#define LT_MAX_PARTIES 32768 /* (lock, process, role) triples */
#define LT_MAX_EXITED 8192 /* process exits queued between two reads */
#define LT_MAX_STACKS 4096 /* distinct user stacks kept */
#define LT_STACK_DEPTH 32 /* frames per stack */

/* The entries of slot_high: one past the highest slot handed out. */
enum lt_high { LT_HIGH_LOCKS, LT_HIGH_PARTIES, LT_HIGH_FILES, LT_HIGH_NR };

/*
 * The entries of slot_use, per enum lt_high: 2 * which counts the slots
 * the probes took, 2 * which + 1 those the collector gave back. Each has
 * one writer; their difference is the slots in use, at any moment.
 */
#define LT_SLOT_USE_NR (2 * LT_HIGH_NR)

/* Past this percent of the lock or party map in use, a file lock's byte
 * range with no slot of its own counts in its file's other ranges. */
#define LT_FOLD_AT 60

/*
 * File lock holds. A hold is timed in full when its grant ended a wait
 * (the clock is read then anyway), while the lock is new on the CPU (its
 * first LT_HOLD_EXACT grants there), while anything else waits to run on
 * the CPU, and once a holder of the lock slept while holding it. Else it
 * is timed one time in LT_HOLD_EVERY, at random: a sample. The others
 * are counted (hold_skipped); the collector adds each at the mean of the
 * lock's samples, and the probe adds the time its holder was kept off
 * the CPU by others (its run-queue wait), the one part of a hold that
 * can run long without the holder sleeping. So an uncontended
 * lock+unlock on a quiet CPU reads no clock most of the time, and what
 * the samples cannot see, preemption, is measured for every hold.
 */
#define LT_HOLD_EXACT 64
#define LT_HOLD_EVERY 16 /* a power of two */

/* Lock kinds as the probes see them: the rows of kinds.def, numbered as
 * enum lt_kind. */
enum lt_probe_kind {
#define LT_KIND_ROW(ID, NAME) LT_PK_##ID,
#include "kinds.def"
};

/* The first kind announced by USDT probes: a thread's wait in flight of
 * such a kind is one the futex probe leaves alone (see struct lt_thread). */
#define LT_PK_USDT_FIRST LT_PK_PG_LWLOCK

/*
 * One lock, the same for every process that shares it:
 *  - shared futex: (dev, ino, offset) of the mapped file or shmem object
 *  - private futex: (tgid, 0, address)
 *  - fcntl/OFD: (dev, ino, start, end); flock: (dev, ino)
 *  - kernel: (0, 0, the lock's kernel address)
 * `shared` says which of the first two forms a futex key has.
 */
struct lt_lock_key {
	__u64 dev_or_tgid;
	__u64 ino;
	__u64 start; /* offset in the file, address, or range start */
	__u64 end; /* range end for file locks, else 0 */
	__u32 kind; /* enum lt_probe_kind */
	__u32 shared;
};

/*
 * The key of a file's "other ranges": the figures of the byte ranges of
 * one file and kind that met the lock map nearly full and had no slot of
 * their own. No range starts past its end, so no lock has this key.
 */
#define LT_FOLD_START (~0ULL)
#define LT_FOLD_END 0ULL
#define LT_KEY_FOLDED(k) \
	((k)->start == LT_FOLD_START && (k)->end == LT_FOLD_END)

#define LT_WHERE_NAME_LEN 48

/*
 * Naming facts for a lock, written by the probe with the lock's first
 * counted event, while the process that touched it surely lives.
 */
struct lt_where {
	__u64 vm_start; /* futex: the mapping's start */
	__u64 offset; /* futex: offset in the mapped file */
	__u64 ino;
	__u64 uaddr; /* futex: the address in process tgid */
	__u32 dev;
	__u32 flags; /* futex: enum lt_vma_flags (futex.h) */
	__u32 tgid; /* a process that used the lock */
	__s32 fd; /* file locks: its descriptor there, or -1 */
	char file[LT_WHERE_NAME_LEN]; /* base name of the backing file */
};

#define LT_HELD_DEPTH 4 /* a power of two */

/* The file locks a thread holds, innermost last, for I/O under lock. */
struct lt_thread_locks {
	struct {
		struct lt_lock_key key;
		__s32 slot; /* where its figures are */
		__u32 gen; /* slot_gen when slot was found */
	} held[LT_HELD_DEPTH];
	__u32 n;
	__u32 pad;
};

/* The probe objects, indexing the per-CPU `runs` array. */
enum lt_probe_obj {
	LT_OBJ_FUTEX = 0,
	LT_OBJ_FILELOCK,
	LT_OBJ_FILEIO,
	LT_OBJ_KERNEL,
	LT_OBJ_SPIN,
	LT_OBJ_USDT,
	LT_OBJ_NR,
};

/* Why an event could not be counted. Indexes the per-CPU `drops` array. */
enum lt_drop_reason {
	LT_DROP_LOCKS_FULL = 0, /* the per-lock map was full */
	LT_DROP_START_FULL, /* a wait's start could not be kept */
	LT_DROP_TRACED_FULL, /* a child could not join the traced set */
	LT_DROP_PARTIES_FULL, /* a holder or waiter could not be credited */
	LT_DROP_HELD_FULL, /* a granted file lock could not be timed */
	LT_DROP_FILES_FULL, /* the per-file I/O map was full */
	LT_DROP_STACKS_FULL, /* a wait's stack could not be kept (--stacks) */
	LT_DROP_PROCS_FULL, /* the per-process I/O map was full */
	LT_DROP_RACE, /* a new slot stayed out of the readers' reach */
	LT_DROP_NR,
};

/* Which part of struct lt_lock_stat a figure is in (figures.def). */
#define LT_STAT_HEAD_HEAD(name) __u64 name;
#define LT_STAT_HEAD_BODY(name)
#define LT_STAT_BODY_HEAD(name)
#define LT_STAT_BODY_BODY(name) __u64 name;

/*
 * Per-CPU aggregate for one lock: the counters of figures.def, and what
 * the probes keep beside them. max_ns is the largest wait seen in epoch
 * max_epoch; the collector advances the epoch once per interval, which
 * gives a true per-interval maximum without resetting anything.
 */
struct lt_lock_stat {
	/* What a file lock's grant and release touch, together at the head:
	 * the figures are cold in a store that meets thousands of ranges. */
	__u64 touched; /* the epoch of the last event that changed it */
#define LT_COUNT(NAME, STAT, JSON, PCP, RECORD) LT_STAT_HEAD_##STAT(NAME)
#define LT_PROBE_COUNT(NAME, STAT) LT_STAT_HEAD_##STAT(NAME)
#include "figures.def"
	__u64 max_hold_ns;
	__u64 hold_slept; /* holds whose holder slept: all timed after */
	/* Bit b: slot b of the histogram has counted, here or on another
	 * CPU (the reader ORs them). Readers look at these slots alone. */
	__u64 hold_used;
	__u64 hist_used;
#define LT_COUNT(NAME, STAT, JSON, PCP, RECORD) LT_STAT_BODY_##STAT(NAME)
#define LT_PROBE_COUNT(NAME, STAT) LT_STAT_BODY_##STAT(NAME)
#include "figures.def"
	__u64 max_ns;
	__u64 max_epoch;
	__u64 max_total_ns;
	/*
	 * The latest holder a wait or wake named, 0 before one. What the
	 * number is depends on the lock's kind:
	 *   futex, futex-pi  a thread ID: the owner's TID from the lock
	 *                    word (PI and robust mutexes) or, on a lock
	 *                    whose word never named one, the thread that
	 *                    woke a waiter (futex.bpf.c);
	 *   fcntl, ofd,      a process ID: the blocking lock's flc_pid
	 *   flock            (filelock.bpf.c);
	 *   kernel           a thread ID: a mutex's owner, an rwsem's
	 *                    writer (klock.bpf.c);
	 *   spin, futex-cond and the servers' own kinds: always 0.
	 * Only the low 32 bits are used. The reader takes any CPU's nonzero
	 * one; the collector keeps the last nonzero one it read and finds
	 * the process from it (tids_tgid_of(): a process ID is its own).
	 */
	__u64 last_holder;
	__u64 owner_named; /* futex waits whose word named the holder */
	/* Wrapping counters: the collector diffs them modulo 2^32. */
	__u32 hist[LT_HIST_SLOTS];
	__u32 hold_hist[LT_HIST_SLOTS];
};

#define LT_MAX_CPUS 1024 /* the iterators sum at most this many CPUs */

/* One lock as the collector's reader writes it: summed over CPUs, with
 * max_ns the longest wait of this read's epoch. */
struct lt_lock_rec {
	struct lt_lock_key key;
	__u32 slot; /* where its figures are in stat_map */
	__u32 pad;
	struct lt_lock_stat sum;
};

/* Who, on which side of a lock. */
enum lt_role {
	LT_ROLE_WAITER = 0, /* keyed by process */
	LT_ROLE_HOLDER = 1, /* keyed by thread: a futex word's owner, a waker */
	LT_ROLE_HOLDER_PROC = 2, /* keyed by process: a file lock's blocker,
				  * a kernel lock's owner */
};

struct lt_party_key {
	struct lt_lock_key lock;
	__u32 tgid;
	__u32 role;
};

struct lt_party_stat {
	__u64 count;
	__u64 ns;
	__u64 touched; /* the epoch of its last change */
};

struct lt_party_rec {
	struct lt_party_key key;
	__u32 slot; /* where its figures are in parties */
	__u32 pad;
	struct lt_party_stat sum;
};

#define LT_SNAP_BYTES 8192 /* user stack kept with a stack's first wait */
#define LT_PAGE 4096
#define LT_MAX_SNAPS 1024
#define LT_SNAP_REGS 8

/* x86-64: the registers a snapshot keeps, by index. */
enum lt_snap_reg {
	LT_REG_IP,
	LT_REG_SP,
	LT_REG_BP,
	LT_REG_BX,
	LT_REG_R12,
	LT_REG_R13,
	LT_REG_R14,
	LT_REG_R15,
};

/*
 * A user stack as it was at a stack's first wait: the registers a CFI
 * unwinder starts from and the top of the stack, for the collector to
 * unwind through code built without frame pointers.
 */
struct lt_stack_snap {
	__u64 regs[LT_SNAP_REGS];
	__u32 len; /* bytes of stack from regs[LT_REG_SP] */
	__u32 tgid;
	__u8 data[LT_SNAP_BYTES];
};

/* Which side of a lock a user stack was on. */
enum lt_stack_role {
	LT_STACK_WAIT = 0, /* a contended wait, as it ended */
	LT_STACK_RELEASE = 1, /* a release that ended waits: the holder's */
};

/* A user stack seen on one side of a lock. */
struct lt_stack_key {
	struct lt_lock_key lock;
	__s64 stack_id; /* in the `stacks` map */
	__u32 role; /* enum lt_stack_role */
	__u32 pad;
};

/*
 * A wait stack: its waits and their time. A release stack: the
 * releases that ended waits, and the time of the waits they ended.
 */
struct lt_stack_stat {
	__u64 count;
	__u64 ns;
	__u64 tgid; /* a process it was seen in, to symbolize */
	__u64 snapped; /* its snapshot was kept (set on every CPU) */
};

/*
 * A lock's latest release that may end waits, by the lock's slot
 * (--stacks): a wait it ends, at its own end, adds its time to that
 * release's stack. tgid 0: none since the slot was handed out.
 */
struct lt_release {
	__s64 stack_id;
	__u32 tgid; /* the releasing process */
	__u32 gen; /* slot_gen when it was kept */
};

/* A wait in flight, readable by the collector (waiters now, wait-for). */
struct lt_inflight {
	struct lt_lock_key lock;
	__u64 ts; /* 0: no wait */
	__u32 holder; /* tid of the holder, if known */
	__u32 tgid;
	__u32 cmd; /* probe-specific operation */
	__u32 flags;
	__u64 uaddr; /* futex: the word's address */
	__s32 slot; /* the lock's slot in stat_map, or LT_NO_SLOT */
	__u32 gen; /* slot_gen when slot was found */
};

#define LT_IDENT_CACHE 4
#define LT_SITE_CACHE 2

/*
 * A futex word's identity as one thread last saw it; its address is
 * lt_thread.ident_uaddr[] at the same index.
 */
struct lt_ident {
	struct lt_lock_key key; /* kind: its latest, where wakes look first */
	__s32 slot; /* of key as it is, or LT_NO_SLOT when not known */
	/* This process's waiter and holder parties of key as it is. */
	__s32 waiter_slot;
	__s32 holder_slot;
	__u32 gen; /* slot_gen when the slots were found; see globals.bpf.h */
	/* The lock's mapping could not be read when its slot was made
	 * (remember_where()): read again at this thread's waits' ends. */
	__u32 where_unread;
};

/*
 * The verdict on a call site of one of the thread's plain futex waits,
 * once the collector gave one, so the next wait from there looks
 * nothing up.
 */
struct lt_site_memo {
	__u64 ip;
	__u64 ra; /* with a shared helper: the caller judged */
	__s32 ra_off; /* where that return address is, from sp */
	__u32 helper; /* the site is a shared helper */
	__u32 verdict; /* enum lt_site_verdict; 0: none kept */
	__u32 pad;
};

#define LT_FILE_CACHE 4
#define LT_OWNER_CACHE 2
#define LT_IO_CACHE 2 /* a power of two */

/* A file lock as one thread last met it, and where its figures are. */
struct lt_file_ident {
	struct lt_lock_key key;
	__s32 slot; /* of key, or LT_NO_SLOT when not known */
	/* This process's waiter party of key, and the holder party of
	 * holder, the process it last waited behind. */
	__s32 waiter_slot;
	__s32 holder_slot;
	__u32 holder;
	__u32 gen; /* slot_gen when the slots were found */
	__u32 pad;
};

/*
 * What the probes keep per thread, in task storage: no hashing and no
 * bucket lock on the hot paths, and it goes with the thread. The
 * collector's reader walks the threads for the waits in flight.
 */
struct lt_thread {
	/* One at a time; each probe ends only waits of its own kinds. A
	 * wait of a kind from LT_PK_USDT_FIRST on is a server's own lock
	 * (started and ended by its USDT probes): while it is in flight,
	 * the futex probe counts none of the thread's futex waits, which
	 * are that same wait on the server's semaphore. */
	struct lt_inflight wait;
	/*
	 * futex: what every wait and wake reads, after the wait and in as
	 * few cache lines as can be: a thread's state is cold when its
	 * next call comes. The addresses of the identities in ident[] are
	 * side by side, so that looking for a word reads one line.
	 */
	__u64 ident_uaddr[LT_IDENT_CACHE]; /* 0: that entry is free */
	__u64 episode; /* address waited on since the last wake */
	__u32 ident_next; /* the cache slot to replace next */
	__u32 site_next; /* the site slot to replace next */
	struct lt_site_memo site[LT_SITE_CACHE]; /* its waits' latest sites */
	struct lt_ident ident[LT_IDENT_CACHE]; /* futex identities seen */
	struct lt_thread_locks held; /* file locks held, innermost last */
	/* The pread-path call in progress (ts 0: none), for its time and
	 * its file. */
	struct {
		__u64 dev;
		__u64 ino;
		__u64 ts;
		__u32 write;
		__s32 fd;
	} io;
	/* The pread path's files this thread met last, and where their
	 * figures are: a server reads a few files over and over. */
	struct {
		__u64 dev;
		__u64 ino;
		__s32 slot;
		__u32 gen; /* slot_gen when slot was found */
	} io_file[LT_IO_CACHE];
	__u32 io_next; /* the io_file slot to replace next */
	__u32 io_pad;
	/* futex, --stacks: a wake in progress that may end waits, for its
	 * exit to count by what it returns (tgid 0: none). */
	struct {
		struct lt_lock_key lock;
		__s64 stack_id;
		__u32 tgid;
		__u32 cmd;
	} release;
	__u32 hold_rng; /* xorshift state: which holds are samples */
	__u32 file_next; /* the file cache slot to replace next */
	__u32 owner_next; /* the owner cache slot to replace next */
	__u32 pad;
	struct lt_file_ident file[LT_FILE_CACHE]; /* file locks met */
	/* filelock: the (owner, file) pairs this thread last locked, and
	 * the slot of their held ranges in the owned map. */
	struct {
		__u64 owner;
		__u64 dev;
		__u64 ino;
		__u32 slot;
		__u32 pad;
	} owner[LT_OWNER_CACHE];
};

#endif /* LOCKTOP_PROBES_COMMON_H */
