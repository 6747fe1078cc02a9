// SPDX-License-Identifier: GPL-2.0-or-later
#include <argp.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "lockbench.h"

const char *argp_program_version = "lockbench " LOCKTOP_VERSION;

static const char doc[] =
	"Many workers hammer one hash table in a shared file; lockbench tells "
	"which lock that table should use, with numbers.\n"
	"\n"
	"N processes (or threads) run a seeded, tdbtorture-like mix of fetch, "
	"store, delete, append and lock-and-store on a table of H chains, each "
	"chain with its own lock plus one freelist lock. Every acquisition "
	"first tries without blocking; a failed try counts as contended and "
	"the blocking acquire after it is timed. At the end the whole table is "
	"checked and OK is printed only if it holds."
	"\v"
	"Lock backends (--lock):\n"
	"  fcntl     F_SETLKW byte-range locks, one byte per chain (as tdb)\n"
	"  ofd       F_OFD_SETLKW, one open file description per worker\n"
	"  flock     one whole-file flock: the coarse baseline\n"
	"  mutex     robust process-shared pthread mutexes in the file\n"
	"  spin      test-and-test-and-set spinlock with PAUSE and backoff\n"
	"  adaptive  futex mutex that spins a little, then sleeps\n"
	"\n"
	"Record I/O (--io): mmap (direct), pread (pread/pwrite), lseek "
	"(lseek+read/write, the fallback where pread is missing).\n"
	"\n"
	"--hold-us busy-waits inside the critical section (on-CPU hold time); "
	"--think-us sleeps outside it (off-CPU think time).\n"
	"\n"
	"--tdb takes tdb's record, open and active locks too, as Samba's tdb "
	"takes them: a 1-byte F_RDLCK (F_SETLKW) at a record's offset while a "
	"fetch reads it after the chain lock is dropped (tdb_lock_record); a "
	"probing F_SETLK F_WRLCK there before each delete "
	"(tdb_write_lock_record; refused, the record is left in its chain "
	"marked dead and freed by a later write); the open lock (byte 0, "
	"F_WRLCK) while a worker opens the file; the active lock (byte 4, "
	"F_RDLCK) from open to close. Every --reopen operations a worker closes "
	"and reopens the file. These are fcntl locks whatever --lock is (OFD "
	"locks with ofd), as in tdb's mutex mode; the JSON counts them in "
	"record_locks, open_lock, active_lock and file_locks.\n"
	"\n"
	"Examples:\n"
	"  lockbench -n 16 -l 5000 --lock mutex\n"
	"      16 processes, 5000 operations each, robust mutexes\n"
	"  lockbench -n 250 -l 2000 -H 1000 --lock fcntl --json | jq .sys_s\n"
	"      the tdbtorture experiment; one JSON object for scripts\n"
	"  lockbench -n 8 --lock mutex --kill-holder 5\n"
	"      SIGKILL a lock holder mid-update 5 times; the table must survive\n"
	"  lockbench -n 4 --lock spin --kill-holder 1 --stuck-timeout 2\n"
	"      a dead spinlock holder is reported after 2 s (exit status 3)\n"
	"  lockbench -n 16 -l 2000 -H 1000 --lock mutex --tdb\n"
	"      tdb in mutex mode: chains on mutexes, record and open locks fcntl\n"
	"  lockbench -n 4 --threads --lock adaptive --hold-us 20\n"
	"      threads in one process, 20 us of work under each lock\n"
	"  lockbench compare --out results --locks fcntl,mutex --procs 1,4,16\n"
	"      sweep backends x process counts; writes CSV, Markdown, SVG, PNG\n"
	"      (see lockbench compare --help)\n"
	"\n"
	"Exit status: 0 the check passed (OK); 1 the check failed or a system "
	"call failed; 2 bad usage; 3 a spin or adaptive lock was left held by "
	"a dead worker (STUCK).\n"
	"\n"
	"The JSON fields are described in docs/lockbench.md and "
	"lockbench(1).";

enum {
	OPT_KEEP = 0x100,
	OPT_HOLD,
	OPT_THINK,
	OPT_KILL,
	OPT_STUCK,
	OPT_NO_REPAIR,
	OPT_IO,
	OPT_KEYS,
	OPT_TDB,
	OPT_REOPEN,
	OPT_READ,
	OPT_BLOCKING,
};

