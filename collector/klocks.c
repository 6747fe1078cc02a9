// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Kernel locks: their names, types and callers, from what the kernel
 * lock probe kept with each lock's first wait, what the file lock probe
 * knows of file lock contexts, and the kernel's symbols.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "state.h"
#include "klock.h"
#include "futex.skel.h"
#include "filelock.skel.h"
#include "klock.skel.h"

/* The lock's type, from the contention tracepoint's flags. */
static const char *ktype(__u32 f)
{
	bool r = f & LT_LCB_F_READ, w = f & LT_LCB_F_WRITE;

	if (f & LT_LCB_F_MUTEX)
		return "mutex";
	if (f & LT_LCB_F_PERCPU)
		return w ? "percpu-rwsem-write" : "percpu-rwsem-read";
	if (f & LT_LCB_F_RT)
		return r ? "rwlock-rt-read" : w ? "rwlock-rt-write" : "rtmutex";
	if (f & LT_LCB_F_SPIN)
		return r ? "rwlock-read" : w ? "rwlock-write" : "spinlock";
	return r ? "rwsem-read" : w ? "rwsem-write" : "unknown";
}

/* A frame of the locking itself (or of the probe's call), not a caller. */
static bool lock_frame(const struct lt_ksyms *k, uint64_t addr,
		       const char *name)
{
	static const char *const prefixes[] = {
		"bpf_",		 "__bpf_",	   "up_read",
		"up_write",	 "__traceiter_",   "_raw_",
		"do_raw_",	 "queued_",	   "native_queued",
		"__pv_queued",	 "mutex_",	   "__mutex_",
		"ww_mutex_",	 "down_",	   "__down",
		"rwsem_",	 "percpu_down_",   "__percpu_down",
		"percpu_rwsem_", "rt_mutex",	   "__rt_mutex",
		"rt_spin",	 "rwbase_",	   "osq_",
		"schedule",	 "__schedule",	   "preempt_schedule",
		"io_schedule",	 "mmap_read_lock", "mmap_write_lock",
	};
	size_t i;

	if (lt_ksyms_lock_text(k, addr))
		return true;
	for (i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(name, prefixes[i], strlen(prefixes[i])))
			return true;
	return false;
}

/* The first function of the stack that is not the locking's. */
static void caller_of(struct lt_collector *c, const struct lt_kwhere *kw,
		      char *buf, size_t len)
{
	const char *name;
	uint64_t off;
	char type;
	__u32 i;

	buf[0] = '\0';
	for (i = 0; i < kw->nframes && i < LT_KFRAMES; i++) {
		name = lt_ksyms_find(c->naming.ksyms, kw->frames[i], &type,
				     &off);
		if (!name || lock_frame(c->naming.ksyms, kw->frames[i], name))
			continue;
		snprintf(buf, len, "%s", name);
		return;
	}
}

/* Whether path is the file (dev, ino), dev as the kernel numbers it. */
static bool is_file(const char *path, uint64_t dev, uint64_t ino)
{
	struct stat st;

	return !stat(path, &st) && st.st_ino == ino &&
	       st.st_dev == makedev(dev >> 20, dev & 0xfffff);
}

/* A path of pid's for (dev, ino): an open descriptor or its cwd. */
static bool proc_path(pid_t pid, uint64_t dev, uint64_t ino, char *buf,
		      size_t len)
{
	char dir[64];
	struct dirent *e;
	bool found = false;
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%d/fd", pid);
	d = pid > 0 ? opendir(dir) : NULL;
	while (d && !found && (e = readdir(d)))
		if (e->d_name[0] >= '0' && e->d_name[0] <= '9')
			found = lt_proc_fd_path(pid, atoi(e->d_name), dev, ino,
						buf, len);
	if (d)
		closedir(d);
	if (!found && pid > 0) {
		ssize_t n;

		snprintf(dir, sizeof(dir), "/proc/%d/cwd", pid);
		if (is_file(dir, dev, ino)) {
			n = readlink(dir, buf, len - 1);
			found = n > 0;
			if (found)
				buf[n] = '\0';
		}
	}
	return found;
}

/* The probe's names of a dentry's last k parents and itself, as a path
 * under prefix. */
static size_t join_dirs(const struct lt_kwhere *kw, __u32 k, const char *prefix,
			char *buf, size_t len)
{
	size_t n = (size_t)snprintf(buf, len, "%s", prefix);
	__u32 i;

	for (i = k; i-- > 0 && n < len;)
		n += (size_t)snprintf(buf + n, len - n, "/%.*s", LT_KDIR_LEN,
				      kw->dirs[i]);
	return n;
}

/* The chain under a mount of its filesystem's root, from mountinfo. */
static bool mounted_path(const struct lt_kwhere *kw, char *buf, size_t len)
{
	char line[1024], root[512], at[512];
	unsigned int maj, min;
	bool found = false;
	FILE *f;

	f = fopen("/proc/self/mountinfo", "re");
	while (f && !found && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%*d %*d %u:%u %511s %511s", &maj, &min, root,
			   at) != 4 ||
		    maj != kw->dev >> 20 || min != (kw->dev & 0xfffff) ||
		    strcmp(root, "/"))
			continue;
		found = join_dirs(kw, kw->ndirs, strcmp(at, "/") ? at : "", buf,
				  len) < len &&
			is_file(buf, kw->dev, kw->ino);
	}
	if (f)
		fclose(f);
	return found;
}

/*
 * The path the probe's names of an inode's dentry and its parents make,
 * when it is that inode: the name of a directory waited for by paths
 * from anywhere. Under a mount of its filesystem's root when the names
 * reach that root; else, or where that path is not this process's (a
 * chroot, a deeper tree than the probe keeps), the longest tail of
 * the names that leads from this process's root to the same inode.
 */
