// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Spinning on the CPU, by sampling. Two sources of samples:
 *  - the scheduler's tick (lt_spin_tick, at the hrtimer of the tick), on
 *    a CPU that is busy, at no interrupt of its own: it finds spinning;
 *  - a perf event on every CPU (lt_spin_sample), some LT_SPIN_HZ times a
 *    second, which the collector runs while something spun lately
 *    (spun_at), or always when asked: it measures spinning. While it
 *    runs (sampler_on), the tick takes no samples.
 * A sample of a traced thread in user mode looks its IP up in
 * spin_sites; a site the collector has not judged yet is queued for it
 * (new_spin_sites) and the sample waits for the verdict (spin_pending),
 * a site that is no spin loop ends there. In a spin loop the lock's
 * address is taken from the registers as the collector decoded the
 * loop, and the lock is named as a futex word is: a shared file mapping
 * by (dev, ino, offset), anything else by (process, address). Each
 * sample adds to the lock's wait time the time it stands for: the CPU's
 * time since its previous sample (sample_span), which is the sampling
 * period unless ticks were lost (a virtual CPU the hypervisor held off,
 * as it does to spinning ones, or interrupts off). An estimate of the
 * time spent spinning.
 *
 * A thread whose sample spun is kept in spin_threads with the lock, until
 * a later sample of it does not spin: the collector counts the threads
 * spinning now from it.
 *
 * sched_yield calls are counted per call site (the user return address
 * of the libc wrapper), as spin rows of their own.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "common.bpf.h"
#include "where.bpf.h"
#include "spin.h"

/* The sampling period, set before load. */
const volatile __u64 targ_sample_ns = 1000000000ULL / LT_SPIN_HZ;

/* The scheduler tick's hrtimer function, set before load; 0: the tick
 * takes no samples (and the collector runs the sampler always). */
const volatile __u64 targ_tick_fn = 0;

#define LT_SPIN_MAX_TICKS 64 /* one sample stands for at most this many */
#define LT_TICK_MAX_NS 10000000ULL /* a tick stands for at most this */

/* Whether the sampler's perf events run: set by the collector. */
__u32 sampler_on = 0;

/* When a sample last spun (bpf_ktime_get_ns), 0: never. */
__u64 spun_at = 0;

/* Each CPU's latest sample, of any task, and the time it stood for. */
struct spin_cpu {
	__u64 last;
	__u64 span;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct spin_cpu);
} spin_last SEC(".maps");

/*
 * The time this sample stands for: since the CPU's previous one, when
 * that is at most most ns; else period, or for a tick what the previous
 * sample stood for. A tick's gap that is too long is an idle CPU's (its
 * tick stops), not time spent spinning; the sampler's events run on
 * idle CPUs too, so their long gaps are lost ticks.
 */
static __always_inline __u64 sample_span(__u64 period, __u64 most, bool tick)
{
	__u64 now = bpf_ktime_get_ns(), span = period;
	struct spin_cpu *c;
	__u32 zero = 0;

	c = bpf_map_lookup_elem(&spin_last, &zero);
	if (!c)
		return span;
	if (c->last && now > c->last && now - c->last <= most)
		span = now - c->last;
	else if (tick && c->span)
		span = c->span;
	c->last = now;
	c->span = span;
	return span;
}

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LT_MAX_SPIN_SITES);
	__type(key, struct lt_spin_key);
	__type(value, struct lt_spin_site);
} spin_sites SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_QUEUE);
	__uint(max_entries, LT_MAX_SPIN_SITES);
	__type(value, struct lt_spin_key);
} new_spin_sites SEC(".maps");

/*
 * Samples that met a site before its verdict, per site. The next sample
 * of a site judged a spin loop adds them to its own lock; one judged
 * anything else drops them. So the first samples of a loop, while the
 * collector reads its code, still count, only perhaps on a neighbour of
 * their lock taken in the same loop.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LT_MAX_SPIN_SITES);
	__type(key, struct lt_spin_key);
	__type(value, __u64);
} spin_pending SEC(".maps");

/* (process, address) -> the lock's identity: one lookup per lock. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, LT_MAX_LOCKS);
	__type(key, struct lt_spin_key);
	__type(value, struct lt_lock_key);
} spin_ident SEC(".maps");

/* Threads whose latest sample was in a spin loop, and on which lock. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, LT_MAX_SPIN_THREADS);
	__type(key, __u32);
	__type(value, struct lt_spin_thread);
} spin_threads SEC(".maps");

/*
 * Whether spin_threads may hold a thread: set by a sample that spun,
 * cleared by the collector when it finds the map empty. Where nothing
 * spins, a sample that does not spin ends without looking there.
 */
__u32 spin_seen = 0;

/* A sample of thread tid that did not spin: it spins no more. */
static __always_inline void spun_no_more(__u32 tid)
{
	struct lt_spin_thread *t;

	if (!spin_seen)
		return;
	t = bpf_map_lookup_elem(&spin_threads, &tid);
	if (t)
		t->ts = 0;
}

