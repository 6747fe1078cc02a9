// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Loads the probes, reads their per-CPU maps once per interval and turns
 * raw cumulative counters into totals and per-interval deltas.
 *
 * Three probe objects (futex, filelock, fileio) count into one set of
 * maps: the futex object owns them, the others reuse its descriptors.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <linux/types.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "collector.h"
#include "internal.h"
#include "common.h"
#include "futex.h"
#include "fileio.h"
#include "futex.skel.h"
#include "filelock.skel.h"
#include "fileio.skel.h"
#include "reader.skel.h"
#include "pidns.skel.h"

_Static_assert(LT_HIST_BUCKETS == LT_HIST_SLOTS,
	       "collector and probe histograms must match");
_Static_assert((int)LT_PK_FUTEX_COND == (int)LT_KIND_FUTEX_COND &&
		       (int)LT_PK_FCNTL == (int)LT_KIND_FCNTL &&
		       (int)LT_PK_OFD == (int)LT_KIND_OFD &&
		       (int)LT_PK_FLOCK == (int)LT_KIND_FLOCK &&
		       (int)LT_PK_FUTEX_PI == (int)LT_KIND_FUTEX_PI,
	       "probe kinds are collector kinds");

#define BATCH 512
#define MAX_VMA_CACHE 16
#define CYCLE_MIN_AGE_NS 200000000ULL /* a wait this old may be a deadlock */
#define OFFSET_MAX_LL 0x7fffffffffffffffULL

enum { PROBE_FUTEX, PROBE_FILELOCK, PROBE_FILEIO, PROBE_NR };

static const char *const probe_names[PROBE_NR] = { "futex", "filelock",
						   "fileio" };

struct lock_state {
	struct lt_lock_key key; /* first: the index's key */
	struct lt_lock_stat raw; /* summed over CPUs at the last read */
	pid_t *pids;
	size_t n_pids, cap_pids;
	bool named;
	__s64 top_stack; /* stack id with the most wait, -1 if none */
	uint64_t top_stack_ns;
	pid_t top_stack_pid;
	__s64 shown_stack; /* the stack `stack` holds text for */
	char *stack;
	__u64 shown_holder; /* last_holder that holder/holder_comm show */
	uint64_t live; /* the read that last wrote its delta */
	uint64_t wait_moved, hold_moved; /* histogram slots in the delta */
	bool waited; /* it has waiters_now in this read */
	uint64_t dead_at; /* when no process could reach it any more, or 0 */
	__s32 slot; /* its slot in the kernel's stat_map, or -1 */
	uint64_t moved_at; /* when its figures last moved */
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

struct edge {
	pid_t waiter, holder;
	uint64_t lock;
};

/* What a slot holds: a lock's figures, a party's or a file's. */
enum slot_kind { SLOT_LOCK, SLOT_PARTY, SLOT_FILE };

/* A slot chosen to go back, and the row of its lock, party or file. */
struct idle_entry {
	enum slot_kind kind;
	size_t row;
	__u32 slot;
	bool named; /* its name is still in the kernel's map */
};

struct lt_collector {
	struct futex_bpf *futex;
	struct filelock_bpf *filelock;
	struct fileio_bpf *fileio;
	struct reader_bpf *reader; /* the map readers */
	const struct lt_lock_rec *lock_out; /* their output, mapped */
	const struct lt_party_rec *party_out;
	const struct lt_inflight *wait_out;
	int stats_fd; /* holds kernel.bpf_stats_enabled on: a window */
	uint64_t win_cnt[PROBE_NR], win_ns[PROBE_NR]; /* at its start */
	uint64_t closed_cnt[PROBE_NR], closed_ns[PROBE_NR]; /* past windows */
	uint64_t measured[PROBE_NR]; /* runs behind each ns_per_run */
	bool retried[PROBE_NR]; /* measured again since the last due window */
	bool win_retry; /* the open window is such a measure */
	uint64_t stat_reads; /* reads so far, for the windows' cadence */
	uint64_t win_opened; /* when the open window opened */
	uint64_t win_closed; /* when the last one closed */
	int ncpus;
	unsigned int interval_ms;
	struct timespec opened, last_read, deadline;

	struct lt_lock *locks;
	struct lock_state *lstate;
	size_t n_locks, cap_locks, cap_lstate;
	struct lt_index lock_ix;
	uint64_t next_id;

	struct lt_proc *procs;
	struct proc_state *pstate;
	size_t n_procs, cap_procs, cap_pstate;
	struct lt_index proc_ix;

	struct lt_file *files;
	struct file_state *fstate;
	size_t n_files, cap_files, cap_fstate;
	struct lt_index file_ix;

	struct party_state *party; /* what the parties map said last */
	size_t n_party, cap_party;
	struct lt_index party_ix;

	struct side_state *side; /* holders and waiters per lock */
	size_t n_side, cap_side;
	struct lt_index side_ix;

	size_t *live, *was_live; /* locks with a delta in this, last read */
	size_t n_live, cap_live, n_was_live, cap_was_live;
	uint64_t reads; /* reads so far, the current one included */
	size_t *fresh; /* locks not yet named */
	size_t n_fresh, cap_fresh;
	size_t *waited; /* locks with waiters now */
	size_t n_waited, cap_waited;

	struct lt_site_key *site_keys; /* the sites judged so far */
	size_t n_sites, cap_sites;

	__u32 *gone; /* processes that ended before this read, sorted */
	size_t n_gone, cap_gone;
	/* Threads that ended before it, their process not, as
	 * TID << 32 | tgid, sorted; and those of the read before, whose
	 * TIDs are forgotten now. */
	__u64 *gone_tids, *stale_tids;
	size_t n_gone_tids, cap_gone_tids;
	size_t n_stale_tids, cap_stale_tids;
	struct lt_stack_key *doomed; /* (lock, stack) entries of the dead */
	size_t n_doomed, cap_doomed;

	struct tid_entry *tids; /* TID -> process, for holders */
	size_t n_tids, cap_tids;
	struct lt_index tid_ix;

	struct edge *edges;
	size_t n_edges, cap_edges;
	struct lt_deadlock *deadlocks;
	size_t n_deadlocks, cap_deadlocks;

	struct lt_probe_cost probes[PROBE_NR];
	uint64_t drops_raw;
	struct lt_snapshot snap;

	void *keybuf, *valbuf; /* batch read buffers */
	size_t keybuf_len, valbuf_len;
	void *zero_values; /* a slot's values on every CPU, zeroed */
	__u64 slots_back[LT_HIGH_NR]; /* given back, per enum lt_high */
	ssize_t slot_row[LT_MAX_LOCKS]; /* the lock row of each slot, or -1 */
	ssize_t party_row[LT_MAX_PARTIES]; /* the party of each slot, or -1 */
	ssize_t file_row[LT_MAX_FILES]; /* the file of each slot, or -1 */
	size_t file_entries; /* file slots linked to a row */

	struct lt_vmas vma_cache[MAX_VMA_CACHE];
	size_t n_vma_cache;

