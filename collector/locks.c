// SPDX-License-Identifier: LGPL-2.1-or-later
/* Locks: their rows, their figures from the reader, and their names. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "state.h"
#include "futex.skel.h"
#include "reader.skel.h"

/* ---- naming ---- */

/*
 * A lock its store's layout names (layouts.c): "PATH chain 2558", and a
 * key by the store's name for it, the same whatever the lock's kind (a
 * tdb's chain, fcntl or mutex).
 */
static bool name_by_layout(struct lt_collector *c, struct lt_lock *l,
			   const struct lt_layout_place *p, const char *path)
{
	const char *layout, *base = strrchr(path, '/');
	char what[48];

	layout = layouts_name(c, p, what, sizeof(what));
	if (!layout)
		return false;
	snprintf(l->name, sizeof(l->name), "%.*s %s",
		 (int)(sizeof(l->name) - sizeof(what) - 2), path, what);
	snprintf(l->key, sizeof(l->key), "%s:%.*s %s", layout,
		 (int)(sizeof(l->key) - sizeof(what) - 16),
		 base ? base + 1 : path, what);
	return true;
}

static void name_file_lock(struct lt_collector *c, struct lt_lock *l,
			   const struct lock_state *s, const struct lt_where *w)
{
	char path[LT_NAME_LEN - 48], fd_link[64] = "";
	struct lt_layout_place p = { .dev = s->key.dev_or_tgid,
				     .ino = s->key.ino,
				     .start = s->key.start,
				     .end = s->key.end };
	size_t i;
	bool found = w && lt_proc_fd_path(w->tgid, w->fd, s->key.dev_or_tgid,
					  s->key.ino, path, sizeof(path));

	if (found)
		snprintf(fd_link, sizeof(fd_link), "/proc/%u/fd/%d", w->tgid,
			 w->fd);
	for (i = 0; !found && i < s->n_pids; i++) {
		/* Any waiter that still has it open under the same fd. */
		found = w &&
			lt_proc_fd_path(s->pids[i], w->fd, s->key.dev_or_tgid,
					s->key.ino, path, sizeof(path));
		if (found)
			snprintf(fd_link, sizeof(fd_link), "/proc/%d/fd/%d",
				 s->pids[i], w->fd);
	}
	if (!found && w && w->file[0])
		snprintf(path, sizeof(path), "%s", w->file);
	else if (!found)
		snprintf(path, sizeof(path), "%u:%u:%llu",
			 (unsigned int)(s->key.dev_or_tgid >> 20),
			 (unsigned int)(s->key.dev_or_tgid & 0xfffff),
			 (unsigned long long)s->key.ino);
	p.path = fd_link[0] ? fd_link : NULL;
	if (l->kind == LT_KIND_FLOCK)
		snprintf(l->name, sizeof(l->name), "%s", path);
	else if (LT_KEY_FOLDED(&s->key))
		snprintf(l->name, sizeof(l->name), "%s (other ranges)", path);
	else if (name_by_layout(c, l, &p, path))
		return;
	else if (s->key.end >= LT_OFFSET_EOF)
		snprintf(l->name, sizeof(l->name), "%s+0x%llx..EOF", path,
			 (unsigned long long)s->key.start);
	else if (s->key.start == s->key.end)
		snprintf(l->name, sizeof(l->name), "%s+0x%llx", path,
			 (unsigned long long)s->key.start);
	else
		snprintf(l->name, sizeof(l->name), "%s+0x%llx..0x%llx", path,
			 (unsigned long long)s->key.start,
			 (unsigned long long)s->key.end);
}

/* A futex in a shared file mapping: its full path and offset, or what
 * the file's layout calls it. */
/*
 * A word of a shared file mapping that the probe took for the process's
 * own: it could not read the maps when the word's first waits began
 * (another thread was changing them). Placed here, in its file, for the
 * probe's next waits on it; p gets the file. False when the file cannot
 * be read (the process gone).
 */
