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

const struct ltpm_indom_help ltpm_indoms[N_INDOMS] = {
#define LTPM_INDOM(ID, SERIAL, ONELINE, HELP) \
	[ID] = { .oneline = ONELINE, .help = HELP },
#include "metrics.def"
};
