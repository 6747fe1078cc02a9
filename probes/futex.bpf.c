// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * futex waits, aggregated in the kernel per lock.
 *
 * sys_enter_futex stamps the thread's start time and the lock address;
 * sys_exit_futex adds the elapsed time to that lock's per-CPU entry.
 * Only the contended path of a futex mutex enters the kernel, so an
 * uncontended lock costs nothing here.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "futex.h"

#define FUTEX_WAIT 0
#define FUTEX_WAIT_BITSET 9
#define FUTEX_PRIVATE_FLAG 128
#define FUTEX_CLOCK_REALTIME 256
#define FUTEX_CMD_MASK ~(FUTEX_PRIVATE_FLAG | FUTEX_CLOCK_REALTIME)
#define FUTEX_WAITERS 0x80000000U
#define FUTEX_TID_MASK 0x3fffffffU

const volatile bool targ_filter = false; /* only the `traced` set */
const volatile __u32 targ_self = 0; /* our own tgid, never traced */

/* Advanced by the collector once per interval; see struct lt_futex_stat. */
__u64 epoch = 0;

struct wait_start {
	__u64 ts;
	__u64 uaddr;
	__u32 class;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LT_MAX_THREADS);
	__type(key, __u32);
	__type(value, struct wait_start);
} start SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, LT_MAX_LOCKS);
	__type(key, struct lt_futex_key);
	__type(value, struct lt_futex_stat);
} stat_map SEC(".maps");

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
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LT_MAX_LOCKS);
	__type(key, struct lt_futex_key);
	__type(value, struct lt_futex_where);
} wheres SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, LT_DROP_NR);
	__type(key, __u32);
	__type(value, __u64);
} drops SEC(".maps");

static __always_inline void count_drop(__u32 reason)
{
	__u64 *n = bpf_map_lookup_elem(&drops, &reason);

	if (n)
		(*n)++;
}

