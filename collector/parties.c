// SPDX-License-Identifier: LGPL-2.1-or-later
/* Parties, each lock's holders and waiters, and their processes. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "state.h"
#include "fileio.skel.h"
#include "futex.skel.h"
#include "reader.skel.h"

static ssize_t proc_of(struct lt_collector *c, pid_t pid)
{
	struct proc_state key = { .tgid = (__u32)pid };
	ssize_t i = lt_index_find(&c->proctab.proc_ix, &key, c->proctab.pstate);
	struct lt_proc *p;

	if (i >= 0) {
		if (c->proctab.pstate[i].dead_at) {
			/* The PID is in use again. */
			c->proctab.pstate[i].dead_at = 0;
			c->retire.n_dead_procs--;
		}
		return i;
	}
	i = (ssize_t)c->proctab.n_procs;
	if (lt_grow((void **)&c->proctab.procs, &c->proctab.cap_procs, i + 1,
		    sizeof(*c->proctab.procs)) ||
	    lt_grow((void **)&c->proctab.pstate, &c->proctab.cap_pstate, i + 1,
		    sizeof(*c->proctab.pstate)))
		return -ENOMEM;
	memset(&c->proctab.pstate[i], 0, sizeof(c->proctab.pstate[i]));
	c->proctab.pstate[i].tgid = (__u32)pid;
	if (lt_index_add(&c->proctab.proc_ix, i, c->proctab.pstate))
		return -ENOMEM;
	c->proctab.n_procs++;
	p = &c->proctab.procs[i];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	lt_proc_comm(bpf_map__fd(c->obj.futex->maps.comms), pid, p->comm);
	return i;
}

/* Whether vmas map the file or shmem object (dev, ino). */
static bool vmas_map(const struct lt_vmas *v, uint64_t dev, uint64_t ino)
{
	size_t i;

	for (i = 0; i < v->n; i++)
		if (v->v[i].ino == ino && v->v[i].dev == dev)
			return true;
	return false;
}

/*
 * Whether pid maps the file or shmem object (dev, ino): as its maps were
 * last read, or read now where those did not. A process gone, whose maps
 * cannot be read, is taken at the probe's word, and so is one that has
 * let go of its memory while it ends (a zombie's maps are empty); a
 * kernel thread maps nothing.
 */
static bool maps_object(struct lt_collector *c, pid_t pid, uint64_t dev,
			uint64_t ino)
{
	const struct lt_vmas *v = lt_vma_cache_get(&c->naming.vmas, pid);

	if (!v->gone && vmas_map(v, dev, ino))
		return true;
	v = lt_vma_cache_fresh(&c->naming.vmas, pid);
	if (v->gone)
		return true;
	if (!v->n)
		return !lt_proc_is_kthread(pid);
	return vmas_map(v, dev, ino);
}

/* Whether pid can hold the lock: see parties_may_hold(). */
static bool can_hold(struct lt_collector *c, const struct lt_lock_key *k,
		     pid_t pid)
{
	if (k->kind != LT_PK_FUTEX && k->kind != LT_PK_FUTEX_PI &&
	    k->kind != LT_PK_FUTEX_COND)
		return true;
	if (!k->shared)
		return (pid_t)k->dev_or_tgid == pid;
	/* A kernel thread maps nothing. */
	return maps_object(c, pid, k->dev_or_tgid, k->ino);
}

/*
 * Whether process pid can hold lock: a futex's holder is a process that
 * reaches its word, the lock's own for a private word, one that maps its
 * file or shmem object for a shared one, and so never a kernel thread.
 * The probe names only such owners; this holds for the rest too (a TID
 * that ended and came back in another process). Asked once per holder
 * of a lock, kept with its side.
 */
bool parties_may_hold(struct lt_collector *c, size_t lock, pid_t pid)
{
	struct side_key sk = { .lock = c->locktab.lstate[lock].key,
			       .pid = (__u32)pid,
			       .holder = 1 };
	ssize_t k = lt_index_find(&c->parties.side_ix, &sk, c->parties.side);

	if (k < 0)
		return can_hold(c, &sk.lock, pid);
	if (!c->parties.side[k].may_hold)
		c->parties.side[k].may_hold = can_hold(c, &sk.lock, pid) ? 1 :
									   -1;
	return c->parties.side[k].may_hold > 0;
}

