// SPDX-License-Identifier: GPL-2.0-or-later
/* locktop's command line: the option tables, their help and the parser. */
#include <argp.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "collector.h"
#include "columns.h"
#include "config.h"
#include "locktop_args.h"

struct env env = {
	.delay_ms = 1000,
	.limit = -1,
	.retire_s = -1,
	.spin_hz = -1,
};

const char *argp_program_version = "locktop " LOCKTOP_VERSION;

static const char doc[] =
	"locktop -- where processes wait on locks, who holds them, and what "
	"it costs.\n"
	"\n"
	"Traces lock waits with eBPF, aggregated in the kernel per lock, and "
	"shows them on a live screen like top; when the output is not a "
	"terminal, or with --batch, it prints one table per interval, like "
	"top -b. Uncontended locks never enter the kernel, so they cost "
	"nothing to trace. Needs root (or CAP_BPF and CAP_PERFMON) and a "
	"kernel with BTF; --host and --archive read pmdalocktop's metrics "
	"instead and need neither.\n"
	"\n"
	"EXAMPLES:\n"
	"  locktop                          the live screen; h for help\n"
	"  locktop -- ./server              the screen for one command\n"
	"  locktop --batch                  every process, a table a second\n"
	"  locktop -b -d 5 -n 3             three 5-second tables, then exit\n"
	"  locktop -b -p 1234               process 1234 and its descendants\n"
	"  locktop -b -p smbd               every smbd, and what they fork\n"
	"  locktop record -o s.rec -p smbd --ready-file /tmp/r -- smbtorture "
	"...\n"
	"                                   the server, while the load runs\n"
	"  locktop -b --json -- make -j8    trace a command; JSON lines; exit "
	"with its status\n"
	"  locktop -b -o waits.txt -- ./server   write the tables to a file\n"
	"  locktop --host db1               pmdalocktop's metrics on host db1\n"
	"  locktop --host db1,db2,db3       three hosts' locks ranked together\n"
	"  locktop --series proxy --window 1d   a fleet's top locks of a day\n"
	"  locktop -b --archive /var/log/pcp/pmlogger/db1/20260101\n"
	"  locktop record -o a.rec -- ./server   record a session to a file\n"
	"  locktop diff a.rec b.rec         compare two records "
	"(locktop diff --help)\n"
	"\v"
	/* help_filter() puts what the columns mean here. */
	"Only lock-like waits are shown by default: a glibc mutex waiting with "
	"value 2, or a robust/PI word with an owner and waiters. Condition "
	"variables, semaphores and joins are kind futex-cond; --all shows them.\n"
	"\n"
	"Exit status: 0 on success, 1 on a runtime error, 2 on a usage error; "
	"with -- COMMAND, the command's status (128+N if killed by signal N).";

static const char args_doc[] =
	"[-- COMMAND [ARGS...]]\n"
	"record -o FILE [OPTIONS] [-- COMMAND [ARGS...]]\n"
	"diff [OPTIONS] BEFORE AFTER";

enum {
	OPT_ALL = 'a',
	OPT_STACKS = 0x100,
	OPT_PER_PROCESS,
	OPT_HOST,
	OPT_ARCHIVE,
	OPT_SERIES,
	OPT_WINDOW,
	OPT_MONO,
	OPT_DURATION,
	OPT_RETIRE,
	OPT_EXACT_HOLDS,
	OPT_NO_KERNEL,
	OPT_NO_IO,
	OPT_SPIN_HZ,
	OPT_SPIN_ALWAYS,
	OPT_READY_FILE,
	OPT_OPS_FILE,
};

