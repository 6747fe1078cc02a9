/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The collector's own state and what its files share; not installed. */
#ifndef LOCKTOP_COLLECTOR_STATE_H
#define LOCKTOP_COLLECTOR_STATE_H

/*
 * The collector loads the probes, reads their per-CPU maps once per
 * interval and turns raw cumulative counters into totals and per-interval
 * deltas. It is one object, struct lt_collector, in files by concept,
 * each opening with a line that says what it holds (docs/design.md,
 * Layers, lists them). A function one file calls in another is named by
 * the file it lives in.
 */

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/types.h>
#include "collector.h"
#include "internal.h"
#include "common.h"
#include "futex.h"
#include "fileio.h"
#include "spin.h"

struct bpf_map;
struct bpf_program;
struct futex_bpf;
struct filelock_bpf;
struct fileio_bpf;
struct reader_bpf;
struct klock_bpf;
struct lt_ksyms;
struct usdt_state;
struct spin_bpf;
struct bpf_object;
struct bpf_link;

/* The probe objects, as enum lt_probe_obj numbers them. */
enum {
	PROBE_FUTEX,
	PROBE_FILELOCK,
	PROBE_FILEIO,
	PROBE_KERNEL,
	PROBE_SPIN,
	PROBE_USDT,
	PROBE_NR
};

struct lock_state {
	struct lt_lock_key key; /* first: the index's key */
	struct lt_lock_stat raw; /* summed over CPUs at the last read */
	pid_t *pids;
	size_t n_pids, cap_pids;
	bool named;
	unsigned char name_tries; /* reads that named it by a bare address */
	__s64 top_stack; /* stack id with the most wait, -1 if none */
	uint64_t top_stack_ns;
	pid_t top_stack_pid;
	__s64 shown_stack; /* the stack `stack` holds text for */
	char *stack;
	/* Its release stacks at the last read that found any (they leave
	 * the kernel with their process), most waiting ended first. */
	struct release_top {
		__s64 stack_id;
		uint64_t count, ns;
		pid_t pid; /* the releasing process, to symbolize in */
	} rel[LT_TOP_RELEASES];
	size_t n_rel;
	bool rel_read; /* this read found its release stacks */
	__u64 shown_holder; /* last_holder that holder/holder_comm show */
	uint64_t live; /* the read that last wrote its delta */
	uint64_t wait_moved, hold_moved; /* histogram slots in the delta */
	bool waited; /* it has waiters_now in this read */
	uint64_t dead_at; /* when no process could reach it any more, or 0 */
	__s32 slot; /* its slot in the kernel's stat_map, or -1 */
	uint64_t moved_at; /* when its figures last moved */
	/* Its lock site's row in site_rows, plus 1; 0: its own row. */
	size_t site;
};

/* A lock site: the private copies of one lock in many processes. */
struct site_state {
	uint64_t hash; /* of lockset_group()'s text */
	/* The totals of members whose rows retired, kept in the site's. */
	struct lt_figures retired;
	uint64_t *members; /* the member rows' ids, this read */
	size_t n_members, cap_members;
	pid_t *pids; /* the union of their pids */
	size_t n_pids, cap_pids;
	uint64_t best_ns; /* the most wait of one member, this read */
};

/* A (lock, process or thread, role) entry of the kernel's parties map. */
struct party_state {
	struct lt_party_key key; /* first: the index's key */
	uint64_t count, ns; /* summed over CPUs at the last read */
	/* Where its figures go, found once; retire_rows() renumbers. */
	bool linked;
	size_t lock, side, proc;
	__s32 slot; /* its slot in the kernel's parties map, or -1 */
	uint64_t moved_at; /* when its figures last moved */
};

/* A stack unwound as soon as the probes kept it. */
struct stack_text {
	struct lt_stack_key key; /* first: the index's key */
	char *text;
};

/* One process on one side of one lock: its threads' parties summed. */
struct side_key {
	struct lt_lock_key lock;
	__u32 pid;
	__u32 holder;
};

struct side_state {
	struct side_key key; /* first: the index's key */
	uint64_t count, ns;
	uint64_t dead_at; /* when its process ended, or 0 */
	/* A holder: whether it can hold the lock (parties_may_hold()),
	 * 0 not asked yet, 1 yes, -1 no; its thread that held most. */
	int may_hold;
	__u32 tid;
	uint64_t tid_count, tid_ns;
	char thread[LT_COMM_SIZE];
};

