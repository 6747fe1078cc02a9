// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * One lockbench run: make the table file, start the workers (processes or
 * threads), inject kills, gather the statistics, check the table.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lockbench.h"

static pid_t gettid_compat(void)
{
	return (pid_t)syscall(SYS_gettid);
}

static void human_bytes(char *buf, size_t len, uint64_t b)
{
	if (b >= (1ull << 30))
		snprintf(buf, len, "%.1f GiB", (double)b / (1ull << 30));
	else
		snprintf(buf, len, "%.1f MiB", (double)b / (1ull << 20));
}

static int setup_memory_check(struct lb_run *run)
{
	const struct lb_config *cfg = run->cfg;
	uint64_t mem = (uint64_t)sysconf(_SC_PHYS_PAGES) *
		       (uint64_t)sysconf(_SC_PAGESIZE);
	uint64_t need;
	char a[32], b[32];

	run->nstat = lb_lock_nstat(cfg, run->lay.nlocks);
	if (cfg->tdb)
		run->recbits_size = run->lay.nrecords / 8 + 1;
	/* As create_stats lays it out: the workers' rows start on a cache
	 * line of their own. */
	run->stats_size =
		64 + (sizeof(struct lb_shared) + 63) / 64 * 64 +
		(uint64_t)cfg->procs * sizeof(struct lb_wstats) +
		(uint64_t)cfg->procs * run->nstat * sizeof(struct lb_lockstat) +
		(uint64_t)cfg->procs * run->recbits_size;
	need = run->lay.size + run->stats_size;
	if (need > mem / 2) {
		human_bytes(a, sizeof(a), need);
		human_bytes(b, sizeof(b), mem);
		fprintf(stderr,
			"lockbench: hash size %ld with %ld workers needs %s for the table and its statistics, more than half of this machine's %s; use a smaller --hash\n",
			cfg->hash, cfg->procs, a, b);
		return LB_EXIT_USAGE;
	}
	return 0;
}

static int create_table(struct lb_run *run)
{
	const struct lb_config *cfg = run->cfg;
	const char *tmp = getenv("TMPDIR");
	struct statvfs vfs;
	struct stat st;
	int fd, r;

	if (cfg->path) {
		if (strlen(cfg->path) >= sizeof(run->path)) {
			fprintf(stderr, "lockbench: --path is too long\n");
			return LB_EXIT_USAGE;
		}
		strcpy(run->path, cfg->path);
		fd = open(run->path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC,
			  0600);
	} else {
		snprintf(run->path, sizeof(run->path),
			 "%s/lockbench-XXXXXX.tdb", tmp && *tmp ? tmp : "/tmp");
		fd = mkostemps(run->path, 4, O_CLOEXEC);
	}
	if (fd < 0) {
		fprintf(stderr,
			"lockbench: cannot create table file '%s': %s\n",
			run->path, strerror(errno));
		return LB_EXIT_USAGE;
	}
	run->fd = fd;
	run->path_made = true;

	if (fstatvfs(fd, &vfs) == 0 &&
	    (uint64_t)vfs.f_bavail * vfs.f_frsize < run->lay.size) {
		fprintf(stderr,
			"lockbench: table file '%s' needs %llu bytes, but its file system has %llu free\n",
			run->path, (unsigned long long)run->lay.size,
			(unsigned long long)vfs.f_bavail * vfs.f_frsize);
		return LB_EXIT_USAGE;
	}
	/* Reserve the blocks now: a full disk must not SIGBUS a worker. */
	r = posix_fallocate(fd, 0, (off_t)run->lay.size);
	if (r == EOPNOTSUPP || r == EINVAL)
		r = ftruncate(fd, (off_t)run->lay.size) ? errno : 0;
	if (r) {
		fprintf(stderr, "lockbench: cannot size table file '%s': %s\n",
			run->path, strerror(r));
		return LB_EXIT_USAGE;
	}
	if (fstat(fd, &st)) {
		fprintf(stderr, "lockbench: fstat '%s': %s\n", run->path,
			strerror(errno));
		return LB_EXIT_FAIL;
	}
	run->dev = st.st_dev;
	run->ino = st.st_ino;
	run->map = mmap(NULL, run->lay.size, PROT_READ | PROT_WRITE, MAP_SHARED,
			fd, 0);
	if (run->map == MAP_FAILED) {
		run->map = NULL;
		fprintf(stderr, "lockbench: mmap '%s': %s\n", run->path,
			strerror(errno));
		return LB_EXIT_FAIL;
	}
	lb_table_format(run);
	lb_locks_init(run);
	return 0;
}

