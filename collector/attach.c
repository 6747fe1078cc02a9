// SPDX-License-Identifier: LGPL-2.1-or-later
/* Loading and attaching the probes, and closing them. */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "state.h"
#include "futex.skel.h"
#include "filelock.skel.h"
#include "fileio.skel.h"
#include "reader.skel.h"
#include "pidns.skel.h"
#include "klock.skel.h"
#include "spin.skel.h"

/*
 * Five probe objects (futex, filelock, fileio, klock unless kernel locks
 * are left out, and spin) count into one set of maps: the futex object
 * owns them, the others reuse its descriptors.
 */

static const char *const probe_names[PROBE_NR] = { "futex",  "filelock",
						   "fileio", "kernel",
						   "spin",   "usdt" };

static bool verbose_libbpf;

static int libbpf_print(enum libbpf_print_level level, const char *fmt,
			va_list args)
{
	(void)level;
	if (!verbose_libbpf)
		return 0;
	return vfprintf(stderr, fmt, args);
}

static int add_traced(struct lt_collector *c, pid_t pid, char *err,
		      size_t err_len)
{
	__u32 key = pid;
	__u8 one = 1;

	if (pid <= 0 || (kill(pid, 0) && errno == ESRCH)) {
		snprintf(err, err_len, "no process with PID %d", pid);
		return -ESRCH;
	}
	if (bpf_map_update_elem(bpf_map__fd(c->obj.futex->maps.traced), &key,
				&one, BPF_ANY)) {
		snprintf(err, err_len, "cannot trace PID %d: %s", pid,
			 strerror(errno));
		return -errno;
	}
	return 0;
}

/*
 * The descendants of the processes asked for that already run: those
 * forked from now on join the traced set in the fork probe, and a
 * second walk finds those forked by a descendant before the first walk
 * reached it. One that ended meanwhile is left out.
 */
static void add_descendants(struct lt_collector *c,
			    const struct lt_options *opts)
{
	char err[128];
	pid_t *found;
	size_t n, i;
	int pass;

	c->opts.n_traced = opts->n_pids;
	for (pass = 0; pass < 2 && opts->n_pids; pass++) {
		n = lt_proc_descendants(opts->pids, opts->n_pids, &found);
		for (i = opts->n_pids; i < n; i++)
			add_traced(c, found[i], err, sizeof(err));
		if (n > c->opts.n_traced)
			c->opts.n_traced = n;
		free(found);
	}
}

size_t lt_collector_traced(const struct lt_collector *c)
{
	return c->opts.n_traced;
}

#define SET_TARGETS(skel, opts, obj, ns)                               \
	do {                                                           \
		(skel)->rodata->targ_filter = (opts)->n_pids > 0;      \
		(skel)->rodata->targ_self = getpid();                  \
		(skel)->rodata->targ_stacks = (opts)->stacks;          \
		(skel)->rodata->targ_hold_exact = (opts)->exact_holds; \
		(skel)->rodata->targ_obj = (obj);                      \
		(skel)->rodata->targ_pidns_ino = (ns)->ino;            \
		(skel)->rodata->targ_pidns_level = (ns)->level;        \
	} while (0)

struct pidns {
	uint64_t ino; /* 0: the initial namespace */
	__u32 level;
};

/* The depth of our PID namespace, which only a BPF program can see. */
static int pidns_level(struct pidns *ns, char *err, size_t err_len)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts);
	struct pidns_bpf *skel = pidns_bpf__open_and_load();
	int ret;

	if (!skel) {
		ret = errno ? -errno : -EINVAL;
	} else {
		/* Run here, by this thread: the program reads its task. */
		ret = bpf_prog_test_run_opts(
			bpf_program__fd(skel->progs.lt_pidns), &opts);
		if (!ret && (skel->bss->inum != ns->ino || !skel->bss->level))
			ret = -ESRCH;
		ns->level = skel->bss->level;
		pidns_bpf__destroy(skel);
	}
	if (ret)
		snprintf(err, err_len,
			 "cannot find where this PID namespace lies: %s",
			 strerror(-ret));
	return ret;
}

/*
 * What the probes must know before they load. In a PID namespace other
 * than the initial one they name processes as it does (the traced set,
 * -p and our own PID are in its numbers, and so is its /proc).
 */
static int set_targets(struct lt_collector *c, const struct lt_options *opts,
		       char *err, size_t err_len)
{
	struct pidns ns = { 0 };
	int ret;

	ret = lt_pid_namespace(&ns.ino, err, err_len);
	if (!ret && ns.ino)
		ret = pidns_level(&ns, err, err_len);
	if (ret)
		return ret;
	SET_TARGETS(c->obj.futex, opts, LT_OBJ_FUTEX, &ns);
	SET_TARGETS(c->obj.filelock, opts, LT_OBJ_FILELOCK, &ns);
	SET_TARGETS(c->obj.fileio, opts, LT_OBJ_FILEIO, &ns);
	SET_TARGETS(c->obj.spin, opts, LT_OBJ_SPIN, &ns);
	SET_TARGETS(c->obj.reader, opts, LT_OBJ_NR, &ns);
	if (c->obj.klock)
		SET_TARGETS(c->obj.klock, opts, LT_OBJ_KERNEL, &ns);
	return 0;
}

