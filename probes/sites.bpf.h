/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The kind of a plain futex wait, for the futex probe: from the function
 * it was called from, as the collector judged its call site (struct
 * lt_site), and from the word's value until then. The thread keeps its
 * latest sites' verdicts (struct lt_site_memo).
 */
#ifndef LOCKTOP_PROBES_SITES_BPF_H
#define LOCKTOP_PROBES_SITES_BPF_H

#include "futex.h"
#include "owner.bpf.h"

/* Call sites of waits, and the verdicts the collector gave them. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LT_MAX_SITES);
	__type(key, struct lt_site_key);
	__type(value, struct lt_site);
} sites SEC(".maps");

/* Sites seen for the first time, for the collector to judge. */
struct {
	__uint(type, BPF_MAP_TYPE_QUEUE);
	__uint(max_entries, LT_MAX_SITES);
	__type(value, struct lt_site_key);
} new_sites SEC(".maps");

/*
 * The kind a word's value gives, where its call site gives none yet:
 * glibc's lll_lock waits with value 2 ("locked, maybe waiters"); a word
 * with its top bit set is a lock's with waiters (a robust mutex's
 * FUTEX_WAITERS, InnoDB's waiters flag). Anything else is taken for an
 * event wait (condvars, semaphores, joins) until the site is judged.
 */
static __always_inline __u32 classify(__u32 val)
{
	__u32 tid = val & FUTEX_TID_MASK;

	if (val == 2)
		return LT_PK_FUTEX;
	if ((val & FUTEX_WAITERS) && tid && tid <= PID_MAX_LIMIT)
		return LT_PK_FUTEX;
	return LT_PK_FUTEX_COND;
}

/* The verdict on a site, or NULL: then it is queued to be judged. */
static __always_inline struct lt_site *site_of(struct lt_site_key *k)
{
	static const struct lt_site fresh;
	struct lt_site *s = bpf_map_lookup_elem(&sites, k);

	if (!s && !bpf_map_update_elem(&sites, k, &fresh, BPF_NOEXIST))
		bpf_map_push_elem(&new_sites, k, 0);
	return s;
}

/*
 * The kind a final verdict gives a wait: only a site known to wait for
 * an event makes one; a site with no verdict (no symbol, a stripped
 * binary, a function of no known kind) waits on a lock.
 */
static __always_inline __u32 verdict_kind(__u32 verdict)
{
	return verdict == LT_SITE_EVENT ? LT_PK_FUTEX_COND : LT_PK_FUTEX;
}

#ifdef __TARGET_ARCH_x86
/*
 * The verdict the thread kept on the wait site at regs->ip, 0 when it
 * kept none. A shared helper's is good for one caller, whose return
 * address is read once: the helper's entries agree on where it is.
 */
static __always_inline __u32 memo_verdict(struct lt_thread *th,
					  struct pt_regs *regs)
{
	struct lt_site_memo *m;
	bool have_ra = false;
	__u64 ra = 0;
	__u32 i;

	for (i = 0; i < LT_SITE_CACHE; i++) {
		m = &th->site[i];
		if (!m->verdict || m->ip != regs->ip)
			continue;
		if (!m->helper)
			return m->verdict;
		if (!have_ra) {
			if (bpf_probe_read_user(&ra, sizeof(ra),
						(void *)(regs->sp + m->ra_off)))
				return LT_SITE_LOCK;
			have_ra = true;
		}
		if (ra == m->ra)
			return m->verdict;
	}
	return 0;
}
#endif

/*
 * A plain wait's kind: the function the syscall came from, when the
 * collector has judged it (*judged set), else the value. Shared helpers
 * (glibc's __futex_abstimed_wait_common serves condition variables and
 * rwlocks alike) are judged by their caller, whose return address lies
 * at a fixed offset from the stack pointer there, as the helper's CFI
 * says. The thread keeps the verdicts on its latest waits' sites
 * (lt_site_memo). The user registers are the same at the system call's
 * exit, so a wait's end can ask again.
 */
static __always_inline __u32 classify_wait(struct lt_thread *th, __u32 val,
					   __u32 tgid, bool *judged)
{
	__u32 by_value = classify(val);
#ifdef __TARGET_ARCH_x86
	struct lt_site_key k = { .tgid = tgid };
	struct lt_site *s, *first;
	struct lt_site_memo *m;
	struct pt_regs *regs;
	__u32 verdict;
	__u64 ra = 0;

	regs = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
	/* Waits come from a few places: the thread's latest first. */
	verdict = memo_verdict(th, regs);
	*judged = verdict != 0;
	if (verdict)
		return verdict_kind(verdict);
	k.ip = regs->ip;
	first = s = site_of(&k);
	if (s && s->verdict == LT_SITE_CALLER) {
		if (bpf_probe_read_user(&ra, sizeof(ra),
					(void *)(regs->sp + s->ra_off)))
			return by_value;
		k.ip = ra;
		s = site_of(&k);
	}
	if (!s || s->verdict == LT_SITE_NEW || s->verdict == LT_SITE_CALLER)
		return by_value; /* not judged yet: ask again next time */
	m = &th->site[th->site_next++ & (LT_SITE_CACHE - 1)];
	m->ip = regs->ip;
	m->helper = first != s;
	m->ra_off = first->ra_off;
	m->ra = ra;
	m->verdict = s->verdict;
	*judged = true;
	return verdict_kind(s->verdict);
#else
	*judged = false;
	return by_value;
#endif
}

#endif /* LOCKTOP_PROBES_SITES_BPF_H */
