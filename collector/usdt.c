// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Servers' own lock probes (USDT): the usdt object is loaded, and its
 * program attached to a server's binary, only once a process of that
 * binary is seen (when the collector opens, then at each read), so
 * that without such a server nothing changes. The probes to attach and
 * how their locks are named are the table of providers' (providers.c).
 */
#include <ctype.h>
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "room.h"
#include "providers.h"
#include "futex.skel.h"
#include "usdt.skel.h"

#define USDT_MAX_BINARIES 8

struct usdt_state {
	struct usdt_bpf *skel;
	bool failed; /* the object would not load: not tried again */
	char err[256]; /* why it would not */
	struct bpf_link **links;
	size_t n_links, cap_links;
	char bins[USDT_MAX_BINARIES][PATH_MAX]; /* binaries attached */
	size_t n_bins;
};

/* The probes' epoch and slot generation, as the futex object's. */
void usdt_follow(struct lt_collector *c)
{
	if (!c->usdt || !c->usdt->skel)
		return;
	__atomic_store_n(&c->usdt->skel->bss->epoch, c->futex->bss->epoch,
			 __ATOMIC_RELAXED);
	__atomic_store_n(&c->usdt->skel->bss->slot_gen, c->futex->bss->slot_gen,
			 __ATOMIC_RELAXED);
}

/* The keys' fields each type keeps, and where an object argument holds
 * its fields, from the table of kinds. */
static void set_keep(struct usdt_bpf *skel)
{
	const struct lt_provider_kind *k;
	size_t i, t, row;

	for (i = 0; i < lt_n_provider_kinds; i++) {
		k = &lt_provider_kinds[i];
		row = (size_t)k->kind - LT_PK_USDT_FIRST;
		if (row >= LT_USDT_KINDS)
			continue;
		for (t = 0; t < k->n_types && t < LT_USDT_TYPES; t++)
			skel->rodata->targ_keep[row][t] = k->types[t].keep;
		memcpy(skel->rodata->targ_object_at[row], k->object_at,
		       sizeof(k->object_at));
	}
}

/* Opens and loads the usdt object, counting into the shared maps. */
static int load(struct lt_collector *c)
{
	const struct futex_bpf *f = c->futex;
	struct usdt_bpf *skel = usdt_bpf__open();
	int ret;

	if (!skel)
		return -errno;
	skel->rodata->targ_filter = f->rodata->targ_filter;
	skel->rodata->targ_self = f->rodata->targ_self;
	skel->rodata->targ_stacks = f->rodata->targ_stacks;
	skel->rodata->targ_obj = LT_OBJ_NR; /* its runs are not counted */
	skel->rodata->targ_pidns_ino = f->rodata->targ_pidns_ino;
	skel->rodata->targ_pidns_level = f->rodata->targ_pidns_level;
	set_keep(skel);
	ret = life_share_maps(c, skel->obj, "USDT", c->usdt->err,
			      sizeof(c->usdt->err));
	if (!ret)
		ret = usdt_bpf__load(skel);
	if (ret) {
		usdt_bpf__destroy(skel);
		return ret;
	}
	c->usdt->skel = skel;
	usdt_follow(c);
	return 0;
}

/* A function of the binary, entered: a uprobe at its symbol. */
static struct bpf_link *attach_function(struct usdt_bpf *skel, const char *path,
					const char *func, uint64_t cookie)
{
	LIBBPF_OPTS(bpf_uprobe_opts, opts, .func_name = func,
		    .bpf_cookie = cookie);

	return bpf_program__attach_uprobe_opts(skel->progs.lt_usdt_fn, -1, path,
					       0, &opts);
}

