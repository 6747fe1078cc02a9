// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A minimal x86-64 decoder, enough to walk the short loops compilers
 * make of spin locks: instruction lengths, branches, ModRM memory
 * operands and the registers an instruction writes. Anything it does
 * not know ends the walk; the site is then no spin loop. Pure: byte
 * strings in, verdicts out (tests/unit-spin.c).
 */
#include <string.h>
#include <linux/types.h>
#include "internal.h"
#include "spin.h"

#define REG_RIP 16
#define CALLER_SAVED                                                 \
	((1u << LT_X86_AX) | (1u << LT_X86_CX) | (1u << LT_X86_DX) | \
	 (1u << LT_X86_SI) | (1u << LT_X86_DI) | (1u << LT_X86_R8) | \
	 (1u << LT_X86_R9) | (1u << LT_X86_R10) | (1u << LT_X86_R11))

/* What the opcode needs after it. */
enum {
	F_MODRM = 1 << 0,
	F_IMM8 = 1 << 1,
	F_IMMZ = 1 << 2, /* 4 bytes, 2 with 0x66 */
	F_REL8 = 1 << 3,
	F_REL32 = 1 << 4,
	F_WREG = 1 << 5, /* writes the ModRM reg field */
	F_WRM = 1 << 6, /* writes the r/m register (mod 3) */
	F_LOAD = 1 << 7, /* reads its memory operand: a lock word test */
	F_ATOMIC = 1 << 8, /* an atomic read-modify-write of memory */
	F_CALL = 1 << 9,
	F_JUMP = 1 << 10, /* unconditional */
	F_BAD = 1 << 11,
};

/* One-byte opcodes 0x00-0x3f: ALU ops in groups of eight. */
static unsigned int alu_flags(unsigned int op)
{
	unsigned int lo = op & 7, cmp = (op & 0x38) == 0x38;

	if (lo == 6 || lo == 7)
		return F_BAD;
	if (lo == 4)
		return F_IMM8;
	if (lo == 5)
		return F_IMMZ;
	if (lo <= 1)
		return F_MODRM | F_LOAD | (cmp ? 0 : F_WRM);
	return F_MODRM | F_LOAD | (cmp ? 0 : F_WREG);
}

static unsigned int one_byte_flags(unsigned int op, unsigned int *imm_group)
{
	if (op < 0x40)
		return op == 0x0f ? 0 : alu_flags(op);
	if (op >= 0x70 && op <= 0x7f)
		return F_REL8;
	if (op >= 0xb0 && op <= 0xbf)
		return op < 0xb8 ? F_IMM8 : F_IMMZ;
	if (op >= 0x50 && op <= 0x5f)
		return 0;
	if (op >= 0x90 && op <= 0x99)
		return 0;
	switch (op) {
	case 0x63:
		return F_MODRM | F_WREG;
	case 0x69:
		return F_MODRM | F_IMMZ | F_WREG;
	case 0x6b:
		return F_MODRM | F_IMM8 | F_WREG;
	case 0x68:
		return F_IMMZ;
	case 0x6a:
	case 0xa8:
		return F_IMM8;
	case 0xa9:
		return F_IMMZ;
	case 0x80:
	case 0x83:
		*imm_group = 1;
		return F_MODRM | F_IMM8 | F_LOAD;
	case 0x81:
		*imm_group = 1;
		return F_MODRM | F_IMMZ | F_LOAD;
	case 0x84:
	case 0x85:
		return F_MODRM | F_LOAD;
	case 0x86:
	case 0x87:
		return F_MODRM | F_ATOMIC | F_WREG | F_WRM;
	case 0x88:
	case 0x89:
		return F_MODRM | F_WRM;
	case 0x8a:
	case 0x8b:
		return F_MODRM | F_LOAD | F_WREG;
	case 0x8d:
		return F_MODRM | F_WREG;
	case 0xc0:
	case 0xc1:
	case 0xc6:
		return F_MODRM | F_IMM8 | F_WRM;
	case 0xc7:
		return F_MODRM | F_IMMZ | F_WRM;
	case 0xd0:
	case 0xd1:
	case 0xd2:
	case 0xd3:
	case 0xfe:
		return F_MODRM | F_WRM;
	case 0xf6:
	case 0xf7:
	case 0xff:
		*imm_group = op;
		return F_MODRM;
	case 0xc2:
	case 0xc3:
	case 0xcc:
		return F_JUMP;
	case 0xc9:
		return 0; /* leave */
	case 0xe8:
		return F_REL32 | F_CALL;
	case 0xe9:
		return F_REL32 | F_JUMP;
	case 0xeb:
		return F_REL8 | F_JUMP;
	}
	return F_BAD;
}

