// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The CPU time of the processes given to `locktop record --pid` and of
 * their descendants, from /proc/PID/stat, read at every interval.
 *
 * A process's utime and stime cover all its threads, the ended ones
 * too; its cutime and cstime cover the children it waited for, with
 * theirs. The tree's time is therefore the sum over its live processes
 * of all four: a child that ends and is reaped moves its share into its
 * parent's cutime and cstime, and counts once. A process that ended
 * while its parent was not in the tree (a root, or a child of an ended
 * parent) keeps the last value read: what it spent after that read is
 * not counted, and the record says how many processes ended so.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "proc_cpu.h"

struct proc_entry {
	pid_t pid;
	pid_t ppid;
	unsigned long long start; /* starttime: a reused PID is another */
	unsigned long long user; /* utime + cutime, in ticks */
	unsigned long long sys; /* stime + cstime */
	bool alive; /* seen by the last sample */
};

struct proc_cpu {
	pid_t roots[PROC_CPU_MAX_ROOTS];
	size_t n_roots;
	struct proc_entry *e;
	size_t n, cap;
	/* Ended processes no parent in the tree waited for: last values. */
	unsigned long long gone_user, gone_sys;
	double base_user, base_sys; /* seconds at proc_cpu_start() */
	bool started;
	size_t lost; /* ended with a parent outside the tree */
	long hz;
};

/* One /proc/PID/stat; false when it is gone or unreadable. */
static bool read_stat(pid_t pid, struct proc_entry *out)
{
	unsigned long long ut, st, start;
	long long cut, cst;
	char path[64], buf[1024], *p;
	int ppid;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* The command name may hold spaces and parentheses: after the last. */
	p = strrchr(buf, ')');
	if (!p ||
	    sscanf(p + 1,
		   " %*c %d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %lld "
		   "%lld %*d %*d %*d %*d %llu",
		   &ppid, &ut, &st, &cut, &cst, &start) != 6)
		return false;
	out->pid = pid;
	out->ppid = ppid;
	out->start = start;
	out->user = ut + (unsigned long long)(cut > 0 ? cut : 0);
	out->sys = st + (unsigned long long)(cst > 0 ? cst : 0);
	return true;
}

static struct proc_entry *find(struct proc_cpu *pc, pid_t pid)
{
	for (size_t i = 0; i < pc->n; i++)
		if (pid > 0 && pc->e[i].pid == pid)
			return &pc->e[i];
	return NULL;
}

static bool is_root(const struct proc_cpu *pc, pid_t pid)
{
	for (size_t i = 0; i < pc->n_roots; i++)
		if (pc->roots[i] == pid)
			return true;
	return false;
}

static int add_entry(struct proc_cpu *pc, const struct proc_entry *e)
{
	struct proc_entry *ne;

	if (pc->n == pc->cap) {
		size_t cap = pc->cap ? pc->cap * 2 : 64;

		ne = realloc(pc->e, cap * sizeof(*ne));
		if (!ne)
			return -ENOMEM;
		pc->e = ne;
		pc->cap = cap;
	}
	pc->e[pc->n++] = *e;
	return 0;
}

/*
 * Every process of the system once, in PID order of the directory; a
 * process joins the tree when it is a root or its parent is in it.
 * Children listed before their parents join at the next pass, which
 * runs while the tree grows.
 */
