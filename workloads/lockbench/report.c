// SPDX-License-Identifier: GPL-2.0-or-later
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/sysmacros.h>

#include "lockbench.h"

#define TOP_LOCKS 5

/* The backends whose waiters spin, and so have spin_cpu_ns. */
static bool spins(const struct lb_config *cfg)
{
	return cfg->lock == LB_LOCK_SPIN || cfg->lock == LB_LOCK_ADAPTIVE;
}

static const struct lb_lockstat *lock_totals(const struct lb_run *run)
{
	/* Row 0 holds the per-lock sums once the run is merged. */
	return run->ls;
}

static int cmp_contended(const void *a, const void *b, void *arg)
{
	const struct lb_lockstat *ls = arg;
	const struct lb_lockstat *x = &ls[*(const unsigned *)a];
	const struct lb_lockstat *y = &ls[*(const unsigned *)b];

	if (x->contended != y->contended)
		return x->contended < y->contended ? 1 : -1;
	if (x->wait_ns != y->wait_ns)
		return x->wait_ns < y->wait_ns ? 1 : -1;
	return *(const unsigned *)a < *(const unsigned *)b ? -1 : 1;
}

static unsigned top_locks(const struct lb_run *run, unsigned *out)
{
	unsigned *idx = malloc(run->nstat * sizeof(*idx));
	unsigned n = 0;

	if (!idx)
		return 0;
	for (unsigned i = 0; i < run->nstat; i++)
		idx[i] = i;
	qsort_r(idx, run->nstat, sizeof(*idx), cmp_contended,
		(void *)lock_totals(run));
	for (unsigned i = 0; i < run->nstat && n < TOP_LOCKS; i++)
		if (lock_totals(run)[idx[i]].contended)
			out[n++] = idx[i];
	free(idx);
	return n;
}

static void stuck_message(const struct lb_run *run, FILE *f)
{
	const struct lb_shared *sh = run->sh;
	char name[32];
	int holder = sh->stuck_holder;

	lb_lock_name(run, sh->stuck_lock, name, sizeof(name));
	fprintf(f,
		"lockbench: STUCK: %s lock '%s' at offset %llu of %s is held by pid %d",
		lb_lock_names[run->cfg->lock], name,
		(unsigned long long)lb_lock_offset(run, sh->stuck_lock),
		run->path, holder);
	fprintf(f, ", which %s", lb_pid_alive(holder) ? "is alive" : "is gone");
	if (sh->stuck_waiter)
		fprintf(f, "; worker %d waited %.1f s for it", sh->stuck_waiter,
			sh->stuck_waited);
	fprintf(f,
		".\nlockbench: %s locks have no owner-death notice, so a holder that dies never releases its lock (robust mutexes do: try --lock mutex).\n",
		lb_lock_names[run->cfg->lock]);
}

/* The most contended locks, with what their waiters spun on the CPU. */
static void report_top_locks(const struct lb_run *run)
{
	const struct lb_lockstat *ls = lock_totals(run);
	unsigned top[TOP_LOCKS], ntop;
	char a[32];

	ntop = top_locks(run, top);
	if (ntop)
		printf("most contended locks:\n");
	for (unsigned i = 0; i < ntop; i++) {
		char name[32];

		lb_lock_name(run, top[i], name, sizeof(name));
		lb_format_ns(a, sizeof(a), ls[top[i]].wait_ns);
		printf("  %-14s offset %-10llu %8llu acquires %8llu contended  %s waited",
		       name, (unsigned long long)lb_lock_offset(run, top[i]),
		       (unsigned long long)ls[top[i]].acquires,
		       (unsigned long long)ls[top[i]].contended, a);
		lb_format_ns(a, sizeof(a), ls[top[i]].spin_cpu_ns);
		if (spins(run->cfg))
			printf(", %s spun", a);
		printf("\n");
	}
}