	struct lt_symbolizer *syms;
	bool stacks;
	unsigned int retire_s; /* see lt_options; 0 keeps every row */
	size_t n_dead; /* rows whose dead_at is set */
	size_t n_dead_sides, n_dead_procs; /* the same of sides, processes */
	size_t n_unlinked; /* parties forget_exited() unlinked */
	struct idle_entry *idle; /* slots that go back at the next read */
	size_t n_idle, cap_idle;
	uint64_t idle_ns; /* when the read that chose them started */
	uint64_t scanned_ns; /* when a read last looked for idle slots */
	uint64_t asleep_ns; /* when a read last counted rows without slots */
	uint64_t read_ns; /* when this read started */
	uint64_t own_drops; /* events lost while a slot went back */
	void *peek; /* a slot's values on every CPU, as read */
	struct lt_stack_snap *snap_buf; /* one snapshot, being unwound */
	struct stack_text *stexts;
	size_t n_stexts, cap_stexts;
	struct lt_index stext_ix;
};

static bool verbose_libbpf;

static int libbpf_print(enum libbpf_print_level level, const char *fmt,
			va_list args)
{
	(void)level;
	if (!verbose_libbpf)
		return 0;
	return vfprintf(stderr, fmt, args);
}

static double ts_sec(const struct timespec *ts)
{
	return ts->tv_sec + ts->tv_nsec / 1e9;
}

static double ts_diff(const struct timespec *a, const struct timespec *b)
{
	return ts_sec(a) - ts_sec(b);
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static uint64_t diff(uint64_t now, uint64_t before)
{
	/* A counter below its last value was recreated: count it anew. */
	return now >= before ? now - before : now;
}

/* Appends i to a list of lock indexes. */
static int push_index(size_t **list, size_t *n, size_t *cap, size_t i)
{
	if (lt_grow((void **)list, cap, *n + 1, sizeof(**list)))
		return -ENOMEM;
	(*list)[(*n)++] = i;
	return 0;
}

static void swap_lists(size_t **a, size_t *na, size_t *capa, size_t **b,
		       size_t *nb, size_t *capb)
{
	size_t *l = *a, n = *na, cap = *capa;

	*a = *b;
	*na = *nb;
	*capa = *capb;
	*b = l;
	*nb = n;
	*capb = cap;
}

/* ---- reading maps ---- */

/*
 * Reads every entry of a map in batches, calling fn with each key and
 * its value (all CPUs' values in a row for per-CPU maps).
 */
static int for_each_entry(struct lt_collector *c, int fd, size_t key_size,
			  size_t value_size, bool percpu,
			  int (*fn)(struct lt_collector *c, const void *key,
				    const void *value),
			  size_t *seen)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	size_t vsz = percpu ? ((value_size + 7) & ~7UL) * c->ncpus : value_size;
	char out_batch[64];
	bool first = true, done = false;
	__u32 count, k;
	int err;

	if (c->keybuf_len < BATCH * key_size) {
		free(c->keybuf);
		c->keybuf = malloc(BATCH * key_size);
		c->keybuf_len = c->keybuf ? BATCH * key_size : 0;
	}
	if (c->valbuf_len < BATCH * vsz) {
		free(c->valbuf);
		c->valbuf = malloc(BATCH * vsz);
		c->valbuf_len = c->valbuf ? BATCH * vsz : 0;
	}
	if (!c->keybuf || !c->valbuf)
		return -ENOMEM;
	if (seen)
		*seen = 0;
	while (!done) {
		count = BATCH;
		err = bpf_map_lookup_batch(fd, first ? NULL : out_batch,
					   out_batch, c->keybuf, c->valbuf,
					   &count, &opts);
		if (err == -ENOENT)
			done = true;
		else if (err)
			return err;
		first = false;
		for (k = 0; k < count; k++) {
			err = fn(c, (char *)c->keybuf + k * key_size,
				 (char *)c->valbuf + k * vsz);
			if (err)
				return err;
		}
		if (seen)
			*seen += count;
	}
	return 0;
}

/*
 * Runs a reader (reader.bpf.c) and hands fn each of the n records it
 * wrote into out, an array of size-byte records.
 */
static int run_reader(struct lt_collector *c, struct bpf_program *prog,
		      const void *out, size_t size, const __u32 *n,
		      int (*fn)(struct lt_collector *c, const void *rec))
{
	LIBBPF_OPTS(bpf_test_run_opts, opts);
	__u32 i;
	int err;

	if (bpf_prog_test_run_opts(bpf_program__fd(prog), &opts))
		return -errno;
	for (i = 0; i < *n; i++) {
		err = fn(c, (const char *)out + (size_t)i * size);
		if (err)
			return err;
	}
	return 0;
}

/* The array map's values, mapped read-only into our memory. */
static const void *map_out(struct bpf_map *map)
{
	size_t len =
		(size_t)bpf_map__value_size(map) * bpf_map__max_entries(map);
	long page = sysconf(_SC_PAGESIZE);
	void *p;

	len = (len + (size_t)page - 1) & ~((size_t)page - 1);
	p = mmap(NULL, len, PROT_READ, MAP_SHARED, bpf_map__fd(map), 0);
	return p == MAP_FAILED ? NULL : p;
}

static void unmap_out(struct bpf_map *map, const void *p)
{
	size_t len =
		(size_t)bpf_map__value_size(map) * bpf_map__max_entries(map);
	long page = sysconf(_SC_PAGESIZE);

	len = (len + (size_t)page - 1) & ~((size_t)page - 1);
	if (p)
		munmap((void *)p, len);
}

/* ---- naming ---- */

static const struct lt_vma *find_vma(struct lt_collector *c, pid_t pid,
				     uint64_t addr)
{
	struct lt_vmas *v;
	size_t i;

	for (i = 0; i < c->n_vma_cache; i++)
		if (c->vma_cache[i].pid == pid)
			return lt_vmas_find(&c->vma_cache[i], addr);
	if (c->n_vma_cache == MAX_VMA_CACHE) {
		lt_vmas_free(&c->vma_cache[0]);
		memmove(&c->vma_cache[0], &c->vma_cache[1],
			(MAX_VMA_CACHE - 1) * sizeof(c->vma_cache[0]));
		c->n_vma_cache--;
	}
	v = &c->vma_cache[c->n_vma_cache++];
	if (lt_vmas_load(pid, v))
		return NULL; /* gone: the probe's facts name it */
	return lt_vmas_find(v, addr);
}

static void forget_vmas(struct lt_collector *c)
{
	size_t i;

	for (i = 0; i < c->n_vma_cache; i++)
		lt_vmas_free(&c->vma_cache[i]);
	c->n_vma_cache = 0;
}

static void read_comm(struct lt_collector *c, pid_t pid, char *comm)
{
	__u32 key = pid;
	char path[64];
	FILE *f;

	if (!bpf_map_lookup_elem(bpf_map__fd(c->futex->maps.comms), &key,
				 comm)) {
		comm[LT_COMM_SIZE - 1] = '\0';
		return;
	}
	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	f = fopen(path, "re");
	if (f && fgets(comm, LT_COMM_SIZE, f))
		comm[strcspn(comm, "\n")] = '\0';
	else
		snprintf(comm, LT_COMM_SIZE, "?");
	if (f)
		fclose(f);
}

/* The path of descriptor fd in pid, if it still is the file (dev, ino). */
static bool fd_path(pid_t pid, int fd, uint64_t dev, uint64_t ino, char *buf,
		    size_t len)
{
	char link[64];
	struct stat st;
	ssize_t n;

	if (pid <= 0 || fd < 0)
		return false;
	snprintf(link, sizeof(link), "/proc/%d/fd/%d", pid, fd);
	if (stat(link, &st) || st.st_ino != ino ||
	    (dev && st.st_dev != makedev(dev >> 20, dev & 0xfffff)))
		return false;
	n = readlink(link, buf, len - 1);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	return true;
}

static void name_file_lock(struct lt_collector *c, struct lt_lock *l,
			   const struct lock_state *s, const struct lt_where *w)
{
	char path[LT_NAME_LEN - 48];
	size_t i;
	bool found = w && fd_path(w->tgid, w->fd, s->key.dev_or_tgid,
				  s->key.ino, path, sizeof(path));

	(void)c;
	for (i = 0; !found && i < s->n_pids; i++) {
		/* Any waiter that still has it open under the same fd. */
		found = w && fd_path(s->pids[i], w->fd, s->key.dev_or_tgid,
				     s->key.ino, path, sizeof(path));
	}
	if (!found && w && w->file[0])
		snprintf(path, sizeof(path), "%s", w->file);
	else if (!found)
		snprintf(path, sizeof(path), "%u:%u:%llu",
			 (unsigned int)(s->key.dev_or_tgid >> 20),
			 (unsigned int)(s->key.dev_or_tgid & 0xfffff),
			 (unsigned long long)s->key.ino);
	if (l->kind == LT_KIND_FLOCK)
		snprintf(l->name, sizeof(l->name), "%s", path);
	else if (LT_KEY_FOLDED(&s->key))
		snprintf(l->name, sizeof(l->name), "%s (other ranges)", path);
	else if (s->key.end >= OFFSET_MAX_LL)
		snprintf(l->name, sizeof(l->name), "%s:%llu-EOF", path,
			 (unsigned long long)s->key.start);
	else if (s->key.start == s->key.end)
		snprintf(l->name, sizeof(l->name), "%s:%llu", path,
			 (unsigned long long)s->key.start);
	else
		snprintf(l->name, sizeof(l->name), "%s:%llu-%llu", path,
			 (unsigned long long)s->key.start,
			 (unsigned long long)s->key.end);
}

static void name_futex(struct lt_collector *c, struct lt_lock *l,
		       const struct lock_state *s, const struct lt_where *w)
{
	const struct lt_vma *vma;
	pid_t pid = w ? (pid_t)w->tgid :
			(s->key.shared ? (s->n_pids ? s->pids[0] : 0) :
					 (pid_t)s->key.dev_or_tgid);
	uint64_t addr = w ? w->uaddr : (l->address ? l->address : s->key.start);

	if (w) {
		l->address = w->uaddr;
		if (lt_name_where(w, addr, l->name, sizeof(l->name)))
			return;
	}
	/* A shared file: its full path, while a process maps it. */
	vma = pid > 0 ? find_vma(c, pid, addr) : NULL;
	if (vma && (vma->path[0] == '/' || !w))
		lt_name_address(vma, addr, l->name, sizeof(l->name));
	else if (w)
		snprintf(l->name, sizeof(l->name), "%s+0x%llx", w->file,
			 (unsigned long long)s->key.start);
	else
		snprintf(l->name, sizeof(l->name), "0x%llx",
			 (unsigned long long)addr);
}

static void name_lock(struct lt_collector *c, size_t i)
{
	struct lt_lock *l = &c->locks[i];
	struct lock_state *s = &c->lstate[i];
	struct lt_where w, *wp = NULL;

	if (!bpf_map_lookup_elem(bpf_map__fd(c->futex->maps.wheres), &s->key,
				 &w)) {
		w.file[sizeof(w.file) - 1] = '\0';
		wp = &w;
	}
	if (l->kind == LT_KIND_FCNTL || l->kind == LT_KIND_OFD ||
	    l->kind == LT_KIND_FLOCK)
		name_file_lock(c, l, s, wp);
	else
		name_futex(c, l, s, wp);
	if (wp && !l->comm[0])
		read_comm(c, wp->tgid, l->comm);
	if (!l->comm[0] && s->n_pids)
		read_comm(c, s->pids[0], l->comm);
	/* Identity across runs: what the lock is, not where it was. */
	snprintf(l->key, sizeof(l->key), "%s:%.*s", lt_kind_name(l->kind),
		 (int)(sizeof(l->key) - 16), l->name);
	s->named = true;

	/* A private futex in a program's data: its symbol, if it has one. */
	if (wp && !s->key.shared && (wp->flags & LT_VMA_FILE) &&
	    !(wp->flags & LT_VMA_SHARED)) {
		char sym[LT_SYM_LEN];

		if (lt_symbolize(c->syms, (pid_t)wp->tgid, wp->uaddr, sym,
				 sizeof(sym)))
			snprintf(l->name, sizeof(l->name), "%s", sym);
	}
}

/* ---- locks ---- */

static ssize_t lock_add(struct lt_collector *c, const struct lt_lock_key *key)
{
	struct lt_lock *l;
	struct lock_state *s;
	size_t i = c->n_locks;

	if (lt_grow((void **)&c->locks, &c->cap_locks, i + 1,
		    sizeof(*c->locks)) ||
	    lt_grow((void **)&c->lstate, &c->cap_lstate, i + 1,
		    sizeof(*c->lstate)))
		return -ENOMEM;
	l = &c->locks[i];
	s = &c->lstate[i];
	memset(l, 0, sizeof(*l));
	memset(s, 0, sizeof(*s));
	s->key = *key;
	s->top_stack = -1;
	s->shown_stack = -1;
	s->slot = -1;
	s->moved_at = mono_ns();
	if (lt_index_add(&c->lock_ix, i, c->lstate) ||
	    push_index(&c->fresh, &c->n_fresh, &c->cap_fresh, i))
		return -ENOMEM;
	c->n_locks++;
	l->id = ++c->next_id;
	l->kind = key->kind < LT_KIND_NR ? (enum lt_kind)key->kind :
					   LT_KIND_FUTEX;
	if (key->kind <= LT_PK_FUTEX_PI || key->kind == LT_PK_FUTEX_COND) {
		l->address = key->start;
		if (key->shared) {
			l->dev = key->dev_or_tgid;
			l->ino = key->ino;
		}
	} else {
		l->dev = key->dev_or_tgid;
		l->ino = key->ino;
		l->end = key->end;
	}
	l->start = key->start;
	return (ssize_t)i;
}

/*
 * The change of a wrapping histogram (32-bit in the kernel: diffed
 * modulo 2^32), written into out. Only the slots that moved now, or
 * moved last time and are cleared now (the bits of *moved), are written:
 * a lock that waits once an interval touches one slot of its rows, not
 * all of them, which keeps cold memory cold. Only the slots `used` names
 * are read: they are all the reader wrote.
 */
static void hist_delta32(uint64_t *out, uint64_t *total, const __u32 *now,
			 __u32 *before, uint64_t used, uint64_t *moved)
{
	uint64_t m = 0, stale;
	size_t b;
	__u32 d;

	for (; used; used &= used - 1) {
		b = (size_t)__builtin_ctzll(used);
		if (b >= LT_HIST_SLOTS)
			break;
		d = now[b] - before[b];
		if (!d)
			continue;
		out[b] = d;
		total[b] += d;
		before[b] = now[b];
		m |= 1ULL << b;
	}
	for (stale = *moved & ~m; stale; stale &= stale - 1)
		out[__builtin_ctzll(stale)] = 0;
	*moved = m;
}

static void hist_delta(uint64_t *out, uint64_t *total, const __u64 *now,
		       const __u64 *before)
{
	size_t b;

	for (b = 0; b < LT_HIST_SLOTS; b++) {
		out[b] = diff(now[b], before[b]);
		total[b] += out[b];
	}
}

#define DELTA(field)                                            \
	do {                                                    \
		l->delta.field = diff(sum.field, s->raw.field); \
		l->total.field += l->delta.field;               \
	} while (0)

/* The holds not timed this interval, at the sampled holds' mean. */
static void add_estimated_holds(struct lt_lock *l,
				const struct lt_lock_stat *now,
				const struct lt_lock_stat *before)
{
	uint64_t skipped = diff(now->hold_skipped, before->hold_skipped);
	uint64_t ns;

	if (!skipped)
		return;
	ns = lt_hold_estimate(skipped,
			      diff(now->hold_samples, before->hold_samples),
			      diff(now->hold_sample_ns, before->hold_sample_ns),
			      now->hold_samples, now->hold_sample_ns);
	l->delta.hold_ns += ns;
	l->total.hold_ns += ns;
	l->delta.holds_estimated = skipped;
	l->total.holds_estimated += skipped;
}

/* One lock's record from the reader: only locks that changed come. */
static int merge_lock(struct lt_collector *c, const void *rec)
{
	const struct lt_lock_rec *r = rec;
	const struct lt_lock_stat *v = &r->sum;
	struct lt_lock_stat sum;
	struct lock_state *s;
	struct lt_lock *l;
	ssize_t i;

	/* The row the slot led to last time, if the slot still holds that
	 * lock: slots are handed to other locks once forgotten. */
	i = r->slot < LT_MAX_LOCKS ? c->slot_row[r->slot] : -1;
	if (i < 0 || memcmp(&c->lstate[i].key, &r->key, sizeof(r->key))) {
		i = lt_index_find(&c->lock_ix, &r->key, c->lstate);
		if (i < 0)
			i = lock_add(c, &r->key);
		if (i < 0)
			return (int)i;
		if (r->slot < LT_MAX_LOCKS)
			c->slot_row[r->slot] = i;
	}
	l = &c->locks[i];
	s = &c->lstate[i];
	if (s->dead_at) {
		/* Its PID came back and used the same address. */
		s->dead_at = 0;
		c->n_dead--;
	}
	s->slot = r->slot < LT_MAX_LOCKS ? (__s32)r->slot : -1;
	s->moved_at = c->read_ns;
	/* Histograms that did not move keep a zero delta. */
	if (v->waits != s->raw.waits || s->wait_moved)
		hist_delta32(l->delta.wait_hist, l->total.wait_hist, v->hist,
			     s->raw.hist, v->hist_used, &s->wait_moved);
	if (v->hold_ns != s->raw.hold_ns || s->hold_moved)
		hist_delta32(l->delta.hold_hist, l->total.hold_hist,
			     v->hold_hist, s->raw.hold_hist, v->hold_used,
			     &s->hold_moved);
	/* The counters; the histograms are already up to date in raw. */
	memcpy(&sum, v, offsetof(struct lt_lock_stat, hist));
	DELTA(waits);
	DELTA(wait_ns);
	DELTA(contended);
	DELTA(acquires);
	DELTA(trylock_failures);
	DELTA(hold_ns);
	add_estimated_holds(l, &sum, &s->raw);
	DELTA(wakes);
	DELTA(timeouts);
	DELTA(interrupted);
	DELTA(value_changed);
	DELTA(owner_died);
	DELTA(deadlocks);
	DELTA(io_under_lock_ns);
	l->delta.max_wait_ns = l->delta.waits ? v->max_ns : 0;
	if (sum.max_total_ns > l->total.max_wait_ns)
		l->total.max_wait_ns = sum.max_total_ns;
	if (l->delta.max_wait_ns > l->total.max_wait_ns)
		l->total.max_wait_ns = l->delta.max_wait_ns;
	/* A per-interval hold maximum needs an epoch too; the total one is
	 * exact and bounds it. */
	l->delta.max_hold_ns = l->delta.hold_ns ? sum.max_hold_ns : 0;
	l->total.max_hold_ns = sum.max_hold_ns;
	if (sum.last_holder)
		s->raw.last_holder = sum.last_holder;
	sum.last_holder = s->raw.last_holder;
	memcpy(&s->raw, &sum, offsetof(struct lt_lock_stat, hist));
	c->snap.kind_delta[l->kind].waits += l->delta.waits;
	c->snap.kind_delta[l->kind].wait_ns += l->delta.wait_ns;
	c->snap.kind_total[l->kind].waits += l->delta.waits;
	c->snap.kind_total[l->kind].wait_ns += l->delta.wait_ns;
	if (s->live != c->reads) {
		s->live = c->reads;
		return push_index(&c->live, &c->n_live, &c->cap_live,
				  (size_t)i);
	}
	return 0;
}

/* ---- processes and holders ---- */

static int cmp_tid(const void *a, const void *b)
{
	__u64 x = *(const __u64 *)a >> 32, y = *(const __u64 *)b >> 32;

	return x < y ? -1 : x > y;
}

/* The process of an ended thread in set (TID << 32 | tgid, sorted), or
 * 0 when it is not there. */
static pid_t ended_tgid(const __u64 *set, size_t n, __u32 tid)
{
	__u64 key = (__u64)tid << 32;
	const __u64 *e;

	if (!n)
		return 0;
	e = bsearch(&key, set, n, sizeof(*set), cmp_tid);
	return e ? (pid_t)(__u32)*e : 0;
}

static pid_t tgid_of(struct lt_collector *c, __u32 tid)
{
	struct tid_entry key = { .tid = tid };
	char path[64], line[128];
	ssize_t i;
	FILE *f;
	pid_t tgid = 0;

	i = lt_index_find(&c->tid_ix, &key, c->tids);
	if (i >= 0)
		return c->tids[i].tgid;
	snprintf(path, sizeof(path), "/proc/%u/status", tid);
	f = fopen(path, "re");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "Tgid: %d", &tgid) == 1)
			break;
	if (f)
		fclose(f);
	if (tgid <= 0) {
		/* A thread that ended lately is known by its exit. */
		tgid = ended_tgid(c->gone_tids, c->n_gone_tids, tid);
		if (!tgid)
			tgid = ended_tgid(c->stale_tids, c->n_stale_tids, tid);
		return tgid ? tgid :
			      (pid_t)tid; /* else a pid: the best guess */
	}
	if (!lt_grow((void **)&c->tids, &c->cap_tids, c->n_tids + 1,
		     sizeof(*c->tids))) {
		c->tids[c->n_tids].tid = tid;
		c->tids[c->n_tids].tgid = tgid;
		if (!lt_index_add(&c->tid_ix, c->n_tids, c->tids))
			c->n_tids++;
	}
	return tgid;
}

static ssize_t proc_of(struct lt_collector *c, pid_t pid)
{
	struct proc_state key = { .tgid = (__u32)pid };
	ssize_t i = lt_index_find(&c->proc_ix, &key, c->pstate);
	struct lt_proc *p;

	if (i >= 0) {
		if (c->pstate[i].dead_at) {
			/* The PID is in use again. */
			c->pstate[i].dead_at = 0;
			c->n_dead_procs--;
		}
		return i;
	}
	i = (ssize_t)c->n_procs;
	if (lt_grow((void **)&c->procs, &c->cap_procs, i + 1,
		    sizeof(*c->procs)) ||
	    lt_grow((void **)&c->pstate, &c->cap_pstate, i + 1,
		    sizeof(*c->pstate)))
		return -ENOMEM;
	memset(&c->pstate[i], 0, sizeof(c->pstate[i]));
	c->pstate[i].tgid = (__u32)pid;
	if (lt_index_add(&c->proc_ix, i, c->pstate))
		return -ENOMEM;
	c->n_procs++;
	p = &c->procs[i];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	read_comm(c, pid, p->comm);
	return i;
}