/* Attaches the table's probes of binary (its base name) to path. */
static void attach_binary(struct lt_collector *c, const char *path,
			  const char *binary)
{
	struct usdt_state *u = c->usdt;
	const struct lt_provider_probe *p;
	struct bpf_link *link;
	size_t i;

	for (i = 0; i < lt_n_provider_probes; i++) {
		LIBBPF_OPTS(bpf_usdt_opts, opts);

		p = &lt_provider_probes[i];
		if (!p->on || strcmp(p->binary, binary))
			continue;
		opts.usdt_cookie = lt_provider_cookie(p);
		if (!opts.usdt_cookie ||
		    lt_grow((void **)&u->links, &u->cap_links, u->n_links + 1,
			    sizeof(*u->links)))
			continue;
		/* Every process of the binary, now and later; the probe
		 * itself keeps to the traced set. */
		if (p->provider)
			link = bpf_program__attach_usdt(u->skel->progs.lt_usdt,
							-1, path, p->provider,
							p->probe, &opts);
		else
			link = attach_function(u->skel, path, p->probe,
					       opts.usdt_cookie);
		if (link)
			u->links[u->n_links++] = link;
	}
}

static bool attached(const struct usdt_state *u, const char *path)
{
	size_t i;

	for (i = 0; i < u->n_bins; i++)
		if (!strcmp(u->bins[i], path))
			return true;
	return false;
}

/* A process of a binary in the table: its executable's path. */
static const char *server_binary(struct lt_collector *c, pid_t pid, char *path,
				 size_t len)
{
	char link[64], *base, *deleted;
	__u32 key = (__u32)pid;
	__u8 one;
	ssize_t n;
	size_t i;

	if (c->futex->rodata->targ_filter &&
	    bpf_map_lookup_elem(bpf_map__fd(c->futex->maps.traced), &key, &one))
		return NULL;
	snprintf(link, sizeof(link), "/proc/%d/exe", (int)pid);
	n = readlink(link, path, len - 1);
	if (n <= 0)
		return NULL;
	path[n] = '\0';
	deleted = strstr(path, " (deleted)");
	if (deleted)
		return NULL; /* replaced: its probes are not at that path */
	base = strrchr(path, '/');
	base = base ? base + 1 : path;
	for (i = 0; i < lt_n_provider_probes; i++)
		if (lt_provider_probes[i].on &&
		    !strcmp(lt_provider_probes[i].binary, base))
			return lt_provider_probes[i].binary;
	return NULL;
}

/* Attaches to the binary of pid, if it is a server's and new. */
static void consider(struct lt_collector *c, pid_t pid)
{
	struct usdt_state *u = c->usdt;
	char path[PATH_MAX];
	const char *binary = server_binary(c, pid, path, sizeof(path));

	if (!binary || attached(u, path) || u->n_bins == USDT_MAX_BINARIES)
		return;
	if (!u->skel && load(c)) {
		u->failed = true;
		return;
	}
	attach_binary(c, path, binary);
	snprintf(u->bins[u->n_bins++], sizeof(u->bins[0]), "%s", path);
}

void usdt_scan(struct lt_collector *c)
{
	struct dirent *de;
	DIR *proc;

	if (!c->usdt)
		c->usdt = calloc(1, sizeof(*c->usdt));
	if (!c->usdt || c->usdt->failed)
		return;
	proc = opendir("/proc");
	if (!proc)
		return;
	while ((de = readdir(proc)) && !c->usdt->failed)
		if (isdigit((unsigned char)de->d_name[0]))
			consider(c, (pid_t)atoi(de->d_name));
	closedir(proc);
}

/* ---- names ---- */

/*
 * base/DB/REL, when pid's working directory (a server's data directory)
 * has it. This relies on a relation's file being named by its OID, as a
 * table's is until a rewrite (TRUNCATE, VACUUM FULL, CLUSTER) gives it
 * a new relfilenode: the old file then stays empty until the next
 * checkpoint removes it, so an empty file is not taken for the
 * relation's. A rewritten relation has no file named here.
 */
static bool relation_file(pid_t pid, uint32_t db, uint32_t rel, char *out,
			  size_t len)
{
	char link[64], dir[PATH_MAX], file[PATH_MAX + 32];
	struct stat st;
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/%d/cwd", (int)pid);
	n = readlink(link, dir, sizeof(dir) - 1);
	if (n <= 0)
		return false;
	dir[n] = '\0';
	snprintf(file, sizeof(file), "%s/base/%u/%u", dir, db, rel);
	if (stat(file, &st) || !S_ISREG(st.st_mode) || !st.st_size)
		return false;
	snprintf(out, len, "base/%u/%u", db, rel);
	return true;
}

