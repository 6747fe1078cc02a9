/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The slot allocator. Each lock's figures, and each party's, live in a
 * slot of an array a probe indexes (the maps are maps.bpf.h's): a key's
 * slot is found by name, or taken from the free queue on first use; a
 * slot kept since an earlier slot_gen is looked up again.
 */
#ifndef LOCKTOP_PROBES_SLOTS_BPF_H
#define LOCKTOP_PROBES_SLOTS_BPF_H

#include "globals.bpf.h"
#include "maps.bpf.h"
#include "probe_counts.bpf.h"

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

/*
 * The figures of key in slot, kept since slot_gen was gen; once
 * slot_gen has moved (the slot may have gone to another lock), found
 * again by key, and made if need be.
 */
static __always_inline struct lt_lock_stat *
stat_kept(__s32 slot, __u32 gen, const struct lt_lock_key *key)
{
	bool created;
	__s32 again;

	if (slot_current(gen))
		return stat_at(slot);
	return stat_of(key, &created, &again);
}

#endif /* LOCKTOP_PROBES_SLOTS_BPF_H */
