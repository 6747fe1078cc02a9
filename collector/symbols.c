// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * User addresses to names with elfutils' libdwfl: PIE executables and
 * shared libraries alike, with their symbol tables or separate debug
 * info. A process's modules are reported once and kept while it lives;
 * resolved names are cached by the module's build-id, so the same
 * library in many processes is looked up once.
 */
#include <dwarf.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <linux/types.h>
#include "internal.h"
#include "common.h"

#define PROC_CACHE 16

/* libstdc++'s demangler (cxxabi.h), declared for C. */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len,
			    int *status);

struct sym_entry {
	uint64_t build_hash; /* first: the index's key */
	uint64_t rel; /* address relative to the module's base */
	char text[LT_SYM_LEN];
};

/* What the unwinder reads: a stack snapshot and its registers. */
struct unwind_src {
	pid_t pid;
	const uint64_t *regs; /* enum lt_snap_reg order */
	const unsigned char *stack;
	size_t len;
};

struct proc_dwfl {
	pid_t pid;
	Dwfl *dwfl;
	unsigned long long used;
	bool attached; /* unwinding state attached, reading `src` */
	struct unwind_src src;
};

struct lt_symbolizer {
	struct proc_dwfl procs[PROC_CACHE];
	unsigned long long tick;
	struct sym_entry *syms;
	size_t n_syms, cap_syms;
	struct lt_index ix;
};

static char *debuginfo_path;

static const Dwfl_Callbacks proc_callbacks = {
	.find_elf = dwfl_linux_proc_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.debuginfo_path = &debuginfo_path,
};

struct lt_symbolizer *lt_symbolizer_new(void)
{
	struct lt_symbolizer *s = calloc(1, sizeof(*s));

	if (s && lt_index_init(&s->ix, 2 * sizeof(uint64_t),
			       sizeof(struct sym_entry))) {
		free(s);
		return NULL;
	}
	return s;
}

void lt_symbolizer_free(struct lt_symbolizer *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < PROC_CACHE; i++)
		if (s->procs[i].dwfl)
			dwfl_end(s->procs[i].dwfl);
	free(s->syms);
	lt_index_free(&s->ix);
	free(s);
}

/* Processes that ended take their module list with them. */
void lt_symbolizer_prune(struct lt_symbolizer *s)
{
	size_t i;

	for (i = 0; i < PROC_CACHE; i++) {
		struct proc_dwfl *p = &s->procs[i];

		if (p->dwfl && kill(p->pid, 0) && errno == ESRCH) {
			dwfl_end(p->dwfl);
			p->dwfl = NULL;
		}
	}
}

void lt_symbolizer_forget(struct lt_symbolizer *s, pid_t pid)
{
	size_t i;

	for (i = 0; s && i < PROC_CACHE; i++) {
		struct proc_dwfl *p = &s->procs[i];

		if (p->dwfl && p->pid == pid) {
			dwfl_end(p->dwfl);
			p->dwfl = NULL;
		}
	}
}

static Dwfl *dwfl_of(struct lt_symbolizer *s, pid_t pid)
{
	struct proc_dwfl *p, *victim = &s->procs[0];
	size_t i;

	s->tick++;
	for (i = 0; i < PROC_CACHE; i++) {
		p = &s->procs[i];
		if (p->dwfl && p->pid == pid) {
			p->used = s->tick;
			return p->dwfl;
		}
		if (!p->dwfl || p->used < victim->used)
			victim = p;
	}
	if (victim->dwfl)
		dwfl_end(victim->dwfl);
	victim->attached = false;
	victim->dwfl = dwfl_begin(&proc_callbacks);
	victim->pid = pid;
	victim->used = s->tick;
	if (!victim->dwfl)
		return NULL;
	if (dwfl_linux_proc_report(victim->dwfl, pid) ||
	    dwfl_report_end(victim->dwfl, NULL, NULL)) {
		dwfl_end(victim->dwfl);
		victim->dwfl = NULL;
	}
	return victim->dwfl;
}

static uint64_t build_hash(Dwfl_Module *mod, const char *name)
{
	const unsigned char *bits;
	GElf_Addr vaddr;
	uint64_t h = 1469598103934665603ULL;
	int n = dwfl_module_build_id(mod, &bits, &vaddr), i;

	if (n > 0) {
		for (i = 0; i < n; i++)
			h = (h ^ bits[i]) * 1099511628211ULL;
		return h;
	}
	/* No build-id: the path stands in for it. */
	for (; name && *name; name++)
		h = (h ^ (unsigned char)*name) * 1099511628211ULL;
	return h;
}

