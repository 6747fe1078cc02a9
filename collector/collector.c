// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Loads the probes, reads their per-CPU maps once per interval and turns
 * raw cumulative counters into totals and per-interval deltas.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/types.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "collector.h"
#include "internal.h"
#include "futex.h"
#include "futex.skel.h"

_Static_assert(LT_HIST_BUCKETS == LT_HIST_SLOTS,
	       "collector and probe histograms must match");

#define BATCH_ENTRIES 1024
#define MAX_VMA_CACHE 16

/* Collector-side state of one lock, beside its public lt_lock. */
struct lock_state {
	struct lt_futex_key key;
	pid_t pid;
	uint64_t raw_waits, raw_wait_ns; /* last cumulative map values */
	uint64_t raw_hist[LT_HIST_SLOTS];
};

struct lt_collector {
	struct futex_bpf *skel;
	int ncpus;
	unsigned int interval_ms;
	struct timespec opened, last_read, deadline;

	struct lt_lock *locks; /* public, contiguous */
	struct lock_state *state; /* parallel to locks */
	size_t n_locks, cap_locks;
	uint32_t *index; /* open addressing: slot -> lock + 1 */
	size_t index_size; /* a power of two */

	struct lt_futex_key *keys; /* batch read buffers */
	struct lt_futex_stat *values;
	uint64_t drops_raw;
	uint64_t next_id;
	struct lt_snapshot snap;

	struct lt_vmas vma_cache[MAX_VMA_CACHE];
	size_t n_vma_cache;
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

static uint64_t hash_key(const struct lt_futex_key *k)
{
	uint64_t h = k->uaddr * 0x9e3779b97f4a7c15ULL;

	h ^= ((uint64_t)k->tgid << 1 | k->class) * 0xc2b2ae3d27d4eb4fULL;
	return h ^ (h >> 29);
}

static bool key_eq(const struct lt_futex_key *a, const struct lt_futex_key *b)
{
	return a->uaddr == b->uaddr && a->tgid == b->tgid &&
	       a->class == b->class;
}

static int index_rebuild(struct lt_collector *c, size_t size)
{
	uint32_t *idx = calloc(size, sizeof(*idx));
	size_t i;

	if (!idx)
		return -ENOMEM;
	for (i = 0; i < c->n_locks; i++) {
		size_t s = hash_key(&c->state[i].key) & (size - 1);

		while (idx[s])
			s = (s + 1) & (size - 1);
		idx[s] = i + 1;
	}
	free(c->index);
	c->index = idx;
	c->index_size = size;
	return 0;
}

static ssize_t lock_find(const struct lt_collector *c,
			 const struct lt_futex_key *key)
{
	size_t s = hash_key(key) & (c->index_size - 1);

	while (c->index[s]) {
		size_t i = c->index[s] - 1;

		if (key_eq(&c->state[i].key, key))
			return i;
		s = (s + 1) & (c->index_size - 1);
	}
	return -1;
}

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
		return NULL; /* gone: the address alone names it */
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

