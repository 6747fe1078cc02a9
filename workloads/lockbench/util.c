// SPDX-License-Identifier: GPL-2.0-or-later
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lockbench.h"

const char *const lb_lock_names[LB_LOCK_KINDS] = {
	[LB_LOCK_FCNTL] = "fcntl", [LB_LOCK_OFD] = "ofd",
	[LB_LOCK_FLOCK] = "flock", [LB_LOCK_MUTEX] = "mutex",
	[LB_LOCK_SPIN] = "spin",   [LB_LOCK_ADAPTIVE] = "adaptive",
};

const char *const lb_io_names[LB_IO_KINDS] = {
	[LB_IO_MMAP] = "mmap",
	[LB_IO_PREAD] = "pread",
	[LB_IO_LSEEK] = "lseek",
};

const char *const lb_op_names[LB_OPS] = {
	[LB_OP_FETCH] = "fetch",	 [LB_OP_STORE] = "store",
	[LB_OP_DELETE] = "delete",	 [LB_OP_APPEND] = "append",
	[LB_OP_LOCKSTORE] = "lockstore",
};

int lb_lock_kind_parse(const char *s)
{
	for (int i = 0; i < LB_LOCK_KINDS; i++)
		if (!strcmp(s, lb_lock_names[i]))
			return i;
	return -1;
}

int lb_io_kind_parse(const char *s)
{
	for (int i = 0; i < LB_IO_KINDS; i++)
		if (!strcmp(s, lb_io_names[i]))
			return i;
	return -1;
}

uint64_t lb_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The calling thread's CPU time, user and system, in nanoseconds. */
uint64_t lb_thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* splitmix64: tiny, fast, and every seed gives a full-period stream. */
uint64_t lb_rand(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

uint64_t lb_seed_mix(uint64_t seed, uint64_t stream)
{
	uint64_t s = seed ^ (stream * 0xd1342543de82ef95ull);

	return lb_rand(&s);
}

void lb_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#else
	__asm__ __volatile__("" ::: "memory");
#endif
}

bool lb_pid_alive(pid_t pid)
{
	return pid > 0 && (kill(pid, 0) == 0 || errno == EPERM);
}

/* On-CPU on purpose: a hold time that sleeps would not look like a holder. */
void lb_busy_wait_us(long us)
{
	uint64_t end;

	if (us <= 0)
		return;
	end = lb_now_ns() + (uint64_t)us * 1000u;
	while (lb_now_ns() < end)
		lb_cpu_relax();
}

void lb_sleep_us(long us)
{
	struct timespec ts = { .tv_sec = us / 1000000,
			       .tv_nsec = (us % 1000000) * 1000 };

	if (us <= 0)
		return;
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

void lb_format_ns(char *buf, size_t len, uint64_t ns)
{
	if (ns < 1000)
		snprintf(buf, len, "%llu ns", (unsigned long long)ns);
	else if (ns < 1000000)
		snprintf(buf, len, "%.1f us", ns / 1e3);
	else if (ns < 1000000000)
		snprintf(buf, len, "%.2f ms", ns / 1e6);
	else
		snprintf(buf, len, "%.2f s", ns / 1e9);
}

unsigned lb_hist_bucket(uint64_t ns)
{
	unsigned msb;

	if (ns < 16)
		return (unsigned)ns;
	msb = 63u - (unsigned)__builtin_clzll(ns);
	return 16u + (msb - 4u) * 8u + (unsigned)((ns >> (msb - 3u)) & 7u);
}

uint64_t lb_hist_upper(unsigned bucket)
{
	unsigned msb, sub;

	if (bucket < 16)
		return bucket;
	msb = (bucket - 16u) / 8u + 4u;
	sub = (bucket - 16u) % 8u;
	if (msb >= 63 && sub == 7)
		return UINT64_MAX;
	return ((8ull + sub + 1ull) << (msb - 3u)) - 1ull;
}

void lb_result_error(struct lb_result *res, const char *fmt, ...)
{
	va_list ap;

	if (res->nerrors < sizeof(res->errors) / sizeof(res->errors[0])) {
		va_start(ap, fmt);
		vsnprintf(res->errors[res->nerrors], sizeof(res->errors[0]),
			  fmt, ap);
		va_end(ap);
	}
	res->nerrors++;
}

void lb_worker_die(struct lb_worker *w, const char *fmt, ...)
{
	struct lb_shared *sh = w->run->sh;
	char msg[sizeof(sh->fail_msg)];
	va_list ap;
	int zero = 0;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (__atomic_compare_exchange_n(&sh->failed, &zero, 1, false,
					__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		memcpy(sh->fail_msg, msg, sizeof(msg));
	__atomic_store_n(&sh->abort, 1, __ATOMIC_RELEASE);
	fprintf(stderr, "lockbench: worker %u: %s\n", w->idx, msg);
	/*
	 * A thread cannot unwind past the locks it holds, so in thread mode
	 * the whole process goes; a worker process just ends and the parent
	 * reports.
	 */
	if (w->run->cfg->threads) {
		if (!w->run->cfg->keep)
			unlink(w->run->path);
		exit(LB_EXIT_FAIL);
	}
	_exit(LB_EXIT_FAIL);
}
