// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * pmdalocktop: the locktop collector as a Performance Co-Pilot agent;
 * here its options, its set-up and its main loop.
 *
 * The main thread waits on pmcd's pipe, a signalfd, the read deadline
 * and the loader's eventfd: a PDU is answered at once from the latest
 * snapshot, and the collector is read once per interval, so a fetch
 * never waits for BPF. Loading the probes takes a second or so and runs
 * in a loader thread; meanwhile a request for values is answered with
 * PM_ERR_PMDANOTREADY, so pmcd answers clients itself until the agent
 * sends PM_ERR_PMDAREADY. pmcd starts the agent "notready" (pmcd.conf)
 * for the first load.
 *
 * This loop is pmdaMain()'s with more to wait for: it polls the pipe
 * PCP's pmdaExt names (e_infd) and answers each PDU as pmdaMain() does.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include "agent.h"
#include "domain.h"

struct agent agent = {
	.other_inst = -1,
	.interval_ms = 1000,
	.retire_s = LT_RETIRE_S,
	.loaded_fd = -1,
	/* pmcd starts the agent "notready" (the Install's ipc_prot). */
	.notready_said = true,
};

/* The metric table's rows as pmda wants them, in PMID order. */
static pmdaMetric metrictab[LTPM_N_METRICS];

static int metric_cmp(const void *x, const void *y)
{
	pmID p = ((const pmdaMetric *)x)->m_desc.pmid;
	pmID q = ((const pmdaMetric *)y)->m_desc.pmid;

	return (p > q) - (p < q);
}

static void init_metrictab(void)
{
	size_t i;

	for (i = 0; i < LTPM_N_METRICS; i++) {
		const struct ltpm_metric *m = &ltpm_metrics[i];

		metrictab[i].m_user = NULL;
		metrictab[i].m_desc = (pmDesc){
			.pmid = PMDA_PMID(m->cluster, m->item),
			.type = m->type,
			.indom = m->indom,
			.sem = m->sem,
			.units = m->units,
		};
	}
	qsort(metrictab, LTPM_N_METRICS, sizeof(metrictab[0]), metric_cmp);
}

static void help_path(char *buf, size_t len)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char *slash;

	/* The help text lives beside the agent wherever it was installed. */
	if (n > 0) {
		exe[n] = '\0';
		slash = strrchr(exe, '/');
		if (slash && (size_t)(slash - exe) + sizeof("/help") <= len) {
			memcpy(buf, exe, slash - exe);
			strcpy(buf + (slash - exe), "/help");
			return;
		}
	}
	snprintf(buf, len, "%s/locktop/help", pmGetConfig("PCP_PMDAS_DIR"));
}

static pmLongOptions longopts[] = {
	PMDA_OPTIONS_HEADER("Options"),
	PMOPT_DEBUG,
	PMDAOPT_DOMAIN,
	PMDAOPT_LOGFILE,
	{ "interval", 1, 't', "MSEC", "read the probes every MSEC ms [1000]" },
	{ "top", 1, 'N', "N", "export the N busiest locks [20]" },
	{ "stacks", 0, 's', NULL, "record the user stack of contended waits" },
	{ "no-io", 0, 'I', NULL,
	  "leave pread and pwrite untraced: no file metrics, cheaper" },
	PMOPT_HELP,
	PMDA_OPTIONS_END
};

static pmdaOptions opts = {
	.short_options = "D:d:l:t:N:sI?",
	.long_options = longopts,
};

#ifdef LOCKTOP_ASAN
/*
 * Sanitizer builds only: libpcp keeps process-lifetime allocations that
 * LeakSanitizer would report at every exit, into the agent's log.
 * Memory errors are still reported there.
 */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "detect_leaks=0";
}
#endif

/* The command line: -t, -N, -s and -I, and pmda's own; exits on an
 * error. */
static void parse_options(int argc, char **argv, long *top)
{
	int c;

	while ((c = pmdaGetOptions(argc, argv, &opts, &agent.dispatch)) !=
	       EOF) {
		switch (c) {
		case 't':
			agent.interval_ms = (unsigned int)atoi(opts.optarg);
			if (agent.interval_ms < INTERVAL_MIN_MS ||
			    agent.interval_ms > INTERVAL_MAX_MS)
				opts.errors++;
			break;
		case 'N':
			*top = atol(opts.optarg);
			if (*top < 1 || *top > LTPM_TOP_MAX)
				opts.errors++;
			break;
		case 's':
			agent.stacks = true;
			break;
		case 'I':
			agent.no_io = true;
			break;
		}
	}
	if (opts.errors || opts.optind != argc) {
		pmdaUsageMessage(&opts);
		exit(1);
	}
}