static int scan(struct proc_cpu *pc)
{
	struct proc_entry cur, *e;
	struct dirent *d;
	bool grew = true;
	int passes = 0;
	DIR *dir;

	for (size_t i = 0; i < pc->n; i++)
		pc->e[i].alive = false;
	while (grew && passes++ < 4) {
		grew = false;
		dir = opendir("/proc");
		if (!dir)
			return -errno;
		while ((d = readdir(dir))) {
			pid_t pid;

			if (!isdigit((unsigned char)d->d_name[0]))
				continue;
			pid = (pid_t)atoi(d->d_name);
			e = find(pc, pid);
			if (e && e->alive)
				continue;
			if (!read_stat(pid, &cur))
				continue;
			if (e && e->start == cur.start) {
				e->ppid = cur.ppid;
				e->user = cur.user;
				e->sys = cur.sys;
				e->alive = true;
				continue;
			}
			if (!is_root(pc, pid) &&
			    !(find(pc, cur.ppid) && find(pc, cur.ppid)->alive))
				continue;
			cur.alive = true;
			if (e) /* the PID was reused: the old one ended */
				e->pid = 0;
			if (add_entry(pc, &cur))
				return -ENOMEM;
			grew = true;
		}
		closedir(dir);
	}
	return 0;
}

/*
 * Whether pid ignores SIGCHLD: then the kernel reaps its children
 * itself and adds their time to no one.
 */
static bool ignores_sigchld(pid_t pid)
{
	unsigned long long ign = 0;
	char path[64], line[256];
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = sscanf(line, "SigIgn: %llx", &ign) == 1;
	fclose(f);
	return found && ign & (1ULL << (SIGCHLD - 1));
}

/*
 * Ended processes leave the table: a parent alive in the tree that
 * waits for its children has their time, else their last value stays.
 */
static void settle(struct proc_cpu *pc)
{
	size_t i, j = 0;

	for (i = 0; i < pc->n; i++) {
		struct proc_entry *e = &pc->e[i], *p;

		if (e->alive)
			continue;
		p = find(pc, e->ppid);
		if (!p || !p->alive || ignores_sigchld(p->pid)) {
			pc->gone_user += e->user;
			pc->gone_sys += e->sys;
			pc->lost++;
		}
	}
	for (i = 0; i < pc->n; i++)
		if (pc->e[i].alive)
			pc->e[j++] = pc->e[i];
	pc->n = j;
}

static void sum(const struct proc_cpu *pc, double *user, double *sys)
{
	unsigned long long u = pc->gone_user, s = pc->gone_sys;

	for (size_t i = 0; i < pc->n; i++) {
		u += pc->e[i].user;
		s += pc->e[i].sys;
	}
	*user = (double)u / (double)pc->hz;
	*sys = (double)s / (double)pc->hz;
}

int proc_cpu_open(const pid_t *roots, size_t n, struct proc_cpu **out)
{
	struct proc_cpu *pc;

	*out = NULL;
	if (!n)
		return 0;
	pc = calloc(1, sizeof(*pc));
	if (!pc)
		return -ENOMEM;
	if (n > PROC_CPU_MAX_ROOTS)
		n = PROC_CPU_MAX_ROOTS;
	memcpy(pc->roots, roots, n * sizeof(*roots));
	pc->n_roots = n;
	pc->hz = sysconf(_SC_CLK_TCK);
	if (pc->hz <= 0)
		pc->hz = 100;
	*out = pc;
	return 0;
}

int proc_cpu_sample(struct proc_cpu *pc)
{
	int err;

	if (!pc)
		return 0;
	err = scan(pc);
	if (err)
		return err;
	settle(pc);
	return 0;
}

int proc_cpu_start(struct proc_cpu *pc)
{
	int err;

	if (!pc)
		return 0;
	err = proc_cpu_sample(pc);
	if (err)
		return err;
	sum(pc, &pc->base_user, &pc->base_sys);
	pc->lost = 0;
	pc->started = true;
	return 0;
}

bool proc_cpu_total(const struct proc_cpu *pc, double *user, double *sys,
		    size_t *lost)
{
	double u, s;

	if (!pc || !pc->started)
		return false;
	sum(pc, &u, &s);
	*user = u > pc->base_user ? u - pc->base_user : 0;
	*sys = s > pc->base_sys ? s - pc->base_sys : 0;
	*lost = pc->lost;
	return true;
}

void proc_cpu_free(struct proc_cpu *pc)
{
	if (!pc)
		return;
	free(pc->e);
	free(pc);
}
