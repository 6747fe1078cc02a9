/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Types shared by spin.bpf.c and the collector. */
#ifndef LOCKTOP_PROBES_SPIN_H
#define LOCKTOP_PROBES_SPIN_H

#include "common.h"

#define LT_MAX_SPIN_SITES 8192 /* user IPs met by on-CPU samples */
#define LT_SPIN_HZ 997 /* samples per second and CPU by default */
#define LT_MAX_SPIN_THREADS 4096 /* threads whose latest sample spun */

/* An instruction address in one process, met by a sample. */
struct lt_spin_key {
	__u32 tgid;
	__u32 pad;
	__u64 ip;
};

/* What the collector made of the code at a site. */
enum lt_spin_verdict {
	LT_SPIN_NEW = 0, /* not judged yet */
	LT_SPIN_NONE = 1, /* no spin loop: samples here end at the lookup */
	LT_SPIN_LOOP = 2, /* a spin loop; see lt_spin_site.how */
	LT_SPIN_CALLER = 3, /* a relax helper (PAUSE; RET): judge its caller */
};

/* How a spin loop's lock address is found from a sample's registers. */
enum lt_spin_how {
	LT_SPIN_SITE = 0, /* not found: the site is the identity */
	LT_SPIN_REG = 1, /* reg + disp */
	LT_SPIN_ABS = 2, /* disp: an absolute address (RIP-relative) */
	LT_SPIN_MEM = 3, /* the pointer at reg + ind, plus disp (a spill) */
};

/* x86-64 register numbers, as ModRM and REX give them. */
enum lt_x86_reg {
	LT_X86_AX,
	LT_X86_CX,
	LT_X86_DX,
	LT_X86_BX,
	LT_X86_SP,
	LT_X86_BP,
	LT_X86_SI,
	LT_X86_DI,
	LT_X86_R8,
	LT_X86_R9,
	LT_X86_R10,
	LT_X86_R11,
	LT_X86_R12,
	LT_X86_R13,
	LT_X86_R14,
	LT_X86_R15,
};

struct lt_spin_site {
	__u32 verdict; /* enum lt_spin_verdict */
	__u32 how; /* enum lt_spin_how */
	__u32 reg; /* enum lt_x86_reg */
	__s32 ra_off; /* LT_SPIN_CALLER: the return address is at sp+ra_off */
	__u32 frame; /* LT_SPIN_CALLER: the caller's bp is at sp (pushed) */
	__u32 pad;
	__s64 disp;
	__s64 ind; /* LT_SPIN_MEM: where the pointer is, from reg */
	__u64 site; /* the loop's address: the identity without one */
};

/* A thread's latest sample, when it found the thread spinning. */
struct lt_spin_thread {
	__u64 ts; /* its time (CLOCK_MONOTONIC); 0: a later one did not spin */
	struct lt_lock_key lock; /* the lock it spun on */
};

#endif /* LOCKTOP_PROBES_SPIN_H */