struct proc_state {
	__u32 tgid; /* first: the index's key */
	__u32 pad;
	uint64_t top_ns; /* its largest wait on one lock, in all */
	struct lt_proc_io io; /* summed over CPUs at the last read */
	uint64_t dead_at; /* when it ended, or 0 */
};

struct file_state {
	struct lt_file_key key; /* first: the index's key */
	struct lt_file_stat raw; /* its slot's figures at the last read */
	__s32 slot; /* in the kernel's file map, or -1 */
	uint64_t moved_at; /* when its figures last moved */
};

struct tid_entry {
	__u32 tid; /* first: the index's key */
	__u32 tgid;
};

/* What a slot holds: a lock's figures, a party's or a file's; each kind
 * is a row of reclaim.c's table of slot kinds. */
enum slot_kind { SLOT_LOCK, SLOT_PARTY, SLOT_FILE, SLOT_KIND_NR };

/* A slot chosen to go back, and the row of its lock, party or file. */
struct idle_entry {
	enum slot_kind kind;
	size_t row;
	__u32 slot;
	bool named; /* its name is still in the kernel's map */
};

/*
 * The collector is one object made of one part per concern, each owned
 * by the file named with it: the others read a part, and change it only
 * through its owner's functions or where its comment says.
 */

/* attach.c: the probe objects loaded, and the readers' output, mapped. */
struct collector_objects {
	struct futex_bpf *futex;
	struct filelock_bpf *filelock;
	struct fileio_bpf *fileio;
	struct reader_bpf *reader; /* the map readers */
	struct klock_bpf *klock; /* kernel locks; NULL: not traced */
	struct spin_bpf *spin; /* the on-CPU sampler and sched_yield */
	const struct lt_lock_rec *lock_out; /* the readers' output, mapped */
	const struct lt_party_rec *party_out;
	const struct lt_inflight *wait_out;
};

/* attach.c: what the collector was asked for, and the machine. */
struct collector_opts {
	int ncpus;
	size_t n_traced; /* processes traced at the start; 0: all */
	unsigned int interval_ms;
	bool stacks;
	unsigned int retire_s; /* see lt_options; 0 keeps every row */
};

/* read.c: the reads, by time. */
struct read_state {
	uint64_t opened_ns, last_read_ns; /* lt_mono_ns() */
	uint64_t reads; /* reads so far, the current one included */
	uint64_t read_ns; /* when this read started */
	uint64_t drops_raw[LT_DROP_REASONS]; /* as last read, by reason */
};

/* spin.c: the on-CPU sampler, and the locks found spinning. */
struct spin_sampler {
	unsigned int spin_hz; /* samples per second and CPU, 0: none */
	int *spin_fds; /* its perf events, one per online CPU */
	struct bpf_link **spin_links;
	size_t n_spin;
	bool spin_always; /* the events run always, not only after spinning */
	bool sampler_on; /* they run now, since sampler_since (mono ns) */
	uint64_t sampler_since, sampler_ns; /* ns they ran before that */
	uint64_t sampler_ns_read; /* ... as of the last read */
	struct lt_spin_key *spin_keys; /* the sites judged, to forget */
	size_t n_spin_keys, cap_spin_keys;
	struct lt_image_memo memo; /* image places with no spin loop */
	size_t *spinning; /* locks with threads spinning now */
	size_t n_spinning, cap_spinning;
};

/* cost.c: the probes' cost, measured in windows of the kernel's BPF
 * statistics. */
struct cost_windows {
	int stats_fd; /* holds kernel.bpf_stats_enabled on: a window */
	uint64_t win_cnt[PROBE_NR], win_ns[PROBE_NR]; /* at its start */
	uint64_t closed_cnt[PROBE_NR], closed_ns[PROBE_NR]; /* past windows */
	uint64_t measured[PROBE_NR]; /* runs behind each ns_per_run */
	bool retried[PROBE_NR]; /* measured again since the last due window */
	bool win_retry; /* the open window is such a measure */
	uint64_t stat_reads; /* reads so far, for the windows' cadence */
	uint64_t win_opened; /* when the open window opened */
	uint64_t win_closed; /* when the last one closed */
	struct lt_probe_cost probes[PROBE_NR];
};

/* locks.c: the lock rows, and the lists of them this read made. */
struct lock_table {
	struct lt_lock *locks;
	struct lock_state *lstate;
	size_t n_locks, cap_locks, cap_lstate;
	struct lt_index lock_ix;
	uint64_t next_id;
	size_t *live, *was_live; /* locks with a delta in this, last read */
	size_t n_live, cap_live, n_was_live, cap_was_live;
	size_t *fresh; /* locks not yet named */
	size_t n_fresh, cap_fresh;
};