void lb_report_human(const struct lb_run *run)
{
	const struct lb_config *cfg = run->cfg;
	const struct lb_result *res = &run->res;
	char a[32], b[32], c[32];

	printf("lockbench: %ld %s x %ld loops, lock %s, io %s, hash %ld, keys %llu, seed %llu\n",
	       cfg->procs, cfg->threads ? "threads" : "processes", cfg->loops,
	       lb_lock_names[cfg->lock], lb_io_names[cfg->io], cfg->hash,
	       (unsigned long long)run->lay.keys,
	       (unsigned long long)cfg->seed);
	printf("table     %s (%s)\n", run->path,
	       cfg->keep ? "kept" : "removed");
	printf("elapsed   %.3f s, %.0f ops/s\n", res->elapsed,
	       res->elapsed > 0 ? (double)res->ops / res->elapsed : 0.0);
	printf("cpu       user %.3f s, sys %.3f s\n", res->user, res->sys);
	printf("switches  voluntary %ld, involuntary %ld\n", res->vcsw,
	       res->ivcsw);
	printf("ops       %llu (fetch %llu, store %llu, delete %llu, append %llu, lockstore %llu), %llu ok\n",
	       (unsigned long long)res->ops,
	       (unsigned long long)res->opcount[LB_OP_FETCH],
	       (unsigned long long)res->opcount[LB_OP_STORE],
	       (unsigned long long)res->opcount[LB_OP_DELETE],
	       (unsigned long long)res->opcount[LB_OP_APPEND],
	       (unsigned long long)res->opcount[LB_OP_LOCKSTORE],
	       (unsigned long long)res->ok);
	lb_format_ns(a, sizeof(a), res->wait_ns);
	printf("locks     %llu acquires, %llu contended (%.1f%%), %s waited in all\n",
	       (unsigned long long)res->acquires,
	       (unsigned long long)res->contended,
	       res->acquires ?
		       100.0 * (double)res->contended / (double)res->acquires :
		       0.0,
	       a);
	lb_format_ns(a, sizeof(a), res->wait_p50);
	lb_format_ns(b, sizeof(b), res->wait_p99);
	lb_format_ns(c, sizeof(c), res->wait_max);
	printf("wait      p50 %s, p99 %s, max %s (contended acquisitions)\n", a,
	       b, c);
	if (spins(cfg)) {
		lb_format_ns(a, sizeof(a), res->spin_cpu_ns);
		printf("spin      %s on CPU while spinning (%.1f%% of the wait)\n",
		       a,
		       res->wait_ns ? 100.0 * (double)res->spin_cpu_ns /
					      (double)res->wait_ns :
				      0.0);
	}
	report_top_locks(run);
	printf("records   %llu (%llu inserts - %llu deletes), %llu free\n",
	       (unsigned long long)res->records,
	       (unsigned long long)res->inserts,
	       (unsigned long long)res->deletes,
	       (unsigned long long)res->free_records);
	lb_tdb_report_human(run);
	if (cfg->kill_holder)
		printf("kills     %llu, repairs %llu (+%llu at the check), owner-dead %llu (+%llu at the check)\n",
		       (unsigned long long)res->kills,
		       (unsigned long long)res->repairs,
		       (unsigned long long)res->check_repairs,
		       (unsigned long long)res->owner_dead,
		       (unsigned long long)res->check_owner_dead);
	fflush(stdout);

	if (res->stuck)
		stuck_message(run, stderr);
	for (unsigned i = 0; i < res->nerrors && i < 8; i++)
		fprintf(stderr, "lockbench: check: %s\n", res->errors[i]);
	if (res->nerrors > 8)
		fprintf(stderr, "lockbench: check: %u more problems\n",
			res->nerrors - 8);
	if (res->stuck)
		printf("STUCK\n");
	else if (res->failed || res->nerrors)
		printf("FAILED\n");
	else
		printf("OK\n");
}

static void add(json_object *o, const char *k, json_object *v)
{
	json_object_object_add(o, k, v);
}

static json_object *u64(uint64_t v)
{
	return json_object_new_uint64(v);
}

static json_object *secs(double v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%.6f", v);
	return json_object_new_double_s(v, buf);
}

static void json_config(const struct lb_run *run, json_object *o)
{
	const struct lb_config *cfg = run->cfg;

	add(o, "lock", json_object_new_string(lb_lock_names[cfg->lock]));
	add(o, "io", json_object_new_string(lb_io_names[cfg->io]));
	add(o, "procs", json_object_new_int64(cfg->procs));
	add(o, "threads", json_object_new_boolean(cfg->threads));
	add(o, "loops", json_object_new_int64(cfg->loops));
	add(o, "hash", json_object_new_int64(cfg->hash));
	add(o, "keys", u64(run->lay.keys));
	add(o, "seed", u64(cfg->seed));
	add(o, "hold_us", json_object_new_int64(cfg->hold_us));
	add(o, "think_us", json_object_new_int64(cfg->think_us));
	add(o, "blocking", json_object_new_boolean(cfg->blocking));
	add(o, "path", json_object_new_string(run->path));
	add(o, "kept", json_object_new_boolean(cfg->keep));
	add(o, "dev_major", json_object_new_int64(major(run->dev)));
	add(o, "dev_minor", json_object_new_int64(minor(run->dev)));
	add(o, "inode", u64(run->ino));
	add(o, "size", u64(run->lay.size));
}