/* Keeps the top LT_TOP_PARTIES by ns, merging one process's threads. */
/* Puts pid in a lock's top list with its totals, if it ranks. */
static void set_party(struct lt_party *top, size_t *n, pid_t pid,
		      const char *comm, uint64_t count, uint64_t ns)
{
	struct lt_party p;
	size_t i, j;

	for (i = 0; i < *n; i++) {
		if (top[i].pid == pid) {
			top[i].count = count;
			top[i].ns = ns;
			snprintf(top[i].comm, sizeof(top[i].comm), "%s", comm);
			p = top[i];
			for (j = i; j > 0 && top[j - 1].ns < p.ns; j--)
				top[j] = top[j - 1];
			/* A PID in use again may have less than its last
			 * process had. */
			for (; j + 1 < *n && top[j + 1].ns > p.ns; j++)
				top[j] = top[j + 1];
			top[j] = p;
			return;
		}
	}
	if (*n == LT_TOP_PARTIES && top[*n - 1].ns >= ns)
		return;
	if (*n < LT_TOP_PARTIES)
		(*n)++;
	for (j = *n - 1; j > 0 && top[j - 1].ns < ns; j--)
		top[j] = top[j - 1];
	top[j].pid = pid;
	snprintf(top[j].comm, sizeof(top[j].comm), "%s", comm);
	top[j].count = count;
	top[j].ns = ns;
}

static int add_pid(struct lt_collector *c, size_t i, pid_t pid)
{
	struct lock_state *s = &c->lstate[i];
	size_t k;

	for (k = 0; k < s->n_pids; k++)
		if (s->pids[k] == pid)
			return 0;
	if (lt_grow((void **)&s->pids, &s->cap_pids, s->n_pids + 1,
		    sizeof(*s->pids)))
		return -ENOMEM;
	s->pids[s->n_pids++] = pid;
	c->locks[i].pids = s->pids;
	c->locks[i].n_pids = s->n_pids;
	return 0;
}

/* The state of key in an index over states of the given size; new ones
 * start at zero. */
static ssize_t state_of(struct lt_index *ix, void **states, size_t *n,
			size_t *cap, size_t size, const void *key,
			size_t key_len, bool *created)
{
	ssize_t i = lt_index_find(ix, key, *states);

	*created = i < 0;
	if (i >= 0)
		return i;
	if (lt_grow(states, cap, *n + 1, size))
		return -ENOMEM;
	i = (ssize_t)*n;
	memset((char *)*states + (size_t)i * size, 0, size);
	memcpy((char *)*states + (size_t)i * size, key, key_len);
	if (lt_index_add(ix, (size_t)i, *states))
		return -ENOMEM;
	(*n)++;
	return i;
}

/*
 * Finds, once, where a party's figures go: its lock's row, its process's
 * side of the lock and the process. Only retire_rows() moves rows, and
 * it renumbers what it moves, so the positions hold until
 * forget_exited() unlinks the party.
 */
static int link_party(struct lt_collector *c, struct party_state *ps,
		      size_t lock)
{
	const struct lt_party_key *pk = &ps->key;
	struct side_key sk = { .lock = pk->lock };
	bool new_side;
	ssize_t k, p;

	sk.pid = pk->role == LT_ROLE_HOLDER ? (__u32)tgid_of(c, pk->tgid) :
					      pk->tgid;
	sk.holder = pk->role != LT_ROLE_WAITER;
	k = state_of(&c->side_ix, (void **)&c->side, &c->n_side, &c->cap_side,
		     sizeof(*c->side), &sk, sizeof(sk), &new_side);
	if (k < 0)
		return (int)k;
	if (c->side[k].dead_at) {
		c->side[k].dead_at = 0;
		c->n_dead_sides--;
	}
	p = proc_of(c, (pid_t)sk.pid);
	if (p < 0)
		return (int)p;
	if (new_side && !sk.holder && add_pid(c, lock, c->procs[p].pid))
		return -ENOMEM;
	ps->lock = lock;
	ps->side = (size_t)k;
	ps->proc = (size_t)p;
	ps->linked = true;
	return 0;
}

/*
 * One party the reader wrote: what it added since the last read goes to
 * the process's side of the lock, and from there to the lock's top lists
 * and the process's figures. Counts only grow, so the lists stay exact.
 */
static int merge_party(struct lt_collector *c, const void *rec)
{
	const struct lt_party_rec *r = rec;
	const struct lt_party_key *pk = &r->key;
	uint64_t dcount, dns;
	struct party_state *ps;
	struct side_state *ss;
	struct proc_state *pst;
	struct lt_proc *proc;
	struct lt_lock *l;
	ssize_t i, k;
	bool created;
	int err;

	/* The party the slot led to last time, if the slot still holds it. */
	k = r->slot < LT_MAX_PARTIES ? c->party_row[r->slot] : -1;
	if (k < 0 || memcmp(&c->party[k].key, pk, sizeof(*pk)))
		k = lt_index_find(&c->party_ix, pk, c->party);
	if (k < 0 || !c->party[k].linked) {
		i = lt_index_find(&c->lock_ix, &pk->lock, c->lstate);
		if (i < 0)
			return 0; /* a lock whose figures the kernel lost */
		if (k < 0)
			k = state_of(&c->party_ix, (void **)&c->party,
				     &c->n_party, &c->cap_party,
				     sizeof(*c->party), pk, sizeof(*pk),
				     &created);
		else
			c->n_unlinked--; /* its key came back */
		if (k < 0)
			return (int)k;
		err = link_party(c, &c->party[k], (size_t)i);
		if (err)
			return err;
	}
	if (r->slot < LT_MAX_PARTIES)
		c->party_row[r->slot] = k;
	ps = &c->party[k];
	ps->slot = r->slot < LT_MAX_PARTIES ? (__s32)r->slot : -1;
	dcount = diff(r->sum.count, ps->count);
	dns = diff(r->sum.ns, ps->ns);
	ps->count = r->sum.count;
	ps->ns = r->sum.ns;
	if (!dcount && !dns)
		return 0;
	ps->moved_at = c->read_ns;

	l = &c->locks[ps->lock];
	ss = &c->side[ps->side];
	ss->count += dcount;
	ss->ns += dns;
	proc = &c->procs[ps->proc];
	if (ss->key.holder) {
		set_party(l->holders, &l->n_holders, proc->pid, proc->comm,
			  ss->count, ss->ns);
		return 0;
	}
	set_party(l->waiters, &l->n_waiters, proc->pid, proc->comm, ss->count,
		  ss->ns);
	if (!lt_kind_is_lock(l->kind))
		return 0;
	proc->delta.waits += dcount;
	proc->delta.wait_ns += dns;
	proc->total.waits += dcount;
	proc->total.wait_ns += dns;
	pst = &c->pstate[ps->proc];
	if (ss->ns > pst->top_ns) {
		pst->top_ns = ss->ns;
		proc->top_lock = l->id;
	}
	return 0;
}

static int read_parties(struct lt_collector *c)
{
	return run_reader(c, c->reader->progs.lt_read_parties, c->party_out,
			  sizeof(*c->party_out), &c->reader->bss->n_parties,
			  merge_party);
}

/* One process's pread-path figures, from the per-process I/O map. */
static int merge_proc_io(struct lt_collector *c, const void *key,
			 const void *value)
{
	const struct lt_proc_io *percpu = value;
	struct lt_proc_io sum = { 0 };
	struct proc_state *ps;
	struct lt_proc *p;
	ssize_t i;
	int cpu;

	for (cpu = 0; cpu < c->ncpus; cpu++) {
		sum.count += percpu[cpu].count;
		sum.ns += percpu[cpu].ns;
	}
	i = proc_of(c, (pid_t) * (const __u32 *)key);
	if (i < 0)
		return (int)i;
	p = &c->procs[i];
	ps = &c->pstate[i];
	p->delta.io_count = diff(sum.count, ps->io.count);
	p->delta.io_ns = diff(sum.ns, ps->io.ns);
	p->total.io_count += p->delta.io_count;
	p->total.io_ns += p->delta.io_ns;
	ps->io = sum;
	return 0;
}

static int read_proc_io(struct lt_collector *c)
{
	return for_each_entry(c, bpf_map__fd(c->fileio->maps.proc_io),
			      sizeof(__u32), sizeof(struct lt_proc_io), true,
			      merge_proc_io, NULL);
}

/* ---- which waits are locks: the call sites ---- */

/* glibc's wait helpers: the caller says what they wait for. */
static const char *const helper_fns[] = {
	"futex_abstimed_wait",
	"futex_wait",
	"syscall",
};

static const char *const lock_fns[] = {
	"mutex", "rwlock", "lll_lock", "lll_clocklock", "spin_lock",
};

static const char *const event_fns[] = {
	"cond", "sem_", "barrier", "join", "once", "sigwait", "nanosleep",
};

static bool name_has(const char *name, const char *const *parts, size_t n,
		     bool prefix)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (prefix ? !strncmp(name, parts[i], strlen(parts[i])) :
			     strstr(name, parts[i]) != NULL)
			return true;
	return false;
}

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

/* The verdict on the function at ip in pid; see enum lt_site_verdict. */
static struct lt_site judge_site(struct lt_collector *c, pid_t pid, uint64_t ip)
{
	struct lt_site v = { .verdict = LT_SITE_VALUE };
	const char *name;
	char buf[LT_SYM_LEN];
	int64_t ra_off;

	/* ip follows the syscall or call instruction: look inside it. */
	if (!ip ||
	    !lt_function_at(c->syms, pid, ip - 1, buf, sizeof(buf), &ra_off))
		return v;
	name = buf;
	while (*name == '_')
		name++;
	if (name_has(name, helper_fns, N_OF(helper_fns), true)) {
		if (ra_off >= 0 && ra_off < 4096) {
			v.verdict = LT_SITE_CALLER;
			v.ra_off = (__s32)ra_off;
		}
	} else if (name_has(name, lock_fns, N_OF(lock_fns), false)) {
		v.verdict = LT_SITE_LOCK;
	} else if (name_has(name, event_fns, N_OF(event_fns), false)) {
		v.verdict = LT_SITE_EVENT;
	}
	return v;
}

/*
 * Judges the call sites the probes met since the last read. A site's
 * first waits are classified by value alone; later ones by the verdict.
 */
static void judge_sites(struct lt_collector *c)
{
	int qfd = bpf_map__fd(c->futex->maps.new_sites);
	int sfd = bpf_map__fd(c->futex->maps.sites);
	struct lt_site_key k;
	struct lt_site v;

	while (!bpf_map_lookup_and_delete_elem(qfd, NULL, &k)) {
		v = judge_site(c, (pid_t)k.tgid, k.ip);
		bpf_map_update_elem(sfd, &k, &v, BPF_EXIST);
		if (!lt_grow((void **)&c->site_keys, &c->cap_sites,
			     c->n_sites + 1, sizeof(*c->site_keys)))
			c->site_keys[c->n_sites++] = k;
	}
}

/* ---- processes that ended ---- */

static int cmp_u32(const void *a, const void *b)
{
	__u32 x = *(const __u32 *)a, y = *(const __u32 *)b;

	return x < y ? -1 : x > y;
}

static bool is_gone(const __u32 *gone, size_t n, __u32 tgid)
{
	/* An empty set may have no array yet. */
	return n && bsearch(&tgid, gone, n, sizeof(*gone), cmp_u32) != NULL;
}

/* A private lock: a process's own futex, keyed by its tgid. */
static bool is_private(const struct lt_lock_key *k)
{
	return !k->shared &&
	       (k->kind < LT_PK_FCNTL || k->kind == LT_PK_FUTEX_COND);
}

/* A private lock of a process that has ended. */
static bool private_gone(const struct lt_collector *c,
			 const struct lt_lock_key *k)
{
	return is_private(k) &&
	       is_gone(c->gone, c->n_gone, (__u32)k->dev_or_tgid);
}

/* Drains the queue at qfd into *set, of n elements of size bytes,
 * sorted by cmp. */
static void take_queue(int qfd, void **set, size_t *n, size_t *cap, size_t size,
		       int (*cmp)(const void *, const void *))
{
	__u64 v;

	*n = 0;
	while (!bpf_map_lookup_and_delete_elem(qfd, NULL, &v)) {
		if (lt_grow(set, cap, *n + 1, size))
			break;
		memcpy((char *)*set + *n * size, &v, size);
		(*n)++;
	}
	if (*n)
		qsort(*set, *n, size, cmp);
}

/*
 * The processes that ended before this read began: its walk of the maps
 * sees all they ever did, so they can go once it is done. One that ends
 * during the walk waits for the next read. Likewise the threads that
 * ended while their processes went on; those of the read before are kept
 * a read longer, as a waiter woken as its holder thread ended may name
 * it a little later.
 */
static void take_exited(struct lt_collector *c)
{
	__u64 *set = c->stale_tids;
	size_t cap = c->cap_stale_tids;

	take_queue(bpf_map__fd(c->futex->maps.exited), (void **)&c->gone,
		   &c->n_gone, &c->cap_gone, sizeof(*c->gone), cmp_u32);
	c->stale_tids = c->gone_tids;
	c->n_stale_tids = c->n_gone_tids;
	c->cap_stale_tids = c->cap_gone_tids;
	c->gone_tids = set;
	c->cap_gone_tids = cap;
	take_queue(bpf_map__fd(c->futex->maps.ended_threads),
		   (void **)&c->gone_tids, &c->n_gone_tids, &c->cap_gone_tids,
		   sizeof(*c->gone_tids), cmp_tid);
}

/*
 * Takes key's slot back, zeroed, among the free ones: names maps keys to
 * slots of values, whose free ones are in the queue free. Only keys no
 * thread can reach any more go: a slot kept in a thread's cache or a
 * held range stays valid while that thread lives. Returns 0 when the
 * key had a slot.
 */
/* Room for one CPU's value of any slot kind. */
#define SLOT_VALUE_MAX                                                \
	(sizeof(struct lt_lock_stat) + sizeof(struct lt_party_stat) + \
	 sizeof(struct lt_file_stat))

/* Zeroes a slot no name leads to and queues it as free again. */
static int queue_slot(struct lt_collector *c, struct bpf_map *values,
		      struct bpf_map *free, __u32 slot, size_t value_size)
{
	memset(c->zero_values, 0, (size_t)c->ncpus * value_size);
	if (bpf_map_update_elem(bpf_map__fd(values), &slot, c->zero_values,
				BPF_ANY) ||
	    bpf_map_update_elem(bpf_map__fd(free), NULL, &slot, BPF_ANY))
		return -errno; /* the slot is lost: one fewer fits */
	if (free == c->futex->maps.free_party_slots)
		c->slots_back[LT_HIGH_PARTIES]++;
	else if (free == c->fileio->maps.free_file_slots)
		c->slots_back[LT_HIGH_FILES]++;
	else
		c->slots_back[LT_HIGH_LOCKS]++;
	return 0;
}

/*
 * Tells the probes how many slots went back (slot_use, common.h), once
 * a read, and whether they now fold new byte ranges into their files.
 */
static void publish_slot_use(struct lt_collector *c)
{
	int fd = bpf_map__fd(c->futex->maps.slot_use);
	__u64 use[LT_SLOT_USE_NR] = { 0 };
	__u32 k;

	for (k = 0; k < LT_HIGH_NR; k++) {
		__u32 t = 2 * k, b = t + 1;

		bpf_map_update_elem(fd, &b, &c->slots_back[k], BPF_ANY);
		if (!bpf_map_lookup_elem(fd, &t, &use[t]))
			use[b] = c->slots_back[k];
	}
	c->snap.folding =
		(use[2 * LT_HIGH_LOCKS] - use[2 * LT_HIGH_LOCKS + 1]) * 100 >=
			(__u64)LT_MAX_LOCKS * LT_FOLD_AT ||
		(use[2 * LT_HIGH_PARTIES] - use[2 * LT_HIGH_PARTIES + 1]) *
				100 >=
			(__u64)LT_MAX_PARTIES * LT_FOLD_AT;
}