/* The name of thread tid of process pid: its own while it lives, else
 * what the probe kept when it named the thread, else "?". */
void parties_thread_name(struct lt_collector *c, pid_t pid, pid_t tid,
			 char *name)
{
	__u32 key = (__u32)tid;
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", pid, tid);
	f = fopen(path, "re");
	if (f && fgets(name, LT_COMM_SIZE, f)) {
		name[strcspn(name, "\n")] = '\0';
	} else if (!bpf_map_lookup_elem(
			   bpf_map__fd(c->obj.futex->maps.thread_comms), &key,
			   name)) {
		name[LT_COMM_SIZE - 1] = '\0';
	} else {
		snprintf(name, LT_COMM_SIZE, "?");
	}
	if (f)
		fclose(f);
}

/* A holder's thread that held most, and its name when it changed. */
static void top_thread(struct lt_collector *c, struct side_state *ss, pid_t pid,
		       const struct party_state *ps)
{
	__u32 tid = ps->key.tgid;

	if (tid != ss->tid &&
	    (ps->ns < ss->tid_ns ||
	     (ps->ns == ss->tid_ns && ps->count <= ss->tid_count)))
		return;
	ss->tid_count = ps->count;
	ss->tid_ns = ps->ns;
	if (tid == ss->tid)
		return;
	ss->tid = tid;
	parties_thread_name(c, pid, (pid_t)tid, ss->thread);
}

