// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The collector's readers. Each is run on demand (BPF_PROG_TEST_RUN),
 * walks the slots of a per-CPU array in order with bpf_loop(), up to the
 * highest slot ever handed out, sums each slot's per-CPU values in the
 * kernel and writes one record per slot, with the key the slot was
 * taken for (slot_keys, party_keys), into an array the collector maps
 * into its memory; of a lock's histograms, only the buckets its masks
 * name are written. In slot order the figures are read as they lie in
 * memory, and no hash table is walked. Nothing is copied through a
 * system call and no bucket lock is taken, where a batch lookup takes
 * every bucket's lock. Each writes only the slots a probe touched since
 * the last read (a free slot is zeroed, its stamps 0), so idle locks
 * cost a look at their stamps.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "common.bpf.h"

const volatile __u32 nr_cpus = 1; /* possible CPUs, set before load */

__u64 since = 0; /* write what was touched in this epoch or later */
__u64 max_epoch = 0; /* per-CPU maxima from this epoch on are this read's */
__u32 n_locks = 0; /* records written by the last lock read */
__u32 n_parties = 0; /* by the last party read */
__u64 visited = 0; /* slots in use at the last lock read */
__u64 parties_visited = 0; /* party slots in use at the last party read */
__u32 n_waits = 0; /* waits in flight found by the last wait read */

/* Open-coded task iteration: the reader walks every thread. */
extern int bpf_iter_task_new(struct bpf_iter_task *it, struct task_struct *task,
			     unsigned int flags) __weak __ksym;
extern struct task_struct *
bpf_iter_task_next(struct bpf_iter_task *it) __weak __ksym;
extern void bpf_iter_task_destroy(struct bpf_iter_task *it) __weak __ksym;
#define LT_ITER_ALL_THREADS 1 /* BPF_TASK_ITER_ALL_THREADS */

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, LT_MAX_LOCKS);
	__type(key, __u32);
	__type(value, struct lt_lock_rec);
} lock_out SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, LT_MAX_PARTIES);
	__type(key, __u32);
	__type(value, struct lt_party_rec);
} party_out SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, LT_MAX_THREADS);
	__type(key, __u32);
	__type(value, struct lt_inflight);
} wait_out SEC(".maps");

/*
 * Adds one CPU's used histogram slots into a record whose used slots are
 * *used. A slot the record has not used yet starts from this CPU's
 * count: the record's other slots hold whatever an earlier read left.
 */
static __always_inline void sum_slots(__u32 *to, __u64 *used, const __u32 *from,
				      __u64 from_used)
{
	__u32 base, b;

	/* Eight slots at a time: a lock uses a few, next to each other. */
	for (base = 0; base < LT_HIST_SLOTS; base += 8) {
		if (!((from_used >> base) & 0xff))
			continue;
		for (b = base; b < base + 8 && b < LT_HIST_SLOTS; b++) {
			if (!(from_used & (1ULL << b)))
				continue;
			if (*used & (1ULL << b))
				to[b] += from[b];
			else
				to[b] = from[b];
		}
	}
	*used |= from_used;
}

/* The counters up to the histograms; see struct lt_lock_stat. */
#define LT_STAT_HEAD offsetof(struct lt_lock_stat, hist)

static __always_inline void sum_lock(struct lt_lock_stat *s,
				     const struct lt_lock_stat *v)
{
#define LT_COUNT(NAME, STAT, JSON, PCP, RECORD) s->NAME += v->NAME;
#define LT_PROBE_COUNT(NAME, STAT) s->NAME += v->NAME;
#include "figures.def"
	if (v->max_epoch >= max_epoch && v->max_ns > s->max_ns)
		s->max_ns = v->max_ns;
	if (v->max_total_ns > s->max_total_ns)
		s->max_total_ns = v->max_total_ns;
	if (v->max_hold_ns > s->max_hold_ns)
		s->max_hold_ns = v->max_hold_ns;
	if (v->last_holder)
		s->last_holder = v->last_holder;
	/* Only the slots that ever counted: most locks use a few. */
	sum_slots(s->hist, &s->hist_used, v->hist, v->hist_used);
	sum_slots(s->hold_hist, &s->hold_used, v->hold_hist, v->hold_used);
}

/* The high-water mark of a slot kind: the slots a walk visits. */
static __always_inline __u32 high_of(__u32 which, __u32 max)
{
	__u64 *high = bpf_map_lookup_elem(&slot_high, &which);

	return high && *high < max ? (__u32)*high : max;
}

static long read_lock(__u32 at, void *ctx)
{
	__u32 i = n_locks, cpu, this_cpu = bpf_get_smp_processor_id();
	__u32 first = LT_MAX_CPUS; /* the other CPU whose stamp told */
	struct lt_lock_stat *v, *here, *first_v = NULL;
	struct lt_lock_key *key;
	struct lt_lock_rec *rec;
	bool touched, used;

	here = bpf_map_lookup_elem(&stat_map, &at);
	if (!here)
		return 1;
	touched = here->touched >= since;
	used = here->touched;
	/* An idle lock costs a look at each CPU's stamp, nothing more. */
	for (cpu = 0; !touched && cpu < nr_cpus && cpu < LT_MAX_CPUS; cpu++) {
		if (cpu == this_cpu)
			continue; /* `here` is this CPU's, checked above */
		v = bpf_map_lookup_percpu_elem(&stat_map, &at, cpu);
		if (!v || !v->touched)
			continue;
		used = true;
		if (v->touched >= since) {
			touched = true;
			first = cpu;
			first_v = v;
		}
	}
	if (used)
		visited++;
	if (!touched)
		return 0;
	key = bpf_map_lookup_elem(&slot_keys, &at);
	rec = bpf_map_lookup_elem(&lock_out, &i);
	if (!key || !rec)
		return 1; /* the arrays are as large as the map: not reached */
	/* This CPU's value first; the others are looked up, but for the
	 * one the stamps were read from. */
	rec->key = *key;
	rec->slot = at;
	__builtin_memcpy(&rec->sum, here, LT_STAT_HEAD);
	rec->sum.hist_used = 0;
	rec->sum.hold_used = 0;
	sum_slots(rec->sum.hist, &rec->sum.hist_used, here->hist,
		  here->hist_used);
	sum_slots(rec->sum.hold_hist, &rec->sum.hold_used, here->hold_hist,
		  here->hold_used);
	if (here->max_epoch < max_epoch)
		rec->sum.max_ns = 0;
	for (cpu = 0; cpu < nr_cpus && cpu < LT_MAX_CPUS; cpu++) {
		if (cpu == this_cpu)
			continue;
		v = cpu == first ?
			    first_v :
			    bpf_map_lookup_percpu_elem(&stat_map, &at, cpu);
		/* A CPU that never stamped it has nothing to add. */
		if (v && v->touched)
			sum_lock(&rec->sum, v);
	}
	n_locks = i + 1;
	return 0;
}

