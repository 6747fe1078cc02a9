/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Where a user address is mapped, for the probes that name locks by
 * their address (futex words, spin locks): struct lt_where, found with
 * bpf_find_vma() while the process surely lives.
 */
#ifndef LOCKTOP_PROBES_WHERE_BPF_H
#define LOCKTOP_PROBES_WHERE_BPF_H

#include "maps.bpf.h"
#include "futex.h"

struct where_ctx {
	__u64 addr;
	struct lt_where w;
};

static long where_cb(struct task_struct *task, struct vm_area_struct *vma,
		     struct where_ctx *ctx)
{
	struct mm_struct *mm = task->mm;
	struct file *file = vma->vm_file;
	struct lt_where *w = &ctx->w;

	w->vm_start = vma->vm_start;
	w->offset = ctx->addr - vma->vm_start + (vma->vm_pgoff << 12);
	if (BPF_CORE_READ(vma, vm_flags) & 0x8 /* VM_SHARED */)
		w->flags |= LT_VMA_SHARED;
	if (file) {
		w->flags |= LT_VMA_FILE;
		w->ino = BPF_CORE_READ(file, f_inode, i_ino);
		w->dev = BPF_CORE_READ(file, f_inode, i_sb, s_dev);
		bpf_probe_read_kernel_str(w->file, sizeof(w->file),
					  BPF_CORE_READ(file, f_path.dentry,
							d_name.name));
	} else if (mm) {
		/* The kernel's vma_is_initial_heap(): an anonymous
		 * mapping that merely ends where the heap starts (a
		 * program's .bss) is not the heap. */
		if (vma->vm_start < BPF_CORE_READ(mm, brk) &&
		    vma->vm_end > BPF_CORE_READ(mm, start_brk))
			w->flags |= LT_VMA_HEAP;
		else if (vma->vm_start <= BPF_CORE_READ(mm, start_stack) &&
			 vma->vm_end >= BPF_CORE_READ(mm, start_stack))
			w->flags |= LT_VMA_STACK;
	}
	return 0;
}

/*
 * Names the lock while its process surely lives; false when its mapping
 * could not be read: bpf_find_vma() only tries the process's mmap lock,
 * and fails while another thread maps or unmaps memory, so the caller
 * asks again later.
 */
static __always_inline bool remember_where(const struct lt_lock_key *key,
					   __u64 uaddr, __u32 tgid)
{
	struct where_ctx ctx = { .addr = uaddr };

	if (bpf_find_vma(bpf_get_current_task_btf(), uaddr, where_cb, &ctx, 0))
		return false;
	ctx.w.uaddr = uaddr;
	ctx.w.tgid = tgid;
	ctx.w.fd = -1;
	bpf_map_update_elem(&wheres, key, &ctx.w, BPF_NOEXIST);
	return true;
}

#endif /* LOCKTOP_PROBES_WHERE_BPF_H */
