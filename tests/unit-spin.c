// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests of the x86-64 decoder and the spin loop classifier, on
 * byte strings: the loops compilers make of spin locks, and loops that
 * only look like them.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include <linux/types.h>
#include "internal.h"
#include "spin.h"

#define BASE 0x1000

/*
 * Assembled at BASE:
 *  0x00 ttas:    1: mov (%rdi),%eax; test; jne 2f; mov $1,%ecx;
 *                lock cmpxchg %ecx,(%rdi); je 3f; 2: pause; jmp 1b; 3: ret
 *  0x16 helper:  pause; ret
 *  0x19 backoff: 1: mov 0x0(%rbp),%r14d; test; je 3f; xor %r13d,%r13d;
 *                2: call helper; add $1,%r13d; cmp %r12d,%r13d; jne 2b;
 *                cmp $0x400,%r13d; lea; cmovae; add $1,%r15d;
 *                test $0xf,%r15b; jne 1b; 3: ret
 *  0x4e busy:    1: pause; call helper; cmp %rax,%rbx; ja 1b; ret
 *  0x5b o0:      1: mov -0x18(%rbp),%rax; mov (%rax),%eax; test; je 2f;
 *                pause; jmp 1b; 2: ret
 *  0x6a riprel:  1: mov 0x100(%rip),%eax; test; je 2f; pause; jmp 1b; ret
 *  0x79 chase:   1: mov 0x8(%rdi),%rbx; mov (%rbx),%eax; test; je 2f;
 *                pause; jmp 1b; 2: ret
 */
static const uint8_t code[] = {
	0x8b, 0x07, 0x85, 0xc0, 0x75, 0x0b, 0xb9, 0x01, 0x00, 0x00, 0x00, 0xf0,
	0x0f, 0xb1, 0x0f, 0x74, 0x04, 0xf3, 0x90, 0xeb, 0xeb, 0xc3, 0xf3, 0x90,
	0xc3, 0x44, 0x8b, 0x75, 0x00, 0x45, 0x85, 0xf6, 0x74, 0x2b, 0x45, 0x31,
	0xed, 0xe8, 0xec, 0xff, 0xff, 0xff, 0x41, 0x83, 0xc5, 0x01, 0x45, 0x39,
	0xe5, 0x75, 0xf2, 0x41, 0x81, 0xfd, 0x00, 0x04, 0x00, 0x00, 0x47, 0x8d,
	0x64, 0x2d, 0x00, 0x45, 0x0f, 0x43, 0xe5, 0x41, 0x83, 0xc7, 0x01, 0x41,
	0xf6, 0xc7, 0x0f, 0x75, 0xcc, 0xc3, 0xf3, 0x90, 0xe8, 0xc1, 0xff, 0xff,
	0xff, 0x48, 0x39, 0xc3, 0x77, 0xf4, 0xc3, 0x48, 0x8b, 0x45, 0xe8, 0x8b,
	0x00, 0x85, 0xc0, 0x74, 0x04, 0xf3, 0x90, 0xeb, 0xf2, 0xc3, 0x8b, 0x05,
	0x00, 0x01, 0x00, 0x00, 0x85, 0xc0, 0x74, 0x04, 0xf3, 0x90, 0xeb, 0xf2,
	0xc3, 0x48, 0x8b, 0x5f, 0x08, 0x8b, 0x03, 0x85, 0xc0, 0x74, 0x04, 0xf3,
	0x90, 0xeb, 0xf2, 0xc3,
};

/* The helper at 0x16, as the collector finds it in a process. */
static bool is_relax(void *arg, uint64_t addr)
{
	(void)arg;
	return addr >= BASE && addr < BASE + sizeof(code) &&
	       lt_spin_relax_code(code + (addr - BASE),
				  sizeof(code) - (addr - BASE));
}

static struct lt_spin_site judge_in(const uint8_t *b, size_t n, uint64_t off,
				    bool caller)
{
	struct lt_spin_code c = {
		.b = b, .n = n, .base = BASE, .is_relax = is_relax
	};

	return lt_spin_judge(&c, BASE + off, caller);
}