static unsigned int two_byte_flags(unsigned int op)
{
	if (op >= 0x80 && op <= 0x8f)
		return F_REL32;
	if (op >= 0x40 && op <= 0x4f)
		return F_MODRM | F_LOAD | F_WREG; /* cmov */
	if (op >= 0x90 && op <= 0x9f)
		return F_MODRM | F_WRM; /* setcc */
	if ((op >= 0x10 && op <= 0x17) || (op >= 0x28 && op <= 0x2f) ||
	    (op >= 0x50 && op <= 0x6f) || (op >= 0x74 && op <= 0x76) ||
	    (op >= 0x7e && op <= 0x7f) || op >= 0xd0)
		return F_MODRM; /* vector moves and arithmetic */
	switch (op) {
	case 0x05:
		return F_CALL; /* syscall: clobbers like a call, and more */
	case 0x0b:
		return F_JUMP;
	case 0x1e:
	case 0x1f:
		return F_MODRM; /* endbr64, nopw */
	case 0x31:
	case 0xa2:
		return F_CALL; /* rdtsc, cpuid: write ax, dx (and more) */
	case 0x70:
	case 0x71:
	case 0x72:
	case 0x73:
	case 0xa4:
	case 0xac:
	case 0xc6:
		return F_MODRM | F_IMM8;
	case 0xa3:
		return F_MODRM | F_LOAD;
	case 0xa5:
	case 0xad:
	case 0xaf:
	case 0xb6:
	case 0xb7:
	case 0xbe:
	case 0xbf:
		return F_MODRM | F_LOAD | F_WREG;
	case 0xab:
	case 0xb3:
	case 0xbb:
		return F_MODRM | F_ATOMIC;
	case 0xb0:
	case 0xb1:
	case 0xc0:
	case 0xc1:
		return F_MODRM | F_ATOMIC | F_WRM;
	case 0xba:
		return F_MODRM | F_IMM8 | F_LOAD;
	}
	return F_BAD;
}

/* The ModRM byte and what follows it: the memory operand, if any. */
static int decode_modrm(const uint8_t *p, size_t n, unsigned int rex,
			struct lt_x86_insn *in)
{
	unsigned int mod = p[0] >> 6, rm = p[0] & 7, sib = 0;
	size_t len = 1;

	in->reg = ((p[0] >> 3) & 7) | ((rex & 4) << 1);
	in->base = -1;
	if (mod == 3) {
		in->rm = (int)(rm | ((rex & 1) << 3));
		return 1;
	}
	in->rm = -1;
	in->mem = true;
	if (rm == 4) {
		if (n < 2)
			return -1;
		sib = p[1];
		len++;
		rm = sib & 7;
		in->indexed = ((sib >> 3) & 7) != 4 || (rex & 2);
	}
	if (mod == 0 && rm == 5) {
		in->base = sib ? -1 : REG_RIP;
		mod = 2;
	} else {
		in->base = (int)(rm | ((rex & 1) << 3));
	}
	if (mod == 1) {
		if (n < len + 1)
			return -1;
		in->disp = (int8_t)p[len];
		len += 1;
	} else if (mod == 2) {
		int32_t d;

		if (n < len + 4)
			return -1;
		memcpy(&d, p + len, 4);
		in->disp = d;
		len += 4;
	}
	return (int)len;
}

/* Prefixes; returns how many, with the REX byte and the ones we use. */
static size_t decode_prefixes(const uint8_t *p, size_t n, unsigned int *rex,
			      struct lt_x86_insn *in, bool *opsize)
{
	size_t i = 0;

	*rex = 0;
	*opsize = false;
	for (; i < n && i < 14; i++) {
		switch (p[i]) {
		case 0xf0:
			in->lock = true;
			continue;
		case 0xf3:
			in->rep = true;
			continue;
		case 0x66:
			*opsize = true;
			continue;
		case 0xf2:
		case 0x2e:
		case 0x3e:
		case 0x26:
		case 0x36:
		case 0x64:
		case 0x65:
		case 0x67:
			continue;
		}
		break;
	}
	if (i < n && (p[i] & 0xf0) == 0x40)
		*rex = p[i++] & 0xf;
	return i;
}