/* One item per lock, in file order. */
static json_object *json_locks(const struct lb_run *run)
{
	const struct lb_config *cfg = run->cfg;
	const struct lb_lockstat *ls = lock_totals(run);
	json_object *arr;
	char name[32];

	arr = json_object_new_array();
	for (unsigned i = 0; i < run->nstat; i++) {
		json_object *l = json_object_new_object();

		lb_lock_name(run, i, name, sizeof(name));
		add(l, "name", json_object_new_string(name));
		add(l, "offset", u64(lb_lock_offset(run, i)));
		add(l, "acquires", u64(ls[i].acquires));
		add(l, "contended", u64(ls[i].contended));
		add(l, "wait_ns", u64(ls[i].wait_ns));
		add(l, "hold_ns", u64(ls[i].hold_ns));
		add(l, "hold_span_ns", u64(ls[i].hold_span_ns));
		if (cfg->lock == LB_LOCK_ADAPTIVE || cfg->lock == LB_LOCK_MUTEX)
			add(l, "slept", u64(ls[i].slept));
		if (cfg->lock == LB_LOCK_ADAPTIVE) {
			add(l, "futex_waits", u64(ls[i].futex_waits));
			add(l, "sleep_ns", u64(ls[i].sleep_ns));
		}
		if (spins(cfg))
			add(l, "spin_cpu_ns", u64(ls[i].spin_cpu_ns));
		json_object_array_add(arr, l);
	}
	return arr;
}

void lb_report_json(const struct lb_run *run)
{
	const struct lb_config *cfg = run->cfg;
	const struct lb_result *res = &run->res;
	json_object *o = json_object_new_object();
	json_object *arr, *ops, *errs;
	char name[32];

	json_config(run, o);
	add(o, "elapsed_s", secs(res->elapsed));
	add(o, "ops_per_s",
	    secs(res->elapsed > 0 ? (double)res->ops / res->elapsed : 0));
	add(o, "user_s", secs(res->user));
	add(o, "sys_s", secs(res->sys));
	add(o, "vcsw", json_object_new_int64(res->vcsw));
	add(o, "ivcsw", json_object_new_int64(res->ivcsw));
	add(o, "ops", u64(res->ops));
	add(o, "ok", u64(res->ok));
	ops = json_object_new_object();
	for (int i = 0; i < LB_OPS; i++)
		add(ops, lb_op_names[i], u64(res->opcount[i]));
	add(o, "op_counts", ops);
	add(o, "inserts", u64(res->inserts));
	add(o, "deletes", u64(res->deletes));
	add(o, "records", u64(res->records));
	add(o, "free_records", u64(res->free_records));
	add(o, "allocs", u64(res->allocs));
	add(o, "frees", u64(res->frees));
	add(o, "io_reads", u64(res->io_reads));
	add(o, "io_writes", u64(res->io_writes));
	add(o, "io_read_bytes", u64(res->io_read_bytes));
	add(o, "io_write_bytes", u64(res->io_write_bytes));

	add(o, "acquires", u64(res->acquires));
	add(o, "contended", u64(res->contended));
	add(o, "wait_ns", u64(res->wait_ns));
	add(o, "slept", u64(res->slept));
	add(o, "futex_waits", u64(res->futex_waits));
	add(o, "sleep_ns", u64(res->sleep_ns));
	add(o, "spin_cpu_ns", u64(res->spin_cpu_ns));
	add(o, "hold_ns", u64(res->hold_ns));
	add(o, "hold_span_ns", u64(res->hold_span_ns));
	add(o, "wait_p50_ns", u64(res->wait_p50));
	add(o, "wait_p99_ns", u64(res->wait_p99));
	add(o, "wait_max_ns", u64(res->wait_max));

	add(o, "kills", u64(res->kills));
	add(o, "repairs", u64(res->repairs + res->check_repairs));
	add(o, "check_repairs", u64(res->check_repairs));
	add(o, "owner_dead", u64(res->owner_dead + res->check_owner_dead));

	arr = json_object_new_array();
	for (long i = 0; i < cfg->procs; i++)
		json_object_array_add(arr, json_object_new_int(run->ws[i].pid));
	add(o, "pids", arr);

	add(o, "locks", json_locks(run));
	lb_tdb_report_json(run, o);

	add(o, "check",
	    json_object_new_string(res->stuck		       ? "STUCK" :
				   res->failed || res->nerrors ? "FAILED" :
								 "OK"));
	errs = json_object_new_array();
	for (unsigned i = 0; i < res->nerrors && i < 8; i++)
		json_object_array_add(errs,
				      json_object_new_string(res->errors[i]));
	add(o, "errors", errs);
	if (res->stuck) {
		json_object *s = json_object_new_object();

		lb_lock_name(run, run->sh->stuck_lock, name, sizeof(name));
		add(s, "name", json_object_new_string(name));
		add(s, "offset", u64(lb_lock_offset(run, run->sh->stuck_lock)));
		add(s, "holder", json_object_new_int(run->sh->stuck_holder));
		add(o, "stuck", s);
		stuck_message(run, stderr);
	}
	for (unsigned i = 0; i < res->nerrors && i < 8; i++)
		fprintf(stderr, "lockbench: check: %s\n", res->errors[i]);

	puts(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	fflush(stdout);
	json_object_put(o);
}