static int load_error(char *err, size_t len, const char *what, int ret)
{
	snprintf(err, len,
		 "the kernel refused the %s probe: %s (run with -v for the "
		 "verifier's log)",
		 what, strerror(-ret));
	return ret;
}

static int attach_error(char *err, size_t len, const char *what, int ret)
{
	snprintf(err, len,
		 "cannot attach the %s probe: %s (is tracefs mounted at "
		 "/sys/kernel/tracing?)",
		 what, strerror(-ret));
	return ret;
}

/* The collector's own state, before any probe. */
static int init_state(struct lt_collector *c, const struct lt_options *opts,
		      char *err, size_t err_len)
{
	size_t i;

	c->cost.stats_fd = -1;
	c->opts.stacks = opts->stacks;
	c->opts.retire_s = opts->retire_s;
	c->naming.syms = lt_symbolizer_new();
	c->stacktab.snap_buf = malloc(sizeof(*c->stacktab.snap_buf));
	c->opts.interval_ms = opts->interval_ms ? opts->interval_ms : 1000;
	c->opts.ncpus = libbpf_num_possible_cpus();
	for (i = 0; i < PROBE_NR; i++)
		snprintf(c->cost.probes[i].name, sizeof(c->cost.probes[i].name),
			 "%s", probe_names[i]);
	if (c->opts.ncpus <= 0 || !c->naming.syms || !c->stacktab.snap_buf ||
	    lt_index_init(&c->locktab.lock_ix, sizeof(struct lt_lock_key),
			  sizeof(struct lock_state)) ||
	    lt_index_init(&c->proctab.proc_ix, sizeof(__u32),
			  sizeof(struct proc_state)) ||
	    lt_index_init(&c->filetab.file_ix, sizeof(struct lt_file_key),
			  sizeof(struct file_state)) ||
	    lt_index_init(&c->tidtab.tid_ix, sizeof(__u32),
			  sizeof(struct tid_entry)) ||
	    lt_index_init(&c->parties.party_ix, sizeof(struct lt_party_key),
			  sizeof(struct party_state)) ||
	    lt_index_init(&c->parties.side_ix, sizeof(struct side_key),
			  sizeof(struct side_state)) ||
	    lt_index_init(&c->stacktab.stext_ix, sizeof(struct lt_stack_key),
			  sizeof(struct stack_text))) {
		snprintf(err, err_len, "out of memory");
		return -ENOMEM;
	}
	return 0;
}

/* Opens the BPF objects and sets what must be fixed before load. */
static int open_probes(struct lt_collector *c, const struct lt_options *opts,
		       char *err, size_t err_len)
{
	int ret;

	c->obj.futex = futex_bpf__open();
	c->obj.filelock = filelock_bpf__open();
	c->obj.fileio = fileio_bpf__open();
	c->obj.reader = reader_bpf__open();
	if (!opts->no_kernel_locks)
		c->obj.klock = klock_bpf__open();
	c->obj.spin = spin_bpf__open();
	if (!c->obj.futex || !c->obj.filelock || !c->obj.fileio ||
	    !c->obj.reader || !c->obj.spin ||
	    (!opts->no_kernel_locks && !c->obj.klock)) {
		ret = -errno;
		snprintf(err, err_len, "cannot open the probes: %s",
			 strerror(errno));
		return ret;
	}
	ret = set_targets(c, opts, err, err_len);
	if (ret)
		return ret;
	/* Run once by reclaim_fill_slots(), never attached. */
	bpf_program__set_autoattach(c->obj.filelock->progs.lt_fill_owners,
				    false);
	/* Snapshots of new stacks take preallocated room only when asked. */
	bpf_map__set_max_entries(c->obj.futex->maps.stack_snaps,
				 opts->stacks ? LT_MAX_SNAPS : 1);
	bpf_map__set_max_entries(c->obj.futex->maps.releases,
				 opts->stacks ? LT_MAX_LOCKS : 1);
	/* --no-io: the pread programs stay out; their maps, shared, stay. */
	if (opts->no_io) {
		struct bpf_program *prog;

		bpf_object__for_each_program(prog, c->obj.fileio->obj)
			bpf_program__set_autoload(prog, false);
	}
	c->snap.io_off = opts->no_io;
	/* A futex2 wake's end matters only to its release's stack. */
	bpf_program__set_autoload(c->obj.futex->progs.lt_futex2_wake_x,
				  opts->stacks);
	c->obj.reader->rodata->nr_cpus = (__u32)c->opts.ncpus;
	/* Epoch 0 is no epoch: a slot whose stamp is 0 is not in use. */
	c->obj.futex->bss->epoch = 1;
	c->obj.filelock->bss->epoch = 1;
	c->obj.fileio->bss->epoch = 1;
	if (c->obj.klock)
		c->obj.klock->bss->epoch = 1;
	c->obj.spin->bss->epoch = 1;
	c->sampler.spin_hz = opts->spin_hz == LT_SPIN_HZ_OFF ? 0 :
			     opts->spin_hz		     ? opts->spin_hz :
							       LT_SPIN_HZ;
	if (c->sampler.spin_hz)
		c->obj.spin->rodata->targ_sample_ns =
			1000000000ULL / c->sampler.spin_hz;
	c->sampler.spin_always = !c->sampler.spin_hz || opts->spin_always;
	return 0;
}

