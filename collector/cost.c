// SPDX-License-Identifier: LGPL-2.1-or-later
/* The probes' own cost, from sampling windows of the kernel's statistics. */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "state.h"
#include "futex.skel.h"
#include "filelock.skel.h"
#include "fileio.skel.h"
#include "spin.skel.h"
#include "reader.skel.h"
#include "klock.skel.h"

/* What the kernel's statistics say of obj's programs, summed. */
static void prog_stats(struct bpf_object *obj, uint64_t *cnt, uint64_t *ns)
{
	struct bpf_program *prog;

	*cnt = *ns = 0;
	if (!obj)
		return; /* a probe object not loaded */
	bpf_object__for_each_program(prog, obj) {
		struct bpf_prog_info info = { 0 };
		__u32 len = sizeof(info);
		int fd = bpf_program__fd(prog);

		if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len))
			continue;
		*cnt += info.run_cnt;
		*ns += info.run_time_ns;
	}
}

/* The probe objects, in enum lt_probe_obj order; NULL: not loaded. */
static void objects(struct lt_collector *c, struct bpf_object **objs)
{
	objs[PROBE_FUTEX] = c->obj.futex->obj;
	objs[PROBE_FILELOCK] = c->obj.filelock->obj;
	objs[PROBE_FILEIO] = c->obj.fileio->obj;
	objs[PROBE_KERNEL] = c->obj.klock ? c->obj.klock->obj : NULL;
	objs[PROBE_SPIN] = c->obj.spin->obj;
	objs[PROBE_USDT] = usdt_object(c);
}

/* The runs each probe object counted, summed over CPUs. */
static void read_runs(struct lt_collector *c, uint64_t *runs)
{
	memset(runs, 0, LT_OBJ_NR * sizeof(*runs));
	mapio_counter_sums(c, bpf_map__fd(c->obj.futex->maps.runs), LT_OBJ_NR,
			   runs);
}

/*
 * The statistics' sampling windows. One opens when the probes load and
 * then at every LT_STATS_EVERYth read, LT_STATS_GAP_S after the last at
 * the earliest. It closes once it measured enough runs (see
 * cost_window_close()), after LT_STATS_WINDOW_MS at least and a second at
 * most, so the statistics are on a few percent of the time. The kernel
 * keeps them on while anyone holds a descriptor; closing ours restores
 * what was there.
 */
void cost_window_open(struct lt_collector *c)
{
	struct bpf_object *objs[PROBE_NR];
	size_t i;

	if (c->cost.stats_fd < 0)
		c->cost.stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	if (c->cost.stats_fd < 0)
		return;
	objects(c, objs);
	for (i = 0; i < PROBE_NR; i++)
		prog_stats(objs[i], &c->cost.win_cnt[i], &c->cost.win_ns[i]);
	c->cost.win_opened = lt_mono_ns();
}

/*
 * What the open window measured so far becomes each object's cost per
 * run; when the window closes (final), it joins the sampled totals.
 */
static void window_take(struct lt_collector *c, bool final)
{
	struct bpf_object *objs[PROBE_NR];
	uint64_t cnt, ns;
	size_t i;

	objects(c, objs);
	for (i = 0; i < PROBE_NR; i++) {
		struct lt_probe_cost *pc = &c->cost.probes[i];

		prog_stats(objs[i], &cnt, &ns);
		if (cnt <= c->cost.win_cnt[i])
			continue;
		cnt -= c->cost.win_cnt[i];
		ns -= c->cost.win_ns[i];
		/* A few runs do not replace a figure from many. */
		if (cnt >= LT_STATS_MIN_RUNS || cnt >= c->cost.measured[i]) {
			pc->ns_per_run = (double)ns / (double)cnt;
			c->cost.measured[i] = cnt;
		}
		pc->sampled_cnt = c->cost.closed_cnt[i] + cnt;
		pc->sampled_ns = c->cost.closed_ns[i] + ns;
		if (final) {
			c->cost.closed_cnt[i] += cnt;
			c->cost.closed_ns[i] += ns;
		}
	}
}

/*
 * Closes the open window once it has measured runs for a while: a run
 * that is the first of many is a cold one, so the window waits until the
 * busiest probe object has LT_STATS_MIN_RUNS measured runs, or a second
 * has passed. The others are measured on what they did meanwhile.
 */
void cost_window_close(struct lt_collector *c)
{
	struct bpf_object *objs[PROBE_NR];
	uint64_t age = lt_mono_ns() - c->cost.win_opened, cnt, ns, most = 0;
	size_t i;

	if (c->cost.stats_fd < 0 || age < LT_STATS_WINDOW_MS * 1000000ULL)
		return;
	objects(c, objs);
	for (i = 0; i < PROBE_NR; i++) {
		prog_stats(objs[i], &cnt, &ns);
		if (cnt - c->cost.win_cnt[i] > most)
			most = cnt - c->cost.win_cnt[i];
	}
	if (!most || (most < LT_STATS_MIN_RUNS && age < 1000000000ULL))
		return;
	window_take(c, true);
	close(c->cost.stats_fd);
	c->cost.stats_fd = -1;
	c->cost.win_closed = lt_mono_ns();
}

/*
 * Between reads, and at a read: an object whose cost was measured on too
 * few runs (the probes loaded on an idle host: a few cold runs, many
 * times dearer than warm ones) and that has become busy is measured
 * again at once, so the interval that finds it busy is charged at its
 * warm cost, even when a thin window closed just before. Once per object
 * between two regular windows: one that stays thin (busy, but never the
 * busiest while a window is open) waits for those.
 */
