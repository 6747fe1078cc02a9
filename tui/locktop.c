// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * locktop: where processes wait on locks, who holds them, what it costs.
 */
#include <argp.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <locale.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <poll.h>
#include <time.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include "config.h"
#include "collector.h"
#include "diff.h"
#include "output.h"
#include "record.h"
#include "screen.h"
#include "source.h"

#define MAX_PIDS 64
#define EXIT_USAGE 2

static struct env {
	bool batch;
	bool json;
	bool all_kinds;
	bool verbose;
	bool stacks;
	bool exact_holds; /* --exact-holds */
	bool mono;
	const char *host;
	const char *archive;
	unsigned int delay_ms;
	long iterations; /* 0: until stopped */
	long limit; /* -1: the default for the format */
	const char *output;
	pid_t pids[MAX_PIDS];
	size_t n_pids;
	char **command; /* after "--" */
	bool record; /* locktop record */
	double duration_s; /* record --duration; 0: none */
	long retire_s; /* -1: LT_RETIRE_S on the screen, else never */
} env = {
	.delay_ms = 1000,
	.limit = -1,
	.retire_s = -1,
};

const char *argp_program_version = "locktop " LOCKTOP_VERSION;
const char *argp_program_bug_address =
	"<https://github.com/locktop/locktop/issues>";

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
	"  locktop -b -p 1234               process 1234 and its children\n"
	"  locktop -b --json -- make -j8    trace a command; JSON lines; exit "
	"with its status\n"
	"  locktop -b -o waits.txt -- ./server   write the tables to a file\n"
	"  locktop --host db1               pmdalocktop's metrics on host db1\n"
	"  locktop -b --archive /var/log/pcp/pmlogger/db1/20260101\n"
	"  locktop record -o a.rec -- ./server   record a session to a file\n"
	"  locktop diff a.rec b.rec         compare two records "
	"(locktop diff --help)\n"
	"\v"
	"Columns: LOCK names the futex by mapping and offset (libc.so.6+0x..., "
	"[heap]+0x..., a shared file's path+0x...); WAITS is how many waits "
	"ended in the interval; TOTAL WAIT, AVG and MAX are their durations; "
	"PROCESS is comm/pid of the waiter.\n"
	"\n"
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
	OPT_HOST,
	OPT_ARCHIVE,
	OPT_MONO,
	OPT_DURATION,
	OPT_RETIRE,
	OPT_EXACT_HOLDS,
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
	{ "pid", 'p', "PID[,PID...]", 0,
	  "Trace only these processes and "
	  "their children (repeatable)",
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
	{ "host", OPT_HOST, "HOST", 0,
	  "Read pmdalocktop's metrics from the pmcd on HOST instead of "
	  "tracing here",
	  0 },
	{ "archive", OPT_ARCHIVE, "PATH", 0,
	  "Replay pmdalocktop's metrics from a pmlogger archive", 0 },
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

static void parse_pids(struct argp_state *state, const char *arg)
{
	char *copy = strdup(arg), *tok, *save = NULL;

	if (!copy)
		argp_failure(state, 1, ENOMEM, "--pid");
	for (tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		long pid = parse_count(state, "PID", tok, 1);

		if (pid > INT_MAX)
			argp_error(state, "invalid PID '%s'", tok);
		if (env.n_pids == MAX_PIDS)
			argp_error(state, "at most %d PIDs", MAX_PIDS);
		env.pids[env.n_pids++] = (pid_t)pid;
	}
	free(copy);
}

static error_t parse_arg(int key, char *arg, struct argp_state *state)
{
	char *end;
	double d;

	switch (key) {
	case 'b':
		env.batch = true;
		break;
	case 'd':
		errno = 0;
		d = strtod(arg, &end);
		if (errno || end == arg || *end || !isfinite(d) || d < 0.01 ||
		    d > 86400)
			argp_error(state,
				   "invalid delay '%s': give seconds "
				   "between 0.01 and 86400, e.g. 0.5",
				   arg);
		env.delay_ms = (unsigned int)(d * 1000 + 0.5);
		break;
	case 'n':
		env.iterations = parse_count(state, "iteration count", arg, 1);
		break;
	case 'p':
		parse_pids(state, arg);
		break;
	case 'j':
		env.json = true;
		break;
	case 'o':
		env.output = arg;
		break;
	case OPT_ALL:
		env.all_kinds = true;
		break;
	case 'l':
		env.limit = parse_count(state, "row limit", arg, 0);
		break;
	case 'v':
		env.verbose = true;
		break;
	case OPT_STACKS:
		env.stacks = true;
		break;
	case OPT_EXACT_HOLDS:
		env.exact_holds = true;
		break;
	case OPT_HOST:
		env.host = arg;
		break;
	case OPT_ARCHIVE:
		env.archive = arg;
		break;
	case OPT_MONO:
		env.mono = true;
		break;
	case OPT_RETIRE:
		env.retire_s = parse_count(state, "retire time", arg, 0);
		if (env.retire_s > 31 * 86400)
			argp_error(state,
				   "invalid retire time '%s': at most "
				   "31 days in seconds",
				   arg);
		break;
	case ARGP_KEY_ARG:
		/* The first operand starts the command; it owns the rest. */
		env.command = &state->argv[state->next - 1];
		state->next = state->argc;
		break;
	case OPT_DURATION:
		errno = 0;
		d = strtod(arg, &end);
		if (errno || end == arg || *end || !isfinite(d) || d < 0.01 ||
		    d > 31 * 86400.0)
			argp_error(state,
				   "invalid duration '%s': give seconds, "
				   "e.g. 10",
				   arg);
		env.duration_s = d;
		break;
	case ARGP_KEY_END:
		if (env.record && !env.output)
			argp_error(state, "record needs -o FILE");
		if (env.command && env.n_pids)
			argp_error(state, "give --pid or a COMMAND, not both");
		if (env.host && env.archive)
			argp_error(state, "give --host or --archive, not both");
		if ((env.host || env.archive) &&
		    (env.command || env.n_pids || env.stacks ||
		     env.exact_holds))
			argp_error(state,
				   "--host and --archive read recorded "
				   "metrics: --pid, --stacks, --exact-holds "
				   "and COMMAND trace here");
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
	{ "pid", 'p', "PID[,PID...]", 0,
	  "Record only these processes and their children (repeatable)", 0 },
	{ "exact-holds", OPT_EXACT_HOLDS, NULL, 0,
	  "Time every file lock hold (see locktop --help)", 0 },
	{ "verbose", 'v', NULL, 0, "Show libbpf's debug output", 0 },
	{},
};

/*
 * Starts COMMAND stopped at a pipe, so that the probes are attached before
 * it runs its first instruction. Returns its pid; *gate releases it.
 */
static pid_t spawn_gated(char **argv, const sigset_t *orig_mask, int *gate)
{
	int fds[2];
	pid_t pid;
	char c;

	if (pipe2(fds, O_CLOEXEC))
		return -1;
	pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	if (pid == 0) {
		close(fds[1]);
		sigprocmask(SIG_SETMASK, orig_mask, NULL);
		signal(SIGPIPE, SIG_DFL);
		if (read(fds[0], &c, 1) != 1)
			_exit(127); /* locktop failed; it says why */
		execvp(argv[0], argv);
		fprintf(stderr, "locktop: cannot run '%s': %s\n", argv[0],
			strerror(errno));
		_exit(127);
	}
	close(fds[0]);
	*gate = fds[1];
	return pid;
}

static int status_code(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return 1;
}

/*
 * Collects the command's status if it has ended. With patience, gives a
 * signalled command a moment to finish; one that ignores the signal is
 * left running rather than waited on forever.
 */
static bool reap(pid_t *child, int *exit_status, bool patience)
{
	int status, tries = patience ? 200 : 1;

	while (*child > 0 && tries--) {
		if (waitpid(*child, &status, WNOHANG) == *child) {
			*exit_status = status_code(status);
			*child = -1;
			return true;
		}
		if (tries)
			usleep(10000);
	}
	return false;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The state of one run, shared by the screen and batch loops. */
struct run {
	const struct source_ops *ops;
	struct source *src;
	const struct lt_snapshot *snap;
	struct screen *screen;
	FILE *tty_in;
	struct output_opts out;
	struct recorder *rec; /* locktop record */
	double end_at; /* --duration's end, 0: none */
	bool by_duration;
	bool signalled;
	int sfd;
	pid_t child;
	int exit_status;
	bool interrupted;
	bool ended; /* the archive has no more data */
	bool stop;
	double deadline;
	unsigned int delay_ms;
	long done;
};

/* Returns true when the signal ends the run. */
static bool on_signal(struct run *r)
{
	struct signalfd_siginfo si;
	struct winsize ws;

	if (read(r->sfd, &si, sizeof(si)) != sizeof(si))
		return false;
	switch (si.ssi_signo) {
	case SIGCHLD:
		return reap(&r->child, &r->exit_status, false);
	case SIGWINCH:
		if (r->screen && !ioctl(fileno(stdout), TIOCGWINSZ, &ws) &&
		    ws.ws_row && ws.ws_col)
			screen_resize(r->screen, ws.ws_row, ws.ws_col);
		return false;
	default:
		r->signalled = true;
		if (r->child > 0) {
			/* The traced command ends with us. */
			kill(r->child, (int)si.ssi_signo);
			r->interrupted = true;
		}
		return true;
	}
}

/* Reads one snapshot and shows it; returns -1 on a fatal error. */
static int step(struct run *r)
{
	const struct lt_snapshot *snap;
	char msg[512];
	bool end = false;

	snap = r->ops->read(r->src, &end, msg, sizeof(msg));
	if (!snap) {
		if (end) {
			r->ended = true;
			if (r->screen)
				screen_message(r->screen,
					       "end of the archive: q quits");
			return 0;
		}
		if (r->screen)
			screen_close(r->screen);
		r->screen = NULL;
		fprintf(stderr, "locktop: %s\n", msg);
		return -1;
	}
	r->snap = snap;
	r->done++;
	if (r->rec) {
		if (recorder_add(r->rec, snap)) {
			fprintf(stderr, "locktop: writing the record: %s\n",
				strerror(errno ? errno : EIO));
			return -1;
		}
		return 0;
	}
	if (r->screen) {
		screen_update(r->screen, snap);
		return 0;
	}
	/* The reader went away: stop quietly. */
	if (output_interval(&r->out, snap))
		r->stop = true;
	return 0;
}

/* The loop: one read per delay; keys and signals in between. */
static int loop(struct run *r)
{
	struct pollfd pfd[2] = {
		{ .fd = r->sfd, .events = POLLIN },
		{ .fd = r->tty_in ? fileno(r->tty_in) : -1, .events = POLLIN },
	};
	bool paced = !r->ops->recorded || r->screen;
	bool last_partial = false;
	double left;
	int timeout;

	r->deadline = now_s() + r->delay_ms / 1000.0;
	while (!r->stop) {
		/* The last interval of a --duration may be short. */
		if (r->end_at > 0 && r->deadline > r->end_at)
			r->deadline = r->end_at;
		left = r->deadline - now_s();
		timeout = !paced || left <= 0 ? 0 : (int)(left * 1000) + 1;
		if (r->ended)
			timeout = -1; /* nothing more will come */
		if (r->ops->tend && (timeout < 0 || timeout > LT_TEND_MS))
			timeout = LT_TEND_MS;
		if (poll(pfd, r->screen ? 2 : 1, timeout) < 0 && errno != EINTR)
			return -1;
		if (r->ops->tend)
			r->ops->tend(r->src);
		if (pfd[0].revents & POLLIN && on_signal(r)) {
			r->stop = true;
			/* A last, partial interval follows. */
			last_partial = true;
			break;
		}
		if (r->screen && pfd[1].revents & (POLLIN | POLLHUP)) {
			switch (screen_keys(r->screen)) {
			case SCREEN_QUIT:
				r->stop = true;
				continue;
			case SCREEN_DELAY:
				r->delay_ms = screen_delay_ms(r->screen);
				r->ops->set_interval(r->src, r->delay_ms);
				r->deadline = now_s() + r->delay_ms / 1000.0;
				screen_draw(r->screen);
				break;
			default:
				break;
			}
		}
		if (r->ended || (paced && now_s() < r->deadline))
			continue;
		r->deadline += r->delay_ms / 1000.0;
		if (r->deadline < now_s())
			r->deadline = now_s() + r->delay_ms / 1000.0;
		if (r->screen && screen_paused(r->screen))
			continue;
		if (step(r))
			return -1;
		if (r->ended && !r->screen)
			break;
		if (env.iterations && r->done >= env.iterations)
			r->stop = true;
		if (r->end_at > 0 && now_s() >= r->end_at - 0.0005) {
			r->by_duration = true;
			r->stop = true;
		}
	}
	if (last_partial && !r->ended && step(r))
		return -1;
	return 0;
}

/* Whether the output is the live screen: a terminal, and no batch. */
static bool screen_wanted(void)
{
	const char *term = getenv("TERM");

	if (env.batch || env.json || env.output || !isatty(STDOUT_FILENO))
		return false;
	return term && *term && strcmp(term, "dumb");
}

/* Starts the screen when the output is a terminal; NULL means batch. */
static struct screen *open_screen(struct run *r, const char *what)
{
	struct screen_opts so = {
		.source = what,
		.local = r->ops->local,
		.all_kinds = env.all_kinds,
		.stacks = env.stacks,
		.delay_ms = env.delay_ms,
		.color = !env.mono,
	};

	if (!screen_wanted())
		return NULL;
	if (isatty(STDIN_FILENO))
		r->tty_in = fdopen(dup(STDIN_FILENO), "re");
	else
		r->tty_in = fopen("/dev/tty", "re");
	if (!r->tty_in)
		return NULL;
	return screen_open(&so, r->tty_in, stdout);
}

int main(int argc, char **argv)
{
	static const struct argp argp = { options, parse_arg, args_doc, doc };
	struct source_params params = { 0 };
	struct run r = {
		.sfd = -1,
		.child = -1,
		.exit_status = -1,
	};
	sigset_t mask, orig_mask;
	int gate = -1, err = 0, ret = 1;
	char msg[512], what[256];
	const char *ended_by;

	/* UTF-8 on the screen; numbers keep the C locale (JSON needs it). */
	setlocale(LC_CTYPE, "");
	argp_err_exit_status = EXIT_USAGE;
	if (argc > 1 && !strcmp(argv[1], "diff"))
		return diff_main(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "record")) {
		static const struct argp rec_argp = {
			record_options, parse_arg,
			"-o FILE [-- COMMAND [ARGS...]]", record_doc
		};

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

	r.ops = env.host    ? &source_pcp_host :
		env.archive ? &source_pcp_archive :
			      &source_live;
	r.delay_ms = env.delay_ms;
	r.out.json = env.json;
	r.out.all_kinds = env.all_kinds;
	r.out.limit = env.limit >= 0 ? (size_t)env.limit : (env.json ? 0 : 20);
	r.out.out = stdout;
	if (env.output && !env.record && strcmp(env.output, "-")) {
		r.out.out = fopen(env.output, "we");
		if (!r.out.out) {
			fprintf(stderr, "locktop: cannot write '%s': %s\n",
				env.output, strerror(errno));
			return 1;
		}
	}

	for (size_t i = 0; i < env.n_pids; i++) {
		if (kill(env.pids[i], 0) && errno == ESRCH) {
			fprintf(stderr, "locktop: no process with PID %d\n",
				env.pids[i]);
			ret = EXIT_USAGE;
			goto cleanup;
		}
	}

	/*
	 * Signals arrive through a descriptor, so the wait can watch them.
	 * A shell starts background jobs with SIGINT ignored; an ignored
	 * signal never reaches the descriptor, so take the default back.
	 */
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGCHLD);
	sigaddset(&mask, SIGWINCH);
	sigprocmask(SIG_BLOCK, &mask, &orig_mask);
	signal(SIGPIPE, SIG_IGN);
	r.sfd = signalfd(-1, &mask, SFD_CLOEXEC);
	if (r.sfd < 0) {
		fprintf(stderr, "locktop: signalfd: %s\n", strerror(errno));
		goto cleanup;
	}

	/* Start the command held at its gate */
	if (env.command) {
		r.child = spawn_gated(env.command, &orig_mask, &gate);
		if (r.child < 0) {
			fprintf(stderr, "locktop: cannot start '%s': %s\n",
				env.command[0], strerror(errno));
			goto cleanup;
		}
		env.pids[0] = r.child;
		env.n_pids = 1;
	}

	if (env.record) {
		struct record_meta m = {
			.path = env.output,
			.argv = argv,
			.argc = argc,
			.command = env.command,
			.pids = env.pids,
			.n_pids = env.n_pids,
			.interval_s = env.delay_ms / 1000.0,
			.duration_s = env.duration_s,
		};

		/*
		 * Before the probes load and the command runs: a path
		 * that cannot be written. The command is still held.
		 */
		if (recorder_open(&m, &r.rec, msg, sizeof(msg))) {
			fprintf(stderr, "locktop: %s\n", msg);
			goto cleanup;
		}
	}

	/* Load, verify and attach the probes, or connect to the source */
	params.host = env.host;
	params.archive = env.archive;
	params.collector.pids = env.pids;
	params.collector.n_pids = env.n_pids;
	params.collector.interval_ms = env.delay_ms;
	params.collector.stacks = env.stacks;
	params.collector.exact_holds = env.exact_holds;
	params.collector.verbose = env.verbose;
	params.collector.retire_s =
		env.retire_s >= 0	       ? (unsigned int)env.retire_s :
		!env.record && screen_wanted() ? LT_RETIRE_S :
						 0;
	err = r.ops->open(&params, &r.src, msg, sizeof(msg));
	if (err) {
		fprintf(stderr, "locktop: %s\n", msg);
		ret = err == -ESRCH ? EXIT_USAGE : 1;
		goto cleanup;
	}

	/* Let the command run */
	if (gate >= 0) {
		if (write(gate, "g", 1) != 1) {
			fprintf(stderr,
				"locktop: cannot release the command: "
				"%s\n",
				strerror(errno));
			goto cleanup;
		}
		close(gate);
		gate = -1;
	}
	if (env.duration_s > 0)
		r.end_at = now_s() + env.duration_s;

	if (env.host)
		snprintf(what, sizeof(what), "pcp://%s", env.host);
	else if (env.archive)
		snprintf(what, sizeof(what), "archive %s", env.archive);
	else if (env.command)
		snprintf(what, sizeof(what), "live: %s (%d)", env.command[0],
			 r.child);
	else if (env.n_pids)
		snprintf(what, sizeof(what), "live: %zu pid%s", env.n_pids,
			 env.n_pids > 1 ? "s" : "");
	else
		snprintf(what, sizeof(what), "live: all processes");
	r.screen = open_screen(&r, what);
	if (r.screen)
		screen_draw(r.screen);

	if (loop(&r))
		goto cleanup;
	if (r.child > 0 && (r.screen || r.rec) && !r.interrupted) {
		/* q with a command still running: it ends with the screen. */
		kill(r.child, SIGTERM);
		r.interrupted = true;
	}
	if (r.interrupted)
		reap(&r.child, &r.exit_status, true);
	if (r.screen) {
		bool summary = env.command || r.interrupted ||
			       r.exit_status >= 0;

		screen_close(r.screen);
		r.screen = NULL;
		/* After the screen, the whole run as text, like batch. */
		r.out.json = false;
		r.out.out = stdout;
		if (summary && r.snap)
			output_final(&r.out, r.snap, r.exit_status);
	} else if (r.rec) {
		if (!r.snap && step(&r))
			goto cleanup;
		ended_by = r.signalled	      ? "signal" :
			   r.by_duration      ? "duration" :
			   r.exit_status >= 0 ? "command" :
						"signal";
		err = recorder_finish(r.rec, r.snap, r.exit_status, ended_by,
				      msg, sizeof(msg));
		r.rec = NULL;
		if (err) {
			fprintf(stderr, "locktop: %s\n", msg);
			goto cleanup;
		}
	} else {
		if (!r.snap && !r.ended && !r.ops->recorded) {
			bool end;

			r.snap = r.ops->read(r.src, &end, msg, sizeof(msg));
		}
		if (r.snap)
			output_final(&r.out, r.snap, r.exit_status);
	}
	ret = r.exit_status >= 0 ? r.exit_status : 0;

cleanup:
	if (r.screen)
		screen_close(r.screen);
	if (r.rec)
		recorder_abort(r.rec);
	/* Detach every probe before anything else can go wrong */
	if (r.src)
		r.ops->close(r.src);
	if (r.tty_in)
		fclose(r.tty_in);
	if (gate >= 0)
		close(gate);
	if (r.child > 0 && !r.src) {
		/* Never released: it must not run untraced. */
		kill(r.child, SIGKILL);
		waitpid(r.child, NULL, 0);
	}
	if (r.sfd >= 0)
		close(r.sfd);
	if (r.out.out && r.out.out != stdout)
		fclose(r.out.out);
	return ret;
}
