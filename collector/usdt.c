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
#include "state.h"
#include "providers.h"
#include "futex.skel.h"
#include "usdt.skel.h"

#define USDT_MAX_BINARIES 8
#define USDT_MAX_DIRS 8

struct usdt_state {
	struct usdt_bpf *skel;
	bool failed; /* the object would not load: not tried again */
	char err[256]; /* why it would not */
	struct bpf_link **links;
	size_t n_links, cap_links;
	char bins[USDT_MAX_BINARIES][PATH_MAX]; /* binaries attached */
	size_t n_bins;
	size_t n_ctx; /* entries of map ctx_sites in use */
	/* The objects the probes learned (map objects), as the locks
	 * are named by: their copy, for a lock named after the object
	 * left the map, and to tell which changed. */
	struct usdt_known *known;
	size_t n_known, cap_known;
	struct lt_index known_ix;
	uint64_t objects_seen; /* the probes' objects_changed, copied at */
	char dirs[USDT_MAX_DIRS][PATH_MAX]; /* servers' data directories */
	size_t n_dirs;
};

struct usdt_known {
	struct lt_usdt_object_key key; /* first: the index's key */
	struct lt_usdt_object o;
	size_t dir; /* the data directory of who told it: dirs[dir - 1] */
	bool changed; /* since the locks were last named */
};

/* The probes' epoch and slot generation, as the futex object's. */
void usdt_follow(struct lt_collector *c)
{
	if (!c->naming.usdt || !c->naming.usdt->skel)
		return;
	__atomic_store_n(&c->naming.usdt->skel->bss->epoch,
			 c->obj.futex->bss->epoch, __ATOMIC_RELAXED);
	__atomic_store_n(&c->naming.usdt->skel->bss->slot_gen,
			 c->obj.futex->bss->slot_gen, __ATOMIC_RELAXED);
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
	const struct futex_bpf *f = c->obj.futex;
	struct usdt_bpf *skel = usdt_bpf__open();
	int ret;

	if (!skel)
		return -errno;
	skel->rodata->targ_filter = f->rodata->targ_filter;
	skel->rodata->targ_self = f->rodata->targ_self;
	skel->rodata->targ_stacks = f->rodata->targ_stacks;
	skel->rodata->targ_obj = LT_OBJ_USDT;
	skel->rodata->targ_pidns_ino = f->rodata->targ_pidns_ino;
	skel->rodata->targ_pidns_level = f->rodata->targ_pidns_level;
	set_keep(skel);
	ret = mapio_share_maps(c, skel->obj, "USDT", c->naming.usdt->err,
			       sizeof(c->naming.usdt->err));
	if (!ret)
		ret = usdt_bpf__load(skel);
	if (ret) {
		usdt_bpf__destroy(skel);
		return ret;
	}
	c->naming.usdt->skel = skel;
	usdt_follow(c);
	return 0;
}

/* Tells the usdt object where the binary's wait contexts are. */
static void place_contexts(struct lt_collector *c, const char *path,
			   const char *binary)
{
	struct usdt_state *u = c->naming.usdt;
	struct lt_usdt_ctx_site site;
	size_t i;
	__u32 k;

	for (i = 0; i < lt_n_provider_contexts; i++) {
		if (strcmp(lt_provider_contexts[i].binary, binary) ||
		    u->n_ctx >= LT_USDT_CTX_SITES ||
		    lt_usdt_ctx_site(path, &lt_provider_contexts[i], &site))
			continue;
		k = (__u32)u->n_ctx;
		if (!bpf_map_update_elem(bpf_map__fd(u->skel->maps.ctx_sites),
					 &k, &site, BPF_ANY))
			u->n_ctx++;
	}
}

/* Attaches the table's probes of binary (its base name) to path. */
static void attach_binary(struct lt_collector *c, const char *path,
			  const char *binary)
{
	struct usdt_state *u = c->naming.usdt;
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
		link = bpf_program__attach_usdt(u->skel->progs.lt_usdt, -1,
						path, p->provider, p->probe,
						&opts);
		if (link)
			u->links[u->n_links++] = link;
	}
	place_contexts(c, path, binary);
}

