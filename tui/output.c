// SPDX-License-Identifier: GPL-2.0-or-later
/* Batch output: the data comes from a snapshot, this file only formats it. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <json-c/json.h>
#include "columns.h"
#include "output.h"
#include "record.h"

int output_rank(const struct output_opts *o, const struct lt_snapshot *s,
		bool totals, bool text, const struct lt_lock ***rows,
		size_t *n_rows, size_t *n_all)
{
	/* Text tables leave out the rows whose columns would all be
	 * zero; JSON keeps every lock with activity. */
	struct lt_view v = { .totals = totals,
			     .all_kinds = o->all_kinds,
			     .members = o->members,
			     .waited_only = text };
	size_t want = o->limit ? o->limit : lt_snapshot_rows(s);

	if (want > lt_snapshot_rows(s))
		want = lt_snapshot_rows(s);
	/* A bounded selection: sorting every lock would cost more than
	 * reading them when only the top few are shown. */
	*rows = calloc(want ? want : 1, sizeof(**rows));
	if (!*rows)
		return -ENOMEM;
	*n_all = lt_snapshot_shown(s, &v, want, *rows, NULL);
	*n_rows = *n_all < want ? *n_all : want;
	return 0;
}

static json_object *j_u64(uint64_t v)
{
	return json_object_new_uint64(v);
}

/* A fleet view's host of an item; null for one machine's. */
static json_object *j_host(const char *host)
{
	return host ? json_object_new_string(host) : NULL;
}

/* A lock's top list; a holder also names its thread (tid 0 and "" when
 * the lock is held by a process). */
static json_object *parties_json(const struct lt_party *p, size_t n,
				 bool holders)
{
	json_object *a = json_object_new_array();
	size_t i;

	for (i = 0; i < n && i < LT_TOP_PARTIES; i++) {
		json_object *o = json_object_new_object();

		json_object_object_add(o, "pid", json_object_new_int(p[i].pid));
		json_object_object_add(o, "comm",
				       json_object_new_string(p[i].comm));
		json_object_object_add(o, "count", j_u64(p[i].count));
		json_object_object_add(o, "ns", j_u64(p[i].ns));
		if (holders) {
			json_object_object_add(o, "tid",
					       json_object_new_int(p[i].tid));
			json_object_object_add(
				o, "thread",
				json_object_new_string(p[i].thread));
		}
		json_object_array_add(a, o);
	}
	return a;
}

/* The drops by reason, every reason named, 0 or not. */
static json_object *drops_json(const struct lt_snapshot *s, bool totals)
{
	json_object *o = json_object_new_object();
	unsigned int r;

	for (r = 0; r < LT_DROP_REASONS; r++)
		json_object_object_add(o, lt_drop_name(r),
				       j_u64(totals ? s->drop_total[r] :
						      s->drop_delta[r]));
	return o;
}

/* A lock site's members: each process's own row, most wait first. */
static json_object *members_json(const struct lt_snapshot *s,
				 const struct lt_lock *l, bool totals)
{
	json_object *a = json_object_new_array();
	size_t i;

	for (i = 0; i < l->n_members; i++) {
		const struct lt_lock *m = lt_snapshot_find(s, l->members[i]);
		const struct lt_figures *f;
		json_object *o;

		if (!m)
			continue;
		f = lt_lock_figures(m, totals);
		o = json_object_new_object();
		json_object_object_add(o, "id", j_u64(m->id));
		json_object_object_add(
			o, "pid",
			json_object_new_int(m->n_pids ? m->pids[0] : 0));
		json_object_object_add(o, "waits", j_u64(f->waits));
		json_object_object_add(o, "wait_ns", j_u64(f->wait_ns));
		json_object_object_add(o, "waiters_now",
				       json_object_new_int64(m->waiters_now));
		json_object_array_add(a, o);
	}
	return a;
}

/* The parts of a lock's object that hold its figures, in their order. */
enum json_part { JSON_WAIT, JSON_HOLD, JSON_EVENT };