static __always_inline bool wanted(__u32 tgid)
{
	if (tgid == targ_self)
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

/*
 * glibc's lll_lock waits with value 2 ("locked, maybe waiters"); robust
 * and PI-aware code waits with the owner's TID and FUTEX_WAITERS set.
 * Anything else is an event wait: condvars, semaphores, joins.
 */
static __always_inline __u32 classify(__u32 val)
{
	if (val == 2)
		return LT_CLASS_LOCK;
	if ((val & FUTEX_WAITERS) && (val & FUTEX_TID_MASK))
		return LT_CLASS_LOCK;
	return LT_CLASS_COND;
}

static __always_inline void remember_comm(__u32 tgid)
{
	char comm[LT_COMM_LEN];

	if (bpf_map_lookup_elem(&comms, &tgid))
		return;
	bpf_get_current_comm(comm, sizeof(comm));
	bpf_map_update_elem(&comms, &tgid, comm, BPF_NOEXIST);
}

struct where_ctx {
	__u64 addr;
	struct lt_futex_where w;
};

static long where_cb(struct task_struct *task, struct vm_area_struct *vma,
		     struct where_ctx *ctx)
{
	struct mm_struct *mm = task->mm;
	struct file *file = vma->vm_file;
	struct lt_futex_where *w = &ctx->w;

	w->vm_start = vma->vm_start;
	w->offset = ctx->addr - vma->vm_start + (vma->vm_pgoff << 12);
	if (BPF_CORE_READ(vma, vm_flags) & 0x8 /* VM_SHARED */)
		w->flags |= LT_VMA_SHARED;
	if (file) {
		w->flags |= LT_VMA_FILE;
		w->ino = BPF_CORE_READ(file, f_inode, i_ino);
		w->dev = BPF_CORE_READ(file, f_inode, i_sb, s_dev);
		bpf_probe_read_kernel_str(w->file, sizeof(w->file),
					  BPF_CORE_READ(file, f_path.dentry,
							d_name.name));
	} else if (mm) {
		if (vma->vm_start <= BPF_CORE_READ(mm, brk) &&
		    vma->vm_end >= BPF_CORE_READ(mm, start_brk))
			w->flags |= LT_VMA_HEAP;
		else if (vma->vm_start <= BPF_CORE_READ(mm, start_stack) &&
			 vma->vm_end >= BPF_CORE_READ(mm, start_stack))
			w->flags |= LT_VMA_STACK;
	}
	return 0;
}

/*
 * Names the lock while its process surely lives: a short-lived process
 * may be gone before the collector reads /proc.
 */
static __always_inline void remember_where(const struct lt_futex_key *key)
{
	struct where_ctx ctx = { .addr = key->uaddr };

	if (bpf_find_vma(bpf_get_current_task_btf(), key->uaddr, where_cb, &ctx,
			 0))
		return;
	bpf_map_update_elem(&wheres, key, &ctx.w, BPF_NOEXIST);
}

SEC("tracepoint/syscalls/sys_enter_futex")
int lt_futex_enter(struct trace_event_raw_sys_enter *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id, tgid = id >> 32;
	int cmd = (int)ctx->args[1] & FUTEX_CMD_MASK;
	struct wait_start ws;

	if (cmd != FUTEX_WAIT && cmd != FUTEX_WAIT_BITSET)
		return 0;
	if (!wanted(tgid))
		return 0;

	ws.ts = bpf_ktime_get_ns();
	ws.uaddr = ctx->args[0];
	ws.class = classify((__u32)ctx->args[2]);
	if (bpf_map_update_elem(&start, &tid, &ws, BPF_ANY))
		count_drop(LT_DROP_START_FULL);
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_futex")
int lt_futex_exit(struct trace_event_raw_sys_exit *ctx)
{
	static const struct lt_futex_stat zero;
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id, tgid = id >> 32;
	struct lt_futex_key key = {};
	struct lt_futex_stat *st;
	struct wait_start *ws;
	__u64 delta, now;

	ws = bpf_map_lookup_elem(&start, &tid);
	if (!ws)
		return 0;
	now = bpf_ktime_get_ns();
	delta = now - ws->ts;
	key.uaddr = ws->uaddr;
	key.tgid = tgid;
	key.class = ws->class;
	bpf_map_delete_elem(&start, &tid);

	st = bpf_map_lookup_elem(&stat_map, &key);
	if (!st) {
		if (bpf_map_update_elem(&stat_map, &key, &zero, BPF_NOEXIST) &&
		    !bpf_map_lookup_elem(&stat_map, &key)) {
			count_drop(LT_DROP_LOCKS_FULL);
			return 0;
		}
		st = bpf_map_lookup_elem(&stat_map, &key);
		if (!st)
			return 0;
		remember_comm(tgid);
		remember_where(&key);
	}
	st->waits++;
	st->wait_ns += delta;
	st->hist[log2_slot(delta)]++;
	if (st->max_epoch != epoch) {
		st->max_epoch = epoch;
		st->max_ns = delta;
	} else if (delta > st->max_ns) {
		st->max_ns = delta;
	}
	if (delta > st->max_total_ns)
		st->max_total_ns = delta;
	return 0;
}

/* Children of traced processes are traced too. */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(lt_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = parent->tgid, ctgid = child->tgid;
	__u8 one = 1;

	if (!targ_filter || ptgid == ctgid)
		return 0;
	if (!bpf_map_lookup_elem(&traced, &ptgid))
		return 0;
	if (bpf_map_update_elem(&traced, &ctgid, &one, BPF_ANY))
		count_drop(LT_DROP_TRACED_FULL);
	return 0;
}

/* A thread that dies inside a wait leaves no stale start behind. */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(lt_exit, struct task_struct *task)
{
	__u32 tid = task->pid, tgid = task->tgid;

	bpf_map_delete_elem(&start, &tid);
	if (targ_filter && tid == tgid)
		bpf_map_delete_elem(&traced, &tgid);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
