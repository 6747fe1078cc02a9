// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * How long the screen takes to draw one frame of a big snapshot: N
 * synthetic locks (default 10,000), a few hundred processes and files, a
 * deadlock. ncurses writes to /dev/null; keys come through a pipe, so
 * every view, the detail and the help are drawn too.
 *
 *   bench-frame [-n LOCKS] [-f FRAMES] [-s COLSxROWS] [--max-ms MS]
 *
 * Prints the mean and worst frame time; with --max-ms, fails when the
 * mean is above it.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "screen.h"

/* A deterministic mix of figures, so that runs compare. */
static uint64_t rnd(uint64_t *state)
{
	*state ^= *state << 13;
	*state ^= *state >> 7;
	*state ^= *state << 17;
	return *state;
}

static void fill_figures(struct lt_figures *f, uint64_t *st, uint64_t scale)
{
	int b;

	f->waits = rnd(st) % (1000 * scale) + 1;
	f->wait_ns = f->waits * (rnd(st) % 100000 + 1000);
	f->max_wait_ns = f->wait_ns / f->waits * 4;
	f->acquires = f->waits * 3;
	f->contended = f->waits;
	f->hold_ns = f->wait_ns / 2;
	for (b = 8; b < 24; b++) {
		f->wait_hist[b] = rnd(st) % 100;
		f->hold_hist[b] = rnd(st) % 100;
	}
}

struct synth {
	struct lt_snapshot snap;
	struct lt_lock *locks;
	struct lt_proc *procs;
	struct lt_file *files;
	pid_t *pids;
	struct lt_probe_cost probes[3];
	struct lt_deadlock deadlock;
};

/* Lock i of the synthetic snapshot. */
static void make_lock(struct synth *sy, size_t i, uint64_t *st)
{
	static const enum lt_kind kinds[] = { LT_KIND_FUTEX, LT_KIND_FCNTL,
					      LT_KIND_OFD, LT_KIND_FLOCK,
					      LT_KIND_FUTEX_PI };
	struct lt_lock *l = &sy->locks[i];

	l->id = i + 1;
	snprintf(l->name, sizeof(l->name), "/srv/data/table-%zu.tdb+0x%zx",
		 i % 37, 0x1000 + i * 64);
	snprintf(l->key, sizeof(l->key), "futex:%.100s", l->name);
	l->kind = kinds[i % 5];
	l->address = 0x7f0000000000ULL + i * 64;
	l->pids = sy->pids;
	l->n_pids = 1 + i % 8;
	snprintf(l->comm, sizeof(l->comm), "worker");
	l->waiters_now = (unsigned int)(i % 3);
	l->holder = (pid_t)(1000 + i % 8);
	snprintf(l->holder_comm, sizeof(l->holder_comm), "worker");
	l->n_waiters = 2;
	l->waiters[0] = (struct lt_party){ 1000, "worker", 10, 1000 };
	l->waiters[1] = (struct lt_party){ 1001, "worker", 5, 500 };
	l->n_holders = 1;
	l->holders[0] = (struct lt_party){ 1002, "worker", 7, 700 };
	l->stack = i % 2 ? "worker_loop+0x42\nmain+0x10" : NULL;
	fill_figures(&l->delta, st, 1);
	fill_figures(&l->total, st, 100);
}

static int make_snapshot(struct synth *sy, size_t n_locks)
{
	size_t n_procs = 300, n_files = 100, i;
	uint64_t st = 0x9e3779b97f4a7c15ULL;

	sy->locks = calloc(n_locks ? n_locks : 1, sizeof(*sy->locks));
	sy->procs = calloc(n_procs, sizeof(*sy->procs));
	sy->files = calloc(n_files, sizeof(*sy->files));
	sy->pids = calloc(8, sizeof(*sy->pids));
	if (!sy->locks || !sy->procs || !sy->files || !sy->pids)
		return -ENOMEM;
	for (i = 0; i < 8; i++)
		sy->pids[i] = (pid_t)(1000 + i);
	for (i = 0; i < n_locks; i++)
		make_lock(sy, i, &st);
	for (i = 0; i < n_procs; i++) {
		struct lt_proc *p = &sy->procs[i];

		p->pid = (pid_t)(1000 + i);
		snprintf(p->comm, sizeof(p->comm), "worker-%zu", i);
		p->top_lock = i % (n_locks ? n_locks : 1) + 1;
		p->delta.waits = rnd(&st) % 1000 + 1;
		p->delta.wait_ns = p->delta.waits * 12345;
		p->delta.io_count = rnd(&st) % 100;
		p->delta.io_ns = p->delta.io_count * 5000;
		p->total = p->delta;
	}
	for (i = 0; i < n_files; i++) {
		struct lt_file *f = &sy->files[i];

		snprintf(f->name, sizeof(f->name), "/srv/data/table-%zu.tdb",
			 i);
		f->ino = i + 1;
		f->delta.reads = rnd(&st) % 1000 + 1;
		f->delta.writes = rnd(&st) % 100;
		f->delta.read_bytes = f->delta.reads * 4096;
		f->delta.io_ns = f->delta.reads * 3000;
		f->delta.io_hist[12] = f->delta.reads;
		f->total = f->delta;
	}
	for (i = 0; i < 3; i++) {
		snprintf(sy->probes[i].name, sizeof(sy->probes[i].name),
			 "probe%zu", i);
		sy->probes[i].delta_cnt = 100000;
		sy->probes[i].delta_ns = 30000000;
	}
	sy->deadlock.n = 2;
	sy->deadlock.pids[0] = 1000;
	sy->deadlock.pids[1] = 1001;
	snprintf(sy->deadlock.comms[0], LT_COMM_SIZE, "worker");
	snprintf(sy->deadlock.comms[1], LT_COMM_SIZE, "worker");
	sy->deadlock.locks[0] = 1;
	sy->deadlock.locks[1] = 2;

	sy->snap.time = 1767225600;
	sy->snap.interval_s = 1;
	sy->snap.elapsed_s = 60;
	sy->snap.drops_delta = 3;
	sy->snap.events_delta = 300000;
	sy->snap.cpu_percent = 2.5;
	sy->snap.kind_delta[LT_KIND_FUTEX].waits = 12345;
	sy->snap.kind_delta[LT_KIND_FUTEX].wait_ns = 400000000;
	sy->snap.io_hist_delta[12] = 1000;
	sy->snap.io_hist_delta[20] = 10;
	sy->snap.n_locks = n_locks;
	sy->snap.locks = sy->locks;
	sy->snap.n_procs = n_procs;
	sy->snap.procs = sy->procs;
	sy->snap.n_files = n_files;
	sy->snap.files = sy->files;
	sy->snap.n_probes = 3;
	sy->snap.probes = sy->probes;
	sy->snap.n_deadlocks = 1;
	sy->snap.deadlocks = &sy->deadlock;
	return 0;
}

