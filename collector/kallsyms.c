// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The kernel's symbols, from /proc/kallsyms: kernel lock names, callers.
 * Without CONFIG_KALLSYMS_ALL it lists no data but the sections' bounds;
 * the data symbols then come from the build's System.map, moved by the
 * offset KASLR gave the image.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include "internal.h"

struct ksym {
	uint64_t addr;
	uint32_t name; /* offset into names */
	char type;
};

struct lt_ksyms {
	struct ksym *v;
	size_t n, cap;
	char *names;
	size_t names_len, names_cap;
	uint64_t sdata, end; /* the image's data; 0 when not listed */
	uint64_t lock_start, lock_end; /* lock and scheduler text */
	uint64_t sched_start, sched_end;
};

static int add_name(struct lt_ksyms *k, const char *name, uint32_t *at)
{
	size_t len = strlen(name) + 1;

	if (lt_grow((void **)&k->names, &k->names_cap, k->names_len + len, 1))
		return -1;
	memcpy(k->names + k->names_len, name, len);
	*at = (uint32_t)k->names_len;
	k->names_len += len;
	return 0;
}

/* The bounds the file marks with symbols of their own. */
static void note_bound(struct lt_ksyms *k, const char *name, uint64_t addr)
{
	static const struct {
		const char *name;
		size_t at;
	} bounds[] = {
		{ "_sdata", offsetof(struct lt_ksyms, sdata) },
		{ "_end", offsetof(struct lt_ksyms, end) },
		{ "__lock_text_start", offsetof(struct lt_ksyms, lock_start) },
		{ "__lock_text_end", offsetof(struct lt_ksyms, lock_end) },
		{ "__sched_text_start",
		  offsetof(struct lt_ksyms, sched_start) },
		{ "__sched_text_end", offsetof(struct lt_ksyms, sched_end) },
	};
	size_t i;

	for (i = 0; i < sizeof(bounds) / sizeof(bounds[0]); i++)
		if (!strcmp(name, bounds[i].name))
			*(uint64_t *)((char *)k + bounds[i].at) = addr;
}

static int cmp_ksym(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* A kallsyms or System.map line: address, type and name; false when
 * not one. */
static bool sym_line(const char *line, uint64_t *addr, char *type, char *name)
{
	unsigned long long a;

	if (sscanf(line, "%llx %c %255s", &a, type, name) != 3)
		return false;
	*addr = a;
	return true;
}

/* One more symbol; 0, or -1 out of memory. */
static int add_sym(struct lt_ksyms *k, uint64_t addr, char type,
		   const char *name)
{
	struct ksym *s;

	note_bound(k, name, addr);
	if (lt_grow((void **)&k->v, &k->cap, k->n + 1, sizeof(*k->v)))
		return -1;
	s = &k->v[k->n];
	s->addr = addr;
	s->type = type;
	if (add_name(k, name, &s->name))
		return -1;
	k->n++;
	return 0;
}

static int load_line(struct lt_ksyms *k, const char *line)
{
	char type, name[256];
	uint64_t addr;

	if (!sym_line(line, &addr, &type, name) || !addr)
		return 0; /* no addresses shown: not ours to read */
	return add_sym(k, addr, type, name);
}

uint64_t lt_ksyms_addr(const struct lt_ksyms *k, const char *name)
{
	size_t i;

	for (i = 0; i < k->n; i++)
		if (!strcmp(k->names + k->v[i].name, name))
			return k->v[i].addr;
	return 0;
}

/*
 * The symbols that tie a System.map to the running image: the first
 * gives KASLR's offset, the others, where both list them, must agree
 * with it, or the map is another build's.
 */
static const char *const map_anchors[] = { "_text", "_etext", "start_kernel" };
#define N_ANCHORS (sizeof(map_anchors) / sizeof(map_anchors[0]))

/* The map's addresses of the anchors; 0 for one it lacks. */
static void map_anchor_addrs(FILE *f, uint64_t *at)
{
	char line[512], name[256], type;
	uint64_t addr;
	size_t i;

	while (fgets(line, sizeof(line), f))
		if (sym_line(line, &addr, &type, name))
			for (i = 0; i < N_ANCHORS; i++)
				if (!strcmp(name, map_anchors[i]))
					at[i] = addr;
}

int lt_ksyms_add_map(struct lt_ksyms *k, const char *path)
{
	uint64_t map_at[N_ANCHORS] = { 0 }, here, off, addr;
	char line[512], name[256], type;
	FILE *f;
	size_t i;
	int ret = -1;

	f = k ? fopen(path, "re") : NULL;
	if (!f)
		return -1;
	map_anchor_addrs(f, map_at);
	here = lt_ksyms_addr(k, map_anchors[0]);
	if (!here || !map_at[0])
		goto out;
	off = here - map_at[0];
	for (i = 1; i < N_ANCHORS; i++) {
		here = lt_ksyms_addr(k, map_anchors[i]);
		if (here && map_at[i] && here != map_at[i] + off)
			goto out;
	}
	rewind(f);
	while (fgets(line, sizeof(line), f)) {
		/* Data only: the text is in kallsyms already. */
		if (!sym_line(line, &addr, &type, name) ||
		    !strchr("dDbBrR", type))
			continue;
		if (add_sym(k, addr + off, type, name))
			goto out;
	}
	qsort(k->v, k->n, sizeof(*k->v), cmp_ksym);
	ret = 0;
out:
	fclose(f);
	return ret;
}

struct lt_ksyms *lt_ksyms_load_running(void)
{
	struct lt_ksyms *k = lt_ksyms_load("/proc/kallsyms");
	char path[128];
	struct utsname u;

	if (k && !k->sdata && !uname(&u)) {
		snprintf(path, sizeof(path), "/boot/System.map-%s", u.release);
		lt_ksyms_add_map(k, path);
	}
	return k;
}

struct lt_ksyms *lt_ksyms_load(const char *path)
{
	struct lt_ksyms *k = calloc(1, sizeof(*k));
	char line[512];
	FILE *f;

	if (!k)
		return NULL;
	f = fopen(path, "re");
	if (!f)
		return k; /* empty: every lookup finds nothing */
	while (fgets(line, sizeof(line), f))
		if (load_line(k, line))
			break;
	fclose(f);
	if (k->n)
		qsort(k->v, k->n, sizeof(*k->v), cmp_ksym);
	return k;
}

void lt_ksyms_free(struct lt_ksyms *k)
{
	if (!k)
		return;
	free(k->v);
	free(k->names);
	free(k);
}

const char *lt_ksyms_find(const struct lt_ksyms *k, uint64_t addr, char *type,
			  uint64_t *off)
{
	size_t lo = 0, hi = k ? k->n : 0;

	/* The last symbol at or below addr. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (k->v[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	*type = k->v[lo - 1].type;
	*off = addr - k->v[lo - 1].addr;
	return k->names + k->v[lo - 1].name;
}

bool lt_ksyms_static(const struct lt_ksyms *k, uint64_t addr)
{
	return k && k->sdata && k->end > k->sdata && addr >= k->sdata &&
	       addr < k->end;
}

bool lt_ksyms_lock_text(const struct lt_ksyms *k, uint64_t addr)
{
	return k && ((addr >= k->lock_start && addr < k->lock_end) ||
		     (addr >= k->sched_start && addr < k->sched_end));
}