	if (!bpf_map_lookup_elem(bpf_map__fd(c->skel->maps.comms), &key,
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

static void name_lock(struct lt_collector *c, const struct lt_futex_key *key,
		      char *buf, size_t len)
{
	struct lt_futex_where w;
	const struct lt_vma *vma;

	if (!bpf_map_lookup_elem(bpf_map__fd(c->skel->maps.wheres), key, &w)) {
		w.file[sizeof(w.file) - 1] = '\0';
		if (lt_name_where(&w, key->uaddr, buf, len))
			return;
		/* A shared file: its full path, while a process maps it. */
		vma = find_vma(c, key->tgid, key->uaddr);
		if (vma && vma->path[0] == '/')
			lt_name_address(vma, key->uaddr, buf, len);
		else
			snprintf(buf, len, "%s+0x%llx", w.file,
				 (unsigned long long)w.offset);
		return;
	}
	lt_name_address(find_vma(c, key->tgid, key->uaddr), key->uaddr, buf,
			len);
}

static ssize_t lock_add(struct lt_collector *c, const struct lt_futex_key *key)
{
	struct lt_lock *l;
	struct lock_state *s;
	size_t i;

	if (c->n_locks == c->cap_locks) {
		size_t cap = c->cap_locks ? c->cap_locks * 2 : 256;
		struct lt_lock *nl = realloc(c->locks, cap * sizeof(*nl));

		if (!nl)
			return -ENOMEM;
		c->locks = nl;
		struct lock_state *ns = realloc(c->state, cap * sizeof(*ns));
		if (!ns)
			return -ENOMEM;
		c->state = ns;
		c->cap_locks = cap;
		/* pids point into state: re-aim them after the move */
		for (i = 0; i < c->n_locks; i++)
			c->locks[i].pids = &c->state[i].pid;
	}
	if ((c->n_locks + 1) * 2 > c->index_size &&
	    index_rebuild(c, c->index_size * 2))
		return -ENOMEM;

	i = c->n_locks++;
	l = &c->locks[i];
	s = &c->state[i];
	memset(l, 0, sizeof(*l));
	memset(s, 0, sizeof(*s));
	s->key = *key;
	s->pid = key->tgid;
	l->kind = key->class == LT_CLASS_LOCK ? LT_KIND_FUTEX :
						LT_KIND_FUTEX_COND;
	l->address = key->uaddr;
	l->id = ++c->next_id;
	snprintf(l->key, sizeof(l->key), "pid:%u:0x%llx", key->tgid,
		 (unsigned long long)key->uaddr);
	l->pids = &s->pid;
	l->n_pids = 1;
	read_comm(c, s->pid, l->comm);
	name_lock(c, key, l->name, sizeof(l->name));

	size_t slot = hash_key(key) & (c->index_size - 1);
	while (c->index[slot])
		slot = (slot + 1) & (c->index_size - 1);
	c->index[slot] = i + 1;
	return i;
}

static uint64_t diff(uint64_t now, uint64_t before)
{
	/* A counter below its last value was recreated: count it anew. */
	return now >= before ? now - before : now;
}

static void merge_entry(struct lt_collector *c, size_t i,
			const struct lt_futex_stat *percpu, __u64 epoch)
{
	struct lock_state *s = &c->state[i];
	struct lt_lock *l = &c->locks[i];
	uint64_t waits = 0, wait_ns = 0, max_now = 0, max_total = 0;
	uint64_t hist[LT_HIST_SLOTS] = { 0 };
	int cpu, b;

	for (cpu = 0; cpu < c->ncpus; cpu++) {
		const struct lt_futex_stat *v = &percpu[cpu];

		waits += v->waits;
		wait_ns += v->wait_ns;
		for (b = 0; b < LT_HIST_SLOTS; b++)
			hist[b] += v->hist[b];
		if (v->max_epoch >= epoch && v->max_ns > max_now)
			max_now = v->max_ns;
		if (v->max_total_ns > max_total)
			max_total = v->max_total_ns;
	}

	l->delta.waits = diff(waits, s->raw_waits);
	l->delta.wait_ns = diff(wait_ns, s->raw_wait_ns);
	for (b = 0; b < LT_HIST_SLOTS; b++) {
		l->delta.wait_hist[b] = diff(hist[b], s->raw_hist[b]);
		l->total.wait_hist[b] += l->delta.wait_hist[b];
	}
	l->delta.max_wait_ns = l->delta.waits ? max_now : 0;
	l->total.waits += l->delta.waits;
	l->total.wait_ns += l->delta.wait_ns;
	if (max_total > l->total.max_wait_ns)
		l->total.max_wait_ns = max_total;
	if (l->delta.max_wait_ns > l->total.max_wait_ns)
		l->total.max_wait_ns = l->delta.max_wait_ns;

	s->raw_waits = waits;
	s->raw_wait_ns = wait_ns;
	memcpy(s->raw_hist, hist, sizeof(hist));
}

static int read_locks(struct lt_collector *c, __u64 epoch)
{
	int fd = bpf_map__fd(c->skel->maps.stat_map);
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	struct lt_futex_key out_batch;
	bool first = true, done = false;
	__u32 count, k;
	ssize_t i;
	int err;

	while (!done) {
		count = BATCH_ENTRIES;
		err = bpf_map_lookup_batch(fd, first ? NULL : &out_batch,
					   &out_batch, c->keys, c->values,
					   &count, &opts);
		if (err == -ENOENT)
			done = true;
		else if (err)
			return err;
		first = false;
		for (k = 0; k < count; k++) {
			i = lock_find(c, &c->keys[k]);
			if (i < 0)
				i = lock_add(c, &c->keys[k]);
			if (i < 0)
				return (int)i;
			merge_entry(c, i, &c->values[(size_t)k * c->ncpus],
				    epoch);
		}
	}
	return 0;
}

static uint64_t read_drops(struct lt_collector *c)
{
	int fd = bpf_map__fd(c->skel->maps.drops);
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

int lt_collector_read(struct lt_collector *c, const struct lt_snapshot **snap)
{
	struct timespec now, wall;
	__u64 epoch;
	uint64_t drops;
	size_t i;
	int err;

	/* Waits that end from here on belong to the next interval's max. */
	epoch = __atomic_fetch_add(&c->skel->bss->epoch, 1, __ATOMIC_RELAXED);

	for (i = 0; i < c->n_locks; i++)
		memset(&c->locks[i].delta, 0, sizeof(c->locks[i].delta));
	err = read_locks(c, epoch);
	forget_vmas(c);
	if (err)
		return err;

	drops = read_drops(c);
	c->snap.drops_delta = diff(drops, c->drops_raw);
	c->snap.drops_total += c->snap.drops_delta;
	c->drops_raw = drops;

	clock_gettime(CLOCK_MONOTONIC, &now);
	clock_gettime(CLOCK_REALTIME, &wall);
	c->snap.time = ts_sec(&wall);
	c->snap.interval_s = ts_diff(&now, &c->last_read);
	c->snap.elapsed_s = ts_diff(&now, &c->opened);
	c->last_read = now;
	c->snap.n_locks = c->n_locks;
	c->snap.locks = c->locks;
	*snap = &c->snap;
	return 0;
}

static void ts_add_ms(struct timespec *ts, unsigned int ms)
{
	ts->tv_sec += ms / 1000;
	ts->tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

int lt_collector_wait(struct lt_collector *c, int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	struct timespec now;
	double left;
	int ret;

	ts_add_ms(&c->deadline, c->interval_ms);
	for (;;) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		left = ts_diff(&c->deadline, &now);
		if (left <= 0) {
			/* Fell behind: keep the cadence from now. */
			if (left < -(double)c->interval_ms / 1000)
				c->deadline = now;
			return 0;
		}
		ret = poll(&pfd, fd >= 0 ? 1 : 0, (int)(left * 1000) + 1);
		if (ret > 0)
			return 1;
		if (ret < 0 && errno != EINTR)
			return -errno;
	}
}

void lt_collector_set_interval(struct lt_collector *c, unsigned int ms)
{
	c->interval_ms = ms ? ms : 1000;
}

static int add_traced(struct lt_collector *c, pid_t pid, char *err,
		      size_t err_len)
{
	__u32 key = pid;
	__u8 one = 1;

	if (pid <= 0 || (kill(pid, 0) && errno == ESRCH)) {
		snprintf(err, err_len, "no process with PID %d", pid);
		return -ESRCH;
	}
	if (bpf_map_update_elem(bpf_map__fd(c->skel->maps.traced), &key, &one,
				BPF_ANY)) {
		snprintf(err, err_len, "cannot trace PID %d: %s", pid,
			 strerror(errno));
		return -errno;
	}
	return 0;
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
	c->interval_ms = opts->interval_ms ? opts->interval_ms : 1000;
	c->ncpus = libbpf_num_possible_cpus();
	if (c->ncpus <= 0) {
		ret = c->ncpus ? c->ncpus : -EINVAL;
		snprintf(err, err_len, "cannot count CPUs: %s", strerror(-ret));
		goto cleanup;
	}
	c->keys = calloc(BATCH_ENTRIES, sizeof(*c->keys));
	c->values =
		calloc((size_t)BATCH_ENTRIES * c->ncpus, sizeof(*c->values));
	ret = -ENOMEM;
	if (!c->keys || !c->values || index_rebuild(c, 1024)) {
		snprintf(err, err_len, "out of memory");
		goto cleanup;
	}

	/* Open the BPF object and set what must be fixed before load */
	c->skel = futex_bpf__open();
	if (!c->skel) {
		ret = -errno;
		snprintf(err, err_len, "cannot open the futex probe: %s",
			 strerror(errno));
		goto cleanup;
	}
	c->skel->rodata->targ_filter = opts->n_pids > 0;
	c->skel->rodata->targ_self = getpid();

	/* Load & verify BPF programs */
	ret = futex_bpf__load(c->skel);
	if (ret) {
		snprintf(err, err_len,
			 "the kernel refused the futex probe: %s (run with -v "
			 "for the verifier's log)",
			 strerror(-ret));
		goto cleanup;
	}

	/* Fill the traced set before anything can fork past it */
	for (i = 0; i < opts->n_pids; i++) {
		ret = add_traced(c, opts->pids[i], err, err_len);
		if (ret)
			goto cleanup;
	}

	/* Attach tracepoint handlers */
	ret = futex_bpf__attach(c->skel);
	if (ret) {
		snprintf(err, err_len,
			 "cannot attach the futex probe: %s (is tracefs "
			 "mounted at /sys/kernel/tracing?)",
			 strerror(-ret));
		goto cleanup;
	}

	clock_gettime(CLOCK_MONOTONIC, &c->opened);
	c->last_read = c->opened;
	c->deadline = c->opened;
	*out = c;
	return 0;

cleanup:
	lt_collector_close(c);
	return ret;
}

void lt_collector_close(struct lt_collector *c)
{
	if (!c)
		return;
	futex_bpf__destroy(c->skel);
	forget_vmas(c);
	free(c->keys);
	free(c->values);
	free(c->locks);
	free(c->state);
	free(c->index);
	free(c);
}