static const struct argp_option options[] = {
	{ "batch", 'b', NULL, 0,
	  "Batch mode: print tables, not a screen (the default "
	  "when the output is not a terminal)",
	  0 },
	{ "delay", 'd', "SECS", 0,
	  "Seconds between tables (default 1; "
	  "fractions allowed)",
	  0 },
	{ "iterations", 'n', "N", 0,
	  "Stop after N tables (default: until "
	  "interrupted or COMMAND exits)",
	  0 },
	{ "pid", 'p', "PID|NAME[,...]", 0,
	  "Trace only these processes, their threads and their descendants, "
	  "those running now and those started later; a NAME stands for "
	  "every process of that name now (repeatable; with -- COMMAND, "
	  "the command is traced too)",
	  0 },
	{ "ready-file", OPT_READY_FILE, "PATH", 0,
	  "Create PATH once the probes are attached (a COMMAND starts "
	  "after that), for a script to wait on",
	  0 },
	{ "json", 'j', NULL, 0,
	  "One JSON object per interval, one per line; "
	  "the last has \"final\": true",
	  0 },
	{ "output", 'o', "FILE", 0,
	  "Write to FILE instead of stdout ('-' is stdout)", 0 },
	{ "all", OPT_ALL, NULL, 0,
	  "Show condition-like waits (futex-cond) "
	  "too",
	  0 },
	{ "per-process", OPT_PER_PROCESS, NULL, 0,
	  "Batch output: each process's own copy of a lock site as a "
	  "row of its own, in place of the site's row",
	  0 },
	{ "limit", 'l', "N", 0,
	  "At most N rows per table (default 20 for "
	  "text, all for JSON; 0: all)",
	  0 },
	{ "stacks", OPT_STACKS, NULL, 0,
	  "Record the user stack of contended waits (the lock detail "
	  "shows it)",
	  0 },
	{ "exact-holds", OPT_EXACT_HOLDS, NULL, 0,
	  "Time every file lock hold, at a clock read per lock and unlock, "
	  "where by default a busy lock's uncontended holds are sampled",
	  0 },
	{ "no-kernel-locks", OPT_NO_KERNEL, NULL, 0,
	  "Leave kernel-internal lock contention (kind kernel) untraced", 0 },
	{ "no-io", OPT_NO_IO, NULL, 0,
	  "Leave pread and pwrite untraced: no Files view, no I/O columns, "
	  "no I/O under a lock. Spares the two probe runs on each such "
	  "call (docs/cost.md, for a server that reads inside a lock)",
	  0 },
	{ "spin-hz", OPT_SPIN_HZ, "N", 0,
	  "Sample every CPU N times a second for threads spinning on a "
	  "lock, the spin kind (default 997; 0: no sampling and no "
	  "sched_yield counts, no spin kind). The scheduler tick looks for "
	  "spinning at no cost of its own; these samples run from the first "
	  "spin it meets until nothing has spun for 10 s",
	  0 },
	{ "spin-always", OPT_SPIN_ALWAYS, NULL, 0,
	  "Sample at --spin-hz all the time, not only after spinning was "
	  "seen: catches short spins at once, at the cost of the sampling "
	  "interrupts",
	  0 },
	{ "host", OPT_HOST, "HOST[,HOST...]", 0,
	  "Read pmdalocktop's metrics from the pmcd on HOST instead of "
	  "tracing here; several hosts (a list, or --host again) make one "
	  "view of them all, ranked together. Every row carries its host "
	  "(a HOST column, \"host\" in JSON), the header has a line per "
	  "host, and a host that does not answer is marked down (DOWN, "
	  "\"state\": \"down\") and tried again every 2 s while the "
	  "others go on",
	  0 },
	{ "archive", OPT_ARCHIVE, "PATH", 0,
	  "Replay pmdalocktop's metrics from a pmlogger archive", 0 },
	{ "series", OPT_SERIES, "HOST[:PORT]", 0,
	  "A fleet's history: every host's locks over --window, ranked "
	  "as one interval, from pmproxy's series REST API on HOST (port "
	  "44322 unless given), which pmlogger on each host feeds; each "
	  "lock's host, name and kind from its series' labels",
	  0 },
	{ "window", OPT_WINDOW, "SECS[smhd]", 0,
	  "With --series: the time up to now to rank locks over, seconds "
	  "or a number with s, m, h or d (default 10m)",
	  0 },
	{ "mono", OPT_MONO, NULL, 0, "No colours on the screen (as NO_COLOR=1)",
	  0 },
	{ "retire", OPT_RETIRE, "SECS", 0,
	  "Drop the rows of an ended process's private locks SECS seconds "
	  "after it ended, and past a bound those of locks and files idle "
	  "that long, so a long run stays small (default 60 on the "
	  "screen; 0, never, in batch and JSON output, whose totals keep "
	  "them)",
	  0 },
	{ "verbose", 'v', NULL, 0, "Show libbpf's debug output", 0 },
	{},
};