static struct lt_spin_site judge(uint64_t off, bool caller)
{
	return judge_in(code, sizeof(code), off, caller);
}

static void test_decode_lengths(void **state)
{
	static const struct {
		uint8_t b[12];
		int len;
	} cases[] = {
		{ { 0x8b, 0x07 }, 2 }, /* mov (%rdi),%eax */
		{ { 0xf0, 0x0f, 0xb1, 0x0f }, 4 }, /* lock cmpxchg */
		{ { 0x44, 0x8b, 0x75, 0x00 }, 4 }, /* mov 0x0(%rbp),%r14d */
		{ { 0x41, 0x81, 0xfd, 0x00, 0x04, 0x00, 0x00 }, 7 },
		{ { 0x47, 0x8d, 0x64, 0x2d, 0x00 }, 5 }, /* lea with SIB */
		{ { 0x48, 0xb8, 1, 2, 3, 4, 5, 6, 7, 8 }, 10 }, /* movabs */
		{ { 0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00 }, 6 }, /* nopw */
		{ { 0xf3, 0x0f, 0x1e, 0xfa }, 4 }, /* endbr64 */
		{ { 0x0f, 0x85, 0x2a, 0x03, 0x00, 0x00 }, 6 }, /* jne rel32 */
		{ { 0xe8, 0xc3, 0x6a, 0x00, 0x00 }, 5 }, /* call */
		{ { 0xc7, 0x05, 1, 0, 0, 0, 0, 0, 0, 0 }, 10 }, /* movl $,rip */
		{ { 0x06 }, -1 }, /* push %es: not in 64-bit mode */
	};
	struct lt_x86_insn in;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_int_equal(lt_x86_decode(cases[i].b, sizeof(cases[i].b),
					       &in),
				 cases[i].len);
}

static void test_decode_operands(void **state)
{
	static const uint8_t cmpxchg[] = { 0xf0, 0x0f, 0xb1, 0x4d, 0x00 };
	static const uint8_t load[] = { 0x44, 0x8b, 0x75, 0x00 };
	static const uint8_t jmp[] = { 0xeb, 0xeb };
	static const uint8_t rip[] = { 0x8b, 0x05, 0x00, 0x01, 0x00, 0x00 };
	struct lt_x86_insn in;

	(void)state;
	assert_int_equal(lt_x86_decode(cmpxchg, sizeof(cmpxchg), &in), 5);
	assert_true(in.atomic && in.mem && in.lock);
	assert_int_equal(in.base, LT_X86_BP);
	assert_true(in.writes & (1u << LT_X86_AX));
	assert_int_equal(lt_x86_decode(load, sizeof(load), &in), 4);
	assert_true(in.load && !in.atomic);
	assert_int_equal(in.base, LT_X86_BP);
	assert_int_equal(in.reg, LT_X86_R14);
	assert_true(in.writes & (1u << LT_X86_R14));
	assert_int_equal(lt_x86_decode(jmp, sizeof(jmp), &in), 2);
	assert_true(in.branch && in.jump);
	assert_int_equal(in.rel, -21);
	assert_int_equal(lt_x86_decode(rip, sizeof(rip), &in), 6);
	assert_int_equal(in.base, 16);
	assert_int_equal(in.disp, 0x100);
}

/* The lock word in a register: the compare-and-swap's base. */
static void test_inline_pause(void **state)
{
	struct lt_spin_site s;
	uint64_t ip;

	(void)state;
	for (ip = 0x11; ip <= 0x13; ip += 2) {
		s = judge(ip, false);
		assert_int_equal(s.verdict, LT_SPIN_LOOP);
		assert_int_equal(s.how, LT_SPIN_REG);
		assert_int_equal(s.reg, LT_X86_DI);
		assert_int_equal(s.disp, 0);
		assert_int_equal(s.site, BASE);
	}
}

