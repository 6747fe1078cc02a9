// SPDX-License-Identifier: GPL-2.0-or-later
/* pmdalocktop's metric and instance domain tables, from metrics.def. */
#include "metrics.h"

/* Units by the names metrics.def gives them. */
/* clang-format off */
#define UNITS_NONE { 0 }
#define UNITS_COUNT { .dimCount = 1, .scaleCount = PM_COUNT_ONE }
#define UNITS_BYTES { .dimSpace = 1, .scaleSpace = PM_SPACE_BYTE }
#define UNITS_NS { .dimTime = 1, .scaleTime = PM_TIME_NSEC }
#define UNITS_MSEC { .dimTime = 1, .scaleTime = PM_TIME_MSEC }
#define UNITS_SEC { .dimTime = 1, .scaleTime = PM_TIME_SEC }
/* clang-format on */

const struct ltpm_metric ltpm_metrics[LTPM_N_METRICS] = {
#define LTPM_METRIC(ID, NAME, CLUSTER, ITEM, TYPE, INDOM, SEM, UNITS, ONELINE, \
		    HELP)                                                      \
	[LTPM_##ID] = { .name = NAME,                                          \
			.cluster = CLUSTER,                                    \
			.item = ITEM,                                          \
			.type = TYPE,                                          \
			.indom = INDOM,                                        \
			.sem = SEM,                                            \
			.units = UNITS_##UNITS,                                \
			.oneline = ONELINE,                                    \
			.help = HELP },
#include "metrics.def"
};

/* The party rows of metrics.def are where LTPM_PARTY_ITEM says. */
_Static_assert(PA_H1_PID == LTPM_PARTY_ITEM(0, 0, LTPM_PARTY_PID) &&
		       PA_H2_COMM == LTPM_PARTY_ITEM(0, 1, LTPM_PARTY_COMM) &&
		       PA_H3_COUNT == LTPM_PARTY_ITEM(0, 2, LTPM_PARTY_COUNT) &&
		       PA_H4_TIME == LTPM_PARTY_ITEM(0, 3, LTPM_PARTY_TIME) &&
		       PA_W1_PID == LTPM_PARTY_ITEM(1, 0, LTPM_PARTY_PID) &&
		       PA_W4_TIME == LTPM_PARTY_ITEM(1, 3, LTPM_PARTY_TIME) &&
		       PA_NHOLDERS >= LTPM_PARTY_ITEM(2, 0, 0),
	       "party items out of place");
_Static_assert(
	PA_H1_TID == LTPM_HOLDER_ITEM(0, LTPM_HOLDER_TID) &&
		PA_H1_THREAD == LTPM_HOLDER_ITEM(0, LTPM_HOLDER_THREAD) &&
		PA_H2_TID == LTPM_HOLDER_ITEM(1, LTPM_HOLDER_TID) &&
		PA_H3_THREAD == LTPM_HOLDER_ITEM(2, LTPM_HOLDER_THREAD) &&
		PA_H4_TID == LTPM_HOLDER_ITEM(3, LTPM_HOLDER_TID) &&
		PA_H4_THREAD == LTPM_HOLDER_ITEM(3, LTPM_HOLDER_THREAD) &&
		LTPM_HOLDER_ITEM0 > PA_NHOLDERS &&
		LTPM_HOLDER_ITEM0 > PA_NWAITERS,
	"holder thread items out of place");

const struct ltpm_indom_help ltpm_indoms[N_INDOMS] = {
#define LTPM_INDOM(ID, SERIAL, ONELINE, HELP) \
	[ID] = { .oneline = ONELINE, .help = HELP },
#include "metrics.def"
};