/* SIGTERM and friends end the loop, so the probes are detached. */
static int signal_fd(void)
{
	sigset_t mask;
	int fd;

	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	fd = signalfd(-1, &mask, SFD_CLOEXEC);
	signal(SIGPIPE, SIG_IGN);
	return fd;
}

/* The agent's tables and callbacks to pmda, and the pipe to pmcd. */
static void connect_pmcd(void)
{
	pmdaOpenLog(&agent.dispatch);
	pmdaSetCommFlags(&agent.dispatch, PMDA_FLAG_AUTHORIZE);
	store_callbacks(&agent.dispatch);
	fetch_callbacks(&agent.dispatch);
	label_callbacks(&agent.dispatch);
	init_metrictab();
	pmdaInit(&agent.dispatch, indomtab, N_INDOMS, metrictab,
		 LTPM_N_METRICS);
	if (agent.dispatch.status) {
		pmNotifyErr(LOG_ERR, "pmdaInit: %s",
			    pmErrStr(agent.dispatch.status));
		exit(1);
	}
	pmdaConnect(&agent.dispatch);
	if (agent.dispatch.status) {
		pmNotifyErr(LOG_ERR, "pmdaConnect: %s",
			    pmErrStr(agent.dispatch.status));
		exit(1);
	}
}

/* Answers pmcd and reads the probes until a signal or pmcd's EOF. */
static int serve(int sig_fd)
{
	struct pollfd pfd[3];
	int sts = 0;

	pfd[0].fd = agent.dispatch.version.any.ext->e_infd; /* pmcd's pipe */
	pfd[0].events = POLLIN;
	pfd[1].fd = sig_fd;
	pfd[1].events = POLLIN;
	pfd[2].fd = agent.loaded_fd;
	pfd[2].events = POLLIN;
	for (;;) {
		int timeout = agent.loading ? -1 : ms_until(&agent.next_read);
		int ret;

		if (agent.collector && !agent.loading &&
		    (timeout < 0 || timeout > LT_HOUSEKEEP_MS))
			timeout = LT_HOUSEKEEP_MS;
		ret = poll(pfd, 3, timeout);
		if (agent.collector && !agent.loading)
			lt_collector_housekeep(agent.collector);

		if (ret < 0 && errno != EINTR) {
			pmNotifyErr(LOG_ERR, "poll: %s", strerror(errno));
			sts = 1;
			break;
		}
		if (ret > 0 && (pfd[1].revents & POLLIN)) {
			struct signalfd_siginfo si;

			if (read(sig_fd, &si, sizeof(si)) == sizeof(si))
				pmNotifyErr(LOG_INFO, "signal %u: exiting",
					    si.ssi_signo);
			break;
		}
		if (ret > 0 && (pfd[2].revents & POLLIN))
			finish_load();
		if (ret > 0 && pfd[0].revents) {
			/* Internal, as PCP has no public call for one PDU. */
			/* An error is EOF: pmcd is gone or has let us go. */
			if (__pmdaMainPDU(&agent.dispatch) < 0)
				break;
			if (agent.reopen && !agent.loading)
				reopen_collector();
		}
		if (!agent.loading && ms_until(&agent.next_read) == 0) {
			read_collector();
			purge_old();
		}
	}
	return sts;
}

/* Detaches the probes, a load still running too, and frees the rest. */
static void shut_down(void)
{
	if (agent.loading) {
		pthread_join(agent.loader, NULL);
		lt_collector_close(agent.loaded);
	}
	lt_collector_close(agent.collector);
	pmNotifyErr(LOG_INFO, "probes detached");
	ltpm_model_free(&agent.model);
	free(agent.locks.v);
	free(agent.merged);
	free(agent.procs.v);
	free(agent.files.v);
	free(agent.probes.v);
	free(agent.ctx_uid);
}

int main(int argc, char **argv)
{
	char helppath[PATH_MAX];
	int sig_fd, sts;
	long top = LTPM_TOP_DEFAULT;

	pmSetProgname(argv[0]);
	help_path(helppath, sizeof(helppath));
	pmdaDaemon(&agent.dispatch, PMDA_INTERFACE_7, pmGetProgname(), LOCKTOP,
		   "locktop.log", helppath);
	parse_options(argc, argv, &top);

	ltpm_model_init(&agent.model, (size_t)top);
	init_indoms();
	set_status("loading");
	sig_fd = signal_fd();
	connect_pmcd();

	agent.loaded_fd = eventfd(0, EFD_CLOEXEC);
	if (agent.loaded_fd < 0) {
		pmNotifyErr(LOG_ERR, "eventfd: %s", strerror(errno));
		exit(1);
	}
	refresh_all();
	start_load();
	after_ms(&agent.next_purge, PURGE_S * 1000 / 4);

	sts = serve(sig_fd);
	shut_down();
	return sts;
}