/* Keeps the top LT_TOP_PARTIES by ns, merging one process's threads. */
/* Puts a process in a lock's top list with its totals, if it ranks. */
static void set_party(struct lt_party *top, size_t *n,
		      const struct lt_party *from)
{
	struct lt_party p;
	pid_t pid = from->pid;
	uint64_t ns = from->ns;
	size_t i, j;

	for (i = 0; i < *n; i++) {
		if (top[i].pid == pid) {
			top[i] = *from;
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
	top[j] = *from;
}

int parties_add_pid(struct lt_collector *c, size_t i, pid_t pid)
{
	struct lock_state *s = &c->locktab.lstate[i];
	size_t k;

	for (k = 0; k < s->n_pids; k++)
		if (s->pids[k] == pid)
			return 0;
	if (lt_grow((void **)&s->pids, &s->cap_pids, s->n_pids + 1,
		    sizeof(*s->pids)))
		return -ENOMEM;
	s->pids[s->n_pids++] = pid;
	c->locktab.locks[i].pids = s->pids;
	c->locktab.locks[i].n_pids = s->n_pids;
	return 0;
}

/*
 * Finds, once, where a party's figures go: its lock's row, its process's
 * side of the lock and the process. Only retire_rows() moves rows, and
 * it renumbers what it moves, so the positions hold until
 * exits_forget() unlinks the party.
 */
static int link_party(struct lt_collector *c, struct party_state *ps,
		      size_t lock)
{
	const struct lt_party_key *pk = &ps->key;
	struct side_key sk = { .lock = pk->lock };
	bool new_side;
	ssize_t k, p;

	sk.pid = pk->role == LT_ROLE_HOLDER ? (__u32)tids_tgid_of(c, pk->tgid) :
					      pk->tgid;
	sk.holder = pk->role != LT_ROLE_WAITER;
	k = lt_index_state(&c->parties.side_ix, (void **)&c->parties.side,
			   &c->parties.n_side, &c->parties.cap_side,
			   sizeof(*c->parties.side), &sk, sizeof(sk),
			   &new_side);
	if (k < 0)
		return (int)k;
	if (c->parties.side[k].dead_at) {
		/* Its PID in use again: another process. */
		c->parties.side[k].dead_at = 0;
		c->parties.side[k].may_hold = 0;
		c->parties.side[k].tid = 0;
		c->retire.n_dead_sides--;
	}
	p = proc_of(c, (pid_t)sk.pid);
	if (p < 0)
		return (int)p;
	if (new_side && !sk.holder &&
	    parties_add_pid(c, lock, c->proctab.procs[p].pid))
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
	struct lt_party party = { 0 };
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
	k = r->slot < LT_MAX_PARTIES ? c->slots.party_row[r->slot] : -1;
	if (k < 0 || memcmp(&c->parties.party[k].key, pk, sizeof(*pk)))
		k = lt_index_find(&c->parties.party_ix, pk, c->parties.party);
	if (k < 0 || !c->parties.party[k].linked) {
		i = lt_index_find(&c->locktab.lock_ix, &pk->lock,
				  c->locktab.lstate);
		if (i < 0)
			return 0; /* a lock whose figures the kernel lost */
		if (k < 0)
			k = lt_index_state(&c->parties.party_ix,
					   (void **)&c->parties.party,
					   &c->parties.n_party,
					   &c->parties.cap_party,
					   sizeof(*c->parties.party), pk,
					   sizeof(*pk), &created);
		else
			c->retire.n_unlinked--; /* its key came back */
		if (k < 0)
			return (int)k;
		err = link_party(c, &c->parties.party[k], (size_t)i);
		if (err)
			return err;
	}
	if (r->slot < LT_MAX_PARTIES)
		c->slots.party_row[r->slot] = k;
	ps = &c->parties.party[k];
	ps->slot = r->slot < LT_MAX_PARTIES ? (__s32)r->slot : -1;
	dcount = diff(r->sum.count, ps->count);
	dns = diff(r->sum.ns, ps->ns);
	ps->count = r->sum.count;
	ps->ns = r->sum.ns;
	if (!dcount && !dns)
		return 0;
	ps->moved_at = c->reading.read_ns;

	l = &c->locktab.locks[ps->lock];
	ss = &c->parties.side[ps->side];
	ss->count += dcount;
	ss->ns += dns;
	proc = &c->proctab.procs[ps->proc];
	party.pid = proc->pid;
	memcpy(party.comm, proc->comm, sizeof(party.comm));
	party.count = ss->count;
	party.ns = ss->ns;
	if (ss->key.holder) {
		/* One that cannot hold it is never shown. */
		if (!parties_may_hold(c, ps->lock, proc->pid))
			return 0;
		if (pk->role == LT_ROLE_HOLDER) {
			top_thread(c, ss, proc->pid, ps);
			party.tid = (pid_t)ss->tid;
			memcpy(party.thread, ss->thread, sizeof(party.thread));
		}
		set_party(l->holders, &l->n_holders, &party);
		return 0;
	}
	set_party(l->waiters, &l->n_waiters, &party);
	if (!lt_kind_is_lock(l->kind))
		return 0;
	proc->delta.waits += dcount;
	proc->delta.wait_ns += dns;
	proc->total.waits += dcount;
	proc->total.wait_ns += dns;
	pst = &c->proctab.pstate[ps->proc];
	if (ss->ns > pst->top_ns) {
		pst->top_ns = ss->ns;
		proc->top_lock = l->id;
	}
	return 0;
}

int parties_read(struct lt_collector *c)
{
	return mapio_run_reader(c, c->obj.reader->progs.lt_read_parties,
				c->obj.party_out, sizeof(*c->obj.party_out),
				&c->obj.reader->bss->n_parties, merge_party);
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

	for (cpu = 0; cpu < c->opts.ncpus; cpu++) {
		sum.count += percpu[cpu].count;
		sum.ns += percpu[cpu].ns;
	}
	i = proc_of(c, (pid_t) * (const __u32 *)key);
	if (i < 0)
		return (int)i;
	p = &c->proctab.procs[i];
	ps = &c->proctab.pstate[i];
	p->delta.io_count = diff(sum.count, ps->io.count);
	p->delta.io_ns = diff(sum.ns, ps->io.ns);
	p->total.io_count += p->delta.io_count;
	p->total.io_ns += p->delta.io_ns;
	ps->io = sum;
	return 0;
}

int parties_read_io(struct lt_collector *c)
{
	return mapio_each_entry(c, bpf_map__fd(c->obj.fileio->maps.proc_io),
				sizeof(__u32), sizeof(struct lt_proc_io), true,
				merge_proc_io, NULL);
}

/* After an exec renamed a process the probes know, every name anew. */
void parties_rename(struct lt_collector *c)
{
	uint64_t renamed =
		__atomic_load_n(&c->obj.futex->bss->renamed, __ATOMIC_RELAXED);
	size_t i;

	if (renamed == c->parties.renamed)
		return;
	c->parties.renamed = renamed;
	for (i = 0; i < c->proctab.n_procs; i++) {
		if (!c->proctab.pstate[i].dead_at)
			lt_proc_comm(bpf_map__fd(c->obj.futex->maps.comms),
				     c->proctab.procs[i].pid,
				     c->proctab.procs[i].comm);
	}
}
