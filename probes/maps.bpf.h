/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The maps every probe object declares. The collector loads the futex
 * object first and hands its descriptors of the maps shared_maps.def
 * lists to each other object (bpf_map__reuse_fd, mapio_share_maps() in
 * collector/mapio.c), so all probes count into one set of maps. A map
 * shared is declared here and is a row of shared_maps.def; the check at
 * the end fails the build of a row declared nowhere. key_scratch alone
 * is each object's own.
 */
#ifndef LOCKTOP_PROBES_MAPS_BPF_H
#define LOCKTOP_PROBES_MAPS_BPF_H

#include "common.h"

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

/* A stack key being made off the BPF stack, where a path is short of it.
 * Each object's own: not in shared_maps.def. */
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

/* Each map shared_maps.def lists is declared above. */
#define LT_SHARED_MAP(name) _Static_assert(sizeof(name) > 0, #name);
#include "shared_maps.def"

#endif /* LOCKTOP_PROBES_MAPS_BPF_H */
