// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Spin loops, from the code bytes around a sampled IP. A spin loop is a
 * short backward loop with a PAUSE in it (or a call to a relax helper,
 * a function that is PAUSE; RET), which tests
 * a word in memory: an atomic exchange, compare-and-swap or a load. Its
 * memory operand, [reg] or [reg+disp] (or RIP-relative, or through a
 * pointer spilled to the frame), tells where the lock word is in each
 * sample's registers. Pure: byte strings in, verdicts out.
 *
 * Code the kernel maps into every process is no program's lock code:
 * the vDSO's clock_gettime and gettimeofday read the kernel's clock data
 * under a seqcount, in a loop that retries when the kernel updated the
 * data meanwhile and pauses while an update is under way. Its bytes look
 * like a spin loop on the seqcount, but a sample there is a clock read,
 * and the word is the kernel's, not a lock; so a site in [vdso] (or the
 * legacy [vsyscall] page) is none.
 */
#include <string.h>
#include <linux/types.h>
#include "internal.h"
#include "spin.h"

#define LOOP_BACK 512 /* how far before the IP a loop may start */
#define LOOP_AHEAD 192 /* how far after it its branch back may be */
#define LOOPS 3 /* loops around the IP looked at, innermost first */
#define LOOP_INSNS 160
#define REG_RIP 16

struct loop {
	size_t start, end; /* offsets in the buffer */
};

/* An unoptimized relax helper: push %rbp; mov %rsp,%rbp; pause;
 * nop; pop %rbp; ret. */
static const uint8_t framed[] = { 0x55, 0x48, 0x89, 0xe5, 0xf3,
				  0x90, 0x90, 0x5d, 0xc3 };

/*
 * The IP lies in a relax helper: PAUSE then RET, at the IP or before, or
 * the framed form, between its frame's push and pop (the return address
 * is then above the caller's pushed bp) or at its RET.
 */
static bool in_helper(const uint8_t *b, size_t n, size_t off,
		      struct lt_spin_site *s)
{
	size_t at;

	if (off + 3 <= n && b[off] == 0xf3 && b[off + 1] == 0x90 &&
	    b[off + 2] == 0xc3)
		return true;
	if (off >= 2 && off < n && b[off - 2] == 0xf3 && b[off - 1] == 0x90 &&
	    b[off] == 0xc3)
		return true;
	for (at = 4; at < sizeof(framed); at++) {
		if (off < at || off - at + sizeof(framed) > n ||
		    memcmp(b + off - at, framed, sizeof(framed)))
			continue;
		if (at == 5)
			return false; /* inside the PAUSE: no boundary */
		if (at < sizeof(framed) - 1) {
			s->ra_off = 8;
			s->frame = 1;
		}
		return true;
	}
	return false;
}

/* Adds a loop to those found, innermost (latest start) first. */
static size_t add_loop(struct loop *loops, size_t count, size_t start,
		       size_t end)
{
	size_t i, j;

	for (i = 0; i < count && loops[i].start > start; i++)
		;
	if (i < count && loops[i].start == start)
		return count; /* the same loop, branched to again */
	if (i == LOOPS)
		return count;
	if (count == LOOPS)
		count--;
	for (j = count; j > i; j--)
		loops[j] = loops[j - 1];
	loops[i].start = start;
	loops[i].end = end;
	return count + 1;
}

/* Loops around off: backward branches after it to a start before it,
 * the innermost first. */
static size_t find_loops(const uint8_t *b, size_t n, size_t off,
			 struct loop *loops)
{
	struct lt_x86_insn in;
	size_t pos = off, count = 0;
	int64_t target;
	int len;

	while (pos < n && pos - off < LOOP_AHEAD) {
		len = lt_x86_decode(b + pos, n - pos, &in);
		if (len < 0)
			break;
		pos += (size_t)len;
		if (!in.branch)
			continue;
		target = (int64_t)pos + in.rel;
		if (target < 0 || (size_t)target > off ||
		    off - (size_t)target > LOOP_BACK)
			continue;
		count = add_loop(loops, count, (size_t)target, pos);
	}
	return count;
}

struct insn_at {
	struct lt_x86_insn in;
	size_t off;
};

/* Decodes a loop's body; returns how many, or 0 when it cannot. */
static size_t decode_loop(const uint8_t *b, const struct loop *l,
			  struct insn_at *out)
{
	size_t pos = l->start, k = 0;
	int len;

	while (pos < l->end && k < LOOP_INSNS) {
		len = lt_x86_decode(b + pos, l->end - pos, &out[k].in);
		if (len < 0)
			return 0;
		out[k++].off = pos;
		pos += (size_t)len;
	}
	return pos == l->end ? k : 0;
}

/* A memory operand that may be a lock word: not a frame slot. */
static bool word_operand(const struct lt_x86_insn *in)
{
	if (!in->mem || !(in->atomic || in->load) || in->base < 0)
		return false;
	if (in->base == LT_X86_SP)
		return false;
	return !(in->base == LT_X86_BP && in->disp < 0);
}

/* A pointer loaded into reg: mov d(base), reg. */
static bool pointer_load(const struct lt_x86_insn *in, int reg)
{
	return in->opcode == 0x8b && in->mem && !in->indexed &&
	       (int)in->reg == reg && in->base >= 0 && in->base != REG_RIP;
}

/* Whether an instruction of the loop writes reg. */
static bool loop_writes(const struct insn_at *ins, size_t k, int reg)
{
	size_t i;

	for (i = 0; i < k; i++)
		if (ins[i].in.writes & (1u << reg))
			return true;
	return false;
}

/*
 * How the candidate at w finds its word in a sample: its base register
 * if nothing in the loop writes it, the pointer it is loaded from in the
 * loop (a frame slot, a structure) if that one's base stays, or the
 * absolute address of a RIP-relative operand. false: no way.
 */