static bool attached(const struct usdt_state *u, const char *path)
{
	size_t i;

	for (i = 0; i < u->n_bins; i++)
		if (!strcmp(u->bins[i], path))
			return true;
	return false;
}

/* A traced process of a binary in the table: its executable's path. */
static const char *server_binary(struct lt_collector *c, pid_t pid, char *path,
				 size_t len)
{
	__u32 key = (__u32)pid;
	__u8 one;

	if (c->obj.futex->rodata->targ_filter &&
	    bpf_map_lookup_elem(bpf_map__fd(c->obj.futex->maps.traced), &key,
				&one))
		return NULL;
	return lt_provider_exe(pid, path, len);
}

/* Attaches to the binary of pid, if it is a server's and new. */
static void consider(struct lt_collector *c, pid_t pid)
{
	struct usdt_state *u = c->naming.usdt;
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

	if (!c->naming.usdt)
		c->naming.usdt = calloc(1, sizeof(*c->naming.usdt));
	if (!c->naming.usdt || c->naming.usdt->failed)
		return;
	proc = opendir("/proc");
	if (!proc)
		return;
	while ((de = readdir(proc)) && !c->naming.usdt->failed)
		if (isdigit((unsigned char)de->d_name[0]))
			consider(c, (pid_t)atoi(de->d_name));
	closedir(proc);
}

/* ---- names ---- */

#define PG_DEFAULT_SPACE 1663 /* pg_default: base/DB/ */
#define PG_GLOBAL_SPACE 1664 /* pg_global: global/ */

/* Whether dir/rel is a regular file with data. */
static bool has_data(const char *dir, const char *rel)
{
	char path[PATH_MAX + LT_NAME_LEN];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	return !stat(path, &st) && S_ISREG(st.st_mode) && st.st_size;
}

/*
 * A relation's file, spc/db/file (a RelFileNode), under a server's
 * data directory dir: base/DB/FILE, global/FILE, or in a tablespace
 * pg_tblspc/SPC/PG_.../DB/FILE. A file with no data is not taken for
 * the relation's: a rewrite (TRUNCATE, VACUUM FULL, CLUSTER) gives a
 * relation a new file and leaves the old one empty until the next
 * checkpoint removes it.
 */
bool lt_relation_file(const char *dir, uint32_t spc, uint32_t db, uint32_t file,
		      char *out, size_t len)
{
	char space[PATH_MAX + 32];
	struct dirent *de;
	bool found = false;
	DIR *d;

	if (spc == PG_GLOBAL_SPACE) {
		snprintf(out, len, "global/%u", file);
		return has_data(dir, out);
	}
	if (spc == PG_DEFAULT_SPACE) {
		snprintf(out, len, "base/%u/%u", db, file);
		return has_data(dir, out);
	}
	/* One directory per server version: the one that has it. */
	snprintf(space, sizeof(space), "%s/pg_tblspc/%u", dir, spc);
	d = opendir(space);
	while (d && !found && (de = readdir(d)))
		if (!strncmp(de->d_name, "PG_", 3)) {
			snprintf(out, len, "pg_tblspc/%u/%s/%u/%u", spc,
				 de->d_name, db, file);
			found = has_data(dir, out);
		}
	if (d)
		closedir(d);
	return found;
}

/* The data directory of a server's process: its working directory. */
static bool data_dir(pid_t pid, char *dir, size_t len)
{
	char link[64];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/%d/cwd", (int)pid);
	n = readlink(link, dir, len - 1);
	if (n <= 0)
		return false;
	dir[n] = '\0';
	return true;
}

