// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * lockbench compare: one run per (backend, process count), each in its
 * own lockbench process so that one run's CPU time, stuck lock or crash
 * cannot leak into the next.
 */
#include <argp.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lockbench.h"

#define MAX_COUNTS 32

struct cmp_config {
	bool locks[LB_LOCK_KINDS];
	long counts[MAX_COUNTS];
	int ncounts;
	long loops;
	long hash;
	long hold_us;
	long think_us;
	enum lb_io_kind io;
	uint64_t seed;
	bool threads;
	bool tdb;
	double run_timeout;
	const char *out;
};

struct cmp_row {
	enum lb_lock_kind lock;
	long procs;
	char status[16];
	double elapsed, ops_per_s, user, sys;
	long long vcsw, ivcsw;
	unsigned long long ops, acquires, contended, wait_ns, p50, p99, max;
};

static const char cmp_doc[] =
	"Sweep lock backends x process counts and write the results into "
	"--out DIR: compare.csv, compare.md (tables of throughput and system "
	"time), compare.svg and compare.png (charts made with gnuplot; the "
	"script is kept as compare.gp with its data in compare.dat). Progress "
	"goes to stderr."
	"\v"
	"Each run is a separate 'lockbench --json' process. A run that fails "
	"its check, reports a stuck lock or outruns --run-timeout is kept in "
	"the CSV and tables with its status and left out of the charts.\n"
	"\n"
	"Examples:\n"
	"  lockbench compare --out results\n"
	"      all six backends at 1,2,4,8,16,64,250 processes\n"
	"  lockbench compare --out r --locks fcntl,mutex --procs 1,16,250 -l 2000 -H 1000\n"
	"      the tdbtorture comparison\n"
	"  lockbench compare --out r --locks spin,adaptive,mutex --procs 1,2,4,8,16 --hold-us 5\n"
	"      where does spinning stop paying on this machine?";

enum { C_LOCKS = 0x100, C_PROCS, C_IO, C_HOLD, C_THINK, C_TIMEOUT, C_TDB };

static const struct argp_option cmp_options[] = {
	{ "out", 'o', "DIR", 0, "output directory, created if missing", 0 },
	{ "locks", C_LOCKS, "LIST", 0, "comma-separated backends [all six]",
	  0 },
	{ "procs", C_PROCS, "LIST", 0,
	  "comma-separated process counts [1,2,4,8,16,64,250]", 0 },
	{ "loops", 'l', "N", 0, "operations per worker [1000]", 0 },
	{ "hash", 'H', "N", 0, "hash chains [1000]", 0 },
	{ "io", C_IO, "MODE", 0, "mmap, pread or lseek [mmap]", 0 },
	{ "seed", 's', "N", 0, "seed of every run [1]", 0 },
	{ "threads", 't', NULL, 0,
	  "threads instead of processes (fcntl is then skipped)", 0 },
	{ "hold-us", C_HOLD, "US", 0, "busy work inside each lock [0]", 0 },
	{ "think-us", C_THINK, "US", 0, "sleep between operations [0]", 0 },
	{ "tdb", C_TDB, NULL, 0,
	  "every run takes tdb's record, open and active locks too (with "
	  "--threads only ofd runs)",
	  0 },
	{ "run-timeout", C_TIMEOUT, "SECONDS", 0,
	  "give up on a single run after this long [300]", 0 },
	{ 0 }
};

static long parse_long(struct argp_state *state, const char *name,
		       const char *arg, long min, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg, &end, 10);
	if (errno || end == arg || *end || v < min || v > max)
		argp_error(state,
			   "%s wants a whole number from %ld to %ld, not '%s'",
			   name, min, max, arg);
	return v;
}

