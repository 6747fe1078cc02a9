// SPDX-License-Identifier: LGPL-2.1-or-later
/* Small pure helpers for every consumer of snapshots. */
#include <stdio.h>
#include "collector.h"

static const char *const kind_names[LT_KIND_NR] = {
	[LT_KIND_FUTEX] = "futex",
	[LT_KIND_FUTEX_COND] = "futex-cond",
};

const char *lt_kind_name(enum lt_kind kind)
{
	if ((unsigned int)kind >= LT_KIND_NR)
		return "?";
	return kind_names[kind];
}

bool lt_kind_is_lock(enum lt_kind kind)
{
	return kind != LT_KIND_FUTEX_COND;
}

const char *lt_format_ns(uint64_t ns, char *buf, size_t len)
{
	if (ns < 1000)
		snprintf(buf, len, "%lluns", (unsigned long long)ns);
	else if (ns < 1000000)
		snprintf(buf, len, "%.1fus", ns / 1e3);
	else if (ns < 1000000000)
		snprintf(buf, len, "%.1fms", ns / 1e6);
	else
		snprintf(buf, len, "%.2fs", ns / 1e9);
	return buf;
}

uint64_t lt_hist_quantile(const uint64_t *hist, size_t buckets, double q)
{
	uint64_t total = 0, seen = 0, want;
	size_t i;

	for (i = 0; i < buckets; i++)
		total += hist[i];
	if (!total)
		return 0;
	want = (uint64_t)(q * (double)total + 0.5);
	if (want < 1)
		want = 1;
	for (i = 0; i < buckets; i++) {
		seen += hist[i];
		/* Report the bucket's upper bound: never understate a wait. */
		if (seen >= want)
			return i >= 63 ? UINT64_MAX : (2ULL << i) - 1;
	}
	return UINT64_MAX;
}