static const struct argp_option options[] = {
	{ NULL, 0, NULL, 0, "Workload:", 1 },
	{ "procs", 'n', "N", 0, "worker processes (or threads) [4]", 1 },
	{ "loops", 'l', "N", 0, "operations per worker [1000]", 1 },
	{ "hash", 'H', "N", 0, "hash chains, each with its own lock [64]", 1 },
	{ "keys", OPT_KEYS, "N", 0, "distinct keys [4 per chain]", 1 },
	{ "seed", 's', "N", 0,
	  "seed of the operation mix [time and pid, printed]", 1 },
	{ "threads", 't', NULL, 0, "threads in one process, not processes", 1 },
	{ "hold-us", OPT_HOLD, "US", 0,
	  "busy-wait US microseconds inside each critical section [0]", 1 },
	{ "think-us", OPT_THINK, "US", 0,
	  "sleep US microseconds between operations [0]", 1 },
	{ NULL, 0, NULL, 0, "Locks and I/O:", 2 },
	{ "lock", 'L', "KIND", 0,
	  "fcntl, ofd, flock, mutex, spin or adaptive [fcntl]", 2 },
	{ "io", OPT_IO, "MODE", 0, "mmap, pread or lseek [mmap]", 2 },
	{ "tdb", OPT_TDB, NULL, 0,
	  "take tdb's record, open and active locks too (fcntl, or OFD with "
	  "ofd)",
	  2 },
	{ "reopen", OPT_REOPEN, "K", 0,
	  "with --tdb: close and reopen the file every K operations, 0 never "
	  "[500]",
	  2 },
	{ "blocking", OPT_BLOCKING, NULL, 0,
	  "fcntl and ofd: take each chain and freelist lock with one "
	  "blocking call and unlock with F_SETLKW, as tdb does, instead of "
	  "a try first; the truth then counts acquisitions, not waits",
	  2 },
	{ "read-us", OPT_READ, "US", 0,
	  "with --tdb: busy-wait US microseconds on a fetched record under its "
	  "record lock, after the chain lock is dropped [0]",
	  2 },
	{ NULL, 0, NULL, 0, "Table file:", 3 },
	{ "path", 'p', "FILE", 0,
	  "table file, created fresh [$TMPDIR/lockbench-XXXXXX.tdb]", 3 },
	{ "keep", OPT_KEEP, NULL, 0, "keep the table file after the run", 3 },
	{ NULL, 0, NULL, 0, "Fault injection:", 4 },
	{ "kill-holder", OPT_KILL, "K", 0,
	  "SIGKILL a worker K times while it holds a chain lock in the middle "
	  "of an update, and restart it",
	  4 },
	{ "stuck-timeout", OPT_STUCK, "SECONDS", 0,
	  "report a spin/adaptive lock as stuck after this wait [10]", 4 },
	{ "no-repair", OPT_NO_REPAIR, NULL, 0,
	  "leave torn updates in place (to show the check catches them)", 4 },
	{ NULL, 0, NULL, 0, "Output:", 5 },
	{ "json", 'j', NULL, 0, "print one JSON object instead of text", 5 },
	{ 0 }
};

static long long parse_num(struct argp_state *state, const char *name,
			   const char *arg, long long min, long long max)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(arg, &end, 10);
	if (errno || end == arg || *end)
		argp_error(state, "%s wants a whole number, not '%s'", name,
			   arg);
	if (v < min)
		argp_error(state, "%s must be at least %lld, got %s", name, min,
			   arg);
	if (v > max)
		argp_error(state, "%s must be at most %lld, got %s", name, max,
			   arg);
	return v;
}

static bool reopen_set;

static double parse_seconds(struct argp_state *state, const char *arg)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (errno || end == arg || *end || !(v > 0) || v > 1e6)
		argp_error(
			state,
			"--stuck-timeout wants seconds greater than 0, not '%s'",
			arg);
	return v;
}

/* Options that are fine one by one but not together. */
static void check_options(struct argp_state *state, const struct lb_config *cfg)
{
	if (cfg->threads && cfg->lock == LB_LOCK_FCNTL)
		argp_error(
			state,
			"--threads cannot use --lock fcntl: fcntl locks belong to the process, so threads of one process never exclude each other; use ofd");
	if (cfg->threads && cfg->kill_holder)
		argp_error(
			state,
			"--kill-holder needs worker processes; it cannot kill one thread of a process");
	if (reopen_set && !cfg->tdb)
		argp_error(state, "--reopen needs --tdb");
	if (cfg->read_us && !cfg->tdb)
		argp_error(state, "--read-us needs --tdb");
	if (cfg->blocking && cfg->lock != LB_LOCK_FCNTL &&
	    cfg->lock != LB_LOCK_OFD)
		argp_error(state, "--blocking is for --lock fcntl or ofd");
	if (cfg->tdb && cfg->threads && cfg->lock != LB_LOCK_OFD)
		argp_error(
			state,
			"--tdb with --threads needs --lock ofd: tdb's fcntl locks belong to the process, so threads of one process never exclude each other");
}