static bool place_word(struct lt_collector *c, const struct lock_state *s,
		       const struct lt_vma *vma, struct lt_layout_place *p)
{
	struct lt_ident_key ik = { .uaddr = s->key.start,
				   .tgid = (__u32)s->key.dev_or_tgid };
	struct lt_lock_key k = { .kind = LT_PK_FUTEX, .shared = 1 };
	struct lt_where w = { .vm_start = vma->start,
			      .offset = p->start,
			      .uaddr = s->key.start,
			      .flags = LT_VMA_FILE | LT_VMA_SHARED,
			      .tgid = ik.tgid,
			      .fd = -1 };
	const char *base = strrchr(vma->path, '/');
	struct stat st;
	int fd = open(p->path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);

	if (fd < 0)
		return false;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return false;
	}
	close(fd);
	p->dev = (uint64_t)major(st.st_dev) << 20 | minor(st.st_dev);
	p->ino = st.st_ino;
	k.dev_or_tgid = p->dev;
	k.ino = p->ino;
	k.start = p->start;
	bpf_map_update_elem(bpf_map__fd(c->futex->maps.ident), &ik, &k,
			    BPF_ANY);
	/* Where it is, for its row's name, as the probe would keep it. */
	w.dev = (__u32)p->dev;
	w.ino = p->ino;
	snprintf(w.file, sizeof(w.file), "%.*s", (int)sizeof(w.file) - 1,
		 base ? base + 1 : vma->path);
	bpf_map_update_elem(bpf_map__fd(c->futex->maps.wheres), &k, &w,
			    BPF_NOEXIST);
	return true;
}

static void name_shared_futex(struct lt_collector *c, struct lt_lock *l,
			      const struct lock_state *s, pid_t pid,
			      const struct lt_vma *vma, uint64_t addr)
{
	char path[LT_NAME_LEN - 48], link[80];
	struct lt_layout_place p = { .dev = s->key.dev_or_tgid,
				     .ino = s->key.ino,
				     .path = link,
				     .word = true };

	lt_vma_path(vma, path, sizeof(path));
	p.start = p.end = addr - vma->start + vma->pgoff;
	snprintf(link, sizeof(link), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64,
		 pid, vma->start, vma->end);
	if ((s->key.shared || place_word(c, s, vma, &p)) &&
	    name_by_layout(c, l, &p, path))
		return;
	lt_name_address(vma, addr, l->name, sizeof(l->name));
}

/*
 * A shared word the probe kept no place for (its process's maps were
 * changing): its address in process pid, from a mapping of its file that
 * covers it; 0 when none does.
 */
static uint64_t object_address(struct lt_collector *c, pid_t pid,
			       const struct lock_state *s)
{
	const struct lt_vmas *v = lt_vma_cache_get(&c->vmas, pid);
	struct stat st;
	size_t i;

	for (i = 0; v && i < v->n; i++) {
		const struct lt_vma *m = &v->v[i];

		if (m->perms[3] != 's' || m->path[0] != '/' ||
		    s->key.start < m->pgoff ||
		    s->key.start - m->pgoff >= m->end - m->start ||
		    stat(m->path, &st) || st.st_ino != s->key.ino ||
		    ((uint64_t)major(st.st_dev) << 20 | minor(st.st_dev)) !=
			    s->key.dev_or_tgid)
			continue;
		return m->start + s->key.start - m->pgoff;
	}
	return 0;
}

static void name_futex(struct lt_collector *c, struct lt_lock *l,
		       const struct lock_state *s, const struct lt_where *w)
{
	const struct lt_vma *vma = NULL, *image = NULL;
	const struct lt_vmas *vmas = NULL;
	pid_t pid = w ? (pid_t)w->tgid :
			(s->key.shared ? (s->n_pids ? s->pids[0] : 0) :
					 (pid_t)s->key.dev_or_tgid);
	uint64_t addr = w ? w->uaddr : (l->address ? l->address : s->key.start);

	if (w)
		l->address = w->uaddr;
	else if (s->key.shared && pid > 0 && object_address(c, pid, s))
		addr = l->address = object_address(c, pid, s);
	if (pid > 0) {
		vmas = lt_vma_cache_get(&c->vmas, pid);
		vma = lt_vmas_find(vmas, addr);
		image = vma ? lt_vmas_image(vmas, vma) : NULL;
	}
	/* A program's or library's data, .bss too: its symbol, else the
	 * image and the address its file gives it. */
	if (image && lt_name_image(c->syms, pid, image->start, addr, l->name,
				   sizeof(l->name)))
		return;
	/* A shared file: its full path, while a process maps it. */
	if (vma && vma->path[0] == '/' && vma->perms[3] == 's')
		name_shared_futex(c, l, s, pid, vma, addr);
	/* Anonymous memory, [heap] and [stack] too: from the mapping the
	 * probe saw at the wait, alive or gone, so that one lock keeps
	 * one name (a mapping may grow, split or merge since). */
	else if (w && (!vma || vma->path[0] != '/') &&
		 lt_name_where(w, addr, l->name, sizeof(l->name)))
		return;
	else if (vma || !w)
		lt_name_address(vma, addr, l->name, sizeof(l->name));
	else /* a shared file no process maps now */
		snprintf(l->name, sizeof(l->name), "%s+0x%llx", w->file,
			 (unsigned long long)s->key.start);
}