/* What a context told of the object of fields 1 and 2 of k, or NULL. */
static const struct usdt_known *learned(const struct lt_collector *c,
					const struct lt_lock_key *k)
{
	const struct usdt_state *u = c->naming.usdt;
	struct lt_usdt_object_key key = {
		.kind = k->kind,
		.field = { (__u32)(k->dev_or_tgid >> 32),
			   (__u32)k->dev_or_tgid },
	};
	ssize_t i;

	if (!u || !u->n_known)
		return NULL;
	i = lt_index_find(&u->known_ix, &key, u->known);
	return i < 0 ? NULL : &u->known[i];
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

/* A relation's file under dir: the one learned (o, or NULL), or else
 * the one named by its OID, as a table's is until a rewrite. */
static bool file_in(const char *dir, const struct lt_lock_key *key,
		    const struct lt_usdt_object *o, char *out, size_t len)
{
	uint32_t db = (uint32_t)(key->dev_or_tgid >> 32);
	uint32_t rel = (uint32_t)key->dev_or_tgid;

	return (o && lt_relation_file(dir, o->space, db, o->file, out, len)) ||
	       (db &&
		lt_relation_file(dir, PG_DEFAULT_SPACE, db, rel, out, len));
}

/*
 * A relation's lock: its file, when found under the data directory of
 * the process that told what the relation is (known, or NULL), or of
 * one that waited on it.
 */
static void add_file(const struct usdt_state *u, struct lt_lock *l,
		     const struct lock_state *s, const struct lt_where *w,
		     const struct usdt_known *known)
{
	const struct lt_usdt_object *o = known ? &known->o : NULL;
	char dir[PATH_MAX], file[LT_NAME_LEN / 2];
	size_t at = strlen(l->name), i;
	bool found;
	pid_t pid;

	found = known && known->dir &&
		file_in(u->dirs[known->dir - 1], &s->key, o, file,
			sizeof(file));
	for (i = 0; !found && i <= s->n_pids; i++) {
		pid = i ? s->pids[i - 1] : w ? (pid_t)w->tgid : 0;
		found = pid > 0 && data_dir(pid, dir, sizeof(dir)) &&
			file_in(dir, &s->key, o, file, sizeof(file));
	}
	if (found)
		snprintf(l->name + at, sizeof(l->name) - at, " %s", file);
}

/* Whether the lock is a relation's: fields 1 and 2 are its OIDs. */
static bool of_relation(const struct lt_provider_kind *k,
			const struct lt_lock_key *key)
{
	uint32_t type = (uint32_t)(key->end >> 32);

	return !key->start && k->types && type < k->n_types &&
	       k->types[type].relation && key->dev_or_tgid;
}

void usdt_name(struct lt_collector *c, struct lt_lock *l,
	       const struct lock_state *s, const struct lt_where *w)
{
	const struct lt_provider_kind *k = lt_provider_kind_of(l->kind);
	uint32_t mode = (uint32_t)s->key.end;
	/* Room for the longest, type N and four fields, and for the
	 * relation's name and the mode after it. */
	char what[LT_NAME_LEN - LT_OBJECT_NAME_LEN - 32], mode_buf[24];
	const struct usdt_known *known;
	const char *how = mode_buf;
	bool relation;

	if (!k)
		return;
	if (mode < k->n_modes)
		how = k->modes[mode];
	else
		snprintf(mode_buf, sizeof(mode_buf), "mode %u", mode);
	object_name(k, &s->key, w, what, sizeof(what));
	snprintf(l->name, sizeof(l->name), "%s %s", what, how);
	/* Identity across runs: without the relation's name and file,
	 * which may be learned or found later. */
	snprintf(l->key, sizeof(l->key), "%s:%.*s", lt_kind_name(l->kind),
		 (int)(sizeof(l->key) - 16), l->name);
	relation = of_relation(k, &s->key);
	known = relation ? learned(c, &s->key) : NULL;
	if (known) /* the relation's name, after its OIDs */
		snprintf(l->name, sizeof(l->name), "%s %s %s", what,
			 known->o.name, how);
	if (known || (relation && (s->key.dev_or_tgid >> 32)))
		add_file(c->naming.usdt, l, s, w, known);
}

/* The data directory of a server's process pid: dirs[return - 1]; 0
 * when not found, or when there are too many. */
static size_t dir_of(struct usdt_state *u, pid_t pid)
{
	char dir[PATH_MAX];
	size_t i;

	if (pid <= 0 || !data_dir(pid, dir, sizeof(dir)))
		return 0;
	for (i = 0; i < u->n_dirs; i++)
		if (!strcmp(u->dirs[i], dir))
			return i + 1;
	if (u->n_dirs == USDT_MAX_DIRS)
		return 0;
	memcpy(u->dirs[u->n_dirs++], dir, sizeof(dir));
	return u->n_dirs;
}

/* One object from the probes' map into the copy: whether it changed. */
static bool copy_object(struct usdt_state *u,
			const struct lt_usdt_object_key *key,
			struct lt_usdt_object *o)
{
	struct usdt_known *k;
	bool created, same;
	size_t dir;
	ssize_t i;
	char *p;

	o->name[sizeof(o->name) - 1] = '\0';
	for (p = o->name; *p; p++) /* printable, as a name must be */
		if ((unsigned char)*p < ' ' || *p == 0x7f)
			*p = '?';
	if (!o->name[0])
		return false;
	i = lt_index_state(&u->known_ix, (void **)&u->known, &u->n_known,
			   &u->cap_known, sizeof(*u->known), key, sizeof(*key),
			   &created);
	if (i < 0)
		return false;
	k = &u->known[i];
	same = !created &&
	       !memcmp(&k->o, o, offsetof(struct lt_usdt_object, tgid));
	if (same && k->dir)
		return false;
	/* Where its file is, from the process that told it (alive: it
	 * waits), in case none of its locks' waiters is left. */
	dir = dir_of(u, (pid_t)o->tgid);
	if (same && !dir)
		return false;
	k->o = *o;
	if (dir)
		k->dir = dir;
	k->changed = true;
	return true;
}

/* The probes' objects, copied: whether any is new or changed. */
static bool copy_objects(struct usdt_state *u)
{
	int fd = bpf_map__fd(u->skel->maps.objects);
	struct lt_usdt_object_key key, next;
	struct lt_usdt_object o;
	bool any = false, first = true;

	if (!u->known_ix.slot &&
	    lt_index_init(&u->known_ix, sizeof(key), sizeof(*u->known)))
		return false;
	while (!bpf_map_get_next_key(fd, first ? NULL : &key, &next)) {
		first = false;
		key = next;
		if (!bpf_map_lookup_elem(fd, &key, &o))
			any |= copy_object(u, &key, &o);
	}
	return any;
}

/*
 * Objects learned since the last time (the probes' objects_changed
 * moved): the locks of the objects new or changed go back among the
 * fresh ones, to be named again with them, so that a lock named before
 * its relation's name was known has it now. Their keys stay.
 */
void usdt_rename(struct lt_collector *c)
{
	const struct lt_provider_kind *k;
	struct usdt_state *u = c->naming.usdt;
	const struct usdt_known *known;
	uint64_t changed;
	size_t i;

	if (!u || !u->skel)
		return;
	changed = __atomic_load_n(&u->skel->bss->objects_changed,
				  __ATOMIC_RELAXED);
	if (changed == u->objects_seen)
		return;
	u->objects_seen = changed;
	if (!copy_objects(u))
		return;
	for (i = 0; i < c->locktab.n_locks; i++) {
		k = lt_provider_kind_of(c->locktab.locks[i].kind);
		if (!k || !c->locktab.lstate[i].named ||
		    !of_relation(k, &c->locktab.lstate[i].key))
			continue;
		known = learned(c, &c->locktab.lstate[i].key);
		if (known && known->changed &&
		    !push_index(&c->locktab.fresh, &c->locktab.n_fresh,
				&c->locktab.cap_fresh, i))
			c->locktab.lstate[i].named = false;
	}
	for (i = 0; i < u->n_known; i++)
		u->known[i].changed = false;
}

void usdt_close(struct lt_collector *c)
{
	size_t i;

	if (!c->naming.usdt)
		return;
	for (i = 0; i < c->naming.usdt->n_links; i++)
		bpf_link__destroy(c->naming.usdt->links[i]);
	free(c->naming.usdt->links);
	usdt_bpf__destroy(c->naming.usdt->skel);
	lt_index_free(&c->naming.usdt->known_ix);
	free(c->naming.usdt->known);
	free(c->naming.usdt);
	c->naming.usdt = NULL;
}

struct bpf_object *usdt_object(const struct lt_collector *c)
{
	return c->naming.usdt && c->naming.usdt->skel ?
		       c->naming.usdt->skel->obj :
		       NULL;
}
