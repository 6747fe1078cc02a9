/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The test programs' clock: nanoseconds, and a hold that really holds. */
#ifndef LOCKTOP_TESTCLOCK_H
#define LOCKTOP_TESTCLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Work on the CPU for us microseconds, as a lock's holder would. */
static inline void busy(long us)
{
	uint64_t end = now_ns() + (uint64_t)us * 1000;

	while (now_ns() < end)
		;
}

#endif /* LOCKTOP_TESTCLOCK_H */