/* parties.c: the process rows. */
struct proc_table {
	struct lt_proc *procs;
	struct proc_state *pstate;
	size_t n_procs, cap_procs, cap_pstate;
	struct lt_index proc_ix;
};

/* files.c: the file rows. */
struct file_table {
	struct lt_file *files;
	struct file_state *fstate;
	size_t n_files, cap_files, cap_fstate;
	struct lt_index file_ix;
	size_t file_entries; /* file slots linked to a row */
};

/* parties.c: the kernel's parties, and holders and waiters per lock. */
struct party_table {
	struct party_state *party; /* what the parties map said last */
	size_t n_party, cap_party;
	struct lt_index party_ix;
	struct side_state *side; /* holders and waiters per lock */
	size_t n_side, cap_side;
	struct lt_index side_ix;
	uint64_t renamed; /* the probes' count of renaming execs, last read */
};

/* sites.c: the call sites judged so far. */
struct call_sites {
	struct lt_site_key *site_keys;
	size_t n_sites, cap_sites;
	struct lt_image_memo memo; /* verdicts by place in their image */
};

/* locksites.c: lock sites with two members or more, their rows as the
 * snapshot's sites. */
struct lock_sites {
	struct lt_lock *site_rows;
	struct site_state *site_st;
	size_t n_site_rows, cap_site_rows, cap_site_st;
};

/* exits.c: processes and threads that ended. */
struct exit_state {
	__u32 *gone; /* processes that ended before this read, sorted */
	size_t n_gone, cap_gone;
	/* Threads that ended before it, their process not, as
	 * TID << 32 | tgid, sorted; and those of the read before, whose
	 * TIDs are forgotten now. */
	__u64 *gone_tids, *stale_tids;
	size_t n_gone_tids, cap_gone_tids;
	size_t n_stale_tids, cap_stale_tids;
	/* (lock, stack) keys of the dead's locks, for exits_forget() */
	struct lt_stack_key *gone_stacks;
	size_t n_gone_stacks, cap_gone_stacks;
};

/* tids.c: TID -> process, for holders. */
struct tid_table {
	struct tid_entry *tids;
	size_t n_tids, cap_tids;
	struct lt_index tid_ix;
};

/* inflight.c: waits in flight, and the wait-for graph they make. */
struct inflight_state {
	size_t *waited; /* locks with waiters now */
	size_t n_waited, cap_waited;
	struct lt_wait_edge *edges; /* the wait-for graph of this read */
	size_t n_edges, cap_edges;
	struct lt_deadlock *deadlocks;
	size_t n_deadlocks, cap_deadlocks;
};

/* mapio.c: the batch read buffers. */
struct mapio_buffers {
	void *keybuf, *valbuf;
	size_t keybuf_len, valbuf_len;
};

/* reclaim.c: the kernel's slots, which row each holds, and those that
 * go back. */
struct slot_state {
	void *zero_values; /* a slot's values on every CPU, zeroed */
	void *peek; /* a slot's values on every CPU, as read */
	__u64 slots_back[LT_HIGH_NR]; /* given back, per enum lt_high */
	ssize_t slot_row[LT_MAX_LOCKS]; /* the lock row of each slot, or -1 */
	ssize_t party_row[LT_MAX_PARTIES]; /* the party of each slot, or -1 */
	ssize_t file_row[LT_MAX_FILES]; /* the file of each slot, or -1 */
	struct idle_entry *idle; /* slots that go back at the next read */
	size_t n_idle, cap_idle;
	uint64_t idle_ns; /* when the read that chose them started */
	uint64_t scanned_ns; /* when a read last looked for idle slots */
	uint64_t own_drops; /* events lost while a slot went back */
};

/* retire.c: rows that ended, and when they were last counted. */
struct retire_state {
	size_t n_dead; /* lock rows whose dead_at is set */
	size_t n_dead_sides, n_dead_procs; /* the same of sides, processes */
	size_t n_unlinked; /* parties exits_forget() unlinked */
	uint64_t asleep_ns; /* when a read last counted rows without slots */
};

/* stacks.c: stacks unwound as soon as the probes kept them. */
struct stack_table {
	struct lt_stack_snap *snap_buf; /* one snapshot, being unwound */
	struct stack_text *stexts;
	size_t n_stexts, cap_stexts;
	struct lt_index stext_ix;
};

/* names.c: what naming needs, each part loaded once it is needed. */
#define LT_MAPPERS 8 /* files whose live mapper a read remembers */
#define LT_MAPPER_SEARCHES 4 /* searches of /proc a read may make */