/* What the lock is: a name from the probe, or its type and fields. */
static void object_name(const struct lt_provider_kind *k,
			const struct lt_lock_key *key, const struct lt_where *w,
			char *out, size_t len)
{
	uint32_t type = (uint32_t)(key->end >> 32), i;
	uint32_t f[4] = { (uint32_t)(key->dev_or_tgid >> 32),
			  (uint32_t)key->dev_or_tgid,
			  (uint32_t)(key->ino >> 32), (uint32_t)key->ino };
	const struct lt_provider_type *t;
	size_t at;

	if (key->start) {
		if (w && w->file[0])
			snprintf(out, len, "%s", w->file);
		else
			snprintf(out, len, "#%016llx",
				 (unsigned long long)key->start);
		return;
	}
	if (!k->types || type >= k->n_types) {
		snprintf(out, len, "type %u %u/%u/%u/%u", type, f[0], f[1],
			 f[2], f[3]);
		return;
	}
	t = &k->types[type];
	at = (size_t)snprintf(out, len, "%s", t->name);
	if (t->keep & LT_KEEP_CONTEXT) {
		if (f[1] && at < len) /* waited for on a row of f1/f2 */
			snprintf(out + at, len - at, " on %u/%u", f[0], f[1]);
		return;
	}
	for (i = 0; i < 4 && at < len; i++)
		if (t->keep & (1U << i))
			at += (size_t)snprintf(
				out + at, len - at, "%s%u",
				at && out[at - 1] != ' ' && i ? "/" : " ",
				f[i]);
}

/* A relation's lock: its file under the data directory, when found. */
static void add_file(struct lt_lock *l, const struct lock_state *s,
		     const struct lt_where *w)
{
	uint32_t db = (uint32_t)(s->key.dev_or_tgid >> 32);
	uint32_t rel = (uint32_t)s->key.dev_or_tgid;
	size_t at = strlen(l->name), i;
	char file[64];
	pid_t pid;

	for (i = 0; i <= s->n_pids; i++) {
		pid = i ? s->pids[i - 1] : w ? (pid_t)w->tgid : 0;
		if (pid > 0 &&
		    relation_file(pid, db, rel, file, sizeof(file))) {
			snprintf(l->name + at, sizeof(l->name) - at, " %s",
				 file);
			return;
		}
	}
}

bool usdt_name(struct lt_collector *c, struct lt_lock *l,
	       const struct lock_state *s, const struct lt_where *w)
{
	const struct lt_provider_kind *k = lt_provider_kind_of(l->kind);
	uint32_t mode = (uint32_t)s->key.end, type = s->key.end >> 32;
	char what[LT_NAME_LEN / 2], mode_buf[24];
	const char *how = mode_buf;

	if (!k)
		return false;
	if (mode < k->n_modes)
		how = k->modes[mode];
	else
		snprintf(mode_buf, sizeof(mode_buf), "mode %u", mode);
	object_name(k, &s->key, w, what, sizeof(what));
	snprintf(l->name, sizeof(l->name), "%s %s", what, how);
	/* Identity across runs: without a file that may not be found. */
	snprintf(l->key, sizeof(l->key), "%s:%.*s", lt_kind_name(l->kind),
		 (int)(sizeof(l->key) - 16), l->name);
	if (!s->key.start && k->types && type < k->n_types &&
	    k->types[type].relation && (s->key.dev_or_tgid >> 32))
		add_file(l, s, w);
	if (w && !l->comm[0])
		locks_read_comm(c, (pid_t)w->tgid, l->comm);
	if (!l->comm[0] && s->n_pids)
		locks_read_comm(c, s->pids[0], l->comm);
	return true;
}

void usdt_close(struct lt_collector *c)
{
	size_t i;

	if (!c->usdt)
		return;
	for (i = 0; i < c->usdt->n_links; i++)
		bpf_link__destroy(c->usdt->links[i]);
	free(c->usdt->links);
	usdt_bpf__destroy(c->usdt->skel);
	free(c->usdt);
	c->usdt = NULL;
}
