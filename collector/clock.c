// SPDX-License-Identifier: LGPL-2.1-or-later
/* The clocks, in nanoseconds, for every consumer. */
#include <time.h>
#include "collector.h"

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

uint64_t lt_mono_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

uint64_t lt_wall_ns(void)
{
	return clock_ns(CLOCK_REALTIME);
}
