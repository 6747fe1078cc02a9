// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * locktop: where processes wait on locks, who holds them, what it costs.
 */
#include <argp.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include "config.h"
#include "collector.h"
#include "output.h"

#define MAX_PIDS 64
#define EXIT_USAGE 2

static struct env {
	bool batch;
	bool json;
	bool all_kinds;
	bool verbose;
	unsigned int delay_ms;
	long iterations; /* 0: until stopped */
	long limit; /* -1: the default for the format */
	const char *output;
	pid_t pids[MAX_PIDS];
	size_t n_pids;
	char **command; /* after "--" */
} env = {
	.delay_ms = 1000,
	.limit = -1,
};

const char *argp_program_version = "locktop " LOCKTOP_VERSION;
const char *argp_program_bug_address =
	"<https://github.com/locktop/locktop/issues>";

static const char doc[] =
	"locktop -- where processes wait on locks, who holds them, and what "
	"it costs.\n"
	"\n"
	"Traces futex waits with eBPF, aggregated in the kernel per lock, and "
	"prints one table per interval, like top -b. Uncontended locks never "
	"enter the kernel, so they cost nothing to trace. Needs root (or "
	"CAP_BPF and CAP_PERFMON) and a kernel with BTF.\n"
	"\n"
	"EXAMPLES:\n"
	"  locktop --batch                  every process, a table a second\n"
	"  locktop -b -d 5 -n 3             three 5-second tables, then exit\n"
	"  locktop -b -p 1234               process 1234 and its children\n"
	"  locktop -b --json -- make -j8    trace a command; JSON lines; exit "
	"with its status\n"
	"  locktop -b -o waits.txt -- ./server   write the tables to a file\n"
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

static const char args_doc[] = "[-- COMMAND [ARGS...]]";

enum { OPT_ALL = 'a' };

static const struct argp_option options[] = {
	{ "batch", 'b', NULL, 0, "Batch mode: print tables, not a screen", 0 },
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
	{ "output", 'o', "FILE", 0, "Write to FILE instead of stdout", 0 },
	{ "all", OPT_ALL, NULL, 0,
	  "Show condition-like waits (futex-cond) "
	  "too",
	  0 },
	{ "limit", 'l', "N", 0,
	  "At most N rows per table (default 20 for "
	  "text, all for JSON; 0: all)",
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
	case ARGP_KEY_ARG:
		/* The first operand starts the command; it owns the rest. */
		env.command = &state->argv[state->next - 1];
		state->next = state->argc;
		break;
	case ARGP_KEY_END:
		if (env.command && env.n_pids)
			argp_error(state, "give --pid or a COMMAND, not both");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

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

int main(int argc, char **argv)
{
	static const struct argp argp = { options, parse_arg, args_doc, doc };
	struct lt_options copts = { 0 };
	struct output_opts out = { 0 };
	struct lt_collector *col = NULL;
	const struct lt_snapshot *snap;
	sigset_t mask, orig_mask;
	pid_t child = -1;
	int sfd = -1, gate = -1, exit_status = -1, err = 0, ret = 1;
	long done = 0;
	bool stop = false, interrupted = false;
	char msg[512];

	argp_err_exit_status = EXIT_USAGE;
	if (argp_parse(&argp, argc, argv, ARGP_IN_ORDER, NULL, NULL))
		return EXIT_USAGE;

	/* Until the full-screen view exists, every mode is batch mode. */
	env.batch = true;

	out.json = env.json;
	out.all_kinds = env.all_kinds;
	out.limit = env.limit >= 0 ? (size_t)env.limit : (env.json ? 0 : 20);
	out.out = stdout;
	if (env.output) {
		out.out = fopen(env.output, "we");
		if (!out.out) {
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
	sigprocmask(SIG_BLOCK, &mask, &orig_mask);
	signal(SIGPIPE, SIG_IGN);
	sfd = signalfd(-1, &mask, SFD_CLOEXEC);
	if (sfd < 0) {
		fprintf(stderr, "locktop: signalfd: %s\n", strerror(errno));
		goto cleanup;
	}

	/* Start the command held at its gate */
	if (env.command) {
		child = spawn_gated(env.command, &orig_mask, &gate);
		if (child < 0) {
			fprintf(stderr, "locktop: cannot start '%s': %s\n",
				env.command[0], strerror(errno));
			goto cleanup;
		}
		env.pids[0] = child;
		env.n_pids = 1;
	}

	/* Load, verify and attach the probes */
	copts.pids = env.pids;
	copts.n_pids = env.n_pids;
	copts.interval_ms = env.delay_ms;
	copts.verbose = env.verbose;
	err = lt_collector_open(&copts, &col, msg, sizeof(msg));
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

	/* Print a table per interval until told to stop */
	snap = NULL;
	while (!stop) {
		err = lt_collector_wait(col, sfd);
		if (err < 0)
			break;
		if (err == 1) {
			struct signalfd_siginfo si;

			if (read(sfd, &si, sizeof(si)) != sizeof(si))
				continue;
			if (si.ssi_signo == SIGCHLD) {
				if (!reap(&child, &exit_status, false))
					continue;
			} else if (child > 0) {
				/* The traced command ends with us. */
				kill(child, si.ssi_signo);
				interrupted = true;
			}
			/* A last, partial interval follows. */
			stop = true;
		}
		err = lt_collector_read(col, &snap);
		if (err) {
			fprintf(stderr, "locktop: reading the probes: %s\n",
				strerror(-err));
			goto cleanup;
		}
		if (output_interval(&out, snap))
			break; /* the reader went away */
		if (env.iterations && ++done >= env.iterations)
			stop = true;
	}
	if (interrupted)
		reap(&child, &exit_status, true);
	if (!snap && lt_collector_read(col, &snap))
		snap = NULL;
	if (snap)
		output_final(&out, snap, exit_status);
	ret = exit_status >= 0 ? exit_status : 0;

cleanup:
	/* Detach every probe before anything else can go wrong */
	lt_collector_close(col);
	if (gate >= 0)
		close(gate);
	if (child > 0 && !col) {
		/* Never released: it must not run untraced. */
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
	}
	if (sfd >= 0)
		close(sfd);
	if (out.out && out.out != stdout)
		fclose(out.out);
	return ret;
}
