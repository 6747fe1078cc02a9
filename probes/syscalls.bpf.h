/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What a system call's arguments and result say: the file an fd names
 * in the current task, and whether a call was interrupted.
 */
#ifndef LOCKTOP_PROBES_SYSCALLS_BPF_H
#define LOCKTOP_PROBES_SYSCALLS_BPF_H

extern void *bpf_rdonly_cast(const void *obj, __u32 btf_id) __ksym __weak;

/*
 * The current task's open file fd, or NULL. The walk to the table is
 * plain loads through BTF pointers; the slot itself, at an offset the
 * verifier cannot bound, is one read, and its file is typed again.
 */
static __always_inline struct file *fd_file(int fd)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct fdtable *fdt = task->files->fdt;
	struct file *f = NULL;

	if (fd < 0 || (unsigned int)fd >= fdt->max_fds)
		return NULL;
	bpf_probe_read_kernel(&f, sizeof(f), &fdt->fd[fd]);
	if (!f)
		return NULL;
	return bpf_rdonly_cast(f, bpf_core_type_id_kernel(struct file));
}

/* Interrupted: EINTR, or one of the kernel's restart codes. */
static __always_inline bool interrupted_ret(long ret)
{
	return ret == -4 || ret == -512 || ret == -513 || ret == -514 ||
	       ret == -516;
}

#endif /* LOCKTOP_PROBES_SYSCALLS_BPF_H */
