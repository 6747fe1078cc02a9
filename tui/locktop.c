// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * locktop: where processes wait on locks, who holds them, what it costs.
 */
#include <argp.h>
#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include "collector.h"
#include "diff.h"
#include "locktop_args.h"
#include "output.h"
#include "record.h"
#include "screen.h"
#include "source.h"

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

/* The state of one run, shared by the screen and batch loops. */
struct run {
	const struct source_ops *ops;
	struct source *src;
	const struct lt_snapshot *snap;
	struct screen *screen;
	FILE *tty_in;
	struct output_opts out;
	struct recorder *rec; /* locktop record */
	int gate; /* the command's, until it is let go; -1: none */
	char what[256]; /* the source, in the screen's header */
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

	r->deadline = lt_mono_ns() / 1e9 + r->delay_ms / 1000.0;
	while (!r->stop) {
		/* The last interval of a --duration may be short. */
		if (r->end_at > 0 && r->deadline > r->end_at)
			r->deadline = r->end_at;
		left = r->deadline - lt_mono_ns() / 1e9;
		timeout = !paced || left <= 0 ? 0 : (int)(left * 1000) + 1;
		if (r->ended)
			timeout = -1; /* nothing more will come */
		if (r->ops->housekeep &&
		    (timeout < 0 || timeout > LT_HOUSEKEEP_MS))
			timeout = LT_HOUSEKEEP_MS;
		if (poll(pfd, r->screen ? 2 : 1, timeout) < 0 && errno != EINTR)
			return -1;
		if (r->ops->housekeep)
			r->ops->housekeep(r->src);
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
				r->deadline = lt_mono_ns() / 1e9 +
					      r->delay_ms / 1000.0;
				screen_draw(r->screen);
				break;
			default:
				break;
			}
		}
		if (r->ended || (paced && lt_mono_ns() / 1e9 < r->deadline))
			continue;
		r->deadline += r->delay_ms / 1000.0;
		if (r->deadline < lt_mono_ns() / 1e9)
			r->deadline = lt_mono_ns() / 1e9 + r->delay_ms / 1000.0;
		if (r->screen && screen_paused(r->screen))
			continue;
		if (step(r))
			return -1;
		if (r->ended && !r->screen)
			break;
		if (env.iterations && r->done >= env.iterations)
			r->stop = true;
		if (r->end_at > 0 && lt_mono_ns() / 1e9 >= r->end_at - 0.0005) {
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
		.threads = r->ops->local ? lt_proc_threads : NULL,
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

/* Batch output's options, and -o FILE opened; returns -1 if it cannot be. */
static int open_output(struct run *r)
{
	r->out.json = env.json;
	r->out.all_kinds = env.all_kinds;
	r->out.members = env.per_process;
	r->out.limit = env.limit >= 0 ? (size_t)env.limit : (env.json ? 0 : 20);
	r->out.out = stdout;
	if (env.output && !env.record && strcmp(env.output, "-")) {
		r->out.out = fopen(env.output, "we");
		if (!r->out.out) {
			fprintf(stderr, "locktop: cannot write '%s': %s\n",
				env.output, strerror(errno));
			return -1;
		}
	}
	return 0;
}

/* Returns EXIT_USAGE when a --pid names no process, else 0. */
static int check_pids(void)
{
	for (size_t i = 0; i < env.n_pids; i++) {
		if (kill(env.pids[i], 0) && errno == ESRCH) {
			fprintf(stderr, "locktop: no process with PID %d\n",
				env.pids[i]);
			return EXIT_USAGE;
		}
	}
	return 0;
}

/*
 * Signals arrive through a descriptor, so the wait can watch them. A
 * shell starts background jobs with SIGINT ignored; an ignored signal
 * never reaches the descriptor, so take the default back. *orig_mask
 * gets the mask from before, for the command.
 */
static int watch_signals(struct run *r, sigset_t *orig_mask)
{
	sigset_t mask;

	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGCHLD);
	sigaddset(&mask, SIGWINCH);
	sigprocmask(SIG_BLOCK, &mask, orig_mask);
	signal(SIGPIPE, SIG_IGN);
	r->sfd = signalfd(-1, &mask, SFD_CLOEXEC);
	if (r->sfd < 0) {
		fprintf(stderr, "locktop: signalfd: %s\n", strerror(errno));
		return -1;
	}
	return 0;
}

/* Starts the command held at its gate; it is traced with any --pid. */
static int start_command(struct run *r, const sigset_t *orig_mask)
{
	if (!env.command)
		return 0;
	r->child = spawn_gated(env.command, orig_mask, &r->gate);
	if (r->child < 0) {
		fprintf(stderr, "locktop: cannot start '%s': %s\n",
			env.command[0], strerror(errno));
		return -1;
	}
	env.pids[env.n_pids++] = r->child;
	return 0;
}

/*
 * locktop record's file, before the probes load and the command runs: a
 * path that cannot be written fails while the command is still held.
 */
