/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Holders and waiters of each lock, the parties: their figures in slots
 * of their own (slots.bpf.h), credited with each event.
 */
#ifndef LOCKTOP_PROBES_PARTIES_BPF_H
#define LOCKTOP_PROBES_PARTIES_BPF_H

#include "globals.bpf.h"
#include "maps.bpf.h"
#include "processes.bpf.h"
#include "slots.bpf.h"

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

#endif /* LOCKTOP_PROBES_PARTIES_BPF_H */