struct naming_state {
	struct lt_vma_cache vmas; /* /proc/PID/maps, lately read */
	struct lt_symbolizer *syms;
	struct lt_layouts *layouts; /* file heads, for known lock layouts */
	struct usdt_state *usdt; /* servers' probes, once one is seen */
	struct lt_ksyms *ksyms; /* /proc/kallsyms, once a kernel lock needs it */
	/* The shared files lately looked for in every process (names.c's
	 * live_mapper()), each with the read it was looked for in, plus
	 * one, and what was found; the searches of the read now. */
	struct {
		uint64_t dev, ino;
		unsigned long long read;
		pid_t pid;
	} mapper[LT_MAPPERS];
	unsigned int mapper_next, mapper_searches;
	unsigned long long mapper_read;
	bool name_again; /* set by a namer: name this lock at the next read */
};

struct lt_collector {
	struct collector_objects obj;
	struct collector_opts opts;
	struct read_state reading;
	struct lock_table locktab;
	struct proc_table proctab;
	struct file_table filetab;
	struct party_table parties;
	struct call_sites callsites;
	struct lock_sites locksites;
	struct exit_state exits;
	struct tid_table tidtab;
	struct inflight_state inflight;
	struct spin_sampler sampler;
	struct cost_windows cost;
	struct slot_state slots;
	struct retire_state retire;
	struct stack_table stacktab;
	struct naming_state naming;
	struct mapio_buffers mapio;
	struct lt_snapshot snap; /* what the last read made */
};

/* Small helpers for every file. */
static inline uint64_t diff(uint64_t now, uint64_t before)
{
	/* A counter below its last value was recreated: count it anew. */
	return now >= before ? now - before : now;
}

/* Appends i to a list of lock indexes. */
static inline int push_index(size_t **list, size_t *n, size_t *cap, size_t i)
{
	if (lt_grow((void **)list, cap, *n + 1, sizeof(**list)))
		return -ENOMEM;
	(*list)[(*n)++] = i;
	return 0;
}

/* mapio.c: the kernel's maps: shared, read in batches, by the readers. */
/* Makes obj count into the futex object's shared maps; a map missing on
 * either side fails, naming it in err. */
int mapio_share_maps(struct lt_collector *c, struct bpf_object *obj,
		     const char *what, char *err, size_t err_len);
int mapio_each_entry(struct lt_collector *c, int fd, size_t key_size,
		     size_t value_size, bool percpu,
		     int (*fn)(struct lt_collector *c, const void *key,
			       const void *value),
		     size_t *seen);
int mapio_each_slot(struct lt_collector *c, int fd, __u64 n, size_t value_size,
		    int (*fn)(struct lt_collector *c, const void *key,
			      const void *value));
void mapio_counter_sums(struct lt_collector *c, int fd, __u32 n,
			uint64_t *sums);
int mapio_run_reader(struct lt_collector *c, struct bpf_program *prog,
		     const void *out, size_t size, const __u32 *n,
		     int (*fn)(struct lt_collector *c, const void *rec));
const void *mapio_map_out(struct bpf_map *map);
void mapio_unmap_out(struct bpf_map *map, const void *p);

/* read.c: the read, and the housekeeping between reads. */
void read_start(struct lt_collector *c);

/* locks.c: locks, and their figures. */
ssize_t locks_add(struct lt_collector *c, const struct lt_lock_key *key);
/* One lock's record from the reader (struct lt_lock_rec) into its row:
 * the figures' deltas since the last read, and their totals. */
int locks_merge(struct lt_collector *c, const void *rec);
int locks_read(struct lt_collector *c);

/* names.c: lock names, by a table of namers. */
void names_lock(struct lt_collector *c, size_t i);

/* locksites.c: the private copies of one lock in many processes. */
int locksites_build(struct lt_collector *c);
void locksites_retire(struct lt_collector *c, size_t lock);
void locksites_free(struct lt_collector *c);

/* layouts.c: known lock layouts (tdb, LMDB, SQLite). */
#define LT_OFFSET_EOF 0x7fffffffffffffffULL /* a range to the file's end */
struct lt_layout_place {
	uint64_t dev, ino; /* the file: the kernel's device number, inode */
	const char *path; /* where to read it: /proc/PID/fd/N, map_files */
	bool word; /* a lock word in a mapping, else a byte range */
	uint64_t start, end; /* the word's offset; the range, end inclusive */
};
/*
 * The lock at place p as its store knows it, "chain 2558" in what, by
 * the file's header (read once per file); returns the layout's name
 * ("tdb"), or NULL when the file or the place is not one known.
 */