static long parse_count(struct argp_state *state, const char *what,
			const char *arg, long min)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg, &end, 10);
	if (errno || end == arg || *end || v < min)
		argp_error(state, "invalid %s '%s': give a whole number >= %ld",
			   what, arg, min);
	return v;
}

/* A NAME of -p: every process of that name, at parse time. */
static void parse_comm(struct argp_state *state, const char *name)
{
	pid_t *found;
	size_t n, i;

	if (strlen(name) > 15)
		argp_error(state,
			   "process name '%s' is longer than the kernel "
			   "keeps (15 characters)",
			   name);
	n = lt_proc_named(name, getpid(), &found);
	if (!n)
		argp_error(state, "no process is named '%s'", name);
	for (i = 0; i < n; i++) {
		if (env.n_pids == MAX_PIDS)
			argp_error(state, "at most %d processes", MAX_PIDS);
		env.pids[env.n_pids++] = found[i];
	}
	free(found);
}

static void parse_pids(struct argp_state *state, const char *arg)
{
	char *copy = strdup(arg), *tok, *save = NULL;

	if (!copy)
		argp_failure(state, 1, ENOMEM, "--pid");
	for (tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		long pid;

		if (*tok < '0' || *tok > '9') {
			parse_comm(state, tok);
			continue;
		}
		pid = parse_count(state, "PID", tok, 1);
		if (pid > INT_MAX)
			argp_error(state, "invalid PID '%s'", tok);
		if (env.n_pids == MAX_PIDS)
			argp_error(state, "at most %d processes", MAX_PIDS);
		env.pids[env.n_pids++] = (pid_t)pid;
	}
	free(copy);
}

/* --host A,B: each host once, in the order given. */
static void parse_hosts(struct argp_state *state, const char *arg)
{
	char *copy = strdup(arg), *tok, *save = NULL;
	size_t i;

	if (!copy)
		argp_failure(state, 1, ENOMEM, "--host");
	for (tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		for (i = 0; i < env.n_hosts; i++)
			if (!strcmp(env.hosts[i], tok))
				break;
		if (i < env.n_hosts)
			continue;
		if (env.n_hosts == MAX_HOSTS)
			argp_error(state, "at most %d hosts", MAX_HOSTS);
		if (strlen(tok) >= LT_HOST_LEN)
			argp_error(state, "host name '%s' is too long", tok);
		env.hosts[env.n_hosts++] = tok;
	}
	if (!env.n_hosts)
		argp_error(state, "--host needs a host name");
	env.host = env.hosts[0];
	/* copy stays: env.hosts points into it for the whole run */
}

/* Options that do not go together, once all are read. */
static void check_together(struct argp_state *state)
{
	if (env.record && !env.output)
		argp_error(state, "record needs -o FILE");
	if (!!env.host + !!env.archive + !!env.series > 1)
		argp_error(
			state,
			"give --host or --archive, not both, or --series alone");
	if (env.window_s && !env.series)
		argp_error(state, "--window goes with --series");
	if ((env.host || env.archive || env.series) &&
	    (env.command || env.n_pids || env.stacks || env.exact_holds ||
	     env.no_kernel_locks || env.no_io || env.spin_hz >= 0 ||
	     env.spin_always || env.ready_file))
		argp_error(state, "--host and --archive read recorded "
				  "metrics: --pid, --stacks, --exact-holds, "
				  "--no-kernel-locks, --no-io, --spin-hz, "
				  "--spin-always, "
				  "--ready-file and COMMAND trace here");
	if (env.spin_always && env.spin_hz == 0)
		argp_error(state, "--spin-always samples, --spin-hz 0 does "
				  "not: give one of them");
}

/* Seconds between min and max, fractions allowed. */
static double parse_seconds(struct argp_state *state, const char *what,
			    const char *arg, double min, double max,
			    const char *hint)
{
	char *end;
	double d;

	errno = 0;
	d = strtod(arg, &end);
	if (errno || end == arg || *end || !isfinite(d) || d < min || d > max)
		argp_error(state, "invalid %s '%s': %s", what, arg, hint);
	return d;
}

