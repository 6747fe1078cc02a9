/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pmdalocktop's state, shared by its parts: pmdalocktop.c (options and
 * the main loop), loader.c (loading and reading the probes), instances.c
 * (instance domains), fetch.c (values) and store.c (controls).
 */
#ifndef LOCKTOP_PMDA_AGENT_H
#define LOCKTOP_PMDA_AGENT_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <pthread.h>
#include <pcp/pmapi.h>
#include <pcp/pmda.h>
#include "collector.h"
#include "metrics.h"
#include "model.h"

#define MAX_PIDS 64
#define INTERVAL_MIN_MS 100
#define INTERVAL_MAX_MS 60000
#define RETIRE_MAX_S (31 * 86400)
#define RETRY_MS 10000 /* after the probes failed to load */
#define PURGE_S 3600 /* forget instances not seen for this long */

/* An instance of a cached domain and what it stands for this round. */
struct inst_ref {
	int inst;
	const void *ptr;
};

struct inst_refs {
	struct inst_ref *v;
	size_t n, cap;
};

/* Everything the agent keeps, in one place (agent, in pmdalocktop.c). */
struct agent {
	pmdaInterface dispatch;
	struct lt_collector *collector;
	const struct lt_snapshot *snap; /* NULL until the first read */
	struct ltpm_model model;
	struct inst_refs locks, procs, files, probes;
	struct lt_lock *merged; /* locks of one instance, summed */
	size_t cap_merged;
	int other_inst;

	/* What the collector is opened with; stores change them. */
	bool stacks;
	bool no_io; /* -I: pread and pwrite untraced */
	pid_t pids[MAX_PIDS];
	size_t n_pids;
	unsigned int interval_ms;
	unsigned int retire_s; /* see lt_options; a store applies it at once */
	bool reopen; /* asked for by a store, done after the reply */

	/* The settings before a store, to go back to if they fail. */
	bool prev_stacks;
	pid_t prev_pids[MAX_PIDS];
	size_t prev_n_pids;
	bool reverting; /* the load running is of a store's settings */
	char control_error[512];

	/* The loader thread and what it hands back. */
	bool loading;
	bool notready_said; /* pmcd thinks we are not ready */
	pthread_t loader;
	int loaded_fd; /* eventfd the loader signals when done */
	struct lt_options load_opts;
	pid_t load_pids[MAX_PIDS];
	struct lt_collector *loaded;
	int load_ret;
	char load_err[512];

	uint64_t next_read, next_purge; /* lt_mono_ns() */
	char status[256];
	uint64_t reads, opens;

	/* uid of each client context, from pmcd's attributes; -1: unknown */
	int *ctx_uid;
	size_t n_ctx;
};

extern struct agent agent;

static inline int ms_until(const uint64_t *t)
{
	uint64_t now = lt_mono_ns(), ms;

	if (*t <= now)
		return 0;
	ms = (*t - now) / 1000000;
	return ms > INT_MAX ? INT_MAX : (int)ms;
}

static inline void after_ms(uint64_t *t, unsigned int ms)
{
	*t = lt_mono_ns() + ms * 1000000ULL;
}

/* instances.c: the domains for pmdaInit, and their instances */
extern pmdaIndom indomtab[N_INDOMS];
void init_indoms(void);
void refresh_all(void);
void purge_old(void);
const void *refs_find(const struct inst_refs *r, unsigned int inst);

/* loader.c: the probes, their status, and "not ready" while they load */
void set_status(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void start_load(void);
void finish_load(void);
void read_collector(void);
void reopen_collector(void);
int not_ready(void);

/* fetch.c: pmda's fetch and instance callbacks */
void fetch_callbacks(pmdaInterface *dispatch);

/* labels.c: each lock instance's name and kind as labels */
void label_callbacks(pmdaInterface *dispatch);

/* store.c: pmda's store, attribute and end-of-context callbacks */
void store_callbacks(pmdaInterface *dispatch);

#endif