static int free_slot(struct lt_collector *c, struct bpf_map *names,
		     struct bpf_map *values, struct bpf_map *free,
		     const void *key, size_t value_size)
{
	__u32 slot;

	if (bpf_map_lookup_elem(bpf_map__fd(names), key, &slot) ||
	    bpf_map_delete_elem(bpf_map__fd(names), key))
		return -ENOENT;
	return queue_slot(c, values, free, slot, value_size);
}

/* Every slot is free when the probes load. */
static int fill_slots(struct lt_collector *c)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts);
	__u32 slot;

	for (slot = 0; slot < LT_MAX_LOCKS; slot++)
		c->slot_row[slot] = -1;
	for (slot = 0; slot < LT_MAX_PARTIES; slot++)
		c->party_row[slot] = -1;
	for (slot = 0; slot < LT_MAX_FILES; slot++) {
		c->file_row[slot] = -1;
		if (bpf_map_update_elem(
			    bpf_map__fd(c->fileio->maps.free_file_slots), NULL,
			    &slot, BPF_ANY))
			return -errno;
	}
	c->zero_values = calloc((size_t)c->ncpus, SLOT_VALUE_MAX);
	c->peek = calloc((size_t)c->ncpus, SLOT_VALUE_MAX);
	if (!c->zero_values || !c->peek)
		return -ENOMEM;
	if (bpf_prog_test_run_opts(
		    bpf_program__fd(c->reader->progs.lt_fill_slots), &opts) ||
	    bpf_prog_test_run_opts(
		    bpf_program__fd(c->filelock->progs.lt_fill_owners), &opts))
		return -errno;
	return c->reader->bss->fill_failed ||
			       c->filelock->bss->owners_fill_failed ?
		       -ENOSPC :
		       0;
}

/* A TID whose process ended before this read, or whose thread ended
 * before the read before. */
static bool tid_gone(const struct lt_collector *c, const struct tid_entry *t)
{
	return is_gone(c->gone, c->n_gone, t->tgid) ||
	       ended_tgid(c->stale_tids, c->n_stale_tids, t->tid);
}

/* The TIDs of ended processes, and of threads that ended a read ago:
 * another process may get them next. */
static void forget_tids(struct lt_collector *c)
{
	size_t i, k = 0, size;
	uint32_t *table;

	if (!c->n_gone && !c->n_stale_tids)
		return;
	for (i = 0; i < c->n_tids; i++)
		if (tid_gone(c, &c->tids[i]))
			break;
	if (i == c->n_tids)
		return;
	table = lt_index_table(c->n_tids, &size);
	if (!table)
		return; /* kept a while longer */
	for (i = 0; i < c->n_tids; i++)
		if (!tid_gone(c, &c->tids[i]))
			c->tids[k++] = c->tids[i];
	c->n_tids = k;
	lt_index_refill(&c->tid_ix, table, size, k, c->tids);
	lt_shrink((void **)&c->tids, &c->cap_tids, k, sizeof(*c->tids));
}

/*
 * Drops from the kernel's maps what only ended processes can touch: their
 * private locks and their locks' stacks, after this read took their last
 * figures. Our rows keep the totals; a PID that comes back starts anew.
 */
static void forget_processes(struct lt_collector *c)
{
	int wfd = bpf_map__fd(c->futex->maps.wheres);
	size_t i, n = c->n_gone;

	if (!n)
		return;
	for (i = 0; i < c->n_locks; i++) {
		const struct lt_lock_key *k = &c->lstate[i].key;

		if (!private_gone(c, k))
			continue;
		if (!free_slot(c, c->futex->maps.lock_slots,
			       c->futex->maps.stat_map,
			       c->futex->maps.free_slots, k,
			       sizeof(struct lt_lock_stat)) &&
		    c->snap.lock_entries)
			c->snap.lock_entries--; /* in use after this read */
		c->lstate[i].slot = -1;
		bpf_map_delete_elem(wfd, k);
		/* A PID that comes back may use the same address: its
		 * entry starts from zero, and so must what it is diffed
		 * against (the histograms wrap rather than restart). */
		memset(&c->lstate[i].raw, 0, sizeof(c->lstate[i].raw));
		if (!c->lstate[i].dead_at) {
			c->lstate[i].dead_at = mono_ns();
			c->n_dead++;
		}
	}
	/* Their locks' stacks, which the read of the stacks collected. */
	for (i = 0; i < c->n_doomed; i++)
		bpf_map_delete_elem(bpf_map__fd(c->futex->maps.lock_stacks),
				    &c->doomed[i]);
	c->n_doomed = 0;
	for (i = 0; i < c->n_sites;) {
		if (is_gone(c->gone, n, c->site_keys[i].tgid)) {
			bpf_map_delete_elem(bpf_map__fd(c->futex->maps.sites),
					    &c->site_keys[i]);
			c->site_keys[i] = c->site_keys[--c->n_sites];
		} else {
			i++;
		}
	}
	/* Their I/O figures; a PID that comes back starts from zero. */
	for (i = 0; i < n; i++) {
		struct proc_state key = { .tgid = c->gone[i] };
		ssize_t k = lt_index_find(&c->proc_ix, &key, c->pstate);

		bpf_map_delete_elem(bpf_map__fd(c->fileio->maps.proc_io),
				    &c->gone[i]);
		if (k < 0)
			continue;
		memset(&c->pstate[k].io, 0, sizeof(c->pstate[k].io));
		if (!c->pstate[k].dead_at) {
			c->pstate[k].dead_at = mono_ns();
			c->n_dead_procs++;
		}
	}
	for (i = 0; i < c->n_side; i++) {
		if (c->side[i].dead_at ||
		    !is_gone(c->gone, n, c->side[i].key.pid))
			continue;
		c->side[i].dead_at = mono_ns();
		c->n_dead_sides++;
	}
}

/*
 * The same of ended processes, then their parties and the holder parties
 * of threads that ended in processes that go on, which are named by TID:
 * a PID or TID that comes back starts anew.
 */
static void forget_exited(struct lt_collector *c)
{
	size_t i, n = c->n_gone;

	forget_processes(c);
	for (i = 0; i < c->n_party && (n || c->n_gone_tids); i++) {
		const struct lt_party_key *pk = &c->party[i].key;
		bool gone = pk->role == LT_ROLE_HOLDER &&
			    ended_tgid(c->gone_tids, c->n_gone_tids, pk->tgid);

		if (!gone && n)
			gone = is_gone(c->gone, n,
				       pk->role == LT_ROLE_HOLDER ?
					       (__u32)tgid_of(c, pk->tgid) :
					       pk->tgid) ||
			       private_gone(c, &pk->lock);
		if (gone) {
			free_slot(c, c->futex->maps.party_slots,
				  c->futex->maps.parties,
				  c->futex->maps.free_party_slots, pk,
				  sizeof(struct lt_party_stat));
			/* The same key again is a new party: a reused TID
			 * may belong to another process. */
			c->party[i].count = c->party[i].ns = 0;
			c->party[i].slot = -1;
			if (c->party[i].linked)
				c->n_unlinked++;
			c->party[i].linked = false;
		}
	}
	forget_tids(c);
}

/* ---- idle slots go back ---- */

/* What every event adds to: a lock's figures that only grow, summed. */
static uint64_t stat_mass(const struct lt_lock_stat *v)
{
	return v->waits + v->wait_ns + v->contended + v->acquires +
	       v->trylock_failures + v->hold_ns + v->wakes + v->timeouts +
	       v->interrupted + v->value_changed + v->owner_died +
	       v->deadlocks + v->io_under_lock_ns;
}

/* What a file's I/O adds to, summed. */
static uint64_t file_mass(const struct lt_file_stat *v)
{
	return v->reads + v->writes + v->read_bytes + v->write_bytes +
	       v->io_ns + v->io_under_lock_ns;
}

/* The kernel's maps of a slot kind: names, figures and free slots. */
struct slot_maps {
	struct bpf_map *names, *values, *free;
	size_t size; /* of one CPU's value */
};

static struct slot_maps maps_of(struct lt_collector *c,
				const struct idle_entry *e)
{
	switch (e->kind) {
	case SLOT_PARTY:
		return (struct slot_maps){ c->futex->maps.party_slots,
					   c->futex->maps.parties,
					   c->futex->maps.free_party_slots,
					   sizeof(struct lt_party_stat) };
	case SLOT_FILE:
		return (struct slot_maps){ c->fileio->maps.file_slots,
					   c->fileio->maps.file_stat,
					   c->fileio->maps.free_file_slots,
					   sizeof(struct lt_file_stat) };
	default:
		return (struct slot_maps){ c->futex->maps.lock_slots,
					   c->futex->maps.stat_map,
					   c->futex->maps.free_slots,
					   sizeof(struct lt_lock_stat) };
	}
}

/* The same of an idle entry, as the kernel has it now and as last read;
 * false when the kernel's values cannot be read. */
static bool masses(struct lt_collector *c, const struct idle_entry *e,
		   uint64_t *now, uint64_t *read)
{
	struct slot_maps m = maps_of(c, e);
	int cpu;

	if (bpf_map_lookup_elem(bpf_map__fd(m.values), &e->slot, c->peek))
		return false;
	*now = 0;
	for (cpu = 0; cpu < c->ncpus; cpu++) {
		const char *v = (const char *)c->peek + (size_t)cpu * m.size;

		if (e->kind == SLOT_PARTY)
			*now += ((const struct lt_party_stat *)v)->count +
				((const struct lt_party_stat *)v)->ns;
		else if (e->kind == SLOT_FILE)
			*now += file_mass((const struct lt_file_stat *)v);
		else
			*now += stat_mass((const struct lt_lock_stat *)v);
	}
	if (e->kind == SLOT_PARTY)
		*read = c->party[e->row].count + c->party[e->row].ns;
	else if (e->kind == SLOT_FILE)
		*read = file_mass(&c->fstate[e->row].raw);
	else
		*read = stat_mass(&c->lstate[e->row].raw);
	return true;
}

/* Every probe looks up again the slots it kept. */
static void advance_gen(struct lt_collector *c)
{
	__atomic_fetch_add(&c->futex->bss->slot_gen, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&c->filelock->bss->slot_gen, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&c->fileio->bss->slot_gen, 1, __ATOMIC_RELAXED);
}

/* The key an idle entry is named by in the kernel. */
static const void *idle_key(struct lt_collector *c, const struct idle_entry *e)
{
	switch (e->kind) {
	case SLOT_PARTY:
		return &c->party[e->row].key;
	case SLOT_FILE:
		return &c->fstate[e->row].key;
	default:
		return &c->lstate[e->row].key;
	}
}

/* Still idle: nothing moved since the read that chose it. */
static bool still_idle(struct lt_collector *c, const struct idle_entry *e)
{
	switch (e->kind) {
	case SLOT_PARTY:
		return c->party[e->row].slot == (__s32)e->slot &&
		       c->party[e->row].moved_at < c->idle_ns;
	case SLOT_FILE:
		return c->fstate[e->row].slot == (__s32)e->slot &&
		       c->fstate[e->row].moved_at < c->idle_ns;
	default:
		return c->lstate[e->row].slot == (__s32)e->slot &&
		       c->lstate[e->row].moved_at < c->idle_ns &&
		       !c->lstate[e->row].waited;
	}
}

/* The slot is free again: zeroed, queued, and its row starts anew. */
static void release(struct lt_collector *c, const struct idle_entry *e)
{
	struct slot_maps m = maps_of(c, e);

	if (queue_slot(c, m.values, m.free, e->slot, m.size))
		return;
	if (e->kind == SLOT_PARTY) {
		struct party_state *ps = &c->party[e->row];

		c->party_row[e->slot] = -1;
		ps->slot = -1;
		ps->count = ps->ns = 0; /* its next slot counts from 0 */
	} else if (e->kind == SLOT_FILE) {
		struct file_state *fs = &c->fstate[e->row];

		c->file_row[e->slot] = -1;
		fs->slot = -1;
		memset(&fs->raw, 0, sizeof(fs->raw));
		if (c->file_entries)
			c->file_entries--;
	} else {
		struct lock_state *s = &c->lstate[e->row];
		__u64 holder = s->raw.last_holder;

		c->slot_row[e->slot] = -1;
		s->slot = -1;
		memset(&s->raw, 0, sizeof(s->raw));
		s->raw.last_holder = holder;
		bpf_map_delete_elem(bpf_map__fd(c->futex->maps.wheres),
				    &s->key);
		if (c->snap.lock_entries)
			c->snap.lock_entries--;
	}
}

/* Queues an idle slot to go back at the next read. */
static bool choose(struct lt_collector *c, enum slot_kind kind, size_t row,
		   __s32 slot)
{
	if (lt_grow((void **)&c->idle, &c->cap_idle, c->n_idle + 1,
		    sizeof(*c->idle)))
		return false;
	c->idle[c->n_idle++] = (struct idle_entry){ .kind = kind,
						    .row = row,
						    .slot = (__u32)slot };
	return true;
}

/*
 * When the kernel's lock or file map is more than a quarter full, the
 * slots of locks, parties and files idle for retire_s seconds
 * (LT_RETIRE_S when it is 0) go back, so that a long run on a host that
 * keeps meeting new locks (byte ranges, files, shared memory) or reading
 * new files keeps room for them; their rows and totals stay. It takes two
 * reads. The first chooses and advances slot_gen, so the probes look up
 * again any slot they kept. The next takes the names of those still idle
 * out of the kernel's maps, so no probe finds them, advances it again (a
 * slot found by its name in between is not used either), waits a moment
 * for a probe that found one just before, and then gives back each slot
 * whose figures did not move.
 * One that moved keeps its name back; if it cannot (its next event took
 * a new slot meanwhile) what it gained is lost, and counted as a drop.
 * The row of a slot that went back counts from zero against the next
 * slot its lock, party or file takes.
 */
#define RECLAIM_FILL 4 /* a map more than 1/RECLAIM_FILL full is trimmed */

/* The fullest of the kernel's lock, party and file maps, in percent. */
static unsigned int fill_percent(const struct lt_collector *c)
{
	uint64_t l = c->snap.lock_entries * 100 / LT_MAX_LOCKS,
		 p = c->snap.party_entries * 100 / LT_MAX_PARTIES,
		 f = (uint64_t)c->file_entries * 100 / LT_MAX_FILES;

	return (unsigned int)(l > p ? (l > f ? l : f) : (p > f ? p : f));
}

/*
 * How long a slot must have been idle to go back: the retire time while
 * the maps have room, an eighth of it past half full, and two intervals
 * past three quarters, so a store that keeps meeting new byte ranges
 * (tdb's record locks at moving offsets) finds room for the next ones.
 */
static uint64_t idle_age(const struct lt_collector *c, uint64_t age)
{
	uint64_t least = 2ULL * c->interval_ms * 1000000ULL, cut = age;
	unsigned int fill = fill_percent(c);

	if (fill >= 75)
		cut = least;
	else if (fill >= 50)
		cut = age / 8 > least ? age / 8 : least;
	return cut < age ? cut : age;
}