static int open_record(struct run *r, int argc, char **argv)
{
	struct record_meta m = {
		.path = env.output,
		.argv = argv,
		.argc = argc,
		.command = env.command,
		.pids = env.pids,
		.n_pids = env.n_pids,
		/* --pid's: the command, last, is the children's time. */
		.cpu_pids = env.pids,
		.n_cpu_pids = env.n_pids - (env.command ? 1 : 0),
		.interval_s = env.delay_ms / 1000.0,
		.duration_s = env.duration_s,
	};
	char msg[512];

	if (!env.record)
		return 0;
	if (recorder_open(&m, &r->rec, msg, sizeof(msg))) {
		fprintf(stderr, "locktop: %s\n", msg);
		return -1;
	}
	return 0;
}

/*
 * Loads, verifies and attaches the probes, or connects to the source.
 * Returns 0, or the exit status.
 */
static int open_source(struct run *r)
{
	struct source_params params = { 0 };
	char msg[512];
	int err;

	params.host = env.host;
	params.hosts = env.hosts;
	params.n_hosts = env.n_hosts;
	params.archive = env.archive;
	params.series = env.series;
	params.window_s = env.window_s;
	params.collector.pids = env.pids;
	params.collector.n_pids = env.n_pids;
	params.collector.interval_ms = env.delay_ms;
	params.collector.stacks = env.stacks;
	params.collector.exact_holds = env.exact_holds;
	params.collector.no_kernel_locks = env.no_kernel_locks;
	params.collector.no_io = env.no_io;
	params.collector.spin_always = env.spin_always;
	params.collector.spin_hz = env.spin_hz < 0  ? 0 :
				   env.spin_hz == 0 ? LT_SPIN_HZ_OFF :
						      (unsigned int)env.spin_hz;
	params.collector.verbose = env.verbose;
	params.collector.retire_s =
		env.retire_s >= 0	       ? (unsigned int)env.retire_s :
		!env.record && screen_wanted() ? LT_RETIRE_S :
						 0;
	err = r->ops->open(&params, &r->src, msg, sizeof(msg));
	if (err) {
		fprintf(stderr, "locktop: %s\n", msg);
		return err == -ESRCH ? EXIT_USAGE : 1;
	}
	return 0;
}

/*
 * Says on stderr that the probes are attached and what they trace, and
 * creates --ready-file: from here on every wait counts.
 */
static int announce_ready(struct run *r)
{
	size_t n = r->ops->traced ? r->ops->traced(r->src) : 0;
	int fd;

	if (r->ops == &source_live && n)
		fprintf(stderr,
			"locktop: probes attached; tracing %zu process%s\n", n,
			n == 1 ? "" : "es");
	else if (r->ops == &source_live)
		fprintf(stderr,
			"locktop: probes attached; tracing every process\n");
	if (!env.ready_file)
		return 0;
	fd = open(env.ready_file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
		  0644);
	if (fd < 0) {
		fprintf(stderr, "locktop: cannot create --ready-file %s: %s\n",
			env.ready_file, strerror(errno));
		return -1;
	}
	close(fd);
	return 0;
}

/* Lets the command run. */
static int release_command(struct run *r)
{
	if (r->gate < 0)
		return 0;
	if (write(r->gate, "g", 1) != 1) {
		fprintf(stderr,
			"locktop: cannot release the command: "
			"%s\n",
			strerror(errno));
		return -1;
	}
	close(r->gate);
	r->gate = -1;
	return 0;
}

/*
 * Everything before the first read, in order: the PIDs, the signals, the
 * command held at its gate, the record's file, the source, and the
 * command let go. Returns 0, or the exit status.
 */
static int set_up(struct run *r, int argc, char **argv)
{
	sigset_t orig_mask;
	int ret;

	ret = check_pids();
	if (ret)
		return ret;
	if (watch_signals(r, &orig_mask) || start_command(r, &orig_mask) ||
	    open_record(r, argc, argv))
		return 1;
	ret = open_source(r);
	if (ret)
		return ret;
	if (r->rec && recorder_started(r->rec))
		fprintf(stderr, "locktop: warning: the --pid processes' CPU "
				"time cannot be read\n");
	if (announce_ready(r) || release_command(r))
		return 1;
	if (env.duration_s > 0)
		r->end_at = lt_mono_ns() / 1e9 + env.duration_s;
	return 0;
}