static bool word_from(const struct insn_at *ins, size_t k, size_t w,
		      uint64_t base, struct lt_spin_site *s)
{
	const struct lt_x86_insn *in = &ins[w].in;
	size_t i;

	if (in->indexed)
		return false;
	if (in->base == REG_RIP) {
		s->how = LT_SPIN_ABS;
		s->disp = (int64_t)(base + ins[w].off + in->len) + in->disp;
		return true;
	}
	s->disp = in->disp;
	if (!loop_writes(ins, k, in->base)) {
		s->how = LT_SPIN_REG;
		s->reg = (uint32_t)in->base;
		return true;
	}
	for (i = 0; i < k; i++) {
		const struct lt_x86_insn *p = &ins[i].in;

		if (!pointer_load(p, in->base))
			continue;
		if (p->base != LT_X86_SP && loop_writes(ins, k, p->base))
			return false;
		s->how = LT_SPIN_MEM;
		s->reg = (uint32_t)p->base;
		s->ind = p->disp;
		return true;
	}
	return false;
}

/* A load whose result is the base of another operand: a pointer. */
static bool loads_pointer(const struct insn_at *ins, size_t k, size_t w)
{
	size_t i;

	for (i = 0; i < k; i++)
		if (i != w && ins[i].in.mem &&
		    pointer_load(&ins[w].in, ins[i].in.base))
			return true;
	return false;
}

/*
 * The lock word of a loop: its first atomic operand that names one, or
 * (not atomic) its first load. Returns 1 when found, 0 when the loop
 * tests a word it cannot tell, -1 when it tests none.
 */
static int loop_word(const struct insn_at *ins, size_t k, uint64_t base,
		     bool atomic, struct lt_spin_site *s)
{
	int seen = -1;
	size_t i;

	for (i = 0; i < k; i++) {
		const struct lt_x86_insn *in = &ins[i].in;

		if (!word_operand(in) || (atomic && !in->atomic) ||
		    (!in->atomic && loads_pointer(ins, k, i)))
			continue;
		seen = 0;
		memset(s, 0, sizeof(*s));
		if (word_from(ins, k, i, base, s))
			return 1;
	}
	return seen;
}

/* A PAUSE in the loop, or a call to a relax helper. */
static bool pauses(const struct insn_at *ins, size_t k, uint64_t base,
		   const struct lt_spin_code *code)
{
	uint64_t to;
	size_t i;

	for (i = 0; i < k; i++) {
		if (ins[i].in.pause)
			return true;
		if (ins[i].in.opcode != 0xe8 || !code->is_relax)
			continue;
		to = base + ins[i].off + ins[i].in.len + (int64_t)ins[i].in.rel;
		if (code->is_relax(code->arg, to))
			return true;
	}
	return false;
}

/*
 * The spin loop around off, of those found: innermost first, the first
 * that pauses (or calls a relax helper) and whose word an atomic
 * operation names, else the first whose word a load names. Returns as
 * loop_word() does; *s and *at are the loop's.
 */
static int pick_loop(const struct lt_spin_code *code, const struct loop *loops,
		     size_t nl, bool caller, struct lt_spin_site *s, size_t *at)
{
	struct insn_at ins[LOOP_INSNS];
	int found = -1, r, pass;
	size_t i, k;

	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < nl; i++) {
			k = decode_loop(code->b, &loops[i], ins);
			if (!k ||
			    (!caller && !pauses(ins, k, code->base, code)))
				continue;
			r = loop_word(ins, k, code->base, !pass, s);
			if (r >= 0 && found < 0)
				*at = loops[i].start;
			if (r > found)
				found = r;
			if (r == 1) {
				*at = loops[i].start;
				return 1;
			}
		}
	}
	memset(s, 0, sizeof(*s));
	return found;
}

bool lt_spin_relax_code(const uint8_t *b, size_t n)
{
	/* endbr64 first, with control-flow protection */
	if (n >= 4 && b[0] == 0xf3 && b[1] == 0x0f && b[2] == 0x1e &&
	    b[3] == 0xfa) {
		b += 4;
		n -= 4;
	}
	if (n >= sizeof(framed) && !memcmp(b, framed, sizeof(framed)))
		return true;
	return n >= 3 && b[0] == 0xf3 && b[1] == 0x90 && b[2] == 0xc3;
}

struct lt_spin_site lt_spin_judge(const struct lt_spin_code *code, uint64_t ip,
				  bool caller)
{
	const uint8_t *b = code->b;
	size_t n = code->n, off, nl, at = 0;
	struct lt_spin_site s = { .verdict = LT_SPIN_NONE };
	struct loop loops[LOOPS];

	if (ip < code->base || ip - code->base >= n)
		return s;
	off = (size_t)(ip - code->base);
	if (!caller && in_helper(b, n, off, &s)) {
		s.verdict = LT_SPIN_CALLER;
		return s;
	}
	/* The return address of a call to the helper: the call before. */
	if (caller && (off < 5 || b[off - 5] != 0xe8))
		return s;
	nl = find_loops(b, n, off, loops);
	if (pick_loop(code, loops, nl, caller, &s, &at) < 0)
		return (struct lt_spin_site){ .verdict = LT_SPIN_NONE };
	s.verdict = LT_SPIN_LOOP;
	s.site = code->base + at;
	/* Seen from the helper, whose call pushed the return address. */
	if (caller && s.how == LT_SPIN_MEM && s.reg == LT_X86_SP)
		s.ind += 8;
	return s;
}

bool lt_spin_image_may_lock(const char *image)
{
	return strcmp(image, "[vdso]") && strcmp(image, "[vsyscall]");
}