/* Sends keys as if typed, and lets the screen read them. */
static void type(struct screen *sc, int fd, const char *keys)
{
	if (write(fd, keys, strlen(keys)) != (ssize_t)strlen(keys))
		return;
	screen_keys(sc);
}

int main(int argc, char **argv)
{
	struct screen_opts so = { .source = "synthetic",
				  .delay_ms = 1000,
				  .color = true };
	size_t n_locks = 10000;
	int frames = 200, cols = 200, rows = 50, i, keys[2], ret = 1;
	double max_ms = 0, worst = 0, t, total = 0;
	uint64_t t0;
	struct synth sy = { 0 };
	struct screen *sc;
	FILE *in, *out;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-n") && i + 1 < argc)
			n_locks = strtoul(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "-f") && i + 1 < argc)
			frames = atoi(argv[++i]);
		else if (!strcmp(argv[i], "-s") && i + 1 < argc)
			sscanf(argv[++i], "%dx%d", &cols, &rows);
		else if (!strcmp(argv[i], "--max-ms") && i + 1 < argc)
			max_ms = strtod(argv[++i], NULL);
		else {
			fprintf(stderr,
				"usage: bench-frame [-n LOCKS] [-f FRAMES] "
				"[-s COLSxROWS] [--max-ms MS]\n");
			return 2;
		}
	}
	if (make_snapshot(&sy, n_locks)) {
		fprintf(stderr, "bench-frame: out of memory\n");
		goto out;
	}
	setenv("TERM", "xterm-256color", 0);
	if (pipe(keys)) {
		perror("pipe");
		goto out;
	}
	in = fdopen(keys[0], "r");
	out = fopen("/dev/null", "w");
	if (!in || !out) {
		perror("bench-frame");
		goto out;
	}
	sc = screen_open(&so, in, out);
	if (!sc) {
		fprintf(stderr, "bench-frame: no terminal\n");
		goto out;
	}
	screen_resize(sc, rows, cols);

	for (i = 0; i < frames; i++) {
		t0 = lt_mono_ns();
		screen_update(sc, &sy.snap);
		t = (lt_mono_ns() - t0) / 1e6;
		total += t;
		if (t > worst)
			worst = t;
	}
	/* Every view, a sort, the detail, help and filters, once each. */
	type(sc, keys[1], "\t\t\t\t>>>I");
	type(sc, keys[1], "\r");
	type(sc, keys[1], "\033[B\033[B\033");
	type(sc, keys[1], "t?x/table-3\rk");
	type(sc, keys[1], "p1003\rc\033OS\033[B\r");
	screen_resize(sc, 15, 60);
	screen_resize(sc, 8, 30);
	screen_resize(sc, rows, cols);
	screen_close(sc);
	fclose(in);
	fclose(out);
	close(keys[1]);

	printf("frame with %zu locks at %dx%d: mean %.3f ms, worst %.3f ms "
	       "over %d frames\n",
	       n_locks, cols, rows, total / frames, worst, frames);
	ret = max_ms > 0 && total / frames > max_ms ? 1 : 0;
	if (ret)
		fprintf(stderr, "bench-frame: mean above %.1f ms\n", max_ms);
out:
	free(sy.locks);
	free(sy.procs);
	free(sy.files);
	free(sy.pids);
	return ret;
}