static void reclaim_slots(struct lt_collector *c)
{
	const struct timespec grace = { .tv_nsec = 2000000L };
	/* Rows kept for the whole run still let idle slots go, then. */
	uint64_t age = (uint64_t)(c->retire_s ? c->retire_s : LT_RETIRE_S) *
		       1000000000ULL,
		 now, read;
	bool any = false;
	size_t i;

	for (i = 0; i < c->n_idle; i++) {
		struct idle_entry *e = &c->idle[i];

		e->named = !still_idle(c, e) ||
			   bpf_map_delete_elem(bpf_map__fd(maps_of(c, e).names),
					       idle_key(c, e));
		any |= !e->named;
	}
	if (any) {
		/* A slot kept since before the names went is not used. */
		advance_gen(c);
		nanosleep(&grace, NULL);
	}
	for (i = 0; i < c->n_idle; i++) {
		const struct idle_entry *e = &c->idle[i];

		if (e->named)
			continue;
		if (!masses(c, e, &now, &read))
			continue; /* not reached: the slot stays taken */
		if (now == read) {
			release(c, e);
			continue;
		}
		if (!bpf_map_update_elem(bpf_map__fd(maps_of(c, e).names),
					 idle_key(c, e), &e->slot, BPF_NOEXIST))
			continue; /* named again: read as ever */
		c->own_drops++;
		release(c, e);
	}
	c->n_idle = 0;

	/* Nothing becomes due faster: a busy full map is not scanned on
	 * every read. */
	age = idle_age(c, age);
	if (fill_percent(c) * RECLAIM_FILL < 100 ||
	    c->read_ns - c->scanned_ns < age / 4)
		return;
	c->scanned_ns = c->read_ns;
	for (i = 0; i < c->n_locks; i++) {
		const struct lock_state *s = &c->lstate[i];

		if (s->slot < 0 || s->waited || s->dead_at ||
		    c->read_ns - s->moved_at < age)
			continue;
		if (!choose(c, SLOT_LOCK, i, s->slot))
			break;
	}
	for (i = 0; i < c->n_party; i++) {
		const struct party_state *ps = &c->party[i];

		if (!ps->linked || ps->slot < 0 ||
		    c->read_ns - ps->moved_at < age)
			continue;
		if (!choose(c, SLOT_PARTY, i, ps->slot))
			break;
	}
	for (i = 0; i < c->n_files; i++) {
		const struct file_state *fs = &c->fstate[i];

		if (fs->slot < 0 || c->read_ns - fs->moved_at < age)
			continue;
		if (!choose(c, SLOT_FILE, i, fs->slot))
			break;
	}
	if (!c->n_idle)
		return;
	advance_gen(c);
	c->idle_ns = c->read_ns;
}

/* ---- retiring rows ---- */

#define RETIRE_MIN 256 /* rows retired at once, at least */
/* The most rows kept of locks and of files whose slots went back. */
#define LT_ASLEEP_LOCKS (2 * LT_MAX_LOCKS)
#define LT_ASLEEP_FILES (2 * LT_MAX_FILES)

/* Renumbers the row positions in list by map, dropping those it drops. */
static void remap_list(size_t *list, size_t *n, const ssize_t *map)
{
	size_t i, k = 0;

	for (i = 0; i < *n; i++)
		if (map[list[i]] >= 0)
			list[k++] = (size_t)map[list[i]];
	*n = k;
}

/* Renumbers a slot -> row table by map: a slot's row that goes is -1. */
static void remap_rows(ssize_t *rows, size_t n, const ssize_t *map)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (rows[i] >= 0)
			rows[i] = map[rows[i]];
}

/*
 * The new position of each entry that keep() keeps, -1 for the others;
 * returns how many are kept.
 */
static size_t plan_rows(ssize_t *map, size_t n, size_t *kept)
{
	size_t i, k = 0;

	for (i = 0; i < n; i++)
		map[i] = map[i] < 0 ? -1 : (ssize_t)k++;
	*kept = k;
	return n - k;
}

/* Whether an entry that became unreachable at dead_at is due to go. */
static bool due(uint64_t dead_at, uint64_t now, uint64_t age)
{
	return dead_at && now - dead_at >= age;
}

/* A row whose slot went back, by when its figures last moved. */
struct asleep {
	uint64_t moved_at;
	size_t row;
};

static int cmp_asleep(const void *a, const void *b)
{
	const struct asleep *x = a, *y = b;

	if (x->moved_at != y->moved_at)
		return x->moved_at < y->moved_at ? -1 : 1;
	return x->row < y->row ? -1 : x->row > y->row;
}

/*
 * Of the n rows in list, whose slots went back, the longest idle leave
 * map when there are more than cap: down to three quarters of cap, so
 * that this is rare.
 */
static void drop_oldest(struct asleep *list, size_t n, size_t cap, ssize_t *map)
{
	size_t i;

	if (n <= cap)
		return;
	qsort(list, n, sizeof(*list), cmp_asleep);
	for (i = 0; i < n - cap / 4 * 3; i++)
		map[list[i].row] = -1;
}

/* Whether choose_asleep() has work: too many rows without slots, and
 * not counted in the last quarter of the retire time. */
static bool asleep_due(const struct lt_collector *c, uint64_t age)
{
	return (c->n_locks > c->snap.lock_entries + LT_ASLEEP_LOCKS ||
		c->n_files > c->file_entries + LT_ASLEEP_FILES) &&
	       c->read_ns - c->asleep_ns >= age / 4;
}

/*
 * The rows of locks and files whose slots went back (idle for the retire
 * time while the kernel's map was more than a quarter full) stay, with
 * their totals, for when they come back. Past LT_ASLEEP_LOCKS and
 * LT_ASLEEP_FILES of them the longest idle go too, so that a run that
 * keeps meeting new locks and files (byte ranges, temporary files, the
 * mutexes of short-lived objects) stays bounded. A lock whose holder or
 * waiter entries still have slots stays. Counted at most four times per
 * retire time (asleep_due()): rows lose their slots no faster.
 */
static void choose_asleep(struct lt_collector *c, ssize_t *lmap, ssize_t *fmap)
{
	struct asleep *list;
	bool *pinned;
	size_t i, n;

	c->asleep_ns = c->read_ns;
	list = calloc(c->n_locks > c->n_files ? c->n_locks : c->n_files,
		      sizeof(*list));
	pinned = calloc(c->n_locks + 1, sizeof(*pinned));
	if (!list || !pinned)
		goto out;
	for (i = 0; i < c->n_party; i++)
		if (c->party[i].linked && c->party[i].slot >= 0)
			pinned[c->party[i].lock] = true;
	for (i = n = 0; i < c->n_locks; i++) {
		const struct lock_state *s = &c->lstate[i];

		if (lmap[i] >= 0 && s->slot < 0 && !s->dead_at && !s->waited &&
		    s->live != c->reads && !pinned[i])
			list[n++] = (struct asleep){ s->moved_at, i };
	}
	drop_oldest(list, n, LT_ASLEEP_LOCKS, lmap);
	for (i = n = 0; i < c->n_files; i++)
		if (c->fstate[i].slot < 0)
			list[n++] = (struct asleep){ c->fstate[i].moved_at, i };
	drop_oldest(list, n, LT_ASLEEP_FILES, fmap);
out:
	free(list);
	free(pinned);
}

/*
 * Drops what no process can reach any more, retire_s seconds after it
 * became so: the rows of an ended process's private locks (their slots
 * in the kernel went back at its end, see forget_exited()), the
 * process's own row and its sides of the locks that stay (their top
 * lists keep its figures), with every party of any of these, and the
 * parties forget_exited() unlinked; and past a bound, the rows of locks
 * and files idle long enough to lose their slots (choose_asleep()). The
 * entries left move down to close the gaps, and every position kept
 * elsewhere is renumbered; lock ids stay. It works in batches of
 * RETIRE_MIN entries at least, and gives up for this read, changing
 * nothing, when the memory it needs is not there.
 */
static void retire_rows(struct lt_collector *c)
{
	uint64_t now = mono_ns(), age = (uint64_t)c->retire_s * 1000000000ULL;
	size_t i, n_locks = c->n_locks, n_party = c->n_party;
	size_t n_side = c->n_side, n_procs = c->n_procs, n_files = c->n_files;
	size_t keep_l, keep_p, keep_s, keep_r, keep_f, gone;
	size_t lsz, psz, ssz, rsz, fsz;
	ssize_t *lmap, *pmap, *smap, *rmap, *fmap;
	uint32_t *lt = NULL, *pt = NULL, *st = NULL, *rt = NULL, *ft = NULL;

	if (!c->retire_s ||
	    (c->n_dead < RETIRE_MIN && c->n_dead_sides < RETIRE_MIN &&
	     c->n_dead_procs < RETIRE_MIN && c->n_unlinked < RETIRE_MIN &&
	     !asleep_due(c, age)))
		return;
	lmap = calloc(n_locks + 1, sizeof(*lmap));
	pmap = calloc(n_party + 1, sizeof(*pmap));
	smap = calloc(n_side + 1, sizeof(*smap));
	rmap = calloc(n_procs + 1, sizeof(*rmap));
	fmap = calloc(n_files + 1, sizeof(*fmap));
	if (!lmap || !pmap || !smap || !rmap || !fmap)
		goto out;
	for (i = 0; i < n_locks; i++) {
		const struct lock_state *s = &c->lstate[i];

		if (due(s->dead_at, now, age) && s->live != c->reads &&
		    !s->waited)
			lmap[i] = -1;
	}
	if (asleep_due(c, age))
		choose_asleep(c, lmap, fmap);
	for (i = 0; i < n_procs; i++)
		if (due(c->pstate[i].dead_at, now, age))
			rmap[i] = -1;
	for (i = 0; i < n_side; i++) {
		ssize_t l = lt_index_find(&c->lock_ix, &c->side[i].key.lock,
					  c->lstate);

		if (due(c->side[i].dead_at, now, age) ||
		    (l >= 0 && lmap[l] < 0))
			smap[i] = -1;
	}
	for (i = 0; i < n_party; i++) {
		const struct party_state *ps = &c->party[i];

		if (!ps->linked || lmap[ps->lock] < 0 || smap[ps->side] < 0 ||
		    rmap[ps->proc] < 0)
			pmap[i] = -1;
	}
	gone = plan_rows(lmap, n_locks, &keep_l);
	gone += plan_rows(pmap, n_party, &keep_p);
	gone += plan_rows(smap, n_side, &keep_s);
	gone += plan_rows(rmap, n_procs, &keep_r);
	gone += plan_rows(fmap, n_files, &keep_f);
	if (gone < RETIRE_MIN)
		goto out;
	lt = lt_index_table(keep_l, &lsz);
	pt = lt_index_table(keep_p, &psz);
	st = lt_index_table(keep_s, &ssz);
	rt = lt_index_table(keep_r, &rsz);
	ft = lt_index_table(keep_f, &fsz);
	if (!lt || !pt || !st || !rt || !ft)
		goto out;

	/* Nothing below can fail. */
	for (i = 0; i < n_locks; i++) {
		if (lmap[i] < 0) {
			free(c->lstate[i].pids);
			free(c->lstate[i].stack);
			if (c->lstate[i].dead_at)
				c->n_dead--;
		} else if ((size_t)lmap[i] != i) {
			c->locks[lmap[i]] = c->locks[i];
			c->lstate[lmap[i]] = c->lstate[i];
		}
	}
	c->n_locks = keep_l;
	c->n_idle = 0; /* chosen by rows that moved: chosen again later */
	lt_index_refill(&c->lock_ix, lt, lsz, keep_l, c->lstate);
	lt = NULL;
	remap_list(c->live, &c->n_live, lmap);
	remap_list(c->was_live, &c->n_was_live, lmap);
	remap_list(c->waited, &c->n_waited, lmap);
	remap_list(c->fresh, &c->n_fresh, lmap);

	remap_rows(c->slot_row, LT_MAX_LOCKS, lmap);

	for (i = 0; i < n_procs; i++) {
		if (rmap[i] < 0) {
			c->n_dead_procs--;
		} else if ((size_t)rmap[i] != i) {
			c->procs[rmap[i]] = c->procs[i];
			c->pstate[rmap[i]] = c->pstate[i];
		}
	}
	c->n_procs = keep_r;
	lt_index_refill(&c->proc_ix, rt, rsz, keep_r, c->pstate);
	rt = NULL;

	for (i = 0; i < n_side; i++) {
		if (smap[i] < 0) {
			if (c->side[i].dead_at)
				c->n_dead_sides--;
		} else if ((size_t)smap[i] != i) {
			c->side[smap[i]] = c->side[i];
		}
	}
	c->n_side = keep_s;
	lt_index_refill(&c->side_ix, st, ssz, keep_s, c->side);
	st = NULL;

	for (i = 0; i < n_party; i++) {
		struct party_state *ps = &c->party[i];

		if (pmap[i] < 0) {
			if (!ps->linked)
				c->n_unlinked--;
			continue;
		}
		ps->lock = (size_t)lmap[ps->lock];
		ps->side = (size_t)smap[ps->side];
		ps->proc = (size_t)rmap[ps->proc];
		if ((size_t)pmap[i] != i)
			c->party[pmap[i]] = *ps;
	}
	c->n_party = keep_p;
	lt_index_refill(&c->party_ix, pt, psz, keep_p, c->party);
	pt = NULL;
	remap_rows(c->party_row, LT_MAX_PARTIES, pmap);

	for (i = 0; i < n_files; i++) {
		if (fmap[i] >= 0 && (size_t)fmap[i] != i) {
			c->files[fmap[i]] = c->files[i];
			c->fstate[fmap[i]] = c->fstate[i];
		}
	}
	c->n_files = keep_f;
	lt_index_refill(&c->file_ix, ft, fsz, keep_f, c->fstate);
	ft = NULL;
	remap_rows(c->file_row, LT_MAX_FILES, fmap);
	/* What a burst of short-lived processes took goes back. */
	lt_shrink((void **)&c->locks, &c->cap_locks, c->n_locks,
		  sizeof(*c->locks));
	lt_shrink((void **)&c->lstate, &c->cap_lstate, c->n_locks,
		  sizeof(*c->lstate));
	lt_shrink((void **)&c->procs, &c->cap_procs, c->n_procs,
		  sizeof(*c->procs));
	lt_shrink((void **)&c->pstate, &c->cap_pstate, c->n_procs,
		  sizeof(*c->pstate));
	lt_shrink((void **)&c->side, &c->cap_side, c->n_side, sizeof(*c->side));
	lt_shrink((void **)&c->party, &c->cap_party, c->n_party,
		  sizeof(*c->party));
	lt_shrink((void **)&c->files, &c->cap_files, c->n_files,
		  sizeof(*c->files));
	lt_shrink((void **)&c->fstate, &c->cap_fstate, c->n_files,
		  sizeof(*c->fstate));
out:
	free(lt);
	free(pt);
	free(st);
	free(rt);
	free(ft);
	free(lmap);
	free(pmap);
	free(smap);
	free(rmap);
	free(fmap);
}