/* Names as people write them: C++ demangled, others as they are. */
void lt_demangle(const char *sym, char *out, size_t len)
{
	int status = -1;
	char *d = NULL;

	if (sym[0] == '_' && sym[1] == 'Z')
		d = __cxa_demangle(sym, NULL, NULL, &status);
	snprintf(out, len, "%s", d && !status ? d : sym);
	free(d);
}

static const char *module_base(Dwfl_Module *mod)
{
	const char *name =
		dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, NULL, NULL);

	if (!name)
		return "?";
	return strrchr(name, '/') ? strrchr(name, '/') + 1 : name;
}

/*
 * An image's offset of addr: the address its ELF file gives it, as nm,
 * readelf and addr2line take it (addr less the load bias).
 */
static uint64_t image_offset(Dwfl_Module *mod, uint64_t addr)
{
	Dwarf_Addr bias = 0, start = 0;

	if (dwfl_module_getelf(mod, &bias))
		return addr - bias;
	dwfl_module_info(mod, NULL, &start, NULL, NULL, NULL, NULL, NULL);
	return addr - start;
}

/*
 * "sym (module)" or "sym+0xN (module)" for the symbol at addr: one that
 * covers it, or with any_before, for code, the one before it; else
 * "module+0xOFF" (image_offset()).
 */
static void name_in_module(Dwfl_Module *mod, uint64_t addr, bool any_before,
			   char *buf, size_t len)
{
	char sym[LT_SYM_LEN];
	const char *raw;
	GElf_Off off = 0;
	GElf_Sym esym;

	raw = dwfl_module_addrinfo(mod, addr, &off, &esym, NULL, NULL, NULL);
	if (raw && !any_before && (!esym.st_size || off >= esym.st_size))
		raw = NULL;
	if (!raw) {
		snprintf(buf, len, "%s+0x%" PRIx64, module_base(mod),
			 image_offset(mod, addr));
		return;
	}
	lt_demangle(raw, sym, sizeof(sym));
	if (off)
		snprintf(buf, len, "%s+0x%" PRIx64 " (%s)", sym, (uint64_t)off,
			 module_base(mod));
	else
		snprintf(buf, len, "%s (%s)", sym, module_base(mod));
}

bool lt_symbolize(struct lt_symbolizer *s, pid_t pid, uint64_t addr, char *buf,
		  size_t len)
{
	struct sym_entry key, *e;
	const char *modname;
	Dwarf_Addr start = 0;
	Dwfl_Module *mod;
	ssize_t i;
	Dwfl *dwfl;

	dwfl = dwfl_of(s, pid);
	if (!dwfl)
		return false;
	mod = dwfl_addrmodule(dwfl, addr);
	if (!mod)
		return false;
	modname = dwfl_module_info(mod, NULL, &start, NULL, NULL, NULL, NULL,
				   NULL);
	key.build_hash = build_hash(mod, modname);
	key.rel = addr - start;
	i = lt_index_find(&s->ix, &key, s->syms);
	if (i >= 0) {
		snprintf(buf, len, "%s", s->syms[i].text);
		return true;
	}
	name_in_module(mod, addr, true, buf, len);
	if (!lt_grow((void **)&s->syms, &s->cap_syms, s->n_syms + 1,
		     sizeof(*s->syms))) {
		e = &s->syms[s->n_syms];
		e->build_hash = key.build_hash;
		e->rel = key.rel;
		snprintf(e->text, sizeof(e->text), "%s", buf);
		if (!lt_index_add(&s->ix, s->n_syms, s->syms))
			s->n_syms++;
	}
	return true;
}

/*
 * Data at addr in pid, in the image mapped at in_image: its .bss may go
 * on past the image's mappings, in the anonymous one after them.
 */
bool lt_name_image(struct lt_symbolizer *s, pid_t pid, uint64_t in_image,
		   uint64_t addr, char *buf, size_t len)
{
	Dwfl *dwfl = dwfl_of(s, pid);
	Dwfl_Module *mod = dwfl ? dwfl_addrmodule(dwfl, in_image) : NULL;

	if (!mod)
		return false;
	name_in_module(mod, addr, false, buf, len);
	return true;
}

/*
 * The function addr lies in, when a symbol covers it (rather than merely
 * precedes it, as an exported neighbour does for a library's internal
 * functions without their debug symbols); and, from the module's CFI,
 * where a return address lies there: ra_off bytes above the stack
 * pointer, or -1 when the CFA is not simply the stack pointer plus an
 * offset. x86-64 only: the return address is the word below the CFA.
 */