static error_t cmp_parse(int key, char *arg, struct argp_state *state)
{
	struct cmp_config *c = state->input;
	char *copy, *tok, *save = NULL, *end;
	int k;

	switch (key) {
	case 'o':
		c->out = arg;
		break;
	case C_LOCKS:
		memset(c->locks, 0, sizeof(c->locks));
		copy = strdup(arg);
		if (!copy)
			return ENOMEM;
		for (tok = strtok_r(copy, ",", &save); tok;
		     tok = strtok_r(NULL, ",", &save)) {
			k = lb_lock_kind_parse(tok);
			if (k >= 0)
				c->locks[k] = true;
			else
				argp_error(
					state,
					"unknown lock backend '%s'; choose from fcntl, ofd, flock, mutex, spin, adaptive",
					tok);
		}
		free(copy);
		break;
	case C_PROCS:
		c->ncounts = 0;
		copy = strdup(arg);
		if (!copy)
			return ENOMEM;
		for (tok = strtok_r(copy, ",", &save); tok;
		     tok = strtok_r(NULL, ",", &save)) {
			if (c->ncounts == MAX_COUNTS)
				argp_error(state, "at most %d process counts",
					   MAX_COUNTS);
			c->counts[c->ncounts++] = parse_long(
				state, "--procs", tok, 1, LB_MAX_PROCS);
		}
		free(copy);
		if (!c->ncounts)
			argp_error(state, "--procs needs at least one count");
		break;
	case 'l':
		c->loops = parse_long(state, "--loops", arg, 1, 1000000000L);
		break;
	case 'H':
		c->hash = parse_long(state, "--hash", arg, 1, INT32_MAX);
		break;
	case C_IO:
		k = lb_io_kind_parse(arg);
		if (k < 0)
			argp_error(
				state,
				"unknown I/O mode '%s'; choose one of mmap, pread, lseek",
				arg);
		c->io = (enum lb_io_kind)k;
		break;
	case 's':
		c->seed = (uint64_t)parse_long(state, "--seed", arg, 0,
					       INT32_MAX);
		break;
	case 't':
		c->threads = true;
		break;
	case C_TDB:
		c->tdb = true;
		break;
	case C_HOLD:
		c->hold_us = parse_long(state, "--hold-us", arg, 0, 10000000);
		break;
	case C_THINK:
		c->think_us = parse_long(state, "--think-us", arg, 0, 10000000);
		break;
	case C_TIMEOUT:
		errno = 0;
		c->run_timeout = strtod(arg, &end);
		if (errno || end == arg || *end || !(c->run_timeout > 0))
			argp_error(
				state,
				"--run-timeout wants seconds greater than 0, not '%s'",
				arg);
		break;
	case ARGP_KEY_ARG:
		argp_error(state, "unexpected argument '%s'", arg);
		break;
	case ARGP_KEY_END:
		if (!c->out)
			argp_error(state, "--out DIR is required");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

/* Reads what the child writes on fd until EOF or the deadline. */
static bool drain(int fd, char **buf, size_t *len, uint64_t deadline)
{
	size_t cap = 4096;

	*buf = malloc(cap);
	*len = 0;
	if (!*buf)
		return false;
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		uint64_t now = lb_now_ns();
		ssize_t n;
		int r;

		if (now >= deadline)
			return false;
		r = poll(&p, 1, (int)((deadline - now) / 1000000 + 1));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			continue;
		if (*len + 4096 > cap) {
			char *nb = realloc(*buf, cap * 2);

			if (!nb)
				return false;
			*buf = nb;
			cap *= 2;
		}
		n = read(fd, *buf + *len, cap - *len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		*len += (size_t)n;
	}
	(*buf)[*len] = '\0';
	return true;
}

static double jnum(json_object *o, const char *k)
{
	json_object *v;

	return json_object_object_get_ex(o, k, &v) ? json_object_get_double(v) :
						     0.0;
}

static unsigned long long ju64(json_object *o, const char *k)
{
	json_object *v;

	return json_object_object_get_ex(o, k, &v) ? json_object_get_uint64(v) :
						     0;
}

/* One run's command line, and the strings it points into. */
struct run_args {
	char procs[24], loops[24], hash[24], seed[24], hold[24], think[24],
		stuck[32], path[PATH_MAX];
	const char *argv[32];
};

static void build_argv(const struct cmp_config *c, const struct cmp_row *row,
		       const char *tmpdir, struct run_args *a)
{
	const char **argv = a->argv;
	int ac = 0;

	snprintf(a->path, sizeof(a->path), "%s/lockbench-compare-%d.tdb",
		 tmpdir, (int)getpid());
	snprintf(a->procs, sizeof(a->procs), "%ld", row->procs);
	snprintf(a->loops, sizeof(a->loops), "%ld", c->loops);
	snprintf(a->hash, sizeof(a->hash), "%ld", c->hash);
	snprintf(a->seed, sizeof(a->seed), "%llu", (unsigned long long)c->seed);
	snprintf(a->hold, sizeof(a->hold), "%ld", c->hold_us);
	snprintf(a->think, sizeof(a->think), "%ld", c->think_us);
	/* A long wait is the measurement here, not a fault. */
	snprintf(a->stuck, sizeof(a->stuck), "%g", c->run_timeout);
	argv[ac++] = "lockbench";
	argv[ac++] = "--json";
	argv[ac++] = "--lock";
	argv[ac++] = lb_lock_names[row->lock];
	argv[ac++] = "--io";
	argv[ac++] = lb_io_names[c->io];
	argv[ac++] = "-n";
	argv[ac++] = a->procs;
	argv[ac++] = "-l";
	argv[ac++] = a->loops;
	argv[ac++] = "-H";
	argv[ac++] = a->hash;
	argv[ac++] = "-s";
	argv[ac++] = a->seed;
	argv[ac++] = "--hold-us";
	argv[ac++] = a->hold;
	argv[ac++] = "--think-us";
	argv[ac++] = a->think;
	argv[ac++] = "--stuck-timeout";
	argv[ac++] = a->stuck;
	argv[ac++] = "--path";
	argv[ac++] = a->path;
	if (c->threads)
		argv[ac++] = "--threads";
	if (c->tdb)
		argv[ac++] = "--tdb";
	argv[ac] = NULL;
}

static void run_one(const struct cmp_config *c, struct cmp_row *row,
		    const char *tmpdir)
{
	struct run_args a;
	int out[2], status;
	uint64_t deadline;
	json_object *o, *v;
	bool done;
	size_t len;
	char *buf;
	pid_t pid;

	build_argv(c, row, tmpdir, &a);
	snprintf(row->status, sizeof(row->status), "failed");
	if (pipe2(out, O_CLOEXEC))
		return;
	pid = fork();
	if (pid < 0) {
		close(out[0]);
		close(out[1]);
		return;
	}
	if (pid == 0) {
		setpgid(0, 0);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		dup2(out[1], STDOUT_FILENO);
		execv("/proc/self/exe", (char **)a.argv);
		_exit(127);
	}
	setpgid(pid, pid);
	close(out[1]);
	deadline = lb_now_ns() + (uint64_t)(c->run_timeout * 1e9);
	done = drain(out[0], &buf, &len, deadline);
	close(out[0]);
	if (!done) {
		/* The run's workers are in its process group. */
		kill(-pid, SIGKILL);
		kill(pid, SIGKILL);
		snprintf(row->status, sizeof(row->status), "timeout");
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	unlink(a.path);
	if (!done) {
		free(buf);
		return;
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == LB_EXIT_STUCK)
		snprintf(row->status, sizeof(row->status), "stuck");
	o = buf ? json_tokener_parse(buf) : NULL;
	free(buf);
	if (!o)
		return;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0 &&
	    json_object_object_get_ex(o, "check", &v) &&
	    !strcmp(json_object_get_string(v), "OK"))
		snprintf(row->status, sizeof(row->status), "ok");
	row->elapsed = jnum(o, "elapsed_s");
	row->ops_per_s = jnum(o, "ops_per_s");
	row->user = jnum(o, "user_s");
	row->sys = jnum(o, "sys_s");
	row->vcsw = (long long)ju64(o, "vcsw");
	row->ivcsw = (long long)ju64(o, "ivcsw");
	row->ops = ju64(o, "ops");
	row->acquires = ju64(o, "acquires");
	row->contended = ju64(o, "contended");
	row->wait_ns = ju64(o, "wait_ns");
	row->p50 = ju64(o, "wait_p50_ns");
	row->p99 = ju64(o, "wait_p99_ns");
	row->max = ju64(o, "wait_max_ns");
	json_object_put(o);
}

static FILE *open_out(const char *dir, const char *name)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f)
		fprintf(stderr, "lockbench compare: cannot write '%s': %s\n",
			path, strerror(errno));
	return f;
}