static bool chain_path(const struct lt_kwhere *kw, char *buf, size_t len)
{
	__u32 k;

	if (!kw->ndirs || kw->ndirs > LT_KDIRS)
		return false;
	if (kw->rooted && mounted_path(kw, buf, len))
		return true;
	for (k = kw->ndirs; k > 0; k--)
		if (join_dirs(kw, k, "", buf, len) < len &&
		    is_file(buf, kw->dev, kw->ino))
			return true;
	return false;
}

/* flc_lock of a file some process locked: the file lock probe's name. */
static bool name_flc(struct lt_collector *c, struct lt_lock *l, uint64_t addr)
{
	struct lt_flc_name n;
	char path[LT_NAME_LEN - 16];

	if (bpf_map_lookup_elem(bpf_map__fd(c->obj.filelock->maps.flc_names),
				&addr, &n))
		return false;
	n.file[sizeof(n.file) - 1] = '\0';
	if (!lt_proc_fd_path((pid_t)n.tgid, n.fd, n.dev, n.ino, path,
			     sizeof(path)))
		snprintf(path, sizeof(path), "%s", n.file);
	snprintf(l->name, sizeof(l->name), "flc_lock of %s", path);
	if (!l->kernel_type[0])
		snprintf(l->kernel_type, sizeof(l->kernel_type), "spinlock");
	return true;
}

/* What the probe could tell from the address: i_rwsem or mmap_lock. */
static bool name_guarded(struct lt_collector *c, struct lt_lock *l,
			 const struct lt_kwhere *kw)
{
	char path[LT_NAME_LEN - 16];
	size_t i;

	(void)c;
	if (kw->named == LT_KN_MMAP_LOCK) {
		snprintf(l->name, sizeof(l->name), "mmap_lock of %u %.16s",
			 kw->tgid, kw->comm);
		/* Across runs the process is its name, not its PID. */
		snprintf(l->key, sizeof(l->key), "%s:mmap_lock of %.16s",
			 lt_kind_name(l->kind), kw->comm);
		return true;
	}
	if (kw->named != LT_KN_I_RWSEM)
		return false;
	path[0] = '\0';
	if (!lt_proc_fd_path((pid_t)kw->tgid, kw->fd, kw->dev, kw->ino, path,
			     sizeof(path)) &&
	    !proc_path((pid_t)kw->tgid, kw->dev, kw->ino, path, sizeof(path)))
		path[0] = '\0';
	for (i = 0; i < l->n_pids && !path[0]; i++)
		if (!proc_path(l->pids[i], kw->dev, kw->ino, path,
			       sizeof(path)))
			path[0] = '\0';
	if (!path[0] && !chain_path(kw, path, sizeof(path)))
		snprintf(path, sizeof(path), "%s", kw->file);
	snprintf(l->name, sizeof(l->name), "i_rwsem of %s", path);
	return true;
}

/* A lock in the kernel image's data: its symbol. */
static bool name_static(struct lt_collector *c, struct lt_lock *l,
			uint64_t addr)
{
	const char *sym;
	uint64_t off;
	char type;

	if (!lt_ksyms_static(c->naming.ksyms, addr))
		return false;
	sym = lt_ksyms_find(c->naming.ksyms, addr, &type, &off);
	if (!sym || !strchr("dDbBrR", type))
		return false;
	if (off)
		snprintf(l->name, sizeof(l->name), "%s+0x%llx", sym,
			 (unsigned long long)off);
	else
		snprintf(l->name, sizeof(l->name), "%s", sym);
	return true;
}

void klocks_name(struct lt_collector *c, struct lt_lock *l,
		 const struct lock_state *s, const struct lt_where *w)
{
	uint64_t addr = s->key.start;
	struct lt_kwhere kw;
	bool have;

	(void)w; /* the kernel lock probe keeps its own, kwheres */
	if (!c->naming.ksyms)
		c->naming.ksyms = lt_ksyms_load_running();
	l->address = addr;
	have = c->obj.klock &&
	       !bpf_map_lookup_elem(bpf_map__fd(c->obj.klock->maps.kwheres),
				    &addr, &kw);
	if (have) {
		kw.file[sizeof(kw.file) - 1] = '\0';
		kw.comm[sizeof(kw.comm) - 1] = '\0';
		snprintf(l->kernel_type, sizeof(l->kernel_type), "%s",
			 ktype(kw.flags));
		caller_of(c, &kw, l->caller, sizeof(l->caller));
		lt_proc_comm(bpf_map__fd(c->obj.futex->maps.comms),
			     (pid_t)kw.tgid, l->comm);
	}
	if (!(have && name_guarded(c, l, &kw)) && !name_flc(c, l, addr) &&
	    !name_static(c, l, addr)) {
		/* Else where it was waited for, as perf names it. */
		if (l->caller[0])
			snprintf(l->name, sizeof(l->name), "%s", l->caller);
		else
			snprintf(l->name, sizeof(l->name), "0x%llx",
				 (unsigned long long)addr);
	}
	/* Identity across runs: the name, never the address; a file by
	 * its base name, which it has whether a process still has it open
	 * to give its path or not. */
	if (!l->key[0]) {
		const char *of = strstr(l->name, " of /");
		const char *base = of ? strrchr(of, '/') + 1 : "";
		int keep = of ? (int)(of - l->name) + 4 :
				(int)(sizeof(l->key) - 16);

		snprintf(l->key, sizeof(l->key), "%s:%.*s%s",
			 lt_kind_name(l->kind), keep, l->name, base);
	}
}
