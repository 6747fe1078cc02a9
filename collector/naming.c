// SPDX-License-Identifier: LGPL-2.1-or-later
/* Names for lock addresses, from /proc/PID/maps. */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/types.h>
#include "internal.h"
#include "futex.h"

/* A number of base 16 (or 10) ending at `end`, past which *p moves. */
static bool maps_field(char **p, unsigned int base, char end, uint64_t *out)
{
	char *s = *p;
	uint64_t v = 0;
	unsigned int d;

	for (; *s != end; s++) {
		if (*s >= '0' && *s <= '9')
			d = (unsigned int)(*s - '0');
		else if (base == 16 && *s >= 'a' && *s <= 'f')
			d = (unsigned int)(*s - 'a' + 10);
		else
			return false;
		v = v * base + d;
	}
	if (s == *p)
		return false;
	*out = v;
	*p = s + 1;
	return true;
}

/* "start-end perms pgoff major:minor inode   path" */
int lt_parse_maps_line(char *line, struct lt_vma *vma)
{
	uint64_t maj, min;
	char *p = line;

	if (!maps_field(&p, 16, '-', &vma->start) ||
	    !maps_field(&p, 16, ' ', &vma->end) || strlen(p) < 5 || p[4] != ' ')
		return -1;
	memcpy(vma->perms, p, 4);
	vma->perms[4] = '\0';
	p += 5;
	if (!maps_field(&p, 16, ' ', &vma->pgoff) ||
	    !maps_field(&p, 16, ':', &maj) || !maps_field(&p, 16, ' ', &min))
		return -1;
	vma->ino = 0;
	while (*p >= '0' && *p <= '9')
		vma->ino = vma->ino * 10 + (uint64_t)(*p++ - '0');
	if (*p != ' ' && *p != '\n' && *p)
		return -1;
	vma->dev = (uint32_t)(maj << 20 | min);
	while (*p == ' ' || *p == '\t')
		p++;
	vma->path = p;
	p[strcspn(p, "\n")] = '\0';
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

/* The whole of a /proc file, NUL-ended, in *text (freed by the caller). */
static int read_whole(const char *path, char **text)
{
	size_t n = 0, cap = 0;
	ssize_t got;
	char *t = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	do {
		if (lt_grow((void **)&t, &cap, n + 65536, 1)) {
			free(t);
			close(fd);
			return -ENOMEM;
		}
		got = read(fd, t + n, cap - n - 1);
		if (got > 0)
			n += (size_t)got;
	} while (got > 0);
	close(fd);
	if (got < 0) {
		free(t);
		return -EIO;
	}
	t[n] = '\0';
	*text = t;
	return 0;
}

int lt_vmas_load(pid_t pid, struct lt_vmas *out)
{
	char path[64], *line, *next;
	struct lt_vma *v = NULL;
	size_t n = 0, cap = 0;
	int err;

	out->pid = pid;
	out->v = NULL;
	out->n = 0;
	out->text = NULL;
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	err = read_whole(path, &out->text);
	if (err)
		return err;
	for (line = out->text; *line; line = next) {
		next = line + strcspn(line, "\n");
		if (*next)
			*next++ = '\0';
		if (lt_grow((void **)&v, &cap, n + 1, sizeof(*v))) {
			free(v);
			lt_vmas_free(out);
			return -ENOMEM;
		}
		if (!lt_parse_maps_line(line, &v[n]))
			n++;
	}
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
	free(vmas->text);
	vmas->v = NULL;
	vmas->text = NULL;
	vmas->n = 0;
}

/* Reads pid's mappings into entry v, which held whatever it held. */
static void vmas_reload(struct lt_vma_cache *vc, struct lt_vmas *v, pid_t pid)
{
	lt_vmas_free(v);
	/* gone: none, and the probe's facts name it */
	v->gone = lt_vmas_load(pid, v) != 0;
	v->read = vc->read;
}

/* pid's entry, read now if it has none; the least used makes room. */
static struct lt_vmas *vmas_entry(struct lt_vma_cache *vc, pid_t pid)
{
	struct lt_vmas *v, *victim = NULL;
	size_t i;

	vc->tick++;
	for (i = 0; i < vc->n; i++) {
		v = &vc->v[i];
		if (v->pid == pid) {
			v->used = vc->tick;
			if (v->read + LT_VMA_KEEP_READS < vc->read)
				vmas_reload(vc, v, pid);
			return v;
		}
		if (!victim || v->used < victim->used)
			victim = v;
	}
	if (vc->n < LT_VMA_CACHE) {
		v = &vc->v[vc->n++];
	} else {
		v = victim;
		lt_vmas_free(v);
	}
	memset(v, 0, sizeof(*v));
	vmas_reload(vc, v, pid);
	v->used = vc->tick;
	return v;
}

const struct lt_vmas *lt_vma_cache_get(struct lt_vma_cache *vc, pid_t pid)
{
	return vmas_entry(vc, pid);
}

const struct lt_vmas *lt_vma_cache_fresh(struct lt_vma_cache *vc, pid_t pid)
{
	struct lt_vmas *v = vmas_entry(vc, pid);

	if (v->read != vc->read)
		vmas_reload(vc, v, pid);
	return v;
}

const struct lt_vma *lt_vma_cache_find(struct lt_vma_cache *vc, pid_t pid,
				       uint64_t addr)
{
	const struct lt_vma *vma = lt_vmas_find(vmas_entry(vc, pid), addr);
	const struct lt_vmas *v;

	return vma ? vma : lt_vma_cache_find_fresh(vc, pid, addr, &v);
}

const struct lt_vma *lt_vma_cache_find_fresh(struct lt_vma_cache *vc, pid_t pid,
					     uint64_t addr,
					     const struct lt_vmas **vmas)
{
	struct lt_vmas *v = vmas_entry(vc, pid);
	const struct lt_vma *vma;

	if (v->read != vc->read)
		vmas_reload(vc, v, pid);
	vma = lt_vmas_find(v, addr);
	if (!vma && !v->gone && v->again != vc->read + 1) {
		vmas_reload(vc, v, pid);
		v->again = vc->read + 1;
		vma = lt_vmas_find(v, addr);
	}
	*vmas = v;
	return vma;
}

void lt_vma_cache_next_read(struct lt_vma_cache *vc)
{
	vc->read++;
}

void lt_vma_cache_drop(struct lt_vma_cache *vc, pid_t pid)
{
	size_t i;

	for (i = 0; i < vc->n; i++) {
		if (vc->v[i].pid != pid)
			continue;
		lt_vmas_free(&vc->v[i]);
		vc->v[i] = vc->v[--vc->n];
		return;
	}
}

void lt_vma_cache_forget(struct lt_vma_cache *vc)
{
	size_t i;

	for (i = 0; i < vc->n; i++)
		lt_vmas_free(&vc->v[i]);
	vc->n = 0;
}

bool lt_image_key_of(const struct lt_vma *vma, uint64_t addr, uint32_t tag,
		     struct lt_image_key *k)
{
	if (!vma || !vma->ino || vma->path[0] != '/' || vma->perms[1] == 'w' ||
	    vma->perms[3] != 'p' || addr < vma->start || addr >= vma->end)
		return false;
	memset(k, 0, sizeof(*k));
	k->dev = vma->dev;
	k->ino = vma->ino;
	k->off = addr - vma->start + vma->pgoff;
	k->tag = tag;
	return true;
}

void *lt_image_memo_state(struct lt_image_memo *m, size_t size,
			  const struct lt_image_key *k, bool *created)
{
	ssize_t i;

	*created = false;
	if (!m->ix) {
		m->ix = calloc(1, sizeof(*m->ix));
		if (!m->ix || lt_index_init(m->ix, sizeof(*k), size)) {
			free(m->ix);
			m->ix = NULL;
			return NULL;
		}
	}
	i = lt_index_find(m->ix, k, m->states);
	if (i < 0 && m->n >= LT_IMAGE_MEMO)
		return NULL;
	if (i < 0)
		i = lt_index_state(m->ix, &m->states, &m->n, &m->cap, size, k,
				   sizeof(*k), created);
	return i < 0 ? NULL : (char *)m->states + (size_t)i * size;
}

void lt_image_memo_free(struct lt_image_memo *m)
{
	if (m->ix)
		lt_index_free(m->ix);
	free(m->ix);
	free(m->states);
	memset(m, 0, sizeof(*m));
}