static int write_csv(const struct cmp_config *c, const struct cmp_row *rows,
		     int n)
{
	FILE *f = open_out(c->out, "compare.csv");

	if (!f)
		return -1;
	fprintf(f,
		"lock,io,procs,threads,loops,hash,status,elapsed_s,ops,ops_per_s,user_s,sys_s,vcsw,ivcsw,acquires,contended,wait_ns,wait_p50_ns,wait_p99_ns,wait_max_ns\n");
	for (int i = 0; i < n; i++) {
		const struct cmp_row *r = &rows[i];

		fprintf(f,
			"%s,%s,%ld,%d,%ld,%ld,%s,%.6f,%llu,%.1f,%.6f,%.6f,%lld,%lld,%llu,%llu,%llu,%llu,%llu,%llu\n",
			lb_lock_names[r->lock], lb_io_names[c->io], r->procs,
			c->threads, c->loops, c->hash, r->status, r->elapsed,
			r->ops, r->ops_per_s, r->user, r->sys, r->vcsw,
			r->ivcsw, r->acquires, r->contended, r->wait_ns, r->p50,
			r->p99, r->max);
	}
	return fclose(f) ? -1 : 0;
}

static const struct cmp_row *find_row(const struct cmp_row *rows, int n,
				      enum lb_lock_kind lock, long procs)
{
	for (int i = 0; i < n; i++)
		if (rows[i].lock == lock && rows[i].procs == procs)
			return &rows[i];
	return NULL;
}