void cost_window_retry(struct lt_collector *c)
{
	uint64_t runs[LT_OBJ_NR];
	bool busy = false;
	size_t i;

	if (c->cost.stats_fd >= 0)
		return;
	/* Most of the time every figure stands: nothing to read. */
	for (i = 0; i < PROBE_NR; i++)
		if (c->cost.measured[i] < LT_STATS_MIN_RUNS &&
		    !c->cost.retried[i])
			break;
	if (i == PROBE_NR)
		return;
	read_runs(c, runs);
	for (i = 0; i < PROBE_NR; i++) {
		if (c->cost.measured[i] >= LT_STATS_MIN_RUNS ||
		    c->cost.retried[i] ||
		    runs[i] - c->cost.probes[i].run_cnt < LT_STATS_MIN_RUNS)
			continue;
		c->cost.retried[i] = true;
		busy = true;
	}
	if (busy) {
		cost_window_open(c);
		c->cost.win_retry = c->cost.stats_fd >= 0;
	}
}

/*
 * A window opened again for an object measured idle that turned busy
 * (cost_window_retry()) just before this read: the read waits for it, a
 * tenth of a second at most, so the interval that found the object busy
 * is charged at the cost of its warm runs and not of the idle ones.
 */
static void retry_settle(struct lt_collector *c)
{
	struct bpf_object *objs[PROBE_NR];
	const struct timespec step = { .tv_nsec = 5000000L };
	uint64_t cnt, ns;
	bool thin;
	size_t i;

	objects(c, objs);
	while (lt_mono_ns() - c->cost.win_opened <
	       LT_STATS_WINDOW_MS * 1000000ULL) {
		thin = false;
		for (i = 0; i < PROBE_NR; i++) {
			if (!c->cost.retried[i] ||
			    c->cost.measured[i] >= LT_STATS_MIN_RUNS)
				continue;
			prog_stats(objs[i], &cnt, &ns);
			if (cnt - c->cost.win_cnt[i] < LT_STATS_MIN_RUNS)
				thin = true;
		}
		if (!thin)
			return;
		nanosleep(&step, NULL);
	}
}

void cost_read(struct lt_collector *c)
{
	uint64_t runs[LT_OBJ_NR], ns_total = 0;
	size_t i;

	/* A burst that began since the last housekeeping is measured before
	 * it is charged. */
	cost_window_retry(c);
	if (c->cost.stats_fd >= 0 && c->cost.win_retry)
		retry_settle(c);
	if (c->cost.stats_fd >= 0)
		window_take(c, false); /* the best figure so far */
	cost_window_close(c);
	read_runs(c, runs);
	c->snap.events_delta = 0;
	c->snap.events_total = 0;
	for (i = 0; i < PROBE_NR; i++) {
		struct lt_probe_cost *pc = &c->cost.probes[i];

		pc->delta_cnt = diff(runs[i], pc->run_cnt);
		pc->run_cnt = runs[i];
		pc->delta_ns =
			(uint64_t)((double)pc->delta_cnt * pc->ns_per_run);
		pc->run_ns += pc->delta_ns;
		c->snap.events_delta += pc->delta_cnt;
		c->snap.events_total += pc->run_cnt;
		ns_total += pc->delta_ns;
	}
	c->snap.cpu_percent = c->snap.interval_s > 0 ?
				      ns_total / (c->snap.interval_s * 1e7) :
				      0;
	/* Every LT_STATS_EVERY reads, and LT_STATS_GAP_S after the last. */
	if (++c->cost.stat_reads % LT_STATS_EVERY == 0 &&
	    c->cost.stats_fd < 0 &&
	    lt_mono_ns() - c->cost.win_closed >=
		    LT_STATS_GAP_S * 1000000000ULL) {
		memset(c->cost.retried, 0, sizeof(c->cost.retried));
		cost_window_open(c);
		c->cost.win_retry = false;
	}
}

#define CALIB_RUNS 300
#define CALIB_READS 16 /* clock reads per run of lt_calib_clock */

/* Mean ns per run of prog after runs test runs, from the statistics. */
static double calib_run(struct bpf_program *prog, int runs)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts);
	struct bpf_prog_info info = { 0 };
	__u32 len = sizeof(info);
	int fd = bpf_program__fd(prog), i;

	for (i = 0; i < runs; i++)
		if (bpf_prog_test_run_opts(fd, &opts))
			return 0;
	if (bpf_obj_get_info_by_fd(fd, &info, &len) || !info.run_cnt)
		return 0;
	return (double)info.run_time_ns / (double)info.run_cnt;
}

/*
 * The measuring stick: the statistics' charge for an empty program and
 * the cost of one clock read here. Virtual machines without a stable TSC
 * read the clock slowly, and every probe that times something pays it.
 */
void cost_calibrate(struct lt_collector *c)
{
	double nop, clk;

	if (c->cost.stats_fd < 0)
		return;
	nop = calib_run(c->obj.reader->progs.lt_calib_nop, CALIB_RUNS);
	clk = calib_run(c->obj.reader->progs.lt_calib_clock, CALIB_RUNS);
	c->snap.probe_floor_ns = nop;
	c->snap.clock_ns = clk > nop ? (clk - nop) / CALIB_READS : 0;
}
