/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The spin kind's sampling event on one CPU, shared by the collector and
 * bench/attach-floor (whose --sample-hz floor must sample as locktop
 * does).
 */
#ifndef LOCKTOP_COLLECTOR_SAMPLE_EVENT_H
#define LOCKTOP_COLLECTOR_SAMPLE_EVENT_H

#include <stdbool.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>

/*
 * A sampling event on cpu, hz times a second: the CPU's cycles where the
 * machine counts them, else its clock (virtual machines often have no
 * counters; *clock is then set, and later calls go straight to it). A
 * descriptor, or -1 with errno.
 */
static inline int lt_sample_event(unsigned int hz, int cpu, bool *clock)
{
	struct perf_event_attr a = {
		.size = sizeof(a),
		.freq = 1,
		.sample_freq = hz,
	};
	int fd = -1;

	if (!*clock) {
		a.type = PERF_TYPE_HARDWARE;
		a.config = PERF_COUNT_HW_CPU_CYCLES;
		fd = (int)syscall(SYS_perf_event_open, &a, -1, cpu, -1,
				  PERF_FLAG_FD_CLOEXEC);
		if (fd >= 0)
			return fd;
		*clock = true;
	}
	/* A fixed period of the CPU clock: each sample stands for it. */
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_CPU_CLOCK;
	a.freq = 0;
	a.sample_period = 1000000000ULL / hz;
	return (int)syscall(SYS_perf_event_open, &a, -1, cpu, -1,
			    PERF_FLAG_FD_CLOEXEC);
}

#endif /* LOCKTOP_COLLECTOR_SAMPLE_EVENT_H */