static void md_table(FILE *f, const struct cmp_config *c,
		     const struct cmp_row *rows, int n, const char *title,
		     int what)
{
	fprintf(f, "\n## %s\n\n| procs |", title);
	for (int l = 0; l < LB_LOCK_KINDS; l++)
		if (c->locks[l])
			fprintf(f, " %s |", lb_lock_names[l]);
	fprintf(f, "\n|---:|");
	for (int l = 0; l < LB_LOCK_KINDS; l++)
		if (c->locks[l])
			fprintf(f, "---:|");
	fprintf(f, "\n");
	for (int i = 0; i < c->ncounts; i++) {
		fprintf(f, "| %ld |", c->counts[i]);
		for (int l = 0; l < LB_LOCK_KINDS; l++) {
			const struct cmp_row *r;

			if (!c->locks[l])
				continue;
			r = find_row(rows, n, (enum lb_lock_kind)l,
				     c->counts[i]);
			if (!r)
				fprintf(f, " |");
			else if (strcmp(r->status, "ok"))
				fprintf(f, " %s |", r->status);
			else if (what == 0)
				fprintf(f, " %.0f |", r->ops_per_s);
			else if (what == 1)
				fprintf(f, " %.3f |", r->sys);
			else if (what == 2)
				fprintf(f, " %.3f |", r->elapsed);
			else
				fprintf(f, " %.1f |", (double)r->p99 / 1000.0);
		}
		fprintf(f, "\n");
	}
}