const char *layouts_name(struct lt_collector *c,
			 const struct lt_layout_place *p, char *what,
			 size_t len);
/*
 * The path to show for the file at p: path when it is a full one (kept
 * for later), else the full path a lock of the file was named by before,
 * while a process had it open; path when there was none.
 */
const char *layouts_path(struct lt_collector *c,
			 const struct lt_layout_place *p, const char *path);
void layouts_free(struct lt_collector *c);

/* parties.c: holders, waiters and processes. */
int parties_add_pid(struct lt_collector *c, size_t i, pid_t pid);
bool parties_may_hold(struct lt_collector *c, size_t lock, pid_t pid);
void parties_thread_name(struct lt_collector *c, pid_t pid, pid_t tid,
			 char *name);
int parties_read(struct lt_collector *c);
int parties_read_io(struct lt_collector *c);
void parties_rename(struct lt_collector *c);

/* sites.c: the call sites. */
void sites_judge(struct lt_collector *c);

/* spin.c */
int spin_attach(struct lt_collector *c, char *err, size_t err_len);
void spin_detach(struct lt_collector *c);
void spin_judge(struct lt_collector *c);
void spin_prepare(struct lt_collector *c);
void spin_pace(struct lt_collector *c);
void spin_sampler_read(struct lt_collector *c);
int spin_threads_read(struct lt_collector *c);

/* tids.c: threads' processes, by TID. */
/* The process of thread tid: as found before, else from /proc (kept),
 * else from the threads that ended lately, else tid, as a PID's own. */
pid_t tids_tgid_of(struct lt_collector *c, __u32 tid);
/* The process of an ended thread in set (TID << 32 | tgid, sorted by
 * tids_order()), or 0 when it is not there. */
pid_t tids_ended_tgid(const __u64 *set, size_t n, __u32 tid);
int tids_order(const void *a, const void *b);

/* exits.c: processes and threads that ended. */
bool exits_private_gone(const struct lt_collector *c,
			const struct lt_lock_key *k);
void exits_take(struct lt_collector *c);
void exits_forget(struct lt_collector *c);
void exits_execs(struct lt_collector *c);

/* reclaim.c: slots given back. */
int reclaim_fill_slots(struct lt_collector *c);
int reclaim_free_slot(struct lt_collector *c, enum slot_kind kind,
		      const void *key);
void reclaim_publish(struct lt_collector *c);
void reclaim_slots(struct lt_collector *c);
/*
 * The row's side of a slot of the kind that went back: the slot leads to
 * no row, and the row, its totals kept, counts from zero against the next
 * slot it takes. The kernel's side is the caller's.
 */
void reclaim_forget_row(struct lt_collector *c, enum slot_kind kind, size_t row,
			__u32 slot);

/* retire.c: rows retired. */
void retire_rows(struct lt_collector *c);

/* inflight.c: waits in flight. */
int inflight_read(struct lt_collector *c);

/* stacks.c: stacks. */
int stacks_read(struct lt_collector *c);
void stacks_resolve(struct lt_collector *c);

/* kspin.c: whether the kernel reports its spinning waits. */
void kspin_check(struct lt_collector *c);
void kspin_read(struct lt_collector *c);

/* klocks.c: kernel locks. */
/* A kernel lock (names.c's table). */
void klocks_name(struct lt_collector *c, struct lt_lock *l,
		 const struct lock_state *s, const struct lt_where *w);

/* files.c: files. */
uint64_t files_counter_sum(const struct lt_file_stat *v);
int files_read(struct lt_collector *c);

/* usdt.c: servers' own lock probes (providers.c). */
void usdt_scan(struct lt_collector *c);
void usdt_follow(struct lt_collector *c);
void usdt_close(struct lt_collector *c);
/* The servers' probe object, once a server is traced; else NULL. */
struct bpf_object *usdt_object(const struct lt_collector *c);
/* A lock of a server's kind (names.c's table). */
void usdt_name(struct lt_collector *c, struct lt_lock *l,
	       const struct lock_state *s, const struct lt_where *w);
/* The locks of objects whose name or storage was learned since: among
 * the fresh again, to be named with them (their keys stay). */
void usdt_rename(struct lt_collector *c);

/* cost.c: the probes' cost. */
void cost_window_open(struct lt_collector *c);
void cost_window_close(struct lt_collector *c);
void cost_window_retry(struct lt_collector *c);
void cost_read(struct lt_collector *c);
void cost_calibrate(struct lt_collector *c);

#endif /* LOCKTOP_COLLECTOR_STATE_H */