/* The kernel lock probe: the shared maps, and the file lock probe's
 * names of file lock contexts. */
static int load_klock(struct lt_collector *c, char *err, size_t err_len)
{
	int ret = mapio_share_maps(c, c->obj.klock->obj, "kernel lock", err,
				   err_len);

	if (ret)
		return ret;
	ret = bpf_map__reuse_fd(c->obj.klock->maps.flc_names,
				bpf_map__fd(c->obj.filelock->maps.flc_names));
	if (ret) {
		snprintf(err, err_len,
			 "cannot share map flc_names with the kernel lock "
			 "probe: %s",
			 strerror(-ret));
		return ret;
	}
	ret = klock_bpf__load(c->obj.klock);
	if (ret)
		return load_error(err, err_len, "kernel lock", ret);
	return 0;
}

/* Loads and verifies: the futex object first, it owns the shared maps. */
static int load_probes(struct lt_collector *c, char *err, size_t err_len)
{
	int ret;

	ret = futex_bpf__load(c->obj.futex);
	if (ret)
		return load_error(err, err_len, "futex", ret);
	ret = mapio_share_maps(c, c->obj.filelock->obj, "file lock", err,
			       err_len);
	if (ret)
		return ret;
	ret = filelock_bpf__load(c->obj.filelock);
	if (ret)
		return load_error(err, err_len, "file lock", ret);
	ret = mapio_share_maps(c, c->obj.fileio->obj, "pread", err, err_len);
	if (ret)
		return ret;
	ret = fileio_bpf__load(c->obj.fileio);
	if (ret)
		return load_error(err, err_len, "pread", ret);
	if (c->obj.klock) {
		ret = load_klock(c, err, err_len);
		if (ret)
			return ret;
		/* Read now, while loading: /proc/kallsyms takes a few tenths
		 * of a second, which would stretch the first interval that
		 * meets a kernel lock. */
		c->naming.ksyms = lt_ksyms_load_running();
	}
	spin_prepare(c);
	ret = mapio_share_maps(c, c->obj.spin->obj, "spin", err, err_len);
	if (ret)
		return ret;
	ret = spin_bpf__load(c->obj.spin);
	if (ret)
		return load_error(err, err_len, "spin", ret);
	ret = mapio_share_maps(c, c->obj.reader->obj, "map reader", err,
			       err_len);
	if (ret)
		return ret;
	ret = reader_bpf__load(c->obj.reader);
	if (ret)
		return load_error(err, err_len, "map reader", ret);
	return 0;
}

/* Every slot free, and the readers' output mapped into our memory. */
static int prepare_reads(struct lt_collector *c, char *err, size_t err_len)
{
	int ret;

	ret = reclaim_fill_slots(c);
	if (ret) {
		snprintf(err, err_len, "cannot fill the free lock slots: %s",
			 strerror(-ret));
		return ret;
	}
	c->obj.lock_out = mapio_map_out(c->obj.reader->maps.lock_out);
	c->obj.party_out = mapio_map_out(c->obj.reader->maps.party_out);
	c->obj.wait_out = mapio_map_out(c->obj.reader->maps.wait_out);
	if (!c->obj.lock_out || !c->obj.party_out || !c->obj.wait_out) {
		ret = -errno;
		snprintf(err, err_len, "cannot map the readers' output: %s",
			 strerror(errno));
		return ret;
	}
	return 0;
}

/* Attaches the tracepoint handlers. */
static int attach_probes(struct lt_collector *c, char *err, size_t err_len)
{
	int ret;

	ret = futex_bpf__attach(c->obj.futex);
	if (ret)
		return attach_error(err, err_len, "futex", ret);
	ret = filelock_bpf__attach(c->obj.filelock);
	if (ret)
		return attach_error(err, err_len, "file lock", ret);
	ret = fileio_bpf__attach(c->obj.fileio);
	if (ret)
		return attach_error(err, err_len, "pread", ret);
	ret = c->obj.klock ? klock_bpf__attach(c->obj.klock) : 0;
	if (ret)
		return attach_error(err, err_len, "kernel lock", ret);
	return spin_attach(c, err, err_len);
}

