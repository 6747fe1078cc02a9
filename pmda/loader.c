// SPDX-License-Identifier: GPL-2.0-or-later
/* pmdalocktop's probes: loaded in a thread, then read once per interval. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "agent.h"

void set_status(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(agent.status, sizeof(agent.status), fmt, ap);
	va_end(ap);
}

static void close_collector(void)
{
	lt_collector_close(agent.collector);
	agent.collector = NULL;
	agent.snap = NULL;
	ltpm_model_forget(&agent.model);
	refresh_all();
}

static void *load_main(void *arg)
{
	uint64_t one = 1;

	(void)arg;
	agent.load_ret = lt_collector_open(&agent.load_opts, &agent.loaded,
					   agent.load_err,
					   sizeof(agent.load_err));
	if (write(agent.loaded_fd, &one, sizeof(one)) != sizeof(one))
		abort(); /* an eventfd write cannot fail here */
	return NULL;
}

/* Starts loading the probes with the current settings. */
void start_load(void)
{
	int err;

	memcpy(agent.load_pids, agent.pids,
	       agent.n_pids * sizeof(agent.pids[0]));
	agent.load_opts = (struct lt_options){
		.pids = agent.load_pids,
		.n_pids = agent.n_pids,
		.interval_ms = agent.interval_ms,
		.stacks = agent.stacks,
		.no_io = agent.no_io,
		/* A long-lived agent: the dead's private locks go. */
		.retire_s = agent.retire_s,
	};
	agent.loaded = NULL;
	agent.load_err[0] = '\0';
	set_status("loading");
	err = pthread_create(&agent.loader, NULL, load_main, NULL);
	if (err) {
		set_status("error: cannot start the loader: %s", strerror(err));
		pmNotifyErr(LOG_ERR, "%s", agent.status);
		after_ms(&agent.next_read, RETRY_MS);
		return;
	}
	agent.loading = true;
}

/* The loader is done: take its collector, or say why there is none. */
void finish_load(void)
{
	uint64_t n;

	if (read(agent.loaded_fd, &n, sizeof(n)) != sizeof(n))
		return;
	pthread_join(agent.loader, NULL);
	agent.loading = false;
	if (!agent.load_ret) {
		agent.collector = agent.loaded;
		agent.opens++;
		agent.reverting = false;
		set_status("ok");
		pmNotifyErr(LOG_INFO,
			    "probes loaded (stacks %s, %zu pids, top %zu)",
			    agent.stacks ? "on" : "off", agent.n_pids,
			    agent.model.top_n);
		after_ms(&agent.next_read, agent.interval_ms);
	} else if (agent.reverting) {
		/* A store asked for what cannot be: back to what worked. */
		snprintf(agent.control_error, sizeof(agent.control_error), "%s",
			 agent.load_err[0] ? agent.load_err :
					     strerror(-agent.load_ret));
		pmNotifyErr(LOG_ERR,
			    "cannot load the probes as asked: %s; going back "
			    "to the previous settings",
			    agent.control_error);
		agent.reverting = false;
		agent.stacks = agent.prev_stacks;
		memcpy(agent.pids, agent.prev_pids, sizeof(agent.pids));
		agent.n_pids = agent.prev_n_pids;
		start_load();
		return;
	} else {
		set_status("error: %s", agent.load_err[0] ?
						agent.load_err :
						strerror(-agent.load_ret));
		pmNotifyErr(LOG_ERR,
			    "cannot load the probes: %s; retrying in %ds",
			    agent.status + 7, RETRY_MS / 1000);
		after_ms(&agent.next_read, RETRY_MS);
	}
	refresh_all();
	if (agent.notready_said) {
		pmdaSendError(&agent.dispatch, PM_ERR_PMDAREADY);
		agent.notready_said = false;
	}
}

void read_collector(void)
{
	const struct lt_snapshot *s;
	int ret;

	if (!agent.collector) {
		start_load();
		return;
	}
	after_ms(&agent.next_read, agent.interval_ms);
	ret = lt_collector_read(agent.collector, &s);
	if (ret) {
		set_status("error: reading the probes: %s", strerror(-ret));
		pmNotifyErr(LOG_ERR, "%s", agent.status);
		return;
	}
	agent.reads++;
	agent.snap = s;
	if (strcmp(agent.status, "ok"))
		set_status("ok");
	ret = ltpm_model_update(&agent.model, s);
	if (ret)
		pmNotifyErr(LOG_ERR, "cannot rank locks: %s", strerror(-ret));
	refresh_all();
}

/* Reloads with the settings a store has set, after its reply went out. */
void reopen_collector(void)
{
	agent.reopen = false;
	agent.reverting = true;
	agent.control_error[0] = '\0';
	close_collector();
	start_load();
}

/*
 * While the probes load, requests that need them are answered "not
 * ready" once; pmcd then answers clients itself and sends nothing more
 * until PM_ERR_PMDAREADY. A second NOTREADY would be a protocol error.
 */
int not_ready(void)
{
	if (agent.notready_said)
		return PM_ERR_AGAIN;
	agent.notready_said = true;
	return PM_ERR_PMDANOTREADY;
}