/* The registers an instruction writes, as a mask of enum lt_x86_reg. */
static unsigned int written_regs(const struct lt_x86_insn *in,
				 unsigned int flags, unsigned int op)
{
	unsigned int w = 0;

	if (flags & F_WREG)
		w |= 1u << in->reg;
	if ((flags & F_WRM) && in->rm >= 0)
		w |= 1u << in->rm;
	if (flags & F_CALL)
		w |= CALLER_SAVED;
	if (in->opcode >= 0x50 && in->opcode <= 0x5f)
		w |= 1u << LT_X86_SP; /* push and pop move sp */
	if (in->opcode >= 0x58 && in->opcode <= 0x5f)
		w |= 1u << ((in->opcode & 7) | op);
	if (in->opcode >= 0xb0 && in->opcode <= 0xbf)
		w |= 1u << ((in->opcode & 7) | op);
	if (in->opcode >= 0x91 && in->opcode <= 0x99)
		w |= (1u << LT_X86_AX) | (1u << LT_X86_DX) |
		     (1u << ((in->opcode & 7) | op));
	return w;
}

/* The immediate groups: f6/f7 /0-1 take an immediate; ff /2 calls. */
static unsigned int group_flags(unsigned int group, unsigned int reg)
{
	unsigned int sub = reg & 7;

	if (group == 1)
		return sub == 7 ? 0 : F_WRM;
	if (group == 0xf6 || group == 0xf7) {
		if (sub <= 1)
			return F_LOAD | (group == 0xf6 ? F_IMM8 : F_IMMZ);
		return sub <= 3 ? F_WRM : F_CALL; /* mul, div: ax, dx */
	}
	if (group == 0xff) {
		if (sub == 2)
			return F_CALL;
		if (sub == 4)
			return F_JUMP;
		return sub <= 1 ? F_WRM : 0;
	}
	return 0;
}

int lt_x86_decode(const uint8_t *p, size_t n, struct lt_x86_insn *in)
{
	unsigned int rex, flags, group = 0, op;
	size_t i;
	bool opsize;
	int m;

	memset(in, 0, sizeof(*in));
	in->rm = -1;
	in->base = -1;
	i = decode_prefixes(p, n, &rex, in, &opsize);
	if (i >= n)
		return -1;
	op = p[i++];
	in->opcode = op;
	if (op == 0x0f) {
		if (i >= n)
			return -1;
		op = p[i++];
		in->opcode = 0x0f00 | op;
		if (op == 0x38 || op == 0x3a) {
			if (i >= n)
				return -1;
			i++;
			flags = F_MODRM | (op == 0x3a ? F_IMM8 : 0);
		} else {
			flags = two_byte_flags(op);
		}
	} else {
		flags = one_byte_flags(op, &group);
	}
	if (flags & F_BAD)
		return -1;
	in->pause = op == 0x90 && in->rep && in->opcode == 0x90;
	if (flags & F_MODRM) {
		m = decode_modrm(p + i, n - i, rex, in);
		if (m < 0)
			return -1;
		i += (size_t)m;
		if (group)
			flags |= group_flags(group, in->reg);
	}
	if (flags & F_IMM8)
		i += 1;
	if (in->opcode == 0xc2)
		i += 2; /* ret imm16 */
	if (flags & F_IMMZ)
		i += in->opcode >= 0xb8 && in->opcode <= 0xbf && (rex & 8) ?
			     8 :
			     (opsize ? 2 : 4);
	if (flags & (F_REL8 | F_REL32)) {
		size_t w = flags & F_REL8 ? 1 : 4;
		int32_t rel = 0;

		if (i + w > n)
			return -1;
		if (w == 1)
			rel = (int8_t)p[i];
		else
			memcpy(&rel, p + i, 4);
		i += w;
		in->branch = !(flags & F_CALL);
		in->rel = rel;
	}
	if (i > n)
		return -1;
	in->len = (unsigned int)i;
	in->call = flags & F_CALL;
	in->jump = flags & F_JUMP;
	in->load = in->mem && (flags & F_LOAD);
	in->atomic = in->mem && ((flags & F_ATOMIC) || in->lock);
	in->writes = written_regs(in, flags, (rex & 1) << 3);
	if (in->opcode == 0x0fb0 || in->opcode == 0x0fb1)
		in->writes = (1u << LT_X86_AX) |
			     (in->rm >= 0 ? 1u << in->rm : 0);
	if (in->opcode == 0x0fc0 || in->opcode == 0x0fc1)
		in->writes |= 1u << in->reg;
	return (int)i;
}