/* The verdict on a site, or NULL: a new one is queued to be judged. */
static __always_inline struct lt_spin_site *site_of(struct lt_spin_key *k)
{
	static const struct lt_spin_site fresh;
	struct lt_spin_site *s = bpf_map_lookup_elem(&spin_sites, k);

	if (!s && !bpf_map_update_elem(&spin_sites, k, &fresh, BPF_NOEXIST))
		bpf_map_push_elem(&new_spin_sites, k, 0);
	return s;
}

/* n more samples wait for the verdict on site k. */
static __always_inline void pend(struct lt_spin_key *k, __u64 n)
{
	__u64 *p = bpf_map_lookup_elem(&spin_pending, k);

	if (!p && !bpf_map_update_elem(&spin_pending, k, &n, BPF_NOEXIST))
		return;
	if (!p)
		p = bpf_map_lookup_elem(&spin_pending, k);
	if (p)
		__sync_fetch_and_add(p, n);
}

/* The samples that waited for the verdict on site k, taken. */
static __always_inline __u64 take_pending(struct lt_spin_key *k)
{
	__u64 *n = bpf_map_lookup_elem(&spin_pending, k);

	return n && *n ? __sync_lock_test_and_set(n, 0) : 0;
}

#ifdef __TARGET_ARCH_x86
/* The general registers of a sample, by enum lt_x86_reg, read a word
 * at a time: a perf event's context at places fixed at load, or a
 * task's entry frame. */
static __always_inline void sample_regs(const struct pt_regs *r, __u64 *g)
{
	g[LT_X86_AX] = r->ax;
	g[LT_X86_CX] = r->cx;
	g[LT_X86_DX] = r->dx;
	g[LT_X86_BX] = r->bx;
	g[LT_X86_SP] = r->sp;
	g[LT_X86_BP] = r->bp;
	g[LT_X86_SI] = r->si;
	g[LT_X86_DI] = r->di;
	g[LT_X86_R8] = r->r8;
	g[LT_X86_R9] = r->r9;
	g[LT_X86_R10] = r->r10;
	g[LT_X86_R11] = r->r11;
	g[LT_X86_R12] = r->r12;
	g[LT_X86_R13] = r->r13;
	g[LT_X86_R14] = r->r14;
	g[LT_X86_R15] = r->r15;
}

/* The lock's address in a sample of the loop s, 0 when not found. */
static __always_inline __u64 spin_address(const __u64 *g,
					  const struct lt_spin_site *s)
{
	__u64 p = 0, v = g[s->reg & 15];

	switch (s->how) {
	case LT_SPIN_REG:
		return v + s->disp;
	case LT_SPIN_ABS:
		return (__u64)s->disp;
	case LT_SPIN_MEM:
		if (bpf_probe_read_user(&p, sizeof(p), (void *)(v + s->ind)))
			return 0;
		return p ? p + s->disp : 0;
	}
	return 0;
}
#endif

/*
 * The identity of a spin lock at addr in process tgid, as a futex word
 * at that address would have (probes/futex.bpf.c), or of the site
 * itself when addr is 0. Where the address lies goes into *ctx when
 * this looked (ctx->w.tgid set): one lookup of the mappings per sample,
 * since a second one in the same interrupt finds the first's unlock
 * still pending and fails.
 */
static __always_inline void spin_identify(__u32 tgid, __u64 addr, __u64 site,
					  struct lt_lock_key *key,
					  struct where_ctx *ctx)
{
	struct lt_spin_key ik = { .tgid = tgid, .ip = addr };
	struct lt_lock_key *known;

	__builtin_memset(key, 0, sizeof(*key));
	key->kind = LT_PK_SPIN;
	key->dev_or_tgid = tgid;
	key->start = addr ? addr : site;
	if (!addr)
		return;
	known = bpf_map_lookup_elem(&spin_ident, &ik);
	if (known) {
		*key = *known;
		return;
	}
	ctx->addr = addr;
	if (bpf_find_vma(bpf_get_current_task_btf(), addr, where_cb, ctx, 0))
		return; /* not now: the next sample looks again */
	ctx->w.uaddr = addr;
	ctx->w.tgid = tgid;
	ctx->w.fd = -1;
	if ((ctx->w.flags & (LT_VMA_FILE | LT_VMA_SHARED)) ==
	    (LT_VMA_FILE | LT_VMA_SHARED)) {
		key->dev_or_tgid = ctx->w.dev;
		key->ino = ctx->w.ino;
		key->start = ctx->w.offset;
		key->shared = 1;
	}
	bpf_map_update_elem(&spin_ident, &ik, key, BPF_ANY);
}

/* Adds to the spin lock key n samples of ns in all, or a yield; where
 * names it. */
static __always_inline void spin_count(const struct lt_lock_key *key,
				       const struct where_ctx *where,
				       __u64 uaddr, __u32 tgid, __u64 n,
				       __u64 ns, bool yield)
{
	struct lt_lock_stat *st;
	bool created = false;
	__s32 slot;

	st = stat_of(key, &created, &slot);
	if (!st)
		return;
	if (created) {
		remember_comm(tgid);
		if (where->w.tgid)
			bpf_map_update_elem(&wheres, key, &where->w,
					    BPF_NOEXIST);
		else
			remember_where(key, uaddr, tgid);
	}
	if (yield) {
		st->yields++;
	} else {
		st->samples += n;
		st->wait_ns += ns;
	}
	credit(key, tgid, LT_ROLE_WAITER, ns);
}