/* What the screen's header says the source is. */
static void describe_source(struct run *r)
{
	char *what = r->what;
	size_t len = sizeof(r->what);

	if (env.n_hosts > 1)
		snprintf(what, len, "pcp: %zu hosts", env.n_hosts);
	else if (env.host)
		snprintf(what, len, "pcp://%s", env.host);
	else if (env.archive)
		snprintf(what, len, "archive %s", env.archive);
	else if (env.series)
		snprintf(what, len, "series %s, last %us", env.series,
			 env.window_s ? env.window_s : 600);
	else if (env.command && env.n_pids > 1)
		snprintf(what, len, "live: %s (%d) + %zu pid%s", env.command[0],
			 r->child, env.n_pids - 1, env.n_pids > 2 ? "s" : "");
	else if (env.command)
		snprintf(what, len, "live: %s (%d)", env.command[0], r->child);
	else if (env.n_pids)
		snprintf(what, len, "live: %zu pid%s", env.n_pids,
			 env.n_pids > 1 ? "s" : "");
	else
		snprintf(what, len, "live: all processes");
}

/* The screen closed; after it, the whole run as text, like batch. */
static void finish_screen(struct run *r)
{
	bool summary = env.command || r->interrupted || r->exit_status >= 0;

	screen_close(r->screen);
	r->screen = NULL;
	r->out.json = false;
	r->out.out = stdout;
	if (summary && r->snap)
		output_final(&r->out, r->snap, r->exit_status);
}

/* The record's totals written and its file put in place; -1 on failure. */
static int finish_record(struct run *r)
{
	const char *ended_by;
	char msg[512];
	uint64_t ops;
	int err;

	if (!r->snap && step(r))
		return -1;
	if (env.ops_file &&
	    record_read_ops(env.ops_file, &ops, msg, sizeof(msg)))
		fprintf(stderr,
			"locktop: warning: --ops-file: %s; the record holds "
			"no operation count\n",
			msg);
	else if (env.ops_file)
		recorder_set_ops(r->rec, ops);
	ended_by = r->signalled	       ? "signal" :
		   r->by_duration      ? "duration" :
		   r->exit_status >= 0 ? "command" :
					 "signal";
	err = recorder_finish(r->rec, r->snap, r->exit_status, ended_by, msg,
			      sizeof(msg));
	r->rec = NULL;
	if (err) {
		fprintf(stderr, "locktop: %s\n", msg);
		return -1;
	}
	return 0;
}

/* The batch output's final summary, read now if no interval was. */
static void finish_batch(struct run *r)
{
	char msg[512];

	if (!r->snap && !r->ended && !r->ops->recorded) {
		bool end;

		r->snap = r->ops->read(r->src, &end, msg, sizeof(msg));
	}
	if (r->snap)
		output_final(&r->out, r->snap, r->exit_status);
}

/* The screen, the batch tables or the record; returns the exit status. */
static int run_session(struct run *r)
{
	int err = 0;

	describe_source(r);
	r->screen = open_screen(r, r->what);
	if (r->screen)
		screen_draw(r->screen);

	if (loop(r))
		return 1;
	if (r->child > 0 && (r->screen || r->rec) && !r->interrupted) {
		/* q with a command still running: it ends with the screen. */
		kill(r->child, SIGTERM);
		r->interrupted = true;
	}
	if (r->interrupted)
		reap(&r->child, &r->exit_status, true);
	if (r->screen)
		finish_screen(r);
	else if (r->rec)
		err = finish_record(r);
	else
		finish_batch(r);
	if (err)
		return 1;
	return r->exit_status >= 0 ? r->exit_status : 0;
}

/* Closes what the run opened; a command never let go is killed. */
static void clean_up(struct run *r)
{
	if (r->screen)
		screen_close(r->screen);
	if (r->rec)
		recorder_abort(r->rec);
	/* Detach every probe before anything else can go wrong */
	if (r->src)
		r->ops->close(r->src);
	if (r->tty_in)
		fclose(r->tty_in);
	if (r->gate >= 0)
		close(r->gate);
	if (r->child > 0 && !r->src) {
		/* Never released: it must not run untraced. */
		kill(r->child, SIGKILL);
		waitpid(r->child, NULL, 0);
	}
	if (r->sfd >= 0)
		close(r->sfd);
	if (r->out.out && r->out.out != stdout)
		fclose(r->out.out);
}

int main(int argc, char **argv)
{
	struct run r = {
		.sfd = -1,
		.gate = -1,
		.child = -1,
		.exit_status = -1,
	};
	int ret;

	/* UTF-8 on the screen; numbers keep the C locale (JSON needs it). */
	setlocale(LC_CTYPE, "");
	argp_err_exit_status = EXIT_USAGE;
	if (argc > 1 && !strcmp(argv[1], "diff"))
		return diff_main(argc - 1, argv + 1);
	if (args_parse(argc, argv))
		return EXIT_USAGE;

	/* One host is a fleet of one: its host, and marked down alike. */
	r.ops = env.host    ? &source_fleet :
		env.archive ? &source_pcp_archive :
		env.series  ? &source_series :
			      &source_live;
	r.delay_ms = env.delay_ms;
	if (open_output(&r))
		return 1;
	ret = set_up(&r, argc, argv);
	if (!ret)
		ret = run_session(&r);
	clean_up(&r);
	return ret;
}