/* --window: seconds, or a number with s, m, h or d. */
static unsigned int parse_window(struct argp_state *state, const char *arg)
{
	char *end;
	double d;

	errno = 0;
	d = strtod(arg, &end);
	d *= *end == 'm' ? 60 : *end == 'h' ? 3600 : *end == 'd' ? 86400 : 1;
	if (errno || end == arg ||
	    (*end && (strchr("smhd", *end) == NULL || end[1])) ||
	    !isfinite(d) || d < 1 || d > 366 * 86400.0)
		argp_error(state,
			   "invalid window '%s': give seconds, or a number "
			   "with s, m, h or d, e.g. 1h",
			   arg);
	return (unsigned int)d;
}

/* An option's path or host, which may not be empty. */
static const char *parse_nonempty(struct argp_state *state, const char *arg,
				  const char *what)
{
	if (!*arg)
		argp_error(state, "%s", what);
	return arg;
}

/* The options that only switch something on; false for the others. */
static bool parse_flag(int key)
{
	static const struct {
		int key;
		bool *on;
	} flags[] = {
		{ 'b', &env.batch },
		{ 'j', &env.json },
		{ 'v', &env.verbose },
		{ OPT_ALL, &env.all_kinds },
		{ OPT_PER_PROCESS, &env.per_process },
		{ OPT_STACKS, &env.stacks },
		{ OPT_EXACT_HOLDS, &env.exact_holds },
		{ OPT_NO_KERNEL, &env.no_kernel_locks },
		{ OPT_NO_IO, &env.no_io },
		{ OPT_SPIN_ALWAYS, &env.spin_always },
		{ OPT_MONO, &env.mono },
	};
	size_t i;

	for (i = 0; i < sizeof(flags) / sizeof(flags[0]); i++)
		if (flags[i].key == key) {
			*flags[i].on = true;
			return true;
		}
	return false;
}

/* The options that take a number. */
static void parse_number(int key, const char *arg, struct argp_state *state)
{
	double d;

	switch (key) {
	case 'd':
		d = parse_seconds(
			state, "delay", arg, 0.01, 86400,
			"give seconds between 0.01 and 86400, e.g. 0.5");
		env.delay_ms = (unsigned int)(d * 1000 + 0.5);
		break;
	case 'n':
		env.iterations = parse_count(state, "iteration count", arg, 1);
		break;
	case 'l':
		env.limit = parse_count(state, "row limit", arg, 0);
		break;
	case OPT_SPIN_HZ:
		env.spin_hz = parse_count(state, "sampling rate", arg, 0);
		if (env.spin_hz > 100000)
			argp_error(state,
				   "invalid sampling rate '%s': at most "
				   "100000 a second",
				   arg);
		break;
	case OPT_RETIRE:
		env.retire_s = parse_count(state, "retire time", arg, 0);
		if (env.retire_s > 31 * 86400)
			argp_error(state,
				   "invalid retire time '%s': at most "
				   "31 days in seconds",
				   arg);
		break;
	case OPT_WINDOW:
		env.window_s = parse_window(state, arg);
		break;
	case OPT_DURATION:
		env.duration_s = parse_seconds(state, "duration", arg, 0.01,
					       31 * 86400.0,
					       "give seconds, e.g. 10");
		break;
	}
}