/* ---- in-flight waits: waiters now, the wait-for graph ---- */

static int merge_inflight(struct lt_collector *c, const void *rec)
{
	const struct lt_inflight *in = rec;
	uint64_t now = mono_ns();
	struct lt_lock *l;
	ssize_t i;

	if (!in->ts || (in->lock.kind >= LT_PK_FCNTL &&
			in->lock.kind <= LT_PK_FLOCK && !in->lock.ino))
		return 0; /* a file lock call not yet inside the lock code */
	i = lt_index_find(&c->lock_ix, &in->lock, c->lstate);
	if (i < 0) {
		/* Nobody finished a wait on it yet; it is still a lock. */
		i = lock_add(c, &in->lock);
		if (i < 0)
			return (int)i;
		if (in->lock.kind <= LT_PK_FUTEX_PI ||
		    in->lock.kind == LT_PK_FUTEX_COND)
			c->locks[i].address = in->uaddr;
		if (add_pid(c, (size_t)i, (pid_t)in->tgid))
			return -ENOMEM;
	}
	l = &c->locks[i];
	if (c->lstate[i].dead_at) {
		c->lstate[i].dead_at = 0;
		c->n_dead--;
	}
	l->waiters_now++;
	if (!c->lstate[i].waited) {
		c->lstate[i].waited = true;
		if (push_index(&c->waited, &c->n_waited, &c->cap_waited,
			       (size_t)i))
			return -ENOMEM;
	}
	if (!in->holder || !lt_kind_is_lock(l->kind) || now < in->ts ||
	    now - in->ts < CYCLE_MIN_AGE_NS)
		return 0;
	if (lt_grow((void **)&c->edges, &c->cap_edges, c->n_edges + 1,
		    sizeof(*c->edges)))
		return -ENOMEM;
	c->edges[c->n_edges].waiter = (pid_t)in->tgid;
	c->edges[c->n_edges].holder = tgid_of(c, in->holder);
	c->edges[c->n_edges].lock = l->id;
	c->n_edges++;
	return 0;
}

static const struct edge *edge_from(const struct lt_collector *c, pid_t w,
				    size_t skip)
{
	size_t i;

	for (i = 0; i < c->n_edges; i++)
		if (c->edges[i].waiter == w && !skip--)
			return &c->edges[i];
	return NULL;
}

static bool cycle_known(const struct lt_collector *c, pid_t lowest)
{
	size_t i, j;

	for (i = 0; i < c->n_deadlocks; i++)
		for (j = 0; j < c->deadlocks[i].n; j++)
			if (c->deadlocks[i].pids[j] == lowest)
				return true;
	return false;
}

/*
 * Follows waiter -> holder from each waiter; returning to the start is a
 * deadlock. Each process waits on few locks, so a walk that takes each
 * process's first edge finds the cycles that matter.
 */
static void find_cycles(struct lt_collector *c)
{
	struct lt_deadlock d;
	size_t i, k;

	c->n_deadlocks = 0;
	for (i = 0; i < c->n_edges; i++) {
		pid_t start = c->edges[i].waiter, at = start, lowest = start;
		const struct edge *e = &c->edges[i];

		memset(&d, 0, sizeof(d));
		for (k = 0; k < LT_CYCLE_MAX; k++) {
			d.pids[d.n] = at;
			d.locks[d.n] = e->lock;
			d.n++;
			if (at < lowest)
				lowest = at;
			at = e->holder;
			if (at == start || at <= 0)
				break;
			e = edge_from(c, at, 0);
			if (!e)
				break;
		}
		if (at != start || d.n < 2 || cycle_known(c, lowest))
			continue;
		if (lt_grow((void **)&c->deadlocks, &c->cap_deadlocks,
			    c->n_deadlocks + 1, sizeof(*c->deadlocks)))
			return;
		for (k = 0; k < d.n; k++)
			read_comm(c, d.pids[k], d.comms[k]);
		c->deadlocks[c->n_deadlocks++] = d;
	}
}

static int read_inflight(struct lt_collector *c)
{
	size_t i;
	int err;

	for (i = 0; i < c->n_waited; i++) {
		c->locks[c->waited[i]].waiters_now = 0;
		c->lstate[c->waited[i]].waited = false;
	}
	c->n_waited = 0;
	c->n_edges = 0;
	err = run_reader(c, c->reader->progs.lt_read_waits, c->wait_out,
			 sizeof(*c->wait_out), &c->reader->bss->n_waits,
			 merge_inflight);
	if (err)
		return err;
	find_cycles(c);
	return 0;
}

/* ---- stacks ---- */

static int merge_stack(struct lt_collector *c, const void *key,
		       const void *value)
{
	const struct lt_stack_key *sk = key;
	const struct lt_stack_stat *percpu = value;
	uint64_t ns = 0, tgid = 0;
	struct lock_state *s;
	ssize_t i;
	int cpu;

	i = lt_index_find(&c->lock_ix, &sk->lock, c->lstate);
	if (i < 0)
		return 0;
	for (cpu = 0; cpu < c->ncpus; cpu++) {
		ns += percpu[cpu].ns;
		if (percpu[cpu].tgid)
			tgid = percpu[cpu].tgid;
	}
	s = &c->lstate[i];
	if (ns > s->top_stack_ns) {
		s->top_stack_ns = ns;
		s->top_stack = sk->stack_id;
		s->top_stack_pid = (pid_t)tgid;
	}
	/* No process can wait there again: forget_exited() takes it from
	 * the kernel's map once this read has its figures (the text shown
	 * stays). */
	if (c->n_gone && private_gone(c, &sk->lock)) {
		if (lt_grow((void **)&c->doomed, &c->cap_doomed,
			    c->n_doomed + 1, sizeof(*c->doomed)))
			return -ENOMEM;
		c->doomed[c->n_doomed++] = *sk;
	}
	return 0;
}

/*
 * The frames of a stack: unwound with CFI from the snapshot of its first
 * wait, or as far as the kernel's frame-pointer walk went (which, in code
 * without frame pointers, runs into data after the first frame).
 */
static int stack_frames(struct lt_collector *c, const struct lt_stack_key *sk,
			pid_t pid, __u64 *ips)
{
	__u32 id = (__u32)sk->stack_id;
	int n = 0, k;

	if (!bpf_map_lookup_elem(bpf_map__fd(c->futex->maps.stack_snaps), sk,
				 c->snap_buf))
		n = lt_unwind(c->syms, pid, (const uint64_t *)c->snap_buf->regs,
			      c->snap_buf->data, c->snap_buf->len,
			      (uint64_t *)ips, LT_STACK_DEPTH);
	if (n > 1)
		return n;
	if (bpf_map_lookup_elem(bpf_map__fd(c->futex->maps.stacks), &id, ips))
		return 0;
	for (k = 0; k < LT_STACK_DEPTH && ips[k] >= 0x10000; k++)
		;
	return k;
}

/* A stack as text, one frame a line; NULL if it has no frames. */
static char *stack_text(struct lt_collector *c, const struct lt_stack_key *sk,
			pid_t pid)
{
	__u64 ips[LT_STACK_DEPTH];
	size_t len = 0, cap = LT_STACK_DEPTH * (LT_SYM_LEN + 1);
	char *text, line[LT_SYM_LEN];
	int k, n;

	n = stack_frames(c, sk, pid, ips);
	if (!n)
		return NULL;
	text = malloc(cap);
	if (!text)
		return NULL;
	text[0] = '\0';
	for (k = 0; k < n; k++) {
		/* Past a frame nothing can name, the walk is not to be
		 * trusted: the process is gone, or the frames are data. */
		if (!lt_symbolize(c->syms, pid, ips[k], line, sizeof(line))) {
			if (k)
				break;
			snprintf(line, sizeof(line), "0x%llx",
				 (unsigned long long)ips[k]);
		}
		len += snprintf(text + len, cap - len, "%s%s", len ? "\n" : "",
				line);
		if (len >= cap)
			break;
	}
	return text;
}

/*
 * Unwinds the stacks the probes kept since the last look, at once, while
 * their processes most likely live: a short-lived one may be gone by the
 * next read, and its modules with it.
 */
static void resolve_snaps(struct lt_collector *c)
{
	int qfd = bpf_map__fd(c->futex->maps.new_snaps);
	int sfd = bpf_map__fd(c->futex->maps.stack_snaps);
	struct lt_stack_key sk;
	bool created;
	ssize_t i;

	while (!bpf_map_lookup_and_delete_elem(qfd, NULL, &sk)) {
		if (bpf_map_lookup_elem(sfd, &sk, c->snap_buf))
			continue;
		i = state_of(&c->stext_ix, (void **)&c->stexts, &c->n_stexts,
			     &c->cap_stexts, sizeof(*c->stexts), &sk,
			     sizeof(sk), &created);
		if (i >= 0 && created)
			c->stexts[i].text =
				stack_text(c, &sk, (pid_t)c->snap_buf->tgid);
		/* The text is ours now: the snapshot's room goes to the
		 * next new stack. */
		bpf_map_delete_elem(sfd, &sk);
	}
}

/* The lock's worst stack as text, one frame a line. */
static void show_stack(struct lt_collector *c, struct lock_state *s)
{
	struct lt_stack_key sk = { .lock = s->key, .stack_id = s->top_stack };
	ssize_t i;
	char *text;

	if (s->top_stack < 0 || s->top_stack == s->shown_stack)
		return;
	i = lt_index_find(&c->stext_ix, &sk, c->stexts);
	if (i >= 0 && c->stexts[i].text)
		text = strdup(c->stexts[i].text);
	else
		text = stack_text(c, &sk, s->top_stack_pid);
	if (!text)
		return;
	free(s->stack);
	s->stack = text;
	s->shown_stack = s->top_stack;
}

static int read_stacks(struct lt_collector *c)
{
	size_t i;
	int err;

	for (i = 0; i < c->n_locks; i++)
		c->lstate[i].top_stack_ns = 0;
	c->n_doomed = 0;
	err = for_each_entry(c, bpf_map__fd(c->futex->maps.lock_stacks),
			     sizeof(struct lt_stack_key),
			     sizeof(struct lt_stack_stat), true, merge_stack,
			     NULL);
	if (err)
		return err;
	for (i = 0; i < c->n_locks; i++) {
		show_stack(c, &c->lstate[i]);
		c->locks[i].stack = c->lstate[i].stack;
	}
	return 0;
}

/* ---- files ---- */

/* The row of the file in slot, made on its first sight and named from
 * what the probe kept; -1 when out of memory. */
static ssize_t file_row_of(struct lt_collector *c, __u32 slot)
{
	struct lt_file_where w;
	struct lt_file_key key;
	struct lt_file *f;
	ssize_t i;

	if (bpf_map_lookup_elem(bpf_map__fd(c->fileio->maps.file_keys), &slot,
				&key))
		return -1;
	i = lt_index_find(&c->file_ix, &key, c->fstate);
	if (i < 0) {
		i = (ssize_t)c->n_files;
		if (lt_grow((void **)&c->files, &c->cap_files, i + 1,
			    sizeof(*c->files)) ||
		    lt_grow((void **)&c->fstate, &c->cap_fstate, i + 1,
			    sizeof(*c->fstate)))
			return -1;
		memset(&c->fstate[i], 0, sizeof(c->fstate[i]));
		c->fstate[i].key = key;
		if (lt_index_add(&c->file_ix, i, c->fstate))
			return -1;
		c->n_files++;
		memset(&c->files[i], 0, sizeof(c->files[i]));
	} else if (c->fstate[i].slot >= 0) {
		return -1; /* not reached: one file, one slot */
	}
	/* A file met again after its slot went back may be another file
	 * on a reused inode: it is named anew. */
	f = &c->files[i];
	f->dev = key.dev;
	f->ino = key.ino;
	if (bpf_map_lookup_elem(bpf_map__fd(c->fileio->maps.file_where), &slot,
				&w) ||
	    !w.tgid) {
		snprintf(f->name, sizeof(f->name), "inode %llu",
			 (unsigned long long)f->ino);
	} else if (!fd_path(w.tgid, w.fd, f->dev, f->ino, f->name,
			    sizeof(f->name))) {
		w.name[sizeof(w.name) - 1] = '\0';
		if (w.name[0])
			snprintf(f->name, sizeof(f->name), "%s", w.name);
		else
			snprintf(f->name, sizeof(f->name), "inode %llu",
				 (unsigned long long)f->ino);
	}
	c->fstate[i].slot = (__s32)slot;
	memset(&c->fstate[i].raw, 0, sizeof(c->fstate[i].raw));
	c->file_row[slot] = i;
	c->file_entries++;
	return i;
}

/* Adds what moved in a file's slot, summed over the CPUs, to its row. */
static void merge_file(struct lt_collector *c, size_t i,
		       const struct lt_file_stat *percpu, size_t stride)
{
	struct file_state *s = &c->fstate[i];
	struct lt_file *f = &c->files[i];
	struct lt_file_stat sum = { 0 };
	int cpu, b;

	for (cpu = 0; cpu < c->ncpus; cpu++) {
		const struct lt_file_stat *v =
			(const void *)((const char *)percpu +
				       (size_t)cpu * stride);

		sum.reads += v->reads;
		sum.writes += v->writes;
		sum.read_bytes += v->read_bytes;
		sum.write_bytes += v->write_bytes;
		sum.io_ns += v->io_ns;
		sum.io_under_lock_ns += v->io_under_lock_ns;
		for (b = 0; b < LT_HIST_SLOTS; b++)
			sum.hist[b] += v->hist[b];
	}
	if (file_mass(&sum) != file_mass(&s->raw))
		s->moved_at = c->read_ns;
#define FDELTA(field)                                           \
	do {                                                    \
		f->delta.field = diff(sum.field, s->raw.field); \
		f->total.field += f->delta.field;               \
	} while (0)
	FDELTA(reads);
	FDELTA(writes);
	FDELTA(read_bytes);
	FDELTA(write_bytes);
	FDELTA(io_ns);
	FDELTA(io_under_lock_ns);
#undef FDELTA
	hist_delta(f->delta.io_hist, f->total.io_hist, sum.hist, s->raw.hist);
	for (b = 0; b < LT_HIST_SLOTS; b++)
		c->snap.io_hist_delta[b] += f->delta.io_hist[b];
	s->raw = sum;
}

/*
 * Reads the file slots ever handed out, in batches. A slot not yet
 * linked to a row with nothing in it is free, or taken by a probe that
 * has not counted yet.
 */
