// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * What /proc tells of a process: to the consumers, so that they only
 * draw, and to the collector, for the names it gives.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <linux/types.h>
#include <bpf/bpf.h>
#include "internal.h"

struct lt_proc_parent {
	pid_t pid;
	pid_t ppid;
};

/* Field n (from 1, as proc(5) numbers them) of /proc/PID/stat, or -1. */
static long stat_field(pid_t pid, int n)
{
	char path[64], buf[512], *p;
	size_t len;
	FILE *f;
	int i;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	len = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[len] = 0;
	/* comm may hold spaces; fields count from its closing paren. */
	p = strrchr(buf, ')');
	for (i = 2; p && i < n; i++)
		p = strchr(p + 1, ' ');
	return p ? strtol(p + 1, NULL, 10) : -1;
}

size_t lt_proc_threads(pid_t pid)
{
	long t = stat_field(pid, 20);

	return t > 0 ? (size_t)t : 1;
}

#define PF_KTHREAD 0x00200000 /* include/linux/sched.h */

bool lt_proc_is_kthread(pid_t pid)
{
	long flags = stat_field(pid, 9);

	return flags >= 0 && (flags & PF_KTHREAD);
}

pid_t lt_proc_tgid(pid_t tid)
{
	char path[64], line[128];
	pid_t tgid = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", tid);
	f = fopen(path, "re");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "Tgid: %d", &tgid) == 1)
			break;
	if (f)
		fclose(f);
	return tgid;
}

bool lt_proc_fd_path(pid_t pid, int fd, uint64_t dev, uint64_t ino, char *buf,
		     size_t len)
{
	char link[64];
	struct stat st;
	ssize_t n;

	if (pid <= 0 || fd < 0)
		return false;
	snprintf(link, sizeof(link), "/proc/%d/fd/%d", pid, fd);
	if (stat(link, &st) || st.st_ino != ino ||
	    (dev && st.st_dev != makedev(dev >> 20, dev & 0xfffff)))
		return false;
	n = readlink(link, buf, len - 1);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	return true;
}

void lt_proc_comm(int comms_fd, pid_t pid, char *comm)
{
	__u32 key = pid;
	char path[64];
	FILE *f;

	if (!bpf_map_lookup_elem(comms_fd, &key, comm)) {
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

/* Every process's parent, from /proc/PID/stat; *n of them. */
static struct lt_proc_parent *parents(size_t *n)
{
	struct lt_proc_parent *all = NULL;
	size_t cap = 0;
	struct dirent *e;
	DIR *d = opendir("/proc");

	*n = 0;
	while (d && (e = readdir(d))) {
		char path[64], buf[512], *p;
		long pid = strtol(e->d_name, &p, 10);
		size_t len;
		FILE *f;

		if (pid <= 0 || *p)
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
		f = fopen(path, "re");
		if (!f)
			continue;
		len = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
		buf[len] = 0;
		/* comm may hold spaces; ") S PPID" follows it. */
		p = strrchr(buf, ')');
		if (!p || !p[1] || !p[2] ||
		    lt_grow((void **)&all, &cap, *n + 1, sizeof(*all)))
			continue;
		all[*n].pid = (pid_t)pid;
		all[*n].ppid = (pid_t)strtol(p + 4, NULL, 10);
		(*n)++;
	}
	if (d)
		closedir(d);
	return all;
}

size_t lt_proc_descendants(const pid_t *roots, size_t n_roots, pid_t **out)
{
	struct lt_proc_parent *all;
	size_t n_all, n = 0, cap = 0, i, j, done;
	pid_t *found = NULL;

	all = parents(&n_all);
	for (i = 0; i < n_roots; i++) {
		for (j = 0; j < n_all; j++)
			if (all[j].pid == roots[i])
				all[j].pid = 0; /* found already */
		if (!lt_grow((void **)&found, &cap, n + 1, sizeof(*found)))
			found[n++] = roots[i];
	}
	/* Breadth first: each process found adds its children. */
	for (done = 0; done < n; done++)
		for (j = 0; j < n_all; j++)
			if (all[j].ppid == found[done] && all[j].pid &&
			    !lt_grow((void **)&found, &cap, n + 1,
				     sizeof(*found))) {
				found[n++] = all[j].pid;
				all[j].pid = 0; /* found once */
			}
	free(all);
	*out = found;
	return n;
}

size_t lt_proc_named(const char *comm, pid_t self, pid_t **out)
{
	pid_t *found = NULL;
	size_t n = 0, cap = 0;
	struct dirent *e;
	DIR *d = opendir("/proc");

	while (d && (e = readdir(d))) {
		char path[64], name[64];
		long pid;
		char *end;
		FILE *f;

		pid = strtol(e->d_name, &end, 10);
		if (pid <= 0 || *end || pid == self)
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/comm", pid);
		f = fopen(path, "re");
		if (!f)
			continue;
		if (fgets(name, sizeof(name), f)) {
			name[strcspn(name, "\n")] = '\0';
			if (!strcmp(name, comm) &&
			    !lt_grow((void **)&found, &cap, n + 1,
				     sizeof(*found)))
				found[n++] = (pid_t)pid;
		}
		fclose(f);
	}
	if (d)
		closedir(d);
	*out = found;
	return n;
}
