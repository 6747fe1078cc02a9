// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Where a server keeps the context of its waits (struct lt_usdt_ctx_site),
 * from its binary alone: the start probe's site (its stapsdt note), the
 * global variable's address (its symbol, a dynamic one in a stripped
 * binary), and the address of the frame's function, the one address of
 * code that the enclosing function's code takes (a RIP-relative lea).
 * Nothing is read from the server's memory here.
 */
#include <fcntl.h>
#include <gelf.h>
#include <string.h>
#include <unistd.h>
#include "internal.h"
#include "providers.h"

#define NT_STAPSDT 3
#define CODE_MAX 4096 /* bytes of the enclosing function looked through */

/* The address (link-time) and size of the symbol name of type (STT_*),
 * from either symbol table; false when it has none. */
static bool symbol(Elf *elf, const char *name, int type, uint64_t *addr,
		   uint64_t *size)
{
	Elf_Scn *scn = NULL;
	Elf_Data *data;
	GElf_Shdr sh;
	GElf_Sym sym;
	const char *s;
	size_t i;

	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh) ||
		    (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) ||
		    !sh.sh_entsize || !(data = elf_getdata(scn, NULL)))
			continue;
		for (i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			if (!gelf_getsym(data, (int)i, &sym) ||
			    GELF_ST_TYPE(sym.st_info) != type || !sym.st_value)
				continue;
			s = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (!s || strcmp(s, name))
				continue;
			*addr = sym.st_value;
			*size = sym.st_size;
			return true;
		}
	}
	return false;
}

/* The allocated section that holds vaddr, with its header; NULL: none. */
static Elf_Scn *section_at(Elf *elf, uint64_t vaddr, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, sh) && (sh->sh_flags & SHF_ALLOC) &&
		    vaddr >= sh->sh_addr && vaddr < sh->sh_addr + sh->sh_size)
			return scn;
	return NULL;
}

static Elf_Scn *section_named(Elf *elf, const char *name, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	const char *s;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, sh))
			continue;
		s = elf_strptr(elf, shstrndx, sh->sh_name);
		if (s && !strcmp(s, name))
			return scn;
	}
	return NULL;
}

/*
 * The address of provider:probe's site, from the stapsdt notes, moved as
 * the notes' base was (a prelinked binary); 0 when the probe has no
 * site or more than one (a context needs the one).
 */
static uint64_t note_site(Elf *elf, const char *provider, const char *probe)
{
	size_t off = 0, next, name_off, desc_off;
	uint64_t site = 0, a[3], base_addr = 0;
	GElf_Shdr sh, bsh;
	Elf_Data *data;
	GElf_Nhdr nh;
	const char *d, *prov, *name;
	Elf_Scn *scn;
	int n = 0;

	scn = section_named(elf, ".note.stapsdt", &sh);
	if (!scn || !(data = elf_getdata(scn, NULL)))
		return 0;
	if (section_named(elf, ".stapsdt.base", &bsh))
		base_addr = bsh.sh_addr;
	while ((next = gelf_getnote(data, off, &nh, &name_off, &desc_off))) {
		off = next;
		d = (const char *)data->d_buf + desc_off;
		if (nh.n_type != NT_STAPSDT || nh.n_descsz < sizeof(a) + 2 ||
		    strcmp((const char *)data->d_buf + name_off, "stapsdt"))
			continue;
		memcpy(a, d, sizeof(a));
		prov = d + sizeof(a);
		name = prov + strnlen(prov, nh.n_descsz - sizeof(a)) + 1;
		if (name >= d + nh.n_descsz || strcmp(prov, provider) ||
		    strncmp(name, probe, (size_t)(d + nh.n_descsz - name)))
			continue;
		site = base_addr && a[1] ? a[0] + base_addr - a[1] : a[0];
		n++;
	}
	return n == 1 ? site : 0;
}

/*
 * The one address of code that the code of the function at addr (size
 * bytes) takes with a RIP-relative lea: the frame function it pushes.
 * 0 when it takes none or several, or its code does not decode.
 */
static uint64_t taken_code(Elf *elf, uint64_t addr, uint64_t size)
{
	struct lt_x86_insn in;
	uint64_t at, target, found = 0;
	GElf_Shdr sh, tsh;
	Elf_Data *data;
	const uint8_t *p;
	Elf_Scn *scn;
	size_t n;
	int len;

	scn = section_at(elf, addr, &sh);
	if (!scn || !(sh.sh_flags & SHF_EXECINSTR) ||
	    !(data = elf_getdata(scn, NULL)) || !data->d_buf)
		return 0;
	if (size > CODE_MAX || !size)
		size = CODE_MAX;
	if (addr + size > sh.sh_addr + data->d_size)
		size = sh.sh_addr + data->d_size - addr;
	p = (const uint8_t *)data->d_buf + (addr - sh.sh_addr);
	for (at = 0; at < size; at += (uint64_t)len) {
		n = (size_t)(size - at);
		len = lt_x86_decode(p + at, n, &in);
		if (len <= 0)
			return 0;
		if (in.opcode != 0x8d || in.base != 16)
			continue;
		target = addr + at + (uint64_t)len + (uint64_t)in.disp;
		if (!section_at(elf, target, &tsh) ||
		    !(tsh.sh_flags & SHF_EXECINSTR))
			continue;
		if (found && found != target)
			return 0;
		found = target;
	}
	return found;
}

int lt_usdt_ctx_site(const char *path, const struct lt_provider_context *pc,
		     struct lt_usdt_ctx_site *out)
{
	uint64_t within = 0, within_size = 0, global = 0, global_size;
	int fd, err = -1;
	Elf *elf;

	memset(out, 0, sizeof(*out));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf && symbol(elf, pc->global, STT_OBJECT, &global, &global_size) &&
	    symbol(elf, pc->within, STT_FUNC, &within, &within_size)) {
		out->global = global;
		out->site = note_site(elf, pc->provider, pc->probe);
		out->fn = taken_code(elf, within, within_size);
		out->fn_at = pc->fn_at;
		out->arg_at = pc->arg_at;
		out->obj_at = pc->obj_at;
		out->kind = (__u16)pc->kind;
		err = out->site && out->fn ? 0 : -1;
	}
	elf_end(elf);
	close(fd);
	return err;
}
