// SPDX-License-Identifier: LGPL-2.1-or-later
/* Names for lock addresses, from /proc/PID/maps. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/types.h>
#include "internal.h"
#include "futex.h"

int lt_parse_maps_line(const char *line, struct lt_vma *vma)
{
	unsigned long long start, end, pgoff;
	char perms[5];
	int pos = 0;
	size_t n;
	const char *path;

	if (sscanf(line, "%llx-%llx %4s %llx %*s %*u%n", &start, &end, perms,
		   &pgoff, &pos) < 4 ||
	    !pos)
		return -1;
	vma->start = start;
	vma->end = end;
	vma->pgoff = pgoff;
	memcpy(vma->perms, perms, sizeof(vma->perms));
	path = line + pos;
	while (*path == ' ' || *path == '\t')
		path++;
	n = strcspn(path, "\n");
	if (n >= sizeof(vma->path))
		n = sizeof(vma->path) - 1;
	memcpy(vma->path, path, n);
	vma->path[n] = '\0';
	return 0;
}

void lt_vma_path(const struct lt_vma *vma, char *buf, size_t len)
{
	size_t n = strlen(vma->path);

	if (n > 10 && !strcmp(vma->path + n - 10, " (deleted)"))
		n -= 10;
	if (n >= len)
		n = len - 1;
	memcpy(buf, vma->path, n);
	buf[n] = '\0';
}

void lt_name_address(const struct lt_vma *vma, uint64_t addr, char *buf,
		     size_t len)
{
	const char *path, *base;
	char clean[256];

	if (!vma) {
		snprintf(buf, len, "0x%" PRIx64, addr);
		return;
	}
	/* Anonymous memory (a malloc arena's heap, an mmap): the mapping
	 * by its start, and the offset in it. */
	if (!vma->path[0]) {
		snprintf(buf, len, "[anon@0x%" PRIx64 "]+0x%" PRIx64,
			 vma->start, addr - vma->start);
		return;
	}
	path = vma->path;
	if (path[0] == '[') {
		/* [heap], [stack]: the offset from the mapping's start */
		snprintf(buf, len, "%s+0x%" PRIx64, path, addr - vma->start);
		return;
	}
	lt_vma_path(vma, clean, sizeof(clean));
	/*
	 * A private mapping is a program or library image: its base name
	 * says enough. A shared one is data that people know by its path.
	 */
	base = clean;
	if (vma->perms[3] == 'p' && strrchr(clean, '/'))
		base = strrchr(clean, '/') + 1;
	snprintf(buf, len, "%s+0x%" PRIx64, base,
		 addr - vma->start + vma->pgoff);
}

const struct lt_vma *lt_vmas_image(const struct lt_vmas *vmas,
				   const struct lt_vma *v)
{
	const struct lt_vma *prev;

	if (v->perms[3] != 'p')
		return NULL;
	if (v->path[0] == '/')
		return v;
	if (v->path[0] || v <= vmas->v || v >= vmas->v + vmas->n)
		return NULL;
	/* .bss past the file's last page: the anonymous mapping right
	 * after the image's last one. */
	prev = v - 1;
	if (prev->end == v->start && prev->perms[3] == 'p' &&
	    prev->path[0] == '/')
		return prev;
	return NULL;
}

bool lt_name_where(const struct lt_where *w, uint64_t addr, char *buf,
		   size_t len)
{
	if (w->flags & LT_VMA_FILE) {
		if (w->flags & LT_VMA_SHARED)
			return false;
		snprintf(buf, len, "%s+0x%llx", w->file,
			 (unsigned long long)w->offset);
	} else if (w->flags & (LT_VMA_HEAP | LT_VMA_STACK)) {
		snprintf(buf, len, "%s+0x%" PRIx64,
			 w->flags & LT_VMA_HEAP ? "[heap]" : "[stack]",
			 addr - (uint64_t)w->vm_start);
	} else {
		snprintf(buf, len, "[anon@0x%llx]+0x%" PRIx64,
			 (unsigned long long)w->vm_start,
			 addr - (uint64_t)w->vm_start);
	}
	return true;
}

static int cmp_vma(const void *a, const void *b)
{
	const struct lt_vma *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

int lt_vmas_load(pid_t pid, struct lt_vmas *out)
{
	char path[64], line[512];
	struct lt_vma *v = NULL;
	size_t n = 0, cap = 0;
	FILE *f;

	out->pid = pid;
	out->v = NULL;
	out->n = 0;
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (lt_grow((void **)&v, &cap, n + 1, sizeof(*v))) {
			free(v);
			fclose(f);
			return -ENOMEM;
		}
		if (!lt_parse_maps_line(line, &v[n]))
			n++;
	}
	fclose(f);
	if (n)
		qsort(v, n, sizeof(*v), cmp_vma);
	out->v = v;
	out->n = n;
	return 0;
}

const struct lt_vma *lt_vmas_find(const struct lt_vmas *vmas, uint64_t addr)
{
	size_t lo = 0, hi = vmas->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct lt_vma *m = &vmas->v[mid];

		if (addr < m->start)
			hi = mid;
		else if (addr >= m->end)
			lo = mid + 1;
		else
			return m;
	}
	return NULL;
}

void lt_vmas_free(struct lt_vmas *vmas)
{
	free(vmas->v);
	vmas->v = NULL;
	vmas->n = 0;
}

const struct lt_vmas *lt_vma_cache_get(struct lt_vma_cache *vc, pid_t pid)
{
	struct lt_vmas *v;
	size_t i;

	for (i = 0; i < vc->n; i++)
		if (vc->v[i].pid == pid)
			return &vc->v[i];
	if (vc->n == LT_VMA_CACHE) {
		lt_vmas_free(&vc->v[0]);
		memmove(&vc->v[0], &vc->v[1],
			(LT_VMA_CACHE - 1) * sizeof(vc->v[0]));
		vc->n--;
	}
	v = &vc->v[vc->n++];
	lt_vmas_load(pid, v); /* gone: none, and the probe's facts name it */
	return v;
}

const struct lt_vma *lt_vma_cache_find(struct lt_vma_cache *vc, pid_t pid,
				       uint64_t addr)
{
	return lt_vmas_find(lt_vma_cache_get(vc, pid), addr);
}

void lt_vma_cache_forget(struct lt_vma_cache *vc)
{
	size_t i;

	for (i = 0; i < vc->n; i++)
		lt_vmas_free(&vc->v[i]);
	vc->n = 0;
}