void locks_name(struct lt_collector *c, size_t i)
{
	struct lt_lock *l = &c->locks[i];
	struct lock_state *s = &c->lstate[i];
	struct lt_where w, *wp = NULL;

	if (l->kind == LT_KIND_KERNEL) {
		klocks_name(c, i);
		return;
	}
	if (!bpf_map_lookup_elem(bpf_map__fd(c->futex->maps.wheres), &s->key,
				 &w)) {
		w.file[sizeof(w.file) - 1] = '\0';
		wp = &w;
	}
	if (usdt_name(c, l, s, wp)) {
		s->named = true;
		return;
	}
	l->key[0] = '\0';
	if (l->kind == LT_KIND_FCNTL || l->kind == LT_KIND_OFD ||
	    l->kind == LT_KIND_FLOCK)
		name_file_lock(c, l, s, wp);
	else
		name_futex(c, l, s, wp);
	if (wp && !l->comm[0])
		lt_proc_comm(bpf_map__fd(c->futex->maps.comms), wp->tgid,
			     l->comm);
	if (!l->comm[0] && s->n_pids)
		lt_proc_comm(bpf_map__fd(c->futex->maps.comms), s->pids[0],
			     l->comm);
	/* Identity across runs: what the lock is, not where it was. In
	 * anonymous memory that is its address: the mapping it is named
	 * by may start elsewhere in another process of the program (one
	 * grown, split or merged with a neighbour). */
	if (!l->key[0] && !strncmp(l->name, "[anon@", 6))
		snprintf(l->key, sizeof(l->key), "%s:0x%" PRIx64,
			 lt_kind_name(l->kind), l->address);
	if (!l->key[0])
		snprintf(l->key, sizeof(l->key), "%s:%.*s",
			 lt_kind_name(l->kind), (int)(sizeof(l->key) - 16),
			 l->name);
	s->named = true;
}

/* ---- locks ---- */

ssize_t locks_add(struct lt_collector *c, const struct lt_lock_key *key)
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
	s->moved_at = lt_mono_ns();
	if (lt_index_add(&c->lock_ix, i, c->lstate) ||
	    push_index(&c->fresh, &c->n_fresh, &c->cap_fresh, i))
		return -ENOMEM;
	c->n_locks++;
	l->id = ++c->next_id;
	l->procs = 1;
	l->kind = key->kind < LT_KIND_NR ? (enum lt_kind)key->kind :
					   LT_KIND_FUTEX;
	if (key->kind == LT_PK_KERNEL) {
		l->address = key->start;
	} else if (key->kind <= LT_PK_FUTEX_PI ||
		   key->kind == LT_PK_FUTEX_COND || key->kind == LT_PK_SPIN) {
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
			i = locks_add(c, &r->key);
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
#define LT_COUNT(NAME, STAT, JSON, PCP, RECORD) DELTA(NAME);
#include "figures.def"
	add_estimated_holds(l, &sum, &s->raw);
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

/* Locks touched since the last read's epoch, which this read's maxima
 * also start from. */
int locks_read(struct lt_collector *c)
{
	c->reader->bss->since = c->futex->bss->epoch - 1;
	c->reader->bss->max_epoch = c->futex->bss->epoch - 1;
	return mapio_run_reader(c, c->reader->progs.lt_read_locks, c->lock_out,
				sizeof(*c->lock_out), &c->reader->bss->n_locks,
				merge_lock);
}
