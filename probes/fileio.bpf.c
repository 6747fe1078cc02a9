// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The pread path: pread64, preadv, preadv2, pwrite64, pwritev, pwritev2.
 * Per file: count, bytes and a latency histogram; per process: count and
 * time. Time spent in these
 * calls while the thread holds a file lock is charged to that lock as
 * I/O under lock: hold time caused by I/O.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "common.bpf.h"
#include "fileio.h"

/*
 * Per-file figures live in slots, like the locks' (slots.bpf.h): a
 * per-CPU array, a name map from (device, inode) to slot, a queue of free
 * slots and each slot's key. The collector gives the slots of files idle
 * for a while back, zeroed, so a long run that keeps meeting new files
 * does not fill the map.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, LT_MAX_FILES);
	__type(key, __u32);
	__type(value, struct lt_file_stat);
} file_stat SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LT_MAX_FILES);
	__type(key, struct lt_file_key);
	__type(value, __u32);
} file_slots SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_QUEUE);
	__uint(max_entries, LT_MAX_FILES);
	__type(value, __u32);
} free_file_slots SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, LT_MAX_FILES);
	__type(key, __u32);
	__type(value, struct lt_file_key);
} file_keys SEC(".maps");

/* How to name each slot's file, written when the slot is taken. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, LT_MAX_FILES);
	__type(key, __u32);
	__type(value, struct lt_file_where);
} file_where SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, LT_MAX_TRACED);
	__type(key, __u32);
	__type(value, struct lt_proc_io);
} proc_io SEC(".maps");

/* The process's I/O figures, created on its first call. */
static __always_inline struct lt_proc_io *proc_io_of(__u32 tgid)
{
	static const struct lt_proc_io zero;
	struct lt_proc_io *pio = bpf_map_lookup_elem(&proc_io, &tgid);

	if (pio)
		return pio;
	bpf_map_update_elem(&proc_io, &tgid, &zero, BPF_NOEXIST);
	pio = bpf_map_lookup_elem(&proc_io, &tgid);
	if (!pio)
		count_drop(LT_DROP_PROCS_FULL);
	/* A process first met here is named here: it may end before the
	 * collector reads its figures, and I/O alone names no lock. */
	remember_comm(tgid);
	return pio;
}

/* A call starts: its file and time go in the thread's storage. */
static __always_inline int io_begin(int fd, __u32 write)
{
	__u32 tgid = current_ids() >> 32;
	struct lt_thread *th;
	struct inode *inode;
	struct file *f;

	if (!wanted(tgid))
		return 0;
	f = fd_file(fd);
	if (!f)
		return 0;
	th = starting_thread();
	if (!th)
		return 0;
	inode = f->f_inode;
	th->io.dev = inode->i_sb->s_dev;
	th->io.ino = inode->i_ino;
	th->io.write = write;
	th->io.fd = fd;
	th->io.ts = bpf_ktime_get_ns();
	return 0;
}

static __always_inline void name_file(__u32 slot, int fd, __u32 tgid)
{
	struct lt_file_where *w = bpf_map_lookup_elem(&file_where, &slot);
	struct file *f = fd_file(fd);

	if (!w)
		return;
	w->tgid = tgid;
	w->fd = fd;
	w->name[0] = '\0';
	if (f)
		bpf_probe_read_kernel_str(w->name, sizeof(w->name),
					  f->f_path.dentry->d_name.name);
}

/*
 * The file's slot, through the thread's cache of the files it met last:
 * no hashing while the slot is current. *created when the file is new.
 */
static __always_inline __s32 io_file_slot(struct lt_thread *th,
					  const struct lt_file_key *key,
					  bool *created)
{
	__u32 i;
	__s32 slot;

	*created = false;
	for (i = 0; i < LT_IO_CACHE; i++)
		if (th->io_file[i].dev == key->dev &&
		    th->io_file[i].ino == key->ino &&
		    slot_current(th->io_file[i].gen))
			return th->io_file[i].slot;
	slot = take_slot(&file_slots, &free_file_slots, &file_keys,
			 LT_HIGH_FILES, key, LT_DROP_FILES_FULL, created);
	if (slot < 0)
		return slot;
	i = th->io_next++ & (LT_IO_CACHE - 1);
	th->io_file[i].dev = key->dev;
	th->io_file[i].ino = key->ino;
	th->io_file[i].slot = slot;
	th->io_file[i].gen = slot_gen;
	return slot;
}

/* The figures of the lock the thread holds innermost, if any. */
static __always_inline struct lt_lock_stat *
held_stat(const struct lt_thread_locks *tl)
{
	__u32 top = tl->n - 1;

	if (!tl->n || top >= LT_HELD_DEPTH)
		return NULL;
	top &= LT_HELD_DEPTH - 1; /* for the verifier: the same */
	if (slot_current(tl->held[top].gen) && tl->held[top].slot != LT_NO_SLOT)
		return stat_at(tl->held[top].slot);
	return stat_find(&tl->held[top].key);
}

static __always_inline int io_end(long ret)
{
	__u32 tgid = current_ids() >> 32;
	struct lt_file_key key;
	struct lt_thread *th;
	struct lt_lock_stat *ls;
	struct lt_file_stat *fs;
	struct lt_proc_io *pio;
	bool created;
	__u64 delta;
	__u32 top;
	__s32 slot;

	th = this_thread(false);
	if (!th || !th->io.ts)
		return 0;
	delta = bpf_ktime_get_ns() - th->io.ts;
	th->io.ts = 0;
	pio = proc_io_of(tgid);
	if (pio) {
		pio->count++;
		pio->ns += delta;
	}
	key.dev = th->io.dev;
	key.ino = th->io.ino;
	slot = io_file_slot(th, &key, &created);
	if (slot < 0)
		return 0;
	if (created)
		name_file((__u32)slot, th->io.fd, tgid);
	top = (__u32)slot;
	fs = bpf_map_lookup_elem(&file_stat, &top);
	if (!fs)
		return 0;
	if (th->io.write) {
		fs->writes++;
		if (ret > 0)
			fs->write_bytes += ret;
	} else {
		fs->reads++;
		if (ret > 0)
			fs->read_bytes += ret;
	}
	fs->io_ns += delta;
	fs->hist[log2_slot(delta)]++;

	if (th->held.n) {
		fs->io_under_lock_ns += delta;
		ls = held_stat(&th->held);
		if (ls)
			ls->io_under_lock_ns += delta;
	}
	return 0;
}

#define IO_PROBE(name, write)                                   \
	SEC("tracepoint/syscalls/sys_enter_" #name)             \
	int lt_##name(struct trace_event_raw_sys_enter *ctx)    \
	{                                                       \
		count_run();                                    \
		return io_begin((int)ctx->args[0], write);      \
	}                                                       \
	SEC("tracepoint/syscalls/sys_exit_" #name)              \
	int lt_##name##_x(struct trace_event_raw_sys_exit *ctx) \
	{                                                       \
		count_run();                                    \
		return io_end(ctx->ret);                        \
	}

IO_PROBE(pread64, 0)
IO_PROBE(preadv, 0)
IO_PROBE(preadv2, 0)
IO_PROBE(pwrite64, 1)
IO_PROBE(pwritev, 1)
IO_PROBE(pwritev2, 1)

char LICENSE[] SEC("license") = "Dual BSD/GPL";