static int read_files(struct lt_collector *c)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	size_t stride = (sizeof(struct lt_file_stat) + 7) & ~7UL;
	size_t vsz = stride * (size_t)c->ncpus;
	__u32 which = LT_HIGH_FILES, done = 0, last = 0, count, k;
	__u64 high = 0;
	ssize_t row;
	int err;

	if (bpf_map_lookup_elem(bpf_map__fd(c->futex->maps.slot_high), &which,
				&high))
		return -errno;
	if (high > LT_MAX_FILES)
		high = LT_MAX_FILES;
	if (c->keybuf_len < BATCH * sizeof(__u32)) {
		free(c->keybuf);
		c->keybuf = malloc(BATCH * sizeof(__u32));
		c->keybuf_len = c->keybuf ? BATCH * sizeof(__u32) : 0;
	}
	if (c->valbuf_len < BATCH * vsz) {
		free(c->valbuf);
		c->valbuf = malloc(BATCH * vsz);
		c->valbuf_len = c->valbuf ? BATCH * vsz : 0;
	}
	if (!c->keybuf || !c->valbuf)
		return -ENOMEM;
	/* An array's batch goes on after the last key it gave. */
	while (done < high) {
		count = (__u32)(high - done) < BATCH ? (__u32)(high - done) :
						       BATCH;
		err = bpf_map_lookup_batch(
			bpf_map__fd(c->fileio->maps.file_stat),
			done ? &last : NULL, &last, c->keybuf, c->valbuf,
			&count, &opts);
		if (err && err != -ENOENT)
			return err;
		for (k = 0; k < count; k++) {
			__u32 slot = ((const __u32 *)c->keybuf)[k];
			const struct lt_file_stat *v =
				(const void *)((char *)c->valbuf + k * vsz);

			if (slot >= LT_MAX_FILES)
				continue;
			row = c->file_row[slot];
			if (row < 0) {
				uint64_t mass = 0;
				int cpu;

				for (cpu = 0; cpu < c->ncpus; cpu++)
					mass += file_mass(
						(const void *)((const char *)v +
							       cpu * stride));
				if (!mass)
					continue;
				row = file_row_of(c, slot);
				if (row < 0)
					continue;
			}
			merge_file(c, (size_t)row, v, stride);
		}
		if (err || !count)
			break;
		done += count;
	}
	return 0;
}

/* ---- cost ---- */

/* What the kernel's statistics say of obj's programs, summed. */
static void prog_stats(struct bpf_object *obj, uint64_t *cnt, uint64_t *ns)
{
	struct bpf_program *prog;

	*cnt = *ns = 0;
	bpf_object__for_each_program(prog, obj) {
		struct bpf_prog_info info = { 0 };
		__u32 len = sizeof(info);
		int fd = bpf_program__fd(prog);

		if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len))
			continue;
		*cnt += info.run_cnt;
		*ns += info.run_time_ns;
	}
}

/* The runs each probe object counted, summed over CPUs. */
static void read_runs(struct lt_collector *c, uint64_t *runs)
{
	int fd = bpf_map__fd(c->futex->maps.runs);
	__u64 *v = calloc((size_t)c->ncpus, sizeof(*v));
	__u32 k;
	int cpu;

	for (k = 0; k < LT_OBJ_NR; k++) {
		runs[k] = 0;
		if (!v || bpf_map_lookup_elem(fd, &k, v))
			continue;
		for (cpu = 0; cpu < c->ncpus; cpu++)
			runs[k] += v[cpu];
	}
	free(v);
}

/*
 * The statistics' sampling windows. One opens when the probes load and
 * then at every LT_STATS_EVERYth read, LT_STATS_GAP_S after the last at
 * the earliest. It closes once it measured enough runs (see
 * window_close()), after LT_STATS_WINDOW_MS at least and a second at
 * most, so the statistics are on a few percent of the time. The kernel keeps them on while
 * anyone holds a descriptor; closing ours restores what was there.
 */
static void window_open(struct lt_collector *c)
{
	struct bpf_object *objs[PROBE_NR] = { c->futex->obj, c->filelock->obj,
					      c->fileio->obj };
	size_t i;

	if (c->stats_fd < 0)
		c->stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	if (c->stats_fd < 0)
		return;
	for (i = 0; i < PROBE_NR; i++)
		prog_stats(objs[i], &c->win_cnt[i], &c->win_ns[i]);
	c->win_opened = mono_ns();
}

/*
 * What the open window measured so far becomes each object's cost per
 * run; when the window closes (final), it joins the sampled totals.
 */
static void window_take(struct lt_collector *c, bool final)
{
	struct bpf_object *objs[PROBE_NR] = { c->futex->obj, c->filelock->obj,
					      c->fileio->obj };
	uint64_t cnt, ns;
	size_t i;

	for (i = 0; i < PROBE_NR; i++) {
		struct lt_probe_cost *pc = &c->probes[i];

		prog_stats(objs[i], &cnt, &ns);
		if (cnt <= c->win_cnt[i])
			continue;
		cnt -= c->win_cnt[i];
		ns -= c->win_ns[i];
		/* A few runs do not replace a figure from many. */
		if (cnt >= LT_STATS_MIN_RUNS || cnt >= c->measured[i]) {
			pc->ns_per_run = (double)ns / (double)cnt;
			c->measured[i] = cnt;
		}
		pc->sampled_cnt = c->closed_cnt[i] + cnt;
		pc->sampled_ns = c->closed_ns[i] + ns;
		if (final) {
			c->closed_cnt[i] += cnt;
			c->closed_ns[i] += ns;
		}
	}
}

/*
 * Closes the open window once it has measured runs for a while: a run
 * that is the first of many is a cold one, so the window waits until the
 * busiest probe object has LT_STATS_MIN_RUNS measured runs, or a second
 * has passed. The others are measured on what they did meanwhile.
 */
static void window_close(struct lt_collector *c)
{
	struct bpf_object *objs[PROBE_NR] = { c->futex->obj, c->filelock->obj,
					      c->fileio->obj };
	uint64_t age = mono_ns() - c->win_opened, cnt, ns, most = 0;
	size_t i;

	if (c->stats_fd < 0 || age < LT_STATS_WINDOW_MS * 1000000ULL)
		return;
	for (i = 0; i < PROBE_NR; i++) {
		prog_stats(objs[i], &cnt, &ns);
		if (cnt - c->win_cnt[i] > most)
			most = cnt - c->win_cnt[i];
	}
	if (!most || (most < LT_STATS_MIN_RUNS && age < 1000000000ULL))
		return;
	window_take(c, true);
	close(c->stats_fd);
	c->stats_fd = -1;
	c->win_closed = mono_ns();
}

/*
 * Between reads, and at a read: an object whose cost was measured on too
 * few runs (the probes loaded on an idle host: a few cold runs, many
 * times dearer than warm ones) and that has become busy is measured
 * again at once, so the interval that finds it busy is charged at its
 * warm cost, even when a thin window closed just before. Once per object
 * between two regular windows: one that stays thin (busy, but never the
 * busiest while a window is open) waits for those.
 */
static void window_retry(struct lt_collector *c)
{
	uint64_t runs[LT_OBJ_NR];
	bool busy = false;
	size_t i;

	if (c->stats_fd >= 0)
		return;
	/* Most of the time every figure stands: nothing to read. */
	for (i = 0; i < PROBE_NR; i++)
		if (c->measured[i] < LT_STATS_MIN_RUNS && !c->retried[i])
			break;
	if (i == PROBE_NR)
		return;
	read_runs(c, runs);
	for (i = 0; i < PROBE_NR; i++) {
		if (c->measured[i] >= LT_STATS_MIN_RUNS || c->retried[i] ||
		    runs[i] - c->probes[i].run_cnt < LT_STATS_MIN_RUNS)
			continue;
		c->retried[i] = true;
		busy = true;
	}
	if (busy) {
		window_open(c);
		c->win_retry = c->stats_fd >= 0;
	}
}

/*
 * A window opened again for an object measured idle that turned busy
 * (window_retry()) just before this read: the read waits for it, a
 * tenth of a second at most, so the interval that found the object busy
 * is charged at the cost of its warm runs and not of the idle ones.
 */
static void retry_settle(struct lt_collector *c)
{
	struct bpf_object *objs[PROBE_NR] = { c->futex->obj, c->filelock->obj,
					      c->fileio->obj };
	const struct timespec step = { .tv_nsec = 5000000L };
	uint64_t cnt, ns;
	bool thin;
	size_t i;

	while (mono_ns() - c->win_opened < LT_STATS_WINDOW_MS * 1000000ULL) {
		thin = false;
		for (i = 0; i < PROBE_NR; i++) {
			if (!c->retried[i] ||
			    c->measured[i] >= LT_STATS_MIN_RUNS)
				continue;
			prog_stats(objs[i], &cnt, &ns);
			if (cnt - c->win_cnt[i] < LT_STATS_MIN_RUNS)
				thin = true;
		}
		if (!thin)
			return;
		nanosleep(&step, NULL);
	}
}

static void read_cost(struct lt_collector *c)
{
	uint64_t runs[LT_OBJ_NR], ns_total = 0;
	size_t i;

	/* A burst that began since the last tend is measured before it is
	 * charged. */
	window_retry(c);
	if (c->stats_fd >= 0 && c->win_retry)
		retry_settle(c);
	if (c->stats_fd >= 0)
		window_take(c, false); /* the best figure so far */
	window_close(c);
	read_runs(c, runs);
	c->snap.events_delta = 0;
	c->snap.events_total = 0;
	for (i = 0; i < PROBE_NR; i++) {
		struct lt_probe_cost *pc = &c->probes[i];

		pc->delta_cnt = diff(runs[i], pc->run_cnt);
		pc->run_cnt = runs[i];
		pc->delta_ns =
			(uint64_t)((double)pc->delta_cnt * pc->ns_per_run);
		pc->run_ns += pc->delta_ns;
		c->snap.events_delta += pc->delta_cnt;
		c->snap.events_total += pc->run_cnt;
		ns_total += pc->delta_ns;
	}
	c->snap.cpu_percent = c->snap.interval_s > 0 ?
				      ns_total / (c->snap.interval_s * 1e7) :
				      0;
	/* Every LT_STATS_EVERY reads, and LT_STATS_GAP_S after the last. */
	if (++c->stat_reads % LT_STATS_EVERY == 0 && c->stats_fd < 0 &&
	    mono_ns() - c->win_closed >= LT_STATS_GAP_S * 1000000000ULL) {
		memset(c->retried, 0, sizeof(c->retried));
		window_open(c);
		c->win_retry = false;
	}
}

static uint64_t read_drops(struct lt_collector *c)
{
	int fd = bpf_map__fd(c->futex->maps.drops);
	uint64_t total = 0, *vals;
	__u32 r;
	int cpu;

	vals = calloc(c->ncpus, sizeof(*vals));
	if (!vals)
		return c->drops_raw;
	for (r = 0; r < LT_DROP_NR; r++) {
		if (bpf_map_lookup_elem(fd, &r, vals))
			continue;
		for (cpu = 0; cpu < c->ncpus; cpu++)
			total += vals[cpu];
	}
	free(vals);
	return total;
}

/* ---- the read ---- */

int lt_collector_read(struct lt_collector *c, const struct lt_snapshot **snap)
{
	struct timespec now, wall;
	size_t i;
	uint64_t drops;
	int err;

	/* Waits that end from here on belong to the next interval's max. */
	c->read_ns = mono_ns();
	__atomic_fetch_add(&c->futex->bss->epoch, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&c->filelock->bss->epoch, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&c->fileio->bss->epoch, 1, __ATOMIC_RELAXED);

	take_exited(c);
	lt_collector_tend(c);
	clock_gettime(CLOCK_MONOTONIC, &now);
	clock_gettime(CLOCK_REALTIME, &wall);
	c->snap.time = ts_sec(&wall);
	c->snap.interval_s = ts_diff(&now, &c->last_read);
	c->snap.elapsed_s = ts_diff(&now, &c->opened);
	c->last_read = now;

	/* A moving lock's delta is rewritten whole; the locks that moved
	 * last time and not now are cleared after the read. */
	c->reads++;
	swap_lists(&c->live, &c->n_live, &c->cap_live, &c->was_live,
		   &c->n_was_live, &c->cap_was_live);
	c->n_live = 0;
	memset(c->snap.kind_delta, 0, sizeof(c->snap.kind_delta));
	for (i = 0; i < c->n_procs; i++)
		memset(&c->procs[i].delta, 0, sizeof(c->procs[i].delta));
	for (i = 0; i < c->n_files; i++)
		memset(&c->files[i].delta, 0, sizeof(c->files[i].delta));
	memset(c->snap.io_hist_delta, 0, sizeof(c->snap.io_hist_delta));

	/* Locks touched since the last read's epoch, which this read's
	 * maxima also start from. */
	c->reader->bss->since = c->futex->bss->epoch - 1;
	c->reader->bss->max_epoch = c->futex->bss->epoch - 1;
	err = run_reader(c, c->reader->progs.lt_read_locks, c->lock_out,
			 sizeof(*c->lock_out), &c->reader->bss->n_locks,
			 merge_lock);

	c->snap.lock_entries = c->reader->bss->visited;
	c->snap.lock_capacity = LT_MAX_LOCKS;
	c->snap.file_capacity = LT_MAX_FILES;
	if (!err)
		err = read_parties(c);
	c->snap.party_entries = c->reader->bss->parties_visited;
	c->snap.party_capacity = LT_MAX_PARTIES;
	if (!err)
		err = read_proc_io(c);
	if (!err)
		err = read_inflight(c);
	if (!err && c->stacks)
		err = read_stacks(c);
	if (!err)
		err = read_files(c);
	if (err) {
		forget_vmas(c);
		return err;
	}

	for (i = 0; i < c->n_was_live; i++) {
		struct lock_state *s = &c->lstate[c->was_live[i]];

		if (s->live == c->reads)
			continue;
		memset(&c->locks[c->was_live[i]].delta, 0,
		       sizeof(c->locks[0].delta));
		s->wait_moved = s->hold_moved = 0;
	}
	/* Idle locks cost nothing here: only new and moving ones. */
	for (i = 0; i < c->n_fresh; i++)
		if (!c->lstate[c->fresh[i]].named)
			name_lock(c, c->fresh[i]);
	c->n_fresh = 0;
	for (i = 0; i < c->n_live; i++) {
		struct lt_lock *l = &c->locks[c->live[i]];
		struct lock_state *s = &c->lstate[c->live[i]];

		if (s->raw.last_holder &&
		    s->raw.last_holder != s->shown_holder) {
			l->holder = tgid_of(c, (__u32)s->raw.last_holder);
			read_comm(c, l->holder, l->holder_comm);
			s->shown_holder = s->raw.last_holder;
		}
	}
	/* Last: the naming above may still need what the dead left. */
	forget_exited(c);
	reclaim_slots(c);
	publish_slot_use(c);
	retire_rows(c);
	forget_vmas(c);
	lt_symbolizer_prune(c->syms);

	drops = read_drops(c) + c->own_drops;
	c->snap.drops_delta = diff(drops, c->drops_raw);
	c->snap.drops_total += c->snap.drops_delta;
	c->drops_raw = drops;
	read_cost(c);

	c->snap.n_locks = c->n_locks;
	c->snap.locks = c->locks;
	c->snap.n_procs = c->n_procs;
	c->snap.procs = c->procs;
	c->snap.n_files = c->n_files;
	c->snap.file_entries = c->file_entries;
	c->snap.files = c->files;
	c->snap.n_probes = PROBE_NR;
	c->snap.probes = c->probes;
	c->snap.n_deadlocks = c->n_deadlocks;
	c->snap.deadlocks = c->deadlocks;
	*snap = &c->snap;
	return 0;
}

/* ---- pacing ---- */