/* PAUSE; RET: its caller is judged, the call before the return address. */
static void test_helper_and_caller(void **state)
{
	struct lt_spin_site s;

	(void)state;
	assert_int_equal(judge(0x16, false).verdict, LT_SPIN_CALLER);
	assert_int_equal(judge(0x18, false).verdict, LT_SPIN_CALLER);
	s = judge(0x2a, true);
	assert_int_equal(s.verdict, LT_SPIN_LOOP);
	assert_int_equal(s.how, LT_SPIN_REG);
	assert_int_equal(s.reg, LT_X86_BP);
	assert_int_equal(s.disp, 0);
	/* Not after a call: no caller of a helper. */
	assert_int_equal(judge(0x2e, true).verdict, LT_SPIN_NONE);
	/* Samples in the caller's own loops: the call makes them spin. */
	s = judge(0x2e, false);
	assert_int_equal(s.verdict, LT_SPIN_LOOP);
	assert_int_equal(s.reg, LT_X86_BP);
	s = judge(0x1d, false);
	assert_int_equal(s.verdict, LT_SPIN_LOOP);
	assert_int_equal(s.site, BASE + 0x19);
}

/* A busy wait on the clock tests no word: no spin lock. */
static void test_busy_wait(void **state)
{
	(void)state;
	assert_int_equal(judge(0x50, false).verdict, LT_SPIN_NONE);
	assert_int_equal(judge(0x55, true).verdict, LT_SPIN_NONE);
}

/* Unoptimized code reloads the pointer from the frame each round. */
static void test_frame_pointer(void **state)
{
	struct lt_spin_site s = judge(0x65, false);

	(void)state;
	assert_int_equal(s.verdict, LT_SPIN_LOOP);
	assert_int_equal(s.how, LT_SPIN_MEM);
	assert_int_equal(s.reg, LT_X86_BP);
	assert_int_equal(s.ind, -0x18);
	assert_int_equal(s.disp, 0);
}

static void test_rip_relative(void **state)
{
	struct lt_spin_site s = judge(0x74, false);

	(void)state;
	assert_int_equal(s.verdict, LT_SPIN_LOOP);
	assert_int_equal(s.how, LT_SPIN_ABS);
	assert_int_equal(s.disp, BASE + 0x70 + 0x100);
}

/* The word behind a pointer in a structure: the pointer's place. */
static void test_pointer_chase(void **state)
{
	struct lt_spin_site s = judge(0x83, false);

	(void)state;
	assert_int_equal(s.verdict, LT_SPIN_LOOP);
	assert_int_equal(s.how, LT_SPIN_MEM);
	assert_int_equal(s.reg, LT_X86_DI);
	assert_int_equal(s.ind, 8);
}

/* No loop, no PAUSE, or bytes out of reach: no verdict of spin. */
static void test_not_spin(void **state)
{
	static const uint8_t straight[] = { 0xf3, 0x90, 0x90, 0xc3 };
	static const uint8_t garbage[] = { 0x06, 0x07, 0x27 };

	(void)state;
	assert_int_equal(judge_in(straight, sizeof(straight), 2, false).verdict,
			 LT_SPIN_NONE);
	assert_int_equal(judge_in(garbage, sizeof(garbage), 0, false).verdict,
			 LT_SPIN_NONE);
	assert_int_equal(judge(0x1000, false).verdict, LT_SPIN_NONE);
	assert_int_equal(judge_in(code, 0, 0, false).verdict, LT_SPIN_NONE);
	/* The test of the word is the spin loop too. */
	assert_int_equal(judge(0x02, false).verdict, LT_SPIN_LOOP);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decode_lengths),
		cmocka_unit_test(test_decode_operands),
		cmocka_unit_test(test_inline_pause),
		cmocka_unit_test(test_helper_and_caller),
		cmocka_unit_test(test_busy_wait),
		cmocka_unit_test(test_frame_pointer),
		cmocka_unit_test(test_rip_relative),
		cmocka_unit_test(test_pointer_chase),
		cmocka_unit_test(test_not_spin),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