#ifdef __TARGET_ARCH_x86
/*
 * A sample of the current task, whose user registers are r when user
 * (else it was in the kernel), standing for span ns; samples that waited
 * for their site's verdict stand for period ns each.
 */
static __always_inline void take_sample(const struct pt_regs *r, __u64 span,
					__u64 period, bool user)
{
	__u64 g[16], ip, sp, bp = 0;
	struct lt_spin_key k;
	struct lt_spin_site *s;
	struct where_ctx where = {};
	struct lt_spin_thread th = {};
	__u64 addr, ra, n = 1, ids = current_ids();
	__u32 tgid = ids >> 32, tid = (__u32)ids;

	if (!wanted(tgid))
		return;
	count_run();
	if (!user) {
		spun_no_more(tid);
		return;
	}
	ip = r->ip;
	sp = r->sp;
	k.tgid = tgid;
	k.pad = 0;
	k.ip = ip;
	s = site_of(&k);
	if (!s || s->verdict == LT_SPIN_NEW) {
		pend(&k, 1);
		return;
	}
	if (s->verdict == LT_SPIN_NONE) {
		spun_no_more(tid);
		return;
	}
	if (s->verdict == LT_SPIN_CALLER) {
		/* The helper's own early samples go to its caller. */
		n += take_pending(&k);
		if (bpf_probe_read_user(&ra, sizeof(ra),
					(void *)(sp + s->ra_off)))
			return;
		/* A framed helper pushed its caller's bp. */
		if (s->frame &&
		    bpf_probe_read_user(&bp, sizeof(bp), (void *)sp))
			return;
		k.ip = ra;
		k.pad = 1; /* judged as a helper's caller */
		s = site_of(&k);
		if (!s || s->verdict == LT_SPIN_NEW) {
			pend(&k, n);
			return;
		}
	}
	if (s->verdict != LT_SPIN_LOOP) {
		spun_no_more(tid);
		return;
	}
	n += take_pending(&k);
	sample_regs(r, g);
	if (bp)
		g[LT_X86_BP] = bp;
	addr = spin_address(g, s);
	spin_identify(tgid, addr, s->site, &th.lock, &where);
	spin_count(&th.lock, &where, addr ? addr : s->site, tgid, n,
		   span + (n - 1) * period, false);
	th.ts = bpf_ktime_get_ns();
	bpf_map_update_elem(&spin_threads, &tid, &th, BPF_ANY);
	spun_at = th.ts;
	if (!spin_seen)
		spin_seen = 1;
}
#endif

SEC("perf_event")
int lt_spin_sample(struct bpf_perf_event_data *ctx)
{
#ifdef __TARGET_ARCH_x86
	const struct pt_regs *r = (const struct pt_regs *)&ctx->regs;
	/* every sample, of every task */
	__u64 span = sample_span(targ_sample_ns,
				 LT_SPIN_MAX_TICKS * targ_sample_ns, false);

	/* In the kernel, its addresses are the upper half. */
	take_sample(r, span, targ_sample_ns, (__s64)r->ip >= 0);
#endif
	return 0;
}

#define LT_TICK_GUESS_NS 4000000ULL /* a CPU's first tick: HZ 250 */

/*
 * The scheduler's tick, while the sampler does not run. The task's
 * entry frame holds the registers the tick interrupted when it came
 * from user mode: an interrupt's frame (no system call, orig_ax -1) of
 * user code.
 */
SEC("tp_btf/hrtimer_expire_entry")
int BPF_PROG(lt_spin_tick, struct hrtimer *t)
{
#ifdef __TARGET_ARCH_x86
	const struct pt_regs *r;
	__u64 span;

	if (sampler_on || (__u64)t->function != targ_tick_fn)
		return 0;
	span = sample_span(LT_TICK_GUESS_NS, LT_TICK_MAX_NS, true);
	r = (const struct pt_regs *)bpf_task_pt_regs(
		bpf_get_current_task_btf());
	take_sample(r, span, span, (long)r->orig_ax < 0 && (r->cs & 3) == 3);
#endif
	return 0;
}

SEC("tracepoint/syscalls/sys_enter_sched_yield")
int lt_spin_yield(void *ctx)
{
#ifdef __TARGET_ARCH_x86
	struct pt_regs *regs;
	struct where_ctx where = {};
	struct lt_lock_key key;
	__u32 tgid = current_ids() >> 32;
	__u64 ra = 0;

	if (!wanted(tgid))
		return 0;
	count_run();
	/* The libc wrapper is a leaf: its return address tops the stack. */
	regs = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
	if (bpf_probe_read_user(&ra, sizeof(ra), (void *)regs->sp) || !ra)
		ra = regs->ip;
	spin_identify(tgid, 0, ra, &key, &where);
	spin_count(&key, &where, ra, tgid, 1, 0, true);
#endif
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
