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
	vsnprintf(a.status, sizeof(a.status), fmt, ap);
	va_end(ap);
}

static void close_collector(void)
{
	lt_collector_close(a.collector);
	a.collector = NULL;
	a.snap = NULL;
	ltpm_model_forget(&a.model);
	refresh_all();
}

static void *load_main(void *arg)
{
	uint64_t one = 1;

	(void)arg;
	a.load_ret = lt_collector_open(&a.load_opts, &a.loaded, a.load_err,
				       sizeof(a.load_err));
	if (write(a.loaded_fd, &one, sizeof(one)) != sizeof(one))
		abort(); /* an eventfd write cannot fail here */
	return NULL;
}

/* Starts loading the probes with the current settings. */
void start_load(void)
{
	int err;

	memcpy(a.load_pids, a.pids, a.n_pids * sizeof(a.pids[0]));
	a.load_opts = (struct lt_options){
		.pids = a.load_pids,
		.n_pids = a.n_pids,
		.interval_ms = a.interval_ms,
		.stacks = a.stacks,
		/* A long-lived agent: the dead's private locks go. */
		.retire_s = a.retire_s,
	};
	a.loaded = NULL;
	a.load_err[0] = '\0';
	set_status("loading");
	err = pthread_create(&a.loader, NULL, load_main, NULL);
	if (err) {
		set_status("error: cannot start the loader: %s", strerror(err));
		pmNotifyErr(LOG_ERR, "%s", a.status);
		after_ms(&a.next_read, RETRY_MS);
		return;
	}
	a.loading = true;
}

/* The loader is done: take its collector, or say why there is none. */
void finish_load(void)
{
	uint64_t n;

	if (read(a.loaded_fd, &n, sizeof(n)) != sizeof(n))
		return;
	pthread_join(a.loader, NULL);
	a.loading = false;
	if (!a.load_ret) {
		a.collector = a.loaded;
		a.opens++;
		a.reverting = false;
		set_status("ok");
		pmNotifyErr(LOG_INFO,
			    "probes loaded (stacks %s, %zu pids, top %zu)",
			    a.stacks ? "on" : "off", a.n_pids, a.model.top_n);
		after_ms(&a.next_read, a.interval_ms);
	} else if (a.reverting) {
		/* A store asked for what cannot be: back to what worked. */
		snprintf(a.control_error, sizeof(a.control_error), "%s",
			 a.load_err[0] ? a.load_err : strerror(-a.load_ret));
		pmNotifyErr(LOG_ERR,
			    "cannot load the probes as asked: %s; going back "
			    "to the previous settings",
			    a.control_error);
		a.reverting = false;
		a.stacks = a.prev_stacks;
		memcpy(a.pids, a.prev_pids, sizeof(a.pids));
		a.n_pids = a.prev_n_pids;
		start_load();
		return;
	} else {
		set_status("error: %s",
			   a.load_err[0] ? a.load_err : strerror(-a.load_ret));
		pmNotifyErr(LOG_ERR,
			    "cannot load the probes: %s; retrying in %ds",
			    a.status + 7, RETRY_MS / 1000);
		after_ms(&a.next_read, RETRY_MS);
	}
	refresh_all();
	if (a.notready_said) {
		pmdaSendError(&a.dispatch, PM_ERR_PMDAREADY);
		a.notready_said = false;
	}
}

void read_collector(void)
{
	const struct lt_snapshot *s;
	int ret;

	if (!a.collector) {
		start_load();
		return;
	}
	after_ms(&a.next_read, a.interval_ms);
	ret = lt_collector_read(a.collector, &s);
	if (ret) {
		set_status("error: reading the probes: %s", strerror(-ret));
		pmNotifyErr(LOG_ERR, "%s", a.status);
		return;
	}
	a.reads++;
	a.snap = s;
	if (strcmp(a.status, "ok"))
		set_status("ok");
	ret = ltpm_model_update(&a.model, s);
	if (ret)
		pmNotifyErr(LOG_ERR, "cannot rank locks: %s", strerror(-ret));
	refresh_all();
}

/* Reloads with the settings a store has set, after its reply went out. */
void reopen_collector(void)
{
	a.reopen = false;
	a.reverting = true;
	a.control_error[0] = '\0';
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
	if (a.notready_said)
		return PM_ERR_AGAIN;
	a.notready_said = true;
	return PM_ERR_PMDANOTREADY;
}
