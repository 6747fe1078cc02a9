/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Collector internals shared between its files; not installed. */
#ifndef LOCKTOP_COLLECTOR_INTERNAL_H
#define LOCKTOP_COLLECTOR_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * Checks what the probes need and mends what it can (tracefs). Returns 0,
 * or a negative errno with a message naming the fix in err.
 */
int lt_check_environment(char *err, size_t err_len);

/* One line of /proc/PID/maps. */
struct lt_vma {
	uint64_t start, end, pgoff;
	char perms[5];
	char path[256];
};

/* Parses one maps line; returns 0 on success, -1 when it is not one. */
int lt_parse_maps_line(const char *line, struct lt_vma *vma);

/* A person's name for address addr inside vma (NULL vma: not mapped). */
void lt_name_address(const struct lt_vma *vma, uint64_t addr, char *buf,
		     size_t len);

struct lt_futex_where;

/*
 * A name from what the probe saw at the first wait. Returns false when
 * only the full path, from /proc, would do (a shared file).
 */
bool lt_name_where(const struct lt_futex_where *w, uint64_t addr, char *buf,
		   size_t len);

/* The mappings of one process, sorted by address. */
struct lt_vmas {
	pid_t pid;
	struct lt_vma *v;
	size_t n;
};

int lt_vmas_load(pid_t pid, struct lt_vmas *out);
const struct lt_vma *lt_vmas_find(const struct lt_vmas *vmas, uint64_t addr);
void lt_vmas_free(struct lt_vmas *vmas);

#endif /* LOCKTOP_COLLECTOR_INTERNAL_H */
