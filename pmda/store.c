// SPDX-License-Identifier: GPL-2.0-or-later
/* pmdalocktop's controls: what pmstore changes, for root clients only. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "agent.h"

static int ctx_uid(int ctx)
{
	return ctx >= 0 && (size_t)ctx < agent.n_ctx ? agent.ctx_uid[ctx] : -1;
}

static int attribute(int ctx, int attr, const char *value, int length,
		     pmdaExt *pmda)
{
	if (attr == PMDA_ATTR_USERID && ctx >= 0 && value) {
		if ((size_t)ctx >= agent.n_ctx) {
			size_t i = agent.n_ctx;

			if (lt_grow((void **)&agent.ctx_uid, &agent.n_ctx,
				    (size_t)ctx + 1, sizeof(*agent.ctx_uid)))
				return -ENOMEM;
			for (; i < agent.n_ctx; i++)
				agent.ctx_uid[i] = -1;
		}
		agent.ctx_uid[ctx] = atoi(value);
	}
	return pmdaAttribute(ctx, attr, value, length, pmda);
}

static void end_context(int ctx)
{
	if (ctx >= 0 && (size_t)ctx < agent.n_ctx)
		agent.ctx_uid[ctx] = -1;
}

static int store_one(pmValueSet *vs)
{
	unsigned int item = pmID_item(vs->pmid);
	pmAtomValue av;
	pid_t pids[MAX_PIDS];
	int n, sts;

	if (pmID_cluster(vs->pmid) != CL_CONTROL)
		return PM_ERR_PERMISSION; /* only controls are writable */
	if (vs->numval != 1)
		return PM_ERR_BADSTORE;
	switch (item) {
	case C_STACKS:
	case C_TOP:
	case C_INTERVAL:
	case C_RETIRE:
		sts = pmExtractValue(vs->valfmt, &vs->vlist[0], PM_TYPE_U32,
				     &av, PM_TYPE_U32);
		if (sts < 0)
			return sts;
		if (item == C_STACKS) {
			if (av.ul > 1)
				return PM_ERR_BADSTORE;
			if ((bool)av.ul != agent.stacks) {
				agent.stacks = av.ul;
				agent.reopen = true;
			}
		} else if (item == C_TOP) {
			if (av.ul < 1 || av.ul > LTPM_TOP_MAX)
				return PM_ERR_BADSTORE;
			ltpm_model_set_top(&agent.model, av.ul);
		} else if (item == C_RETIRE) {
			if (av.ul > RETIRE_MAX_S)
				return PM_ERR_BADSTORE;
			agent.retire_s = av.ul;
			if (agent.collector)
				lt_collector_set_retire(agent.collector,
							agent.retire_s);
		} else {
			if (av.ul < INTERVAL_MIN_MS || av.ul > INTERVAL_MAX_MS)
				return PM_ERR_BADSTORE;
			agent.interval_ms = av.ul;
			if (agent.collector)
				lt_collector_set_interval(agent.collector,
							  agent.interval_ms);
			after_ms(&agent.next_read, agent.interval_ms);
		}
		break;
	case C_PIDS:
		sts = pmExtractValue(vs->valfmt, &vs->vlist[0], PM_TYPE_STRING,
				     &av, PM_TYPE_STRING);
		if (sts < 0)
			return sts;
		n = ltpm_parse_pids(av.cp, pids, MAX_PIDS);
		free(av.cp);
		if (n < 0)
			return PM_ERR_BADSTORE;
		memcpy(agent.pids, pids, n * sizeof(pids[0]));
		agent.n_pids = n;
		agent.reopen = true;
		break;
	default:
		return PM_ERR_PERMISSION;
	}
	return 0;
}

static int store(pmResult *result, pmdaExt *pmda)
{
	int ctx = pmdaGetContext();
	int i, sts;

	(void)pmda;
	if (agent.loading)
		return not_ready();
	/*
	 * Only root may change what the probes trace: pmcd passes the
	 * client's uid for local connections; others have none.
	 */
	if (ctx_uid(ctx) != 0) {
		pmNotifyErr(
			LOG_WARNING,
			"store refused: client context %d (uid %d) is not root",
			ctx, ctx_uid(ctx));
		return PM_ERR_PERMISSION;
	}
	if (!agent.reopen) {
		agent.prev_stacks = agent.stacks;
		memcpy(agent.prev_pids, agent.pids, sizeof(agent.pids));
		agent.prev_n_pids = agent.n_pids;
	}
	for (i = 0; i < result->numpmid; i++) {
		sts = store_one(result->vset[i]);
		if (sts < 0)
			return sts;
	}
	pmNotifyErr(LOG_INFO,
		    "control changed: stacks %d, %zu pids, top %zu, "
		    "interval %ums%s",
		    agent.stacks, agent.n_pids, agent.model.top_n,
		    agent.interval_ms,
		    agent.reopen ? ", reopening the probes" : "");
	return 0;
}

void store_callbacks(pmdaInterface *dispatch)
{
	dispatch->version.seven.store = store;
	dispatch->version.seven.attribute = attribute;
	pmdaSetEndContextCallBack(dispatch, end_context);
}