bool lt_function_at(struct lt_symbolizer *s, pid_t pid, uint64_t addr,
		    char *name, size_t len, int64_t *ra_off)
{
	Dwarf_Frame *frame = NULL;
	Dwfl_Module *mod;
	Dwarf_Addr bias;
	Dwarf_CFI *cfi;
	Dwarf_Op *ops;
	const char *sym;
	GElf_Off off = 0;
	GElf_Sym esym;
	size_t nops;
	Dwfl *dwfl;

	*ra_off = -1;
	dwfl = dwfl_of(s, pid);
	mod = dwfl ? dwfl_addrmodule(dwfl, addr) : NULL;
	if (!mod)
		return false;
	sym = dwfl_module_addrinfo(mod, addr, &off, &esym, NULL, NULL, NULL);
	if (!sym || !esym.st_size || off >= esym.st_size)
		return false;
	snprintf(name, len, "%s", sym);
#if defined(__x86_64__)
	cfi = dwfl_module_eh_cfi(mod, &bias);
	if (!cfi)
		cfi = dwfl_module_dwarf_cfi(mod, &bias);
	if (cfi && !dwarf_cfi_addrframe(cfi, addr - bias, &frame)) {
		if (!dwarf_frame_cfa(frame, &ops, &nops) && nops == 1 &&
		    ops[0].atom == DW_OP_bregx && ops[0].number == 7 /* rsp */)
			*ra_off = (int64_t)ops[0].number2 - 8;
		free(frame);
	}
#else
	(void)frame;
	(void)bias;
	(void)cfi;
	(void)ops;
	(void)nops;
#endif
	return true;
}

/* ---- unwinding a snapshot with the modules' CFI ---- */

static pid_t next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	struct unwind_src *src = arg;

	(void)dwfl;
	if (*thread_argp)
		return 0;
	*thread_argp = arg;
	return src->pid;
}

static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result,
			void *arg)
{
	struct unwind_src *src = arg;
	uint64_t sp = src->regs[LT_REG_SP];

	(void)dwfl;
	if (addr < sp || addr - sp + sizeof(*result) > src->len)
		return false; /* only the copy: the process may be gone */
	memcpy(result, src->stack + (addr - sp), sizeof(*result));
	return true;
}

static bool set_initial_registers(Dwfl_Thread *thread, void *arg)
{
	const struct unwind_src *src = arg;
	const uint64_t *r = src->regs;
	/* x86-64 DWARF numbers: 3 rbx, 6 rbp, 7 rsp, 12-15 r12-r15. */
	Dwarf_Word bx = r[LT_REG_BX], bpsp[2] = { r[LT_REG_BP], r[LT_REG_SP] };
	Dwarf_Word hi[4] = { r[LT_REG_R12], r[LT_REG_R13], r[LT_REG_R14],
			     r[LT_REG_R15] };

	dwfl_thread_state_register_pc(thread, r[LT_REG_IP]);
	return dwfl_thread_state_registers(thread, 3, 1, &bx) &&
	       dwfl_thread_state_registers(thread, 6, 2, bpsp) &&
	       dwfl_thread_state_registers(thread, 12, 4, hi);
}

static const Dwfl_Thread_Callbacks unwind_callbacks = {
	.next_thread = next_thread,
	.memory_read = memory_read,
	.set_initial_registers = set_initial_registers,
};

struct frames {
	uint64_t *pcs;
	int n, max;
};

static int take_frame(Dwfl_Frame *state, void *arg)
{
	struct frames *f = arg;
	Dwarf_Addr pc;
	bool activation;

	if (!dwfl_frame_pc(state, &pc, &activation) || !pc)
		return DWARF_CB_ABORT;
	/* A return address names the instruction after the call. */
	f->pcs[f->n++] = activation ? pc : pc - 1;
	return f->n < f->max ? DWARF_CB_OK : DWARF_CB_ABORT;
}

int lt_unwind(struct lt_symbolizer *s, pid_t pid, const uint64_t *regs,
	      const void *stack, size_t len, uint64_t *pcs, int max)
{
	struct frames f = { .pcs = pcs, .max = max };
	struct proc_dwfl *p = NULL;
	size_t i;

	if (max <= 0 || !dwfl_of(s, pid))
		return 0;
	for (i = 0; i < PROC_CACHE; i++)
		if (s->procs[i].dwfl && s->procs[i].pid == pid)
			p = &s->procs[i];
	if (!p)
		return 0;
	p->src.pid = pid;
	p->src.regs = regs;
	p->src.stack = stack;
	p->src.len = len;
	if (!p->attached) {
		if (!dwfl_attach_state(p->dwfl, NULL, pid, &unwind_callbacks,
				       &p->src))
			return 0;
		p->attached = true;
	}
	dwfl_getthread_frames(p->dwfl, pid, take_frame, &f);
	return f.n;
}