/* --tdb and the options that shape it. */
static error_t parse_tdb_opt(int key, char *arg, struct argp_state *state)
{
	struct lb_config *cfg = state->input;

	switch (key) {
	case OPT_TDB:
		cfg->tdb = true;
		break;
	case OPT_REOPEN:
		cfg->reopen = (long)parse_num(state, "--reopen", arg, 0,
					      1000000000000LL);
		reopen_set = true;
		break;
	case OPT_READ:
		cfg->read_us =
			(long)parse_num(state, "--read-us", arg, 0, 10000000);
		break;
	case OPT_BLOCKING:
		cfg->blocking = true;
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static error_t parse_opt(int key, char *arg, struct argp_state *state)
{
	struct lb_config *cfg = state->input;
	int k;

	switch (key) {
	case 'n':
		cfg->procs =
			(long)parse_num(state, "--procs", arg, 1, LB_MAX_PROCS);
		break;
	case 'l':
		cfg->loops = (long)parse_num(state, "--loops", arg, 1,
					     1000000000000LL);
		break;
	case 'H':
		cfg->hash = (long)parse_num(state, "--hash", arg, 1, INT32_MAX);
		break;
	case OPT_KEYS:
		cfg->keys = parse_num(state, "--keys", arg, 1, UINT32_MAX);
		break;
	case 's':
		cfg->seed =
			(uint64_t)parse_num(state, "--seed", arg, 0, INT64_MAX);
		break;
	case 't':
		cfg->threads = true;
		break;
	case OPT_HOLD:
		cfg->hold_us =
			(long)parse_num(state, "--hold-us", arg, 0, 10000000);
		break;
	case OPT_THINK:
		cfg->think_us =
			(long)parse_num(state, "--think-us", arg, 0, 10000000);
		break;
	case 'L':
		k = lb_lock_kind_parse(arg);
		if (k < 0)
			argp_error(
				state,
				"unknown lock backend '%s'; choose one of fcntl, ofd, flock, mutex, spin, adaptive",
				arg);
		cfg->lock = (enum lb_lock_kind)k;
		break;
	case OPT_IO:
		k = lb_io_kind_parse(arg);
		if (k < 0)
			argp_error(
				state,
				"unknown I/O mode '%s'; choose one of mmap, pread, lseek",
				arg);
		cfg->io = (enum lb_io_kind)k;
		break;
	case 'p':
		if (!*arg)
			argp_error(state, "--path must not be empty");
		cfg->path = arg;
		break;
	case OPT_KEEP:
		cfg->keep = true;
		break;
	case OPT_KILL:
		cfg->kill_holder =
			(long)parse_num(state, "--kill-holder", arg, 0, 100000);
		break;
	case OPT_STUCK:
		cfg->stuck_timeout = parse_seconds(state, arg);
		break;
	case OPT_NO_REPAIR:
		cfg->no_repair = true;
		break;
	case 'j':
		cfg->json = true;
		break;
	case ARGP_KEY_ARG:
		argp_error(
			state,
			"unexpected argument '%s' (the only subcommand is 'compare', and it comes first)",
			arg);
		break;
	case ARGP_KEY_END:
		check_options(state, cfg);
		break;
	default:
		return parse_tdb_opt(key, arg, state);
	}
	return 0;
}

static const struct argp argp = { options, parse_opt, "[compare [OPTION...]]",
				  doc,	   NULL,      NULL,
				  NULL };

int main(int argc, char **argv)
{
	struct lb_config cfg = {
		.lock = LB_LOCK_FCNTL,
		.io = LB_IO_MMAP,
		.procs = 4,
		.loops = 1000,
		.hash = 64,
		.stuck_timeout = LB_DEFAULT_STUCK_TIMEOUT,
		.reopen = LB_DEFAULT_REOPEN,
		.seed = ((uint64_t)time(NULL) + (uint64_t)getpid()) &
			0x7fffffff,
	};

	argp_err_exit_status = LB_EXIT_USAGE;
	if (argc > 1 && !strcmp(argv[1], "compare"))
		return lb_compare_main(argc - 1, argv + 1);
	argp_parse(&argp, argc, argv, 0, NULL, &cfg);
	return lb_run_main(&cfg);
}