static void ts_add_ms(struct timespec *ts, unsigned int ms)
{
	ts->tv_sec += ms / 1000;
	ts->tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

void lt_collector_tend(struct lt_collector *c)
{
	window_close(c);
	window_retry(c);
	judge_sites(c);
	if (c->stacks)
		resolve_snaps(c);
}

int lt_collector_wait(struct lt_collector *c, int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	struct timespec now;
	double left;
	int ret;

	/* c->deadline is the next boundary; an early return keeps it. */
	for (;;) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		left = ts_diff(&c->deadline, &now);
		if (left <= 0) {
			/* Fell behind: keep the cadence from now. */
			if (left < -(double)c->interval_ms / 1000)
				c->deadline = now;
			ts_add_ms(&c->deadline, c->interval_ms);
			return 0;
		}
		/* New call sites are judged within a tenth of a second, so
		 * that few of their waits go by value alone. */
		ret = poll(&pfd, fd >= 0 ? 1 : 0,
			   left * 1000 > LT_TEND_MS ? LT_TEND_MS :
						      (int)(left * 1000) + 1);
		if (ret > 0)
			return 1;
		if (ret < 0 && errno != EINTR)
			return -errno;
		lt_collector_tend(c);
	}
}

void lt_collector_set_interval(struct lt_collector *c, unsigned int ms)
{
	c->interval_ms = ms ? ms : 1000;
	clock_gettime(CLOCK_MONOTONIC, &c->deadline);
	ts_add_ms(&c->deadline, c->interval_ms);
}

void lt_collector_set_retire(struct lt_collector *c, unsigned int s)
{
	c->retire_s = s;
}

/* ---- open and close ---- */

static int add_traced(struct lt_collector *c, pid_t pid, char *err,
		      size_t err_len)
{
	__u32 key = pid;
	__u8 one = 1;

	if (pid <= 0 || (kill(pid, 0) && errno == ESRCH)) {
		snprintf(err, err_len, "no process with PID %d", pid);
		return -ESRCH;
	}
	if (bpf_map_update_elem(bpf_map__fd(c->futex->maps.traced), &key, &one,
				BPF_ANY)) {
		snprintf(err, err_len, "cannot trace PID %d: %s", pid,
			 strerror(errno));
		return -errno;
	}
	return 0;
}

/* Makes obj count into the futex object's maps. */
static int share_maps(struct lt_collector *c, struct bpf_object *obj)
{
	static const char *const shared[] = { "stat_map",
					      "parties",
					      "threads",
					      "traced",
					      "comms",
					      "drops",
					      "wheres",
					      "stacks",
					      "lock_stacks",
					      "stack_snaps",
					      "snap_scratch",
					      "new_snaps",
					      "runs",
					      "lock_slots",
					      "free_slots",
					      "party_slots",
					      "free_party_slots",
					      "slot_keys",
					      "party_keys",
					      "slot_high",
					      "slot_use" };
	size_t i;
	int err;

	for (i = 0; i < sizeof(shared) / sizeof(shared[0]); i++) {
		struct bpf_map *to =
			bpf_object__find_map_by_name(obj, shared[i]);
		struct bpf_map *from =
			bpf_object__find_map_by_name(c->futex->obj, shared[i]);

		if (!to || !from)
			continue;
		err = bpf_map__reuse_fd(to, bpf_map__fd(from));
		if (err)
			return err;
	}
	return 0;
}

#define SET_TARGETS(skel, opts, obj, ns)                               \
	do {                                                           \
		(skel)->rodata->targ_filter = (opts)->n_pids > 0;      \
		(skel)->rodata->targ_self = getpid();                  \
		(skel)->rodata->targ_stacks = (opts)->stacks;          \
		(skel)->rodata->targ_hold_exact = (opts)->exact_holds; \
		(skel)->rodata->targ_obj = (obj);                      \
		(skel)->rodata->targ_pidns_ino = (ns)->ino;            \
		(skel)->rodata->targ_pidns_level = (ns)->level;        \
	} while (0)

struct pidns {
	uint64_t ino; /* 0: the initial namespace */
	__u32 level;
};

/* The depth of our PID namespace, which only a BPF program can see. */
static int pidns_level(struct pidns *ns, char *err, size_t err_len)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts);
	struct pidns_bpf *skel = pidns_bpf__open_and_load();
	int ret;

	if (!skel) {
		ret = errno ? -errno : -EINVAL;
	} else {
		/* Run here, by this thread: the program reads its task. */
		ret = bpf_prog_test_run_opts(
			bpf_program__fd(skel->progs.lt_pidns), &opts);
		if (!ret && (skel->bss->inum != ns->ino || !skel->bss->level))
			ret = -ESRCH;
		ns->level = skel->bss->level;
		pidns_bpf__destroy(skel);
	}
	if (ret)
		snprintf(err, err_len,
			 "cannot find where this PID namespace lies: %s",
			 strerror(-ret));
	return ret;
}

/*
 * What the probes must know before they load. In a PID namespace other
 * than the initial one they name processes as it does (the traced set,
 * -p and our own PID are in its numbers, and so is its /proc).
 */
static int set_targets(struct lt_collector *c, const struct lt_options *opts,
		       char *err, size_t err_len)
{
	struct pidns ns = { 0 };
	int ret;

	ret = lt_pid_namespace(&ns.ino, err, err_len);
	if (!ret && ns.ino)
		ret = pidns_level(&ns, err, err_len);
	if (ret)
		return ret;
	SET_TARGETS(c->futex, opts, LT_OBJ_FUTEX, &ns);
	SET_TARGETS(c->filelock, opts, LT_OBJ_FILELOCK, &ns);
	SET_TARGETS(c->fileio, opts, LT_OBJ_FILEIO, &ns);
	SET_TARGETS(c->reader, opts, LT_OBJ_NR, &ns);
	return 0;
}

#define CALIB_RUNS 300
#define CALIB_READS 16 /* clock reads per run of lt_calib_clock */

/* Mean ns per run of prog after runs test runs, from the statistics. */
static double calib_run(struct bpf_program *prog, int runs)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts);
	struct bpf_prog_info info = { 0 };
	__u32 len = sizeof(info);
	int fd = bpf_program__fd(prog), i;

	for (i = 0; i < runs; i++)
		if (bpf_prog_test_run_opts(fd, &opts))
			return 0;
	if (bpf_obj_get_info_by_fd(fd, &info, &len) || !info.run_cnt)
		return 0;
	return (double)info.run_time_ns / (double)info.run_cnt;
}

/*
 * The measuring stick: the statistics' charge for an empty program and
 * the cost of one clock read here. Virtual machines without a stable TSC
 * read the clock slowly, and every probe that times something pays it.
 */
static void calibrate(struct lt_collector *c)
{
	double nop, clk;

	if (c->stats_fd < 0)
		return;
	nop = calib_run(c->reader->progs.lt_calib_nop, CALIB_RUNS);
	clk = calib_run(c->reader->progs.lt_calib_clock, CALIB_RUNS);
	c->snap.probe_floor_ns = nop;
	c->snap.clock_ns = clk > nop ? (clk - nop) / CALIB_READS : 0;
}

static int load_error(char *err, size_t len, const char *what, int ret)
{
	snprintf(err, len,
		 "the kernel refused the %s probe: %s (run with -v for the "
		 "verifier's log)",
		 what, strerror(-ret));
	return ret;
}

static int attach_error(char *err, size_t len, const char *what, int ret)
{
	snprintf(err, len,
		 "cannot attach the %s probe: %s (is tracefs mounted at "
		 "/sys/kernel/tracing?)",
		 what, strerror(-ret));
	return ret;
}

int lt_collector_open(const struct lt_options *opts, struct lt_collector **out,
		      char *err, size_t err_len)
{
	struct lt_collector *c;
	size_t i;
	int ret;

	*out = NULL;
	verbose_libbpf = opts->verbose;
	libbpf_set_print(libbpf_print);

	ret = lt_check_environment(err, err_len);
	if (ret)
		return ret;

	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->stats_fd = -1;
	c->stacks = opts->stacks;
	c->retire_s = opts->retire_s;
	c->syms = lt_symbolizer_new();
	c->snap_buf = malloc(sizeof(*c->snap_buf));
	c->interval_ms = opts->interval_ms ? opts->interval_ms : 1000;
	c->ncpus = libbpf_num_possible_cpus();
	for (i = 0; i < PROBE_NR; i++)
		snprintf(c->probes[i].name, sizeof(c->probes[i].name), "%s",
			 probe_names[i]);
	ret = -ENOMEM;
	if (c->ncpus <= 0 || !c->syms || !c->snap_buf ||
	    lt_index_init(&c->lock_ix, sizeof(struct lt_lock_key),
			  sizeof(struct lock_state)) ||
	    lt_index_init(&c->proc_ix, sizeof(__u32),
			  sizeof(struct proc_state)) ||
	    lt_index_init(&c->file_ix, sizeof(struct lt_file_key),
			  sizeof(struct file_state)) ||
	    lt_index_init(&c->tid_ix, sizeof(__u32),
			  sizeof(struct tid_entry)) ||
	    lt_index_init(&c->party_ix, sizeof(struct lt_party_key),
			  sizeof(struct party_state)) ||
	    lt_index_init(&c->side_ix, sizeof(struct side_key),
			  sizeof(struct side_state)) ||
	    lt_index_init(&c->stext_ix, sizeof(struct lt_stack_key),
			  sizeof(struct stack_text))) {
		snprintf(err, err_len, "out of memory");
		goto cleanup;
	}

	/* Open the BPF objects and set what must be fixed before load */
	c->futex = futex_bpf__open();
	c->filelock = filelock_bpf__open();
	c->fileio = fileio_bpf__open();
	c->reader = reader_bpf__open();
	if (!c->futex || !c->filelock || !c->fileio || !c->reader) {
		ret = -errno;
		snprintf(err, err_len, "cannot open the probes: %s",
			 strerror(errno));
		goto cleanup;
	}
	ret = set_targets(c, opts, err, err_len);
	if (ret)
		goto cleanup;
	/* Run once by fill_slots(), never attached. */
	bpf_program__set_autoattach(c->filelock->progs.lt_fill_owners, false);
	/* Snapshots of new stacks take preallocated room only when asked. */
	bpf_map__set_max_entries(c->futex->maps.stack_snaps,
				 opts->stacks ? LT_MAX_SNAPS : 1);
	c->reader->rodata->nr_cpus = (__u32)c->ncpus;
	/* Epoch 0 is no epoch: a slot whose stamp is 0 is not in use. */
	c->futex->bss->epoch = 1;
	c->filelock->bss->epoch = 1;
	c->fileio->bss->epoch = 1;

	/* Load & verify: the futex object first, it owns the shared maps */
	ret = futex_bpf__load(c->futex);
	if (ret) {
		load_error(err, err_len, "futex", ret);
		goto cleanup;
	}
	ret = share_maps(c, c->filelock->obj);
	if (!ret)
		ret = filelock_bpf__load(c->filelock);
	if (ret) {
		load_error(err, err_len, "file lock", ret);
		goto cleanup;
	}
	ret = share_maps(c, c->fileio->obj);
	if (!ret)
		ret = fileio_bpf__load(c->fileio);
	if (ret) {
		load_error(err, err_len, "pread", ret);
		goto cleanup;
	}
	ret = share_maps(c, c->reader->obj);
	if (!ret)
		ret = reader_bpf__load(c->reader);
	if (ret) {
		load_error(err, err_len, "map reader", ret);
		goto cleanup;
	}
	ret = fill_slots(c);
	if (ret) {
		snprintf(err, err_len, "cannot fill the free lock slots: %s",
			 strerror(-ret));
		goto cleanup;
	}
	c->lock_out = map_out(c->reader->maps.lock_out);
	c->party_out = map_out(c->reader->maps.party_out);
	c->wait_out = map_out(c->reader->maps.wait_out);
	if (!c->lock_out || !c->party_out || !c->wait_out) {
		ret = -errno;
		snprintf(err, err_len, "cannot map the readers' output: %s",
			 strerror(errno));
		goto cleanup;
	}

	/* Fill the traced set before anything can fork past it */
	for (i = 0; i < opts->n_pids; i++) {
		ret = add_traced(c, opts->pids[i], err, err_len);
		if (ret)
			goto cleanup;
	}

	/* The probes' own cost: the first interval is a sampling window
	 * (see read_cost()); the kernel turns the statistics off when the
	 * last descriptor closes. */
	c->stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	calibrate(c);
	window_open(c);

	/* Attach tracepoint handlers */
	ret = futex_bpf__attach(c->futex);
	if (ret) {
		attach_error(err, err_len, "futex", ret);
		goto cleanup;
	}
	ret = filelock_bpf__attach(c->filelock);
	if (ret) {
		attach_error(err, err_len, "file lock", ret);
		goto cleanup;
	}
	ret = fileio_bpf__attach(c->fileio);
	if (ret) {
		attach_error(err, err_len, "pread", ret);
		goto cleanup;
	}

	clock_gettime(CLOCK_MONOTONIC, &c->opened);
	c->last_read = c->opened;
	c->deadline = c->opened;
	ts_add_ms(&c->deadline, c->interval_ms);
	*out = c;
	return 0;

cleanup:
	lt_collector_close(c);
	return ret;
}

void lt_collector_close(struct lt_collector *c)
{
	size_t i;

	if (!c)
		return;
	/* Detach first: nothing may run while the rest is freed. */
	if (c->reader) {
		unmap_out(c->reader->maps.lock_out, c->lock_out);
		unmap_out(c->reader->maps.party_out, c->party_out);
		unmap_out(c->reader->maps.wait_out, c->wait_out);
	}
	reader_bpf__destroy(c->reader);
	fileio_bpf__destroy(c->fileio);
	filelock_bpf__destroy(c->filelock);
	futex_bpf__destroy(c->futex);
	if (c->stats_fd >= 0)
		close(c->stats_fd);
	forget_vmas(c);
	for (i = 0; i < c->n_locks; i++) {
		free(c->lstate[i].pids);
		free(c->lstate[i].stack);
	}
	lt_symbolizer_free(c->syms);
	free(c->locks);
	free(c->lstate);
	free(c->procs);
	free(c->pstate);
	free(c->files);
	free(c->fstate);
	free(c->tids);
	free(c->gone);
	free(c->gone_tids);
	free(c->stale_tids);
	free(c->doomed);
	free(c->site_keys);
	free(c->snap_buf);
	free(c->party);
	free(c->side);
	free(c->live);
	free(c->was_live);
	free(c->fresh);
	free(c->waited);
	free(c->edges);
	free(c->deadlocks);
	free(c->keybuf);
	free(c->valbuf);
	free(c->zero_values);
	free(c->peek);
	free(c->idle);

	lt_index_free(&c->lock_ix);
	lt_index_free(&c->proc_ix);
	lt_index_free(&c->file_ix);
	lt_index_free(&c->tid_ix);
	lt_index_free(&c->party_ix);
	lt_index_free(&c->side_ix);
	for (i = 0; i < c->n_stexts; i++)
		free(c->stexts[i].text);
	free(c->stexts);
	lt_index_free(&c->stext_ix);
	free(c);
}