static int create_stats(struct lb_run *run)
{
	const struct lb_config *cfg = run->cfg;
	uint8_t *p;

	/* Anonymous but shared, so forked workers' counters survive them. */
	p = mmap(NULL, run->stats_size, PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		fprintf(stderr, "lockbench: cannot map statistics: %s\n",
			strerror(errno));
		return LB_EXIT_FAIL;
	}
	run->stats_map = p;
	run->sh = (struct lb_shared *)p;
	run->ws =
		(struct lb_wstats *)(p + 64 +
				     (sizeof(struct lb_shared) + 63) / 64 * 64);
	run->ls = (struct lb_lockstat *)(run->ws + cfg->procs);
	if (run->recbits_size)
		run->recbits =
			(uint8_t *)(run->ls + (size_t)cfg->procs * run->nstat);
	for (long i = 0; i < cfg->procs; i++)
		run->ws[i].rng = lb_seed_mix(cfg->seed, (uint64_t)i + 1);
	run->pids = calloc((size_t)cfg->procs, sizeof(*run->pids));
	if (!run->pids)
		return LB_EXIT_FAIL;
	return 0;
}

static int open_worker_fd(struct lb_worker *w)
{
	/* Each worker has its own open file description: OFD locks, flock
	 * and lseek offsets all belong to it. */
	w->fd = open(w->run->path, O_RDWR | O_CLOEXEC);
	if (w->fd < 0)
		lb_worker_die(w, "open '%s': %s", w->run->path,
			      strerror(errno));
	return 0;
}

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
/* Past this a table is faulted in as the run goes, not before it. */
#define PREFAULT_MAX (64ull << 20)

/*
 * Map the table's pages before the common start, so that the run times
 * locking and not first-touch page faults. Best effort: an older kernel
 * just faults later.
 */
static void prefault(const struct lb_run *run)
{
	if (run->lay.size <= PREFAULT_MAX)
		madvise(run->map, run->lay.size, MADV_POPULATE_WRITE);
}

static int worker_main(struct lb_run *run, unsigned idx, int barrier)
{
	const struct lb_config *cfg = run->cfg;
	struct lb_worker w = { .run = run,
			       .idx = idx,
			       .tid = gettid_compat(),
			       .st = &run->ws[idx],
			       .ls = run->ls + (size_t)idx * run->nstat };
	char c;
	int r = 0;

	if (cfg->tdb) {
		w.recbits = run->recbits + (size_t)idx * run->recbits_size;
		lb_tdb_open(&w);
	} else {
		open_worker_fd(&w);
	}
	if (!cfg->threads)
		prefault(run);
	if (barrier >= 0) {
		__atomic_add_fetch(&run->sh->ready, 1, __ATOMIC_RELEASE);
		while (read(barrier, &c, 1) < 0 && errno == EINTR)
			;
	}
	w.rng = w.st->rng;
	while (w.st->loops_done < (uint64_t)cfg->loops) {
		if (__atomic_load_n(&run->sh->abort, __ATOMIC_RELAXED)) {
			r = LB_EXIT_STUCK;
			break;
		}
		/* A restarted worker resumes with the op its predecessor
		 * was killed in. */
		w.st->rng = w.rng;
		if (lb_table_op(&w)) {
			r = LB_EXIT_STUCK;
			break;
		}
		__atomic_store_n(&w.st->loops_done, w.st->loops_done + 1,
				 __ATOMIC_RELEASE);
		if (cfg->tdb)
			lb_tdb_maybe_reopen(&w);
		lb_sleep_us(cfg->think_us);
	}
	w.st->end_ns = lb_now_ns();
	if (cfg->tdb && !r)
		lb_tdb_close(&w);
	else
		close(w.fd);
	return r;
}

