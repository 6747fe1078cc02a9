// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Lock names: one table of namers, a row per family of kinds (the kernel's
 * locks, servers' own, file locks, futexes), and what every name shares:
 * the process's name and the key across runs. The file locks' and the
 * futexes' namers are here; the others are klocks.c's and usdt.c's.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <signal.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "state.h"
#include "providers.h"
#include "futex.skel.h"

/*
 * A lock its store's layout names (layouts.c): "PATH chain 2558", and a
 * key by the store's name for it, the same whatever the lock's kind (a
 * tdb's chain, fcntl or mutex).
 */
static bool name_by_layout(struct lt_collector *c, struct lt_lock *l,
			   const struct lt_layout_place *p, const char *path)
{
	const char *layout, *base;
	char what[48];

	layout = layouts_name(c, p, what, sizeof(what));
	if (!layout)
		return false;
	path = layouts_path(c, p, path);
	base = strrchr(path, '/');
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
	bpf_map_update_elem(bpf_map__fd(c->obj.futex->maps.ident), &ik, &k,
			    BPF_ANY);
	/* Where it is, for its row's name, as the probe would keep it. */
	w.dev = (__u32)p->dev;
	w.ino = p->ino;
	snprintf(w.file, sizeof(w.file), "%.*s", (int)sizeof(w.file) - 1,
		 base ? base + 1 : vma->path);
	bpf_map_update_elem(bpf_map__fd(c->obj.futex->maps.wheres), &k, &w,
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

/* The mapping of process pid that maps the shared word s, as read during
 * the read now; NULL when none does. */
static const struct lt_vma *object_vma(struct lt_collector *c, pid_t pid,
				       const struct lock_state *s)
{
	const struct lt_vmas *v = lt_vma_cache_fresh(&c->naming.vmas, pid);
	size_t i;

	for (i = 0; i < v->n; i++) {
		const struct lt_vma *m = &v->v[i];

		if (m->perms[3] != 's' || m->ino != s->key.ino ||
		    m->dev != s->key.dev_or_tgid || s->key.start < m->pgoff ||
		    s->key.start - m->pgoff >= m->end - m->start)
			continue;
		return m;
	}
	return NULL;
}

/*
 * A shared word the probe kept no place for (its process's maps were
 * changing): its address in process pid, from a mapping of its file that
 * covers it; 0 when none does.
 */
static uint64_t object_address(struct lt_collector *c, pid_t pid,
			       const struct lock_state *s)
{
	const struct lt_vma *m = object_vma(c, pid, s);

	return m ? m->start + s->key.start - m->pgoff : 0;
}

/* A live process named comm whose mapping covers the shared word s;
 * 0 when none does. */
static pid_t search_mapper(struct lt_collector *c, const struct lock_state *s,
			   const char *comm)
{
	pid_t *named, found = 0;
	size_t i, n = lt_proc_named(comm, getpid(), &named);

	for (i = 0; i < n && !found; i++)
		if (object_vma(c, named[i], s))
			found = named[i];
	free(named);
	return found;
}

/*
 * A live process named comm that maps the shared word s, whose waiters
 * have all ended: a server that forks a process for each client (Samba's
 * smbd) keeps its stores mapped in the parent, of the same name, after
 * the children end. 0 when none does. Each file is looked for once a
 * read, and a read looks in /proc for a few files at most.
 */
static pid_t live_mapper(struct lt_collector *c, const struct lock_state *s,
			 const char *comm)
{
	struct naming_state *n = &c->naming;
	unsigned long long now = n->vmas.read + 1;
	unsigned int i;

	if (n->mapper_read != now) {
		n->mapper_read = now;
		n->mapper_searches = 0;
	}
	for (i = 0; i < LT_MAPPERS; i++) {
		if (n->mapper[i].read != now ||
		    n->mapper[i].dev != s->key.dev_or_tgid ||
		    n->mapper[i].ino != s->key.ino)
			continue;
		return n->mapper[i].pid && object_vma(c, n->mapper[i].pid, s) ?
			       n->mapper[i].pid :
			       0;
	}
	if (!comm[0])
		return 0;
	if (n->mapper_searches >= LT_MAPPER_SEARCHES) {
		n->name_again = true; /* the next read looks */
		return 0;
	}
	n->mapper_searches++;
	i = n->mapper_next++ % LT_MAPPERS;
	n->mapper[i].dev = s->key.dev_or_tgid;
	n->mapper[i].ino = s->key.ino;
	n->mapper[i].read = now;
	n->mapper[i].pid = search_mapper(c, s, comm);
	return n->mapper[i].pid;
}

/* Whether vma is still the mapping the probe saw the wait in (w). */
static bool where_agrees(const struct lt_vma *vma, const struct lt_where *w)
{
	if (!vma || !w || vma->start != w->vm_start)
		return false;
	if (w->flags & LT_VMA_FILE)
		return vma->ino == w->ino && vma->dev == w->dev;
	return !vma->ino;
}

/*
 * The mapping of addr in pid: the one last read where it agrees with what
 * the probe saw at the wait (w), else one read now. Sets *vmas to the
 * process's mappings it came from.
 */
static const struct lt_vma *futex_vma(struct lt_collector *c, pid_t pid,
				      uint64_t addr, const struct lt_where *w,
				      const struct lt_vmas **vmas)
{
	const struct lt_vma *vma;

	*vmas = lt_vma_cache_get(&c->naming.vmas, pid);
	vma = lt_vmas_find(*vmas, addr);
	if (where_agrees(vma, w)) {
		/* Gone: named from the probe's record, as /proc has none,
		 * whatever a process's maps read earlier say. */
		if (kill(pid, 0) && errno == ESRCH)
			return NULL;
		return vma;
	}
	return lt_vma_cache_find_fresh(&c->naming.vmas, pid, addr, vmas);
}

/* A word of a shared file no process maps now: by its store's layout,
 * where the file's head was read while one did. */
static bool name_gone_shared(struct lt_collector *c, struct lt_lock *l,
			     const struct lock_state *s,
			     const struct lt_where *w)
{
	struct lt_layout_place p = { .dev = s->key.dev_or_tgid,
				     .ino = s->key.ino,
				     .word = true,
				     .start = s->key.start,
				     .end = s->key.start };

	return s->key.shared && name_by_layout(c, l, &p, w->file);
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
	uint64_t at;

	if (w)
		l->address = w->uaddr;
	else if (s->key.shared && pid > 0 && (at = object_address(c, pid, s)))
		addr = l->address = at;
	if (pid > 0) {
		vma = futex_vma(c, pid, addr, w, &vmas);
		image = vma ? lt_vmas_image(vmas, vma) : NULL;
	}
	/* A shared file whose waiters all ended: where a live process of
	 * the same program maps it. */
	if (!vma && s->key.shared && (pid = live_mapper(c, s, l->comm)) > 0 &&
	    (vma = object_vma(c, pid, s))) {
		addr = vma->start + s->key.start - vma->pgoff;
		name_shared_futex(c, l, s, pid, vma, addr);
		return;
	}
	/* A program's or library's data, .bss too: its symbol, else the
	 * image and the address its file gives it. */
	if (image && lt_name_image(c->naming.syms, pid, image->start, addr,
				   l->name, sizeof(l->name)))
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
	else if (!name_gone_shared(c, l, s, w))
		snprintf(l->name, sizeof(l->name), "%s+0x%llx", w->file,
			 (unsigned long long)s->key.start);
}

static bool of_kernel(enum lt_kind kind)
{
	return kind == LT_KIND_KERNEL;
}

static bool of_server(enum lt_kind kind)
{
	return lt_provider_kind_of(kind) != NULL;
}

static bool of_file(enum lt_kind kind)
{
	return kind == LT_KIND_FCNTL || kind == LT_KIND_OFD ||
	       kind == LT_KIND_FLOCK;
}

/*
 * A family of kinds and the function that names its locks: the lock's
 * name, and its key across runs where the name alone would not do
 * (names_lock() makes the others). where: the probes kept where each of
 * its locks is (wheres), for the namer.
 */
struct namer {
	bool (*of)(enum lt_kind kind); /* NULL: every kind left */
	void (*name)(struct lt_collector *c, struct lt_lock *l,
		     const struct lock_state *s, const struct lt_where *w);
	bool where;
};

/* The first row whose family holds a lock's kind names it. */
static const struct namer namers[] = {
	{ of_kernel, klocks_name, false },
	{ of_server, usdt_name, true },
	{ of_file, name_file_lock, true },
	{ NULL, name_futex, true }, /* the rest: futexes, words spun on */
};

/* Reads a lock named by a bare address, or unplaced, is named at. */
#define LT_NAME_TRIES 4

void names_lock(struct lt_collector *c, size_t i)
{
	struct lt_lock *l = &c->locktab.locks[i];
	struct lock_state *s = &c->locktab.lstate[i];
	const struct namer *n = namers;
	struct lt_where w, *wp = NULL;
	int comms = bpf_map__fd(c->obj.futex->maps.comms);

	while (n->of && !n->of(l->kind))
		n++;
	if (n->where &&
	    !bpf_map_lookup_elem(bpf_map__fd(c->obj.futex->maps.wheres),
				 &s->key, &w)) {
		w.file[sizeof(w.file) - 1] = '\0';
		wp = &w;
	}
	l->key[0] = '\0';
	/* The program first, for a namer that looks for its processes. */
	if (wp && !l->comm[0])
		lt_proc_comm(comms, (pid_t)wp->tgid, l->comm);
	if (!l->comm[0] && s->n_pids)
		lt_proc_comm(comms, s->pids[0], l->comm);
	c->naming.name_again = false;
	n->name(c, l, s, wp);
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
	/*
	 * A word no mapping of its process covered, by maps read as they
	 * changed, or one its namer could not place in this read: named
	 * again at the next reads, a few times, before its name stands.
	 */
	s->named = (!c->naming.name_again &&
		    (n->name != name_futex || strncmp(l->name, "0x", 2))) ||
		   ++s->name_tries >= LT_NAME_TRIES;
}