int lt_collector_open(const struct lt_options *opts, struct lt_collector **out,
		      char *err, size_t err_len)
{
	struct lt_collector *c;
	size_t i;
	int ret;

	*out = NULL;
	verbose_libbpf = opts->verbose;
	libbpf_set_print(libbpf_print);

	ret = lt_check_environment(err, err_len);
	if (ret)
		return ret;

	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	ret = init_state(c, opts, err, err_len);
	if (!ret)
		ret = open_probes(c, opts, err, err_len);
	if (!ret)
		ret = load_probes(c, err, err_len);
	if (!ret)
		ret = prepare_reads(c, err, err_len);
	if (ret)
		goto cleanup;

	/* Fill the traced set before anything can fork past it */
	for (i = 0; i < opts->n_pids; i++) {
		ret = add_traced(c, opts->pids[i], err, err_len);
		if (ret)
			goto cleanup;
	}

	/* The probes' own cost: the first interval is a sampling window
	 * (see cost_read()); the kernel turns the statistics off when the
	 * last descriptor closes. */
	c->cost.stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	cost_calibrate(c);
	cost_window_open(c);

	ret = attach_probes(c, err, err_len);
	if (ret)
		goto cleanup;
	add_descendants(c, opts);
	usdt_scan(c); /* a server's own lock probes, if one runs */
	kspin_check(c); /* can spinning kernel waits be seen here? */

	read_start(c);
	*out = c;
	return 0;

cleanup:
	lt_collector_close(c);
	return ret;
}

void lt_collector_close(struct lt_collector *c)
{
	size_t i;

	if (!c)
		return;
	/* Detach first: nothing may run while the rest is freed. */
	if (c->obj.reader) {
		mapio_unmap_out(c->obj.reader->maps.lock_out, c->obj.lock_out);
		mapio_unmap_out(c->obj.reader->maps.party_out,
				c->obj.party_out);
		mapio_unmap_out(c->obj.reader->maps.wait_out, c->obj.wait_out);
	}
	usdt_close(c);
	reader_bpf__destroy(c->obj.reader);
	klock_bpf__destroy(c->obj.klock);
	spin_detach(c);
	spin_bpf__destroy(c->obj.spin);
	fileio_bpf__destroy(c->obj.fileio);
	filelock_bpf__destroy(c->obj.filelock);
	futex_bpf__destroy(c->obj.futex);
	if (c->cost.stats_fd >= 0)
		close(c->cost.stats_fd);
	lt_vma_cache_forget(&c->naming.vmas);
	for (i = 0; i < c->locktab.n_locks; i++) {
		free(c->locktab.lstate[i].pids);
		free(c->locktab.lstate[i].stack);
	}
	lt_symbolizer_free(c->naming.syms);
	layouts_free(c);
	lt_ksyms_free(c->naming.ksyms);
	free(c->locktab.locks);
	free(c->locktab.lstate);
	locksites_free(c);
	free(c->proctab.procs);
	free(c->proctab.pstate);
	free(c->filetab.files);
	free(c->filetab.fstate);
	free(c->tidtab.tids);
	free(c->exits.gone);
	free(c->exits.gone_tids);
	free(c->exits.stale_tids);
	free(c->exits.gone_stacks);
	free(c->callsites.site_keys);
	lt_image_memo_free(&c->callsites.memo);
	free(c->sampler.spin_keys);
	lt_image_memo_free(&c->sampler.memo);
	free(c->stacktab.snap_buf);
	free(c->parties.party);
	free(c->parties.side);
	free(c->locktab.live);
	free(c->locktab.was_live);
	free(c->locktab.fresh);
	free(c->inflight.waited);
	free(c->sampler.spinning);
	free(c->inflight.edges);
	free(c->inflight.deadlocks);
	free(c->mapio.keybuf);
	free(c->mapio.valbuf);
	free(c->slots.zero_values);
	free(c->slots.peek);
	free(c->slots.idle);

	lt_index_free(&c->locktab.lock_ix);
	lt_index_free(&c->proctab.proc_ix);
	lt_index_free(&c->filetab.file_ix);
	lt_index_free(&c->tidtab.tid_ix);
	lt_index_free(&c->parties.party_ix);
	lt_index_free(&c->parties.side_ix);
	for (i = 0; i < c->stacktab.n_stexts; i++)
		free(c->stacktab.stexts[i].text);
	free(c->stacktab.stexts);
	lt_index_free(&c->stacktab.stext_ix);
	free(c);
}
