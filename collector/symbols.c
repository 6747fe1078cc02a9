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
#include "internal.h"

#define PROC_CACHE 16

struct sym_entry {
	uint64_t build_hash; /* first: the index's key */
	uint64_t rel; /* address relative to the module's base */
	char text[LT_SYM_LEN];
};

struct proc_dwfl {
	pid_t pid;
	Dwfl *dwfl;
	unsigned long long used;
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

bool lt_symbolize(struct lt_symbolizer *s, pid_t pid, uint64_t addr, char *buf,
		  size_t len)
{
	struct sym_entry key, *e;
	const char *modname, *sym, *base;
	Dwarf_Addr start = 0;
	GElf_Off off = 0;
	GElf_Sym esym;
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

	base = modname && strrchr(modname, '/') ? strrchr(modname, '/') + 1 :
						  (modname ? modname : "?");
	sym = dwfl_module_addrinfo(mod, addr, &off, &esym, NULL, NULL, NULL);
	if (sym && off)
		snprintf(buf, len, "%s+0x%" PRIx64 " (%s)", sym, (uint64_t)off,
			 base);
	else if (sym)
		snprintf(buf, len, "%s (%s)", sym, base);
	else
		snprintf(buf, len, "%s+0x%" PRIx64, base, key.rel);

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