/* The figures of one part, as figures.def lists them. */
static void figures_json(json_object *o, const struct lt_figures *f,
			 enum json_part part)
{
#define LT_FIGURE(NAME, JSON, RECORD) \
	if (part == JSON_##JSON)      \
		json_object_object_add(o, #NAME, j_u64(f->NAME));
#include "figures.def"
}

static json_object *lock_json(const struct lt_snapshot *s,
			      const struct lt_lock *l, bool totals)
{
	const struct lt_figures *f = lt_lock_figures(l, totals);
	json_object *o = json_object_new_object();
	json_object *pids = json_object_new_array();
	json_object *holder = NULL;
	char addr[32];
	size_t i;

	for (i = 0; i < l->n_pids; i++)
		json_object_array_add(pids, json_object_new_int(l->pids[i]));
	snprintf(addr, sizeof(addr), "0x%" PRIx64, l->address);
	json_object_object_add(o, "name", json_object_new_string(l->name));
	json_object_object_add(o, "host", j_host(l->host));
	json_object_object_add(o, "kind",
			       json_object_new_string(lt_kind_name(l->kind)));
	json_object_object_add(o, "pids", pids);
	figures_json(o, f, JSON_WAIT);
	json_object_object_add(o, "address", json_object_new_string(addr));
	json_object_object_add(o, "comm", json_object_new_string(l->comm));
	json_object_object_add(o, "id", j_u64(l->id));
	json_object_object_add(o, "key", json_object_new_string(l->key));
	json_object_object_add(o, "kernel_type",
			       json_object_new_string(l->kernel_type));
	json_object_object_add(o, "caller", json_object_new_string(l->caller));
	json_object_object_add(o, "p99_wait_ns",
			       j_u64(lt_wait_quantile(f, 0.99)));
	figures_json(o, f, JSON_HOLD);
	json_object_object_add(o, "waiters_now",
			       json_object_new_int64(l->waiters_now));
	json_object_object_add(o, "spinning_now",
			       json_object_new_int64(l->spinning_now));
	if (l->holder) {
		holder = json_object_new_object();
		json_object_object_add(holder, "pid",
				       json_object_new_int(l->holder));
		json_object_object_add(holder, "comm",
				       json_object_new_string(l->holder_comm));
		json_object_object_add(holder, "tid",
				       json_object_new_int(l->holder_tid));
		json_object_object_add(
			holder, "thread",
			json_object_new_string(l->holder_thread));
	}
	json_object_object_add(o, "holder", holder);
	json_object_object_add(o, "holders",
			       parties_json(l->holders, l->n_holders, true));
	json_object_object_add(o, "waiters",
			       parties_json(l->waiters, l->n_waiters, false));
	figures_json(o, f, JSON_EVENT);
	json_object_object_add(
		o, "stack", l->stack ? json_object_new_string(l->stack) : NULL);
	json_object_object_add(o, "release_stacks", record_releases_json(l));
	json_object_object_add(o, "procs",
			       json_object_new_int64(l->procs ? l->procs : 1));
	json_object_object_add(o, "members", members_json(s, l, totals));
	return o;
}

static json_object *kinds_json(const struct lt_snapshot *s, bool totals)
{
	struct lt_kind_figures sum[LT_KIND_NR];
	json_object *o = json_object_new_object();
	int k;

	lt_snapshot_kinds(s, totals, sum);
	for (k = 0; k < LT_KIND_NR; k++) {
		json_object *v = json_object_new_object();

		json_object_object_add(v, "waits", j_u64(sum[k].waits));
		json_object_object_add(v, "wait_ns", j_u64(sum[k].wait_ns));
		json_object_object_add(o, lt_kind_name(k), v);
	}
	return o;
}

static json_object *procs_json(const struct lt_snapshot *s, bool totals)
{
	json_object *a = json_object_new_array();
	size_t i;

	for (i = 0; i < s->n_procs; i++) {
		const struct lt_proc *p = &s->procs[i];
		const struct lt_proc_figures *f = totals ? &p->total :
							   &p->delta;
		json_object *o;

		if (!f->waits && !f->io_count)
			continue;
		o = json_object_new_object();
		json_object_object_add(o, "pid", json_object_new_int(p->pid));
		json_object_object_add(o, "comm",
				       json_object_new_string(p->comm));
		json_object_object_add(o, "waits", j_u64(f->waits));
		json_object_object_add(o, "wait_ns", j_u64(f->wait_ns));
		json_object_object_add(o, "io_count", j_u64(f->io_count));
		json_object_object_add(o, "io_ns", j_u64(f->io_ns));
		json_object_object_add(o, "top_lock", j_u64(p->top_lock));
		json_object_object_add(o, "host", j_host(p->host));
		json_object_array_add(a, o);
	}
	return a;
}

static json_object *files_json(const struct lt_snapshot *s, bool totals)
{
	json_object *a = json_object_new_array();
	size_t i;

	for (i = 0; i < s->n_files; i++) {
		const struct lt_file *fl = &s->files[i];
		const struct lt_file_figures *f = totals ? &fl->total :
							   &fl->delta;
		json_object *o;

		if (!f->reads && !f->writes)
			continue;
		o = json_object_new_object();
		json_object_object_add(o, "name",
				       json_object_new_string(fl->name));
		json_object_object_add(o, "host", j_host(fl->host));
		json_object_object_add(o, "dev", j_u64(fl->dev));
		json_object_object_add(o, "ino", j_u64(fl->ino));
		json_object_object_add(o, "reads", j_u64(f->reads));
		json_object_object_add(o, "writes", j_u64(f->writes));
		json_object_object_add(o, "read_bytes", j_u64(f->read_bytes));
		json_object_object_add(o, "write_bytes", j_u64(f->write_bytes));
		json_object_object_add(o, "io_ns", j_u64(f->io_ns));
		json_object_object_add(o, "io_under_lock_ns",
				       j_u64(f->io_under_lock_ns));
		json_object_object_add(o, "p99_io_ns",
				       j_u64(lt_hist_quantile(f->io_hist,
							      LT_HIST_BUCKETS,
							      0.99)));
		json_object_array_add(a, o);
	}
	return a;
}

static json_object *probes_json(const struct lt_snapshot *s, bool totals)
{
	json_object *o = json_object_new_object();
	json_object *progs = json_object_new_array();
	uint64_t cnt = 0, ns = 0;
	size_t i;

	for (i = 0; i < s->n_probes; i++) {
		const struct lt_probe_cost *p = &s->probes[i];
		json_object *po = json_object_new_object();
		uint64_t c = totals ? p->run_cnt : p->delta_cnt;
		uint64_t n = totals ? p->run_ns : p->delta_ns;

		cnt += c;
		ns += n;
		json_object_object_add(po, "name",
				       json_object_new_string(p->name));
		json_object_object_add(po, "runs", j_u64(c));
		json_object_object_add(po, "run_ns", j_u64(n));
		json_object_object_add(po, "ns_per_run",
				       json_object_new_double(p->ns_per_run));
		json_object_object_add(po, "sampled_runs",
				       j_u64(p->sampled_cnt));
		json_object_object_add(po, "sampled_ns", j_u64(p->sampled_ns));
		json_object_array_add(progs, po);
	}
	json_object_object_add(
		o, "events", j_u64(totals ? s->events_total : s->events_delta));
	json_object_object_add(
		o, "ns_per_event",
		json_object_new_double(cnt ? (double)ns / (double)cnt : 0));
	/* The summary's share is over the whole run, like its events. */
	json_object_object_add(
		o, "cpu_percent",
		json_object_new_double(
			!totals		 ? s->cpu_percent :
			s->elapsed_s > 0 ? (double)ns / (s->elapsed_s * 1e7) :
					   0));
	json_object_object_add(o, "floor_ns",
			       json_object_new_double(s->probe_floor_ns));
	json_object_object_add(o, "clock_ns",
			       json_object_new_double(s->clock_ns));
	json_object_object_add(o, "programs", progs);
	return o;
}

static json_object *deadlocks_json(const struct lt_snapshot *s)
{
	json_object *a = json_object_new_array();
	size_t d, m;

	for (d = 0; d < s->n_deadlocks; d++) {
		const struct lt_deadlock *dl = &s->deadlocks[d];
		json_object *members = json_object_new_array();
		json_object *o = json_object_new_object();

		for (m = 0; m < dl->n && m < LT_CYCLE_MAX; m++) {
			json_object *mo = json_object_new_object();
			const struct lt_lock *l =
				lt_snapshot_find(s, dl->locks[m]);
			const char *name = l ? l->name : "";
			json_object_object_add(
				mo, "pid", json_object_new_int(dl->pids[m]));
			json_object_object_add(
				mo, "comm",
				json_object_new_string(dl->comms[m]));
			json_object_object_add(mo, "lock", j_u64(dl->locks[m]));
			json_object_object_add(mo, "lock_name",
					       json_object_new_string(name));
			json_object_array_add(members, mo);
		}
		json_object_object_add(o, "members", members);
		json_object_object_add(o, "host", j_host(dl->host));
		json_object_array_add(a, o);
	}
	return a;
}

/* A fleet view's hosts, each up or down; empty for one machine. */
static json_object *hosts_json(const struct lt_snapshot *s, bool totals)
{
	json_object *a = json_object_new_array();
	size_t i;

	for (i = 0; i < s->n_hosts; i++) {
		const struct lt_host *h = &s->hosts[i];
		const struct lt_kind_figures *f = totals ? &h->total :
							   &h->delta;
		json_object *o = json_object_new_object();

		json_object_object_add(o, "name",
				       json_object_new_string(h->name));
		json_object_object_add(o, "state",
				       json_object_new_string(h->up ? "up" :
								      "down"));
		json_object_object_add(o, "why",
				       json_object_new_string(h->why));
		json_object_object_add(o, "down_since",
				       json_object_new_double(h->down_since));
		json_object_object_add(o, "locks", j_u64(h->n_locks));
		json_object_object_add(o, "waits", j_u64(f->waits));
		json_object_object_add(o, "wait_ns", j_u64(f->wait_ns));
		json_object_object_add(o, "deadlocks", j_u64(h->n_deadlocks));
		json_object_array_add(a, o);
	}
	return a;
}

static int emit_json(const struct output_opts *o, const struct lt_snapshot *s,
		     bool totals, int exit_status)
{
	json_object *root = json_object_new_object();
	json_object *locks = json_object_new_array();
	const struct lt_lock **rows;
	size_t n, all, i;
	int ret;

	ret = output_rank(o, s, totals, false, &rows, &n, &all);
	if (ret) {
		json_object_put(root);
		json_object_put(locks);
		return ret;
	}
	for (i = 0; i < n; i++)
		json_object_array_add(locks, lock_json(s, rows[i], totals));
	free(rows);

	json_object_object_add(root, "time", json_object_new_double(s->time));
	json_object_object_add(root, "interval_s",
			       json_object_new_double(totals ? s->elapsed_s :
							       s->interval_s));
	json_object_object_add(root, "drops",
			       json_object_new_uint64(totals ? s->drops_total :
							       s->drops_delta));
	json_object_object_add(root, "drop_reasons", drops_json(s, totals));
	json_object_object_add(root, "locks", locks);
	json_object_object_add(root, "lock_entries", j_u64(s->lock_entries));
	json_object_object_add(root, "lock_rows", j_u64(s->n_locks));
	json_object_object_add(root, "lock_capacity", j_u64(s->lock_capacity));
	json_object_object_add(root, "file_entries", j_u64(s->file_entries));
	json_object_object_add(root, "file_capacity", j_u64(s->file_capacity));
	json_object_object_add(root, "party_entries", j_u64(s->party_entries));
	json_object_object_add(root, "party_capacity",
			       j_u64(s->party_capacity));
	json_object_object_add(root, "folding",
			       json_object_new_boolean(s->folding));
	json_object_object_add(root, "file_io",
			       json_object_new_string(s->io_off ? "off" :
								  "traced"));
	json_object_object_add(
		root, "kernel_spinlocks",
		json_object_new_string(lt_kspins_name(s->kernel_spins)));
	json_object_object_add(
		root, "kernel_spinlocks_why",
		json_object_new_string(
			s->kernel_spins_why ? s->kernel_spins_why : ""));
	json_object_object_add(root, "spin_sampler",
			       json_object_new_string(s->spin_sampler ?
							      s->spin_sampler :
							      "off"));
	json_object_object_add(
		root, "spin_sampler_s",
		json_object_new_double(totals ? s->spin_sampler_total_s :
						s->spin_sampler_delta_s));
	json_object_object_add(root, "kinds", kinds_json(s, totals));
	json_object_object_add(root, "procs", procs_json(s, totals));
	json_object_object_add(root, "files", files_json(s, totals));
	json_object_object_add(root, "probes", probes_json(s, totals));
	json_object_object_add(root, "deadlocks", deadlocks_json(s));
	json_object_object_add(root, "hosts", hosts_json(s, totals));
	if (totals) {
		json_object_object_add(root, "final",
				       json_object_new_boolean(1));
		json_object_object_add(root, "elapsed_s",
				       json_object_new_double(s->elapsed_s));
		if (exit_status >= 0)
			json_object_object_add(
				root, "exit_status",
				json_object_new_int(exit_status));
	}
	if (fprintf(o->out, "%s\n",
		    json_object_to_json_string_ext(root,
						   JSON_C_TO_STRING_PLAIN)) < 0)
		ret = -errno;
	json_object_put(root);
	return ret;
}

/*
 * One line of cells under batch_cols: their widths and alignment; where
 * rows come from hosts (host_w > 0) the host first, the last column
 * taking the rest of the line.
 */
static void print_cells(FILE *out, int host_w, const char *const cell[BC_NR])
{
	int i;

	if (host_w)
		fprintf(out, "%-*.*s ", host_w, host_w,
			cell[BC_HOST] ? cell[BC_HOST] : "");
	for (i = 0; i < BC_NR; i++) {
		const struct column *c = &batch_cols[i];
		const char *sep = !i ? "" : i == BC_PROC ? "  " : " ";

		if (c->fleet)
			continue;
		if (i == BC_PROC)
			fprintf(out, "%s%s", sep, cell[i]);
		else if (c->text)
			fprintf(out, "%s%-*.*s", sep, c->width, c->width,
				cell[i]);
		else
			fprintf(out, "%s%*s", sep, c->width, cell[i]);
	}
	fputc('\n', out);
}

static void print_head(FILE *out, int host_w)
{
	const char *cell[BC_NR];
	int i;

	for (i = 0; i < BC_NR; i++)
		cell[i] = batch_cols[i].title;
	print_cells(out, host_w, cell);
}

static void print_row(FILE *out, int host_w, const struct lt_lock *l,
		      bool totals)
{
	const struct lt_figures *f = lt_lock_figures(l, totals);
	char waits[24], total[16], avg[16], max[16], proc[48];
	char name[LT_NAME_LEN + 32];
	const char *cell[BC_NR] = {
		[BC_NAME] = lt_lock_label_fit(l, name, sizeof(name),
					      batch_cols[BC_NAME].width),
		[BC_KIND] = lt_kind_name(l->kind),
		[BC_WAITS] = waits,
		[BC_WAIT] = total,
		[BC_AVG] = avg,
		[BC_MAX] = max,
		[BC_PROC] = proc,
		[BC_HOST] = l->host,
	};

	snprintf(waits, sizeof(waits), "%" PRIu64, f->waits);
	lt_format_ns(f->wait_ns, total, sizeof(total));
	lt_format_ns(f->waits ? f->wait_ns / f->waits : 0, avg, sizeof(avg));
	/* Waits that took no time: a source that keeps no maximum. */
	if (f->waits && !f->max_wait_ns)
		snprintf(max, sizeof(max), "-");
	else
		lt_format_ns(f->max_wait_ns, max, sizeof(max));
	/* A fleet's series names no process. */
	if (!l->n_pids && !l->comm[0])
		snprintf(proc, sizeof(proc), "-");
	else
		snprintf(proc, sizeof(proc), "%s/%d", l->comm,
			 l->n_pids ? l->pids[0] : 0);
	if (l->n_pids > 1)
		snprintf(proc + strlen(proc), sizeof(proc) - strlen(proc),
			 " +%zu", l->n_pids - 1);
	print_cells(out, host_w, cell);
}

static int emit_text(const struct output_opts *o, const struct lt_snapshot *s,
		     bool totals, int exit_status)
{
	FILE *out = o->out;
	const struct lt_lock **rows;
	char when[32];
	time_t t = (time_t)s->time;
	struct tm tm;
	size_t n, shown, i;
	int ret;

	ret = output_rank(o, s, totals, true, &rows, &shown, &n);
	if (ret)
		return ret;
	strftime(when, sizeof(when), "%H:%M:%S", localtime_r(&t, &tm));
	if (totals) {
		fprintf(out,
			"locktop summary - %s - whole run %.2fs - %zu "
			"lock%s active - drops %" PRIu64,
			when, s->elapsed_s, n, n == 1 ? "" : "s",
			s->drops_total);
		if (exit_status >= 0)
			fprintf(out, " - command exit status %d", exit_status);
		fputc('\n', out);
	} else {
		fprintf(out,
			"locktop - %s - interval %.2fs - %zu lock%s "
			"active - drops %" PRIu64 "\n",
			when, s->interval_s, n, n == 1 ? "" : "s",
			s->drops_delta);
	}
	for (i = 0; i < s->n_hosts; i++) {
		char line[256];

		col_host_line(&s->hosts[i], totals, line, sizeof(line));
		fprintf(out, "host %s\n", line);
	}
	print_head(out, col_host_width(s));
	for (i = 0; i < shown; i++)
		print_row(out, col_host_width(s), rows[i], totals);
	if (shown < n)
		fprintf(out, "... %zu more (--limit 0 shows all)\n", n - shown);
	fputc('\n', out);
	free(rows);
	return fflush(out) ? -errno : 0;
}

int output_interval(const struct output_opts *o, const struct lt_snapshot *s)
{
	int ret = o->json ? emit_json(o, s, false, -1) :
			    emit_text(o, s, false, -1);

	if (!ret && fflush(o->out))
		ret = -errno;
	return ret;
}

int output_final(const struct output_opts *o, const struct lt_snapshot *s,
		 int exit_status)
{
	int ret = o->json ? emit_json(o, s, true, exit_status) :
			    emit_text(o, s, true, exit_status);

	if (!ret && fflush(o->out))
		ret = -errno;
	return ret;
}