SEC("raw_tp")
int lt_read_locks(void *ctx)
{
	n_locks = 0;
	visited = 0;
	bpf_loop(high_of(LT_HIGH_LOCKS, LT_MAX_LOCKS), read_lock, NULL, 0);
	return 0;
}

static long read_party(__u32 at, void *ctx)
{
	__u32 i = n_parties, cpu, this_cpu = bpf_get_smp_processor_id();
	struct lt_party_stat *v, *here;
	struct lt_party_key *key;
	struct lt_party_rec *rec;
	bool touched, used;

	here = bpf_map_lookup_elem(&parties, &at);
	if (!here)
		return 1;
	touched = here->touched >= since;
	used = here->touched;
	for (cpu = 0; !touched && cpu < nr_cpus && cpu < LT_MAX_CPUS; cpu++) {
		if (cpu == this_cpu)
			continue; /* `here` is this CPU's, checked above */
		v = bpf_map_lookup_percpu_elem(&parties, &at, cpu);
		used |= v && v->touched;
		touched = v && v->touched >= since;
	}
	if (used || touched)
		parties_visited++;
	if (!touched)
		return 0;
	key = bpf_map_lookup_elem(&party_keys, &at);
	rec = bpf_map_lookup_elem(&party_out, &i);
	if (!key || !rec)
		return 1;
	rec->key = *key;
	rec->slot = at;
	rec->sum = *here;
	for (cpu = 0; cpu < nr_cpus && cpu < LT_MAX_CPUS; cpu++) {
		if (cpu == this_cpu)
			continue;
		v = bpf_map_lookup_percpu_elem(&parties, &at, cpu);
		if (!v || !v->touched)
			continue;
		rec->sum.count += v->count;
		rec->sum.ns += v->ns;
	}
	n_parties = i + 1;
	return 0;
}

SEC("raw_tp")
int lt_read_parties(void *ctx)
{
	n_parties = 0;
	parties_visited = 0;
	bpf_loop(high_of(LT_HIGH_PARTIES, LT_MAX_PARTIES), read_party, NULL, 0);
	return 0;
}

/*
 * The waits in flight: each thread's own, kept in its task storage by
 * the probes, so a wait costs the probes no shared map at all. A copy
 * may race with the thread's next event; the collector takes the ones
 * whose stamp is set.
 */
SEC("raw_tp")
int lt_read_waits(void *ctx)
{
	struct bpf_iter_task it;
	struct task_struct *t;
	struct lt_inflight *out;
	struct lt_thread *th;
	__u32 n = 0;

	bpf_iter_task_new(&it, NULL, LT_ITER_ALL_THREADS);
	while ((t = bpf_iter_task_next(&it))) {
		th = bpf_task_storage_get(&threads, t, NULL, 0);
		if (!th || !th->wait.ts)
			continue;
		out = bpf_map_lookup_elem(&wait_out, &n);
		if (!out)
			break; /* as many as LT_MAX_THREADS waits: full */
		*out = th->wait;
		n++;
	}
	bpf_iter_task_destroy(&it);
	n_waits = n;
	return 0;
}

/*
 * Every slot is free when the probes load: run once, before they attach,
 * it queues each in order, all in one call.
 */
__u32 fill_failed = 0; /* slots the queues would not take */

static long push_lock_slot(__u32 i, void *ctx)
{
	if (bpf_map_push_elem(&free_slots, &i, 0))
		fill_failed++;
	return 0;
}

static long push_party_slot(__u32 i, void *ctx)
{
	if (bpf_map_push_elem(&free_party_slots, &i, 0))
		fill_failed++;
	return 0;
}

SEC("raw_tp")
int lt_fill_slots(void *ctx)
{
	fill_failed = 0;
	bpf_loop(LT_MAX_LOCKS, push_lock_slot, NULL, 0);
	bpf_loop(LT_MAX_PARTIES, push_party_slot, NULL, 0);
	return 0;
}

/*
 * Calibration, run a few hundred times when the probes load: what the
 * kernel's BPF statistics charge for a program that does nothing (their
 * own clock reads and the dispatch), and what one clock read costs on
 * this machine, the price of every timestamp a probe takes.
 */
__u64 clock_sink = 0;

SEC("raw_tp")
int lt_calib_nop(void *ctx)
{
	return 0;
}

#define CALIB_READS 16

SEC("raw_tp")
int lt_calib_clock(void *ctx)
{
	__u64 t = 0;
	int i;

	for (i = 0; i < CALIB_READS; i++)
		t += bpf_ktime_get_ns();
	clock_sink = t;
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