static pid_t spawn_worker(struct lb_run *run, unsigned idx, int barrier_rd,
			  int barrier_wr)
{
	pid_t parent = getpid();
	pid_t pid = fork();

	if (pid != 0)
		return pid;
	/* Never outlive the parent, whatever kills it. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(LB_EXIT_FAIL);
	if (barrier_wr >= 0)
		close(barrier_wr);
	close(run->fd);
	run->ws[idx].pid = getpid();
	_exit(worker_main(run, idx, barrier_rd));
}

/* The clock starts when every worker is set up, not while they fork. */
static void wait_ready(const struct lb_run *run, long n)
{
	while (__atomic_load_n(&run->sh->ready, __ATOMIC_ACQUIRE) < n &&
	       !__atomic_load_n(&run->sh->abort, __ATOMIC_ACQUIRE))
		lb_sleep_us(100);
}

static int find_slot(const struct lb_run *run, pid_t pid)
{
	for (long i = 0; i < run->cfg->procs; i++)
		if (run->pids[i] == pid)
			return (int)i;
	return -1;
}

static void kill_all(struct lb_run *run)
{
	for (long i = 0; i < run->cfg->procs; i++)
		if (run->pids[i] > 0)
			kill(run->pids[i], SIGKILL);
}

static void worker_exit_status(struct lb_run *run, int slot, int status)
{
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return;
	if (WIFEXITED(status) && WEXITSTATUS(status) == LB_EXIT_STUCK)
		return;
	if (!__atomic_load_n(&run->sh->abort, __ATOMIC_ACQUIRE)) {
		char msg[96];

		if (WIFSIGNALED(status))
			snprintf(msg, sizeof(msg),
				 "worker %d died of signal %d", slot,
				 WTERMSIG(status));
		else
			snprintf(msg, sizeof(msg), "worker %d exited with %d",
				 slot, WEXITSTATUS(status));
		lb_result_error(&run->res, "%s", msg);
		run->res.failed = true;
		__atomic_store_n(&run->sh->abort, 1, __ATOMIC_RELEASE);
	}
}

/*
 * Kills go to workers drawn from the seed before the run starts, and fall
 * evenly over each victim's loops. A victim stops at its kill point
 * (chain lock held, update half done) and waits there to be SIGKILLed
 * from outside; a fresh process then takes over its slot and its
 * remaining loops. Planning up front keeps the kill count exact however
 * late the parent gets the CPU.
 */
static void plan_kills(struct lb_run *run)
{
	const struct lb_config *cfg = run->cfg;
	uint64_t krng = lb_seed_mix(cfg->seed, 0x6b696c6cull);

	for (long k = 0; k < cfg->kill_holder; k++)
		run->ws[lb_rand(&krng) % (uint64_t)cfg->procs].kill_plan++;
}

static int kill_victims(struct lb_run *run, long *kills)
{
	for (long i = 0; i < run->cfg->procs; i++) {
		struct lb_wstats *ws = &run->ws[i];
		pid_t victim = run->pids[i], pid;
		int status;

		if (victim <= 0 ||
		    !__atomic_load_n(&ws->at_kill_point, __ATOMIC_ACQUIRE))
			continue;
		kill(victim, SIGKILL);
		while (waitpid(victim, &status, 0) < 0 && errno == EINTR)
			;
		(*kills)++;
		ws->kill_done++;
		ws->at_kill_point = 0;
		ws->gen++;
		pid = spawn_worker(run, (unsigned)i, -1, -1);
		run->pids[i] = pid > 0 ? pid : 0;
		if (pid < 0) {
			fprintf(stderr, "lockbench: fork: %s\n",
				strerror(errno));
			return -1;
		}
	}
	return 0;
}

static int run_processes(struct lb_run *run, uint64_t *t0)
{
	const struct lb_config *cfg = run->cfg;
	int barrier[2], status;
	long live = 0, kills = 0;
	bool aborted = false;
	pid_t pid;

	if (pipe2(barrier, O_CLOEXEC)) {
		perror("lockbench: pipe");
		return LB_EXIT_FAIL;
	}
	plan_kills(run);
	for (long i = 0; i < cfg->procs; i++) {
		pid = spawn_worker(run, (unsigned)i, barrier[0], barrier[1]);
		if (pid < 0) {
			fprintf(stderr, "lockbench: fork: %s\n",
				strerror(errno));
			kill_all(run);
			close(barrier[1]);
			while (live-- > 0)
				wait(NULL);
			close(barrier[0]);
			return LB_EXIT_FAIL;
		}
		run->pids[i] = pid;
		live++;
	}
	close(barrier[0]);
	wait_ready(run, live);
	*t0 = lb_now_ns();
	/* Every worker's read returns at once: a common start line. */
	close(barrier[1]);

	while (live > 0) {
		bool poll = kills < cfg->kill_holder || aborted;
		int slot;

		if (!aborted &&
		    __atomic_load_n(&run->sh->abort, __ATOMIC_ACQUIRE)) {
			aborted = true;
			kill_all(run);
		}
		pid = waitpid(-1, &status, poll ? WNOHANG : 0);
		if (pid < 0 && errno == EINTR)
			continue;
		if (pid < 0) {
			perror("lockbench: waitpid");
			return LB_EXIT_FAIL;
		}
		if (pid > 0) {
			slot = find_slot(run, pid);
			live--;
			if (slot < 0)
				continue;
			run->pids[slot] = 0;
			if (!aborted)
				worker_exit_status(run, slot, status);
			continue;
		}
		if (!aborted && kill_victims(run, &kills)) {
			run->res.failed = true;
			__atomic_store_n(&run->sh->abort, 1, __ATOMIC_RELEASE);
		}
		lb_sleep_us(200);
	}
	run->res.kills = (uint64_t)kills;
	return 0;
}

struct thread_arg {
	struct lb_run *run;
	unsigned idx;
	int barrier;
	pthread_t th;
	int ret;
};

static void *thread_main(void *p)
{
	struct thread_arg *a = p;

	a->run->ws[a->idx].pid = gettid_compat();
	a->ret = worker_main(a->run, a->idx, a->barrier);
	return NULL;
}

static int run_threads(struct lb_run *run, uint64_t *t0)
{
	const struct lb_config *cfg = run->cfg;
	struct thread_arg *args = calloc((size_t)cfg->procs, sizeof(*args));
	int barrier[2], err = 0;
	long started = 0;

	if (!args || pipe2(barrier, O_CLOEXEC)) {
		free(args);
		fprintf(stderr, "lockbench: out of resources\n");
		return LB_EXIT_FAIL;
	}
	prefault(run);
	for (long i = 0; i < cfg->procs; i++) {
		args[i] = (struct thread_arg){ .run = run,
					       .idx = (unsigned)i,
					       .barrier = barrier[0] };
		err = pthread_create(&args[i].th, NULL, thread_main, &args[i]);
		if (err) {
			fprintf(stderr, "lockbench: pthread_create: %s\n",
				strerror(err));
			__atomic_store_n(&run->sh->abort, 1, __ATOMIC_RELEASE);
			break;
		}
		started++;
	}
	wait_ready(run, started);
	*t0 = lb_now_ns();
	close(barrier[1]);
	for (long i = 0; i < started; i++) {
		pthread_join(args[i].th, NULL);
		run->pids[i] = run->ws[i].pid;
	}
	close(barrier[0]);
	free(args);
	return err ? LB_EXIT_FAIL : 0;
}

static double tv_s(struct timeval tv)
{
	return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

static void merge_stats(struct lb_run *run)
{
	const struct lb_config *cfg = run->cfg;
	struct lb_result *res = &run->res;
	uint64_t n = 0, c50, c99;

	for (long i = 0; i < cfg->procs; i++) {
		const struct lb_wstats *ws = &run->ws[i];

		for (int o = 0; o < LB_OPS; o++) {
			res->opcount[o] += ws->ops[o];
			res->ops += ws->ops[o];
		}
		res->ok += ws->ok;
		res->inserts += ws->inserts;
		res->deletes += ws->deletes;
		res->allocs += ws->allocs;
		res->frees += ws->frees;
		res->repairs += ws->repairs;
		res->owner_dead += ws->owner_dead;
		res->io_reads += ws->io_reads;
		res->io_writes += ws->io_writes;
		res->io_read_bytes += ws->io_read_bytes;
		res->io_write_bytes += ws->io_write_bytes;
		if (ws->wait_max > res->wait_max)
			res->wait_max = ws->wait_max;
		for (int b = 0; b < LB_HIST_BUCKETS; b++)
			res->hist[b] += ws->hist[b];
	}
	/* Fold the per-worker rows into row 0: the per-lock totals. */
	for (long i = 1; i < cfg->procs; i++) {
		const struct lb_lockstat *row =
			run->ls + (size_t)i * run->nstat;

		for (unsigned l = 0; l < run->nstat; l++) {
			run->ls[l].acquires += row[l].acquires;
			run->ls[l].contended += row[l].contended;
			run->ls[l].wait_ns += row[l].wait_ns;
			run->ls[l].slept += row[l].slept;
			run->ls[l].futex_waits += row[l].futex_waits;
			run->ls[l].sleep_ns += row[l].sleep_ns;
			run->ls[l].spin_cpu_ns += row[l].spin_cpu_ns;
			run->ls[l].hold_ns += row[l].hold_ns;
			run->ls[l].hold_span_ns += row[l].hold_span_ns;
		}
	}
	for (unsigned l = 0; l < run->nstat; l++) {
		res->acquires += run->ls[l].acquires;
		res->contended += run->ls[l].contended;
		res->wait_ns += run->ls[l].wait_ns;
		res->slept += run->ls[l].slept;
		res->futex_waits += run->ls[l].futex_waits;
		res->sleep_ns += run->ls[l].sleep_ns;
		res->spin_cpu_ns += run->ls[l].spin_cpu_ns;
		res->hold_ns += run->ls[l].hold_ns;
		res->hold_span_ns += run->ls[l].hold_span_ns;
	}
	lb_tdb_merge(run);
	for (int b = 0; b < LB_HIST_BUCKETS; b++)
		n += res->hist[b];
	c50 = (n + 1) / 2;
	c99 = n - n / 100;
	n = 0;
	for (int b = 0; b < LB_HIST_BUCKETS; b++) {
		uint64_t before = n;

		n += res->hist[b];
		if (before < c50 && n >= c50)
			res->wait_p50 = lb_hist_upper((unsigned)b);
		if (before < c99 && n >= c99)
			res->wait_p99 = lb_hist_upper((unsigned)b);
	}
	if (res->wait_p50 > res->wait_max)
		res->wait_p50 = res->wait_max;
	if (res->wait_p99 > res->wait_max)
		res->wait_p99 = res->wait_max;
}

static void cleanup(struct lb_run *run)
{
	if (run->map)
		munmap(run->map, run->lay.size);
	if (run->fd >= 0)
		close(run->fd);
	if (run->path_made && !run->cfg->keep)
		unlink(run->path);
	if (run->stats_map)
		munmap(run->stats_map, run->stats_size);
	free(run->pids);
}

int lb_run_main(const struct lb_config *cfg)
{
	struct lb_run *run = calloc(1, sizeof(*run));
	struct rusage ru0, ru1;
	uint64_t t0 = 0, t1;
	int who = cfg->threads ? RUSAGE_SELF : RUSAGE_CHILDREN;
	int ret;

	if (!run) {
		fprintf(stderr, "lockbench: out of memory\n");
		return LB_EXIT_FAIL;
	}
	run->cfg = cfg;
	run->fd = -1;
	lb_layout_compute(cfg, &run->lay);
	ret = setup_memory_check(run);
	if (!ret)
		ret = create_table(run);
	if (!ret)
		ret = create_stats(run);
	if (ret)
		goto out;

	getrusage(who, &ru0);
	if (cfg->threads)
		ret = run_threads(run, &t0);
	else
		ret = run_processes(run, &t0);
	t1 = lb_now_ns();
	getrusage(who, &ru1);
	if (ret)
		goto out;

	/*
	 * The run ends when the last worker finishes its last loop, not when
	 * the parent has reaped it: process teardown is not lock work.
	 */
	t1 = t0;
	for (long i = 0; i < cfg->procs; i++)
		if (run->ws[i].end_ns > t1)
			t1 = run->ws[i].end_ns;
	if (run->sh->abort)
		t1 = lb_now_ns();
	run->res.elapsed = (double)(t1 - t0) / 1e9;
	run->res.user = tv_s(ru1.ru_utime) - tv_s(ru0.ru_utime);
	run->res.sys = tv_s(ru1.ru_stime) - tv_s(ru0.ru_stime);
	run->res.vcsw = ru1.ru_nvcsw - ru0.ru_nvcsw;
	run->res.ivcsw = ru1.ru_nivcsw - ru0.ru_nivcsw;
	merge_stats(run);

	if (run->sh->failed) {
		run->res.failed = true;
		lb_result_error(&run->res, "%s", run->sh->fail_msg);
	}
	if (run->sh->stuck)
		run->res.stuck = true;
	if (!run->res.failed && !run->res.stuck)
		lb_table_check(run);

	if (cfg->json)
		lb_report_json(run);
	else
		lb_report_human(run);

	if (run->res.stuck)
		ret = LB_EXIT_STUCK;
	else if (run->res.failed || run->res.nerrors)
		ret = LB_EXIT_FAIL;
	else
		ret = LB_EXIT_OK;
	if (cfg->kill_holder && (long)run->res.kills < cfg->kill_holder &&
	    ret == LB_EXIT_OK)
		fprintf(stderr,
			"lockbench: only %llu of %ld kills could be injected before the workers finished; use more --loops\n",
			(unsigned long long)run->res.kills, cfg->kill_holder);
out:
	cleanup(run);
	free(run);
	return ret;
}