static int write_md(const struct cmp_config *c, const struct cmp_row *rows,
		    int n)
{
	FILE *f = open_out(c->out, "compare.md");

	if (!f)
		return -1;
	fprintf(f, "# lockbench compare\n\n");
	fprintf(f,
		"`-l %ld -H %ld --io %s --hold-us %ld --think-us %ld -s %llu%s%s`; one run per cell, %s.\n",
		c->loops, c->hash, lb_io_names[c->io], c->hold_us, c->think_us,
		(unsigned long long)c->seed, c->threads ? " --threads" : "",
		c->tdb ? " --tdb" : "", c->threads ? "threads" : "processes");
	md_table(f, c, rows, n, "Throughput (ops/s, higher is better)", 0);
	md_table(f, c, rows, n, "System CPU time (s, lower is better)", 1);
	md_table(f, c, rows, n, "Elapsed time (s)", 2);
	md_table(f, c, rows, n, "Contended wait p99 (us)", 3);
	return fclose(f) ? -1 : 0;
}

static void gp_plots(FILE *f, const struct cmp_config *c, const char *title,
		     const bool *have)
{
	int block = 0;

	fprintf(f, "set multiplot layout 1,2 title \"%s\"\n", title);
	for (int panel = 0; panel < 2; panel++) {
		bool first = true;

		block = 0;
		fprintf(f, "set title \"%s\"\n",
			panel ? "system CPU time" : "throughput");
		fprintf(f, "set ylabel \"%s\"\n",
			panel ? "sys seconds (all workers)" : "operations/s");
		/* Throughputs span decades; sys time starts at zero. */
		fprintf(f,
			panel ? "set key top left\n" : "set key bottom left\n");
		fprintf(f, panel ? "unset logscale y\nset yrange [0:*]\n" :
				   "set logscale y\nset autoscale y\n");
		fprintf(f, "plot ");
		for (int l = 0; l < LB_LOCK_KINDS; l++) {
			if (!c->locks[l])
				continue;
			if (have[l]) {
				fprintf(f,
					"%s'compare.dat' index %d using 1:%d with linespoints lw 2 title \"%s\"",
					first ? "" : ", \\\n     ", block,
					panel ? 3 : 2, lb_lock_names[l]);
				first = false;
				block++;
			}
		}
		fprintf(f, "\n");
	}
	fprintf(f, "unset multiplot\n");
}

static int write_charts(const struct cmp_config *c, const struct cmp_row *rows,
			int n)
{
	FILE *dat = open_out(c->out, "compare.dat");
	FILE *gp = NULL;
	bool have[LB_LOCK_KINDS] = { false };
	int blocks = 0, status;
	char title[160];
	pid_t pid;

	if (!dat)
		return -1;
	for (int l = 0; l < LB_LOCK_KINDS; l++) {
		if (!c->locks[l])
			continue;
		for (int i = 0; i < c->ncounts; i++) {
			const struct cmp_row *r = find_row(
				rows, n, (enum lb_lock_kind)l, c->counts[i]);

			if (!r || strcmp(r->status, "ok"))
				continue;
			if (!have[l])
				fprintf(dat,
					"%s# %s\n# procs ops_per_s sys_s\n",
					blocks ? "\n\n" : "", lb_lock_names[l]);
			have[l] = true;
			fprintf(dat, "%ld %.1f %.6f\n", r->procs, r->ops_per_s,
				r->sys);
		}
		blocks += have[l];
	}
	fclose(dat);
	if (!blocks) {
		fprintf(stderr,
			"lockbench compare: no run succeeded, so no chart\n");
		return -1;
	}
	gp = open_out(c->out, "compare.gp");
	if (!gp)
		return -1;
	snprintf(title, sizeof(title),
		 "lockbench: %s, %ld ops per worker, %ld chains, %s I/O",
		 c->threads ? "threads" : "processes", c->loops, c->hash,
		 lb_io_names[c->io]);
	fprintf(gp, "# lockbench compare chart; run: gnuplot compare.gp\n");
	fprintf(gp, "set logscale x 2\nset grid\n");
	fprintf(gp, "set xlabel \"%s\"\nset xtics (",
		c->threads ? "threads" : "processes");
	for (int i = 0; i < c->ncounts; i++)
		fprintf(gp, "%s%ld", i ? ", " : "", c->counts[i]);
	fprintf(gp, ")\n");
	fprintf(gp,
		"set terminal svg size 1200,500 dynamic background rgb 'white' font 'sans,11'\n");
	fprintf(gp, "set output 'compare.svg'\n");
	gp_plots(gp, c, title, have);
	fprintf(gp, "set terminal pngcairo size 1200,500 font 'sans,10'\n");
	fprintf(gp, "set output 'compare.png'\n");
	gp_plots(gp, c, title, have);
	fprintf(gp, "set output\n");
	if (fclose(gp))
		return -1;

	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		if (chdir(c->out))
			_exit(126);
		execlp("gnuplot", "gnuplot", "compare.gp", (char *)NULL);
		fprintf(stderr,
			"lockbench compare: cannot run gnuplot (%s); install gnuplot-nox, then run 'gnuplot compare.gp' in %s\n",
			strerror(errno), c->out);
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "lockbench compare: gnuplot failed\n");
		return -1;
	}
	return 0;
}

