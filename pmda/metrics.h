/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pmdalocktop's metric table, from the rows of metrics.def: the numbers
 * the agent's code switches on, and every metric's name, PMID, type,
 * semantics, units and help, for the agent, genfiles and locktop's PCP
 * source. It needs PCP's pmapi.h only, not the agent library.
 */
#ifndef LOCKTOP_PMDA_METRICS_H
#define LOCKTOP_PMDA_METRICS_H

#include <pcp/pmapi.h>

/* Clusters: the middle number of each PMID. */
enum ltpm_cluster {
	CL_LOCK = 0,
	CL_KIND = 1,
	CL_PROC = 2,
	CL_FILE = 3,
	CL_PROBE = 4,
	CL_HIST = 5,
	CL_AGENT = 6,
	CL_CONTROL = 7,
	CL_PARTY = 8,
};

/*
 * The party cluster: a lock's holder or waiter of rank 0 to
 * LTPM_PARTY_RANKS - 1 (holder1 is rank 0), one item per field.
 */
#define LTPM_PARTY_RANKS 4
enum ltpm_party_field {
	LTPM_PARTY_PID,
	LTPM_PARTY_COMM,
	LTPM_PARTY_COUNT,
	LTPM_PARTY_TIME,
	LTPM_PARTY_FIELDS,
};
#define LTPM_PARTY_ITEM(waiter, rank, field) \
	(16 * (waiter) + LTPM_PARTY_FIELDS * (rank) + (field))

/*
 * A holder's thread (a futex's holder: its thread that held most), which
 * waiters have not: items from 34 on, past the ranks' fields (0 to 31)
 * and nholders and nwaiters (32, 33), one item per field and rank, so
 * that holder1.tid is 34, holder1.thread 35, ... holder4.thread 41.
 */
enum ltpm_holder_field {
	LTPM_HOLDER_TID,
	LTPM_HOLDER_THREAD,
	LTPM_HOLDER_FIELDS,
};
#define LTPM_HOLDER_ITEM0 34
#define LTPM_HOLDER_ITEM(rank, field) \
	(LTPM_HOLDER_ITEM0 + LTPM_HOLDER_FIELDS * (rank) + (field))

/* Instance domains by serial: LOCK_INDOM = 0... */
enum ltpm_indom {
#define LTPM_INDOM(ID, SERIAL, ONELINE, HELP) ID = SERIAL,
#include "metrics.def"
	N_INDOMS
};

/* Item numbers, the last part of each PMID: L_WAIT_COUNT = 0... */
enum ltpm_item {
#define LTPM_METRIC(ID, NAME, CLUSTER, ITEM, TYPE, INDOM, SEM, UNITS, ONELINE, \
		    HELP)                                                      \
	ID = ITEM,
#include "metrics.def"
};

/* Rows of ltpm_metrics[], in the order of metrics.def: LTPM_L_WAIT_COUNT... */
enum ltpm_metric_id {
#define LTPM_METRIC(ID, NAME, CLUSTER, ITEM, TYPE, INDOM, SEM, UNITS, ONELINE, \
		    HELP)                                                      \
	LTPM_##ID,
#include "metrics.def"
	LTPM_N_METRICS
};

struct ltpm_metric {
	const char *name; /* in full: "locktop.lock.wait.count" */
	unsigned int cluster, item;
	int type; /* PM_TYPE_* */
	pmInDom indom; /* the serial, or PM_INDOM_NULL */
	int sem; /* PM_SEM_* */
	pmUnits units;
	const char *oneline, *help;
};

struct ltpm_indom_help {
	const char *oneline, *help;
};

extern const struct ltpm_metric ltpm_metrics[LTPM_N_METRICS];
extern const struct ltpm_indom_help ltpm_indoms[N_INDOMS];

#endif