static error_t parse_arg(int key, char *arg, struct argp_state *state)
{
	if (parse_flag(key))
		return 0;
	switch (key) {
	case 'd':
	case 'n':
	case 'l':
	case OPT_SPIN_HZ:
	case OPT_RETIRE:
	case OPT_WINDOW:
	case OPT_DURATION:
		parse_number(key, arg, state);
		break;
	case 'p':
		parse_pids(state, arg);
		break;
	case 'o':
		env.output = arg;
		break;
	case OPT_HOST:
		parse_hosts(state, arg);
		break;
	case OPT_OPS_FILE:
		env.ops_file =
			parse_nonempty(state, arg, "--ops-file needs a path");
		break;
	case OPT_READY_FILE:
		env.ready_file =
			parse_nonempty(state, arg, "--ready-file needs a path");
		break;
	case OPT_ARCHIVE:
		env.archive = arg;
		break;
	case OPT_SERIES:
		env.series = parse_nonempty(state, arg,
					    "--series needs pmproxy's host");
		break;
	case ARGP_KEY_ARG:
		/* The first operand starts the command; it owns the rest. */
		env.command = &state->argv[state->next - 1];
		state->next = state->argc;
		break;
	case ARGP_KEY_END:
		check_together(state);
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const char record_doc[] =
	"locktop record -- record a session into a file for locktop diff.\n"
	"\n"
	"Traces like locktop --batch and writes every interval's figures per "
	"lock and per kind, and the totals, into FILE as JSON "
	"(docs/record.md). With -- COMMAND the command starts once the "
	"probes are attached and locktop exits with its status when it ends; "
	"otherwise --duration or SIGINT/SIGTERM end the recording. The file "
	"appears whole or not at all.\n"
	"\n"
	"EXAMPLES:\n"
	"  locktop record -o fcntl.rec -- lockbench --lock fcntl --path "
	"/tmp/t.tdb\n"
	"  locktop record -o all.rec --duration 30\n"
	"  locktop record -o db.rec -p 1234 --interval 0.5 --duration 60\n"
	"  locktop diff fcntl.rec mutex.rec";

static const struct argp_option record_options[] = {
	{ "output", 'o', "FILE", 0, "Write the record to FILE (required)", 0 },
	{ "duration", OPT_DURATION, "SECS", 0,
	  "Stop after SECS seconds (a COMMAND still running gets SIGTERM)", 0 },
	{ "interval", 'd', "SECS", 0,
	  "Seconds per recorded interval (default 1; fractions allowed)", 0 },
	{ "pid", 'p', "PID|NAME[,...]", 0,
	  "Record only these processes, their threads and descendants "
	  "(see locktop --help); with -- COMMAND, for as long as it runs",
	  0 },
	{ "ready-file", OPT_READY_FILE, "PATH", 0,
	  "Create PATH once the probes are attached", 0 },
	{ "ops-file", OPT_OPS_FILE, "PATH", 0,
	  "At the end, read the run's operation count from PATH (one whole "
	  "number, written by the command or its script) into the record",
	  0 },
	{ "exact-holds", OPT_EXACT_HOLDS, NULL, 0,
	  "Time every file lock hold (see locktop --help)", 0 },
	{ "no-kernel-locks", OPT_NO_KERNEL, NULL, 0,
	  "Leave kernel-internal lock contention untraced", 0 },
	{ "no-io", OPT_NO_IO, NULL, 0,
	  "Leave pread and pwrite untraced (see locktop --help)", 0 },
	{ "spin-hz", OPT_SPIN_HZ, "N", 0,
	  "On-CPU samples per second and CPU for spinning (default 997; "
	  "0: none, and no spin kind), while something spins",
	  0 },
	{ "spin-always", OPT_SPIN_ALWAYS, NULL, 0,
	  "Sample at --spin-hz all the time (see locktop --help)", 0 },
	{ "host", OPT_HOST, "HOST[,HOST...]", 0,
	  "Record pmdalocktop's metrics from the pmcd on each HOST instead "
	  "of tracing here (see locktop --help)",
	  0 },
	{ "verbose", 'v', NULL, 0, "Show libbpf's debug output", 0 },
	{},
};

/* The text after the options starts with the columns, from their tables. */
static char *help_filter(int key, const char *text, void *input)
{
	char *cols, *out = NULL;

	(void)input;
	if (key != ARGP_KEY_HELP_POST_DOC || !text)
		return (char *)text;
	cols = col_help_text();
	if (!cols)
		return (char *)text;
	if (asprintf(&out, "%s\n\n%s", cols, text) < 0)
		out = NULL;
	free(cols);
	return out ? out : (char *)text;
}

int args_parse(int argc, char **argv)
{
	static const struct argp argp = { options, parse_arg,	args_doc, doc,
					  NULL,	   help_filter, NULL };
	static const struct argp rec_argp = { record_options, parse_arg,
					      "-o FILE [-- COMMAND [ARGS...]]",
					      record_doc };

	if (argc > 1 && !strcmp(argv[1], "record")) {
		env.record = true;
		env.batch = true;
		argv[1] = "locktop record"; /* argp's name in messages */
		if (argp_parse(&rec_argp, argc - 1, argv + 1, ARGP_IN_ORDER,
			       NULL, NULL))
			return EXIT_USAGE;
		argv[1] = "record"; /* as typed, for the record's cmdline */
	} else if (argp_parse(&argp, argc, argv, ARGP_IN_ORDER, NULL, NULL)) {
		return EXIT_USAGE;
	}
	return 0;
}