int lb_compare_main(int argc, char **argv)
{
	struct cmp_config c = {
		.counts = { 1, 2, 4, 8, 16, 64, 250 },
		.ncounts = 7,
		.loops = 1000,
		.hash = 1000,
		.io = LB_IO_MMAP,
		.seed = 1,
		.run_timeout = 300,
	};
	struct argp argp = { cmp_options, cmp_parse, NULL, cmp_doc,
			     NULL,	  NULL,	     NULL };
	const char *tmp = getenv("TMPDIR");
	struct cmp_row *rows;
	int n = 0, total = 0, done = 0, ret = 0;

	for (int l = 0; l < LB_LOCK_KINDS; l++)
		c.locks[l] = true;
	argv[0] = (char *)"lockbench compare";
	argp_parse(&argp, argc, argv, 0, NULL, &c);
	if (c.threads)
		c.locks[LB_LOCK_FCNTL] = false;
	/* tdb's fcntl locks exclude threads only as OFD locks. */
	for (int l = 0; c.threads && c.tdb && l < LB_LOCK_KINDS; l++)
		if (l != LB_LOCK_OFD)
			c.locks[l] = false;
	if (mkdir(c.out, 0755) && errno != EEXIST) {
		fprintf(stderr, "lockbench compare: cannot create '%s': %s\n",
			c.out, strerror(errno));
		return LB_EXIT_USAGE;
	}
	for (int l = 0; l < LB_LOCK_KINDS; l++)
		total += c.locks[l] ? c.ncounts : 0;
	if (!total) {
		fprintf(stderr, "lockbench compare: nothing to run\n");
		return LB_EXIT_USAGE;
	}
	rows = calloc((size_t)total, sizeof(*rows));
	if (!rows)
		return LB_EXIT_FAIL;

	for (int l = 0; l < LB_LOCK_KINDS; l++) {
		if (!c.locks[l])
			continue;
		for (int i = 0; i < c.ncounts; i++) {
			struct cmp_row *r = &rows[n++];
			uint64_t t0 = lb_now_ns();

			r->lock = (enum lb_lock_kind)l;
			r->procs = c.counts[i];
			fprintf(stderr, "[%2d/%d] %-8s n=%-4ld ... ", ++done,
				total, lb_lock_names[l], r->procs);
			fflush(stderr);
			run_one(&c, r, tmp && *tmp ? tmp : "/tmp");
			if (!strcmp(r->status, "ok"))
				fprintf(stderr,
					"%10.0f ops/s  sys %7.3f s  (%.1f s)\n",
					r->ops_per_s, r->sys,
					(double)(lb_now_ns() - t0) / 1e9);
			else
				fprintf(stderr, "%s (%.1f s)\n", r->status,
					(double)(lb_now_ns() - t0) / 1e9);
		}
	}
	if (write_csv(&c, rows, n) || write_md(&c, rows, n))
		ret = LB_EXIT_FAIL;
	if (write_charts(&c, rows, n))
		ret = LB_EXIT_FAIL;
	if (!ret)
		fprintf(stderr,
			"lockbench compare: wrote %s/compare.{csv,md,svg,png}\n",
			c.out);
	free(rows);
	return ret;
}
