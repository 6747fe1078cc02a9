/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The locktop collector: loads and attaches the probes, reads their maps
 * once per interval and hands out one snapshot type to every consumer:
 * the screen, batch and JSON output, the PCP agent and recordings.
 *
 * Every figure comes twice: `total` since the collector opened, and
 * `delta` for the last interval. A figure a probe does not measure yet
 * stays 0.
 */
#ifndef LOCKTOP_COLLECTOR_H
#define LOCKTOP_COLLECTOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "sizes.h"

#define LT_HIST_BUCKETS LT_HIST_SLOTS /* log2(ns), see sizes.h */
#define LT_NAME_LEN 160
#define LT_COMM_SIZE LT_COMM_LEN
/* A kernel lock's type ("rwsem-write") and caller function. */
#define LT_KTYPE_LEN 24
#define LT_CALLER_LEN 64
#define LT_TOP_PARTIES 4 /* holders and waiters kept per lock */
#define LT_TOP_RELEASES 4 /* release stacks kept per lock */
#define LT_CYCLE_MAX 8 /* members of one reported deadlock */

/* The kinds of kinds.def: LT_KIND_FUTEX = 0, numbered as the probes'. */
enum lt_kind {
#define LT_KIND_ROW(ID, NAME) LT_KIND_##ID,
#include "kinds.def"
	LT_KIND_NR,
};

const char *lt_kind_name(enum lt_kind kind);
/* Parses a name lt_kind_name() gives; returns -1 for an unknown one. */
int lt_kind_parse(const char *name);
/* A kind that the default views rank (not an event wait). */
bool lt_kind_is_lock(enum lt_kind kind);

/*
 * Why an event could not be counted: the probes' reasons, in the order
 * of enum lt_drop (probes/common.h), then the collector's own.
 */
#define LT_DROP_REASONS 10
#define LT_DROP_SLOT_RETURN 9 /* lost while its slot went back */
/* "locks_full", ...: the name a reason has in JSON and PCP. */
const char *lt_drop_name(unsigned int reason);

/*
 * Whether spinning waits on the kernel's own locks can be seen. Some
 * kernels spin without reaching the lock tracepoints (a guest without
 * paravirtual spinlocks spins in virt_spin_lock()); their sleeping
 * locks still show.
 */
enum lt_kspins {
	LT_KSPINS_OFF, /* kernel locks are not traced, or not known */
	LT_KSPINS_VISIBLE, /* the kernel reported a spinning wait */
	LT_KSPINS_HIDDEN, /* none, not even under a self-test's contention */
};
/* "off", "visible", "hidden": the name a state has in JSON. */
const char *lt_kspins_name(enum lt_kspins state);

/* What a figure counts: figures.def's UNIT column. */
enum lt_unit {
	LT_UNIT_COUNT, /* things */
	LT_UNIT_NS, /* time */
};

/* A lock's figures: the rows of figures.def, then its histograms. */
struct lt_figures {
#define LT_FIGURE(NAME, JSON, RECORD) uint64_t NAME;
#include "figures.def"
	uint64_t wait_hist[LT_HIST_BUCKETS];
	uint64_t hold_hist[LT_HIST_BUCKETS];
};

/* A process on one side of a lock: who held it, or who waited. */
struct lt_party {
	pid_t pid;
	char comm[LT_COMM_SIZE];
	uint64_t count; /* waits (waiter) or times seen holding */
	uint64_t ns; /* wait time it suffered or caused */
	/* A futex's holder: its thread that held most, else 0 and "". */
	pid_t tid;
	char thread[LT_COMM_SIZE];
};

/*
 * Where a lock was held (--stacks): the user stack of a release that
 * ended waits (a futex wake that woke a waiter, a file lock's unlock
 * that a waiter waited for), with totals over the run.
 */
struct lt_release_stack {
	const char *stack; /* frames, one a line, as lt_lock.stack */
	uint64_t count; /* releases from this stack that ended waits */
	uint64_t ns; /* the time of the waits they ended */
};

struct lt_lock {
	uint64_t id; /* stable for the collector's life */
	char name[LT_NAME_LEN]; /* for people: path+offset, symbol, address */
	char key[LT_NAME_LEN]; /* identity across runs, for diffs */
	enum lt_kind kind;
	uint64_t address; /* futex user address in its first process */
	uint64_t dev, ino; /* backing file of a shared lock, or 0 */
	uint64_t start, end; /* offset, or byte range of a file lock */
	const pid_t *pids; /* processes that waited on it */
	size_t n_pids;
	char comm[LT_COMM_SIZE]; /* the first waiting process */
	unsigned int waiters_now; /* blocked on it at the read */
	/* spin: threads whose latest sample, within the last interval,
	 * found them spinning on it. */
	unsigned int spinning_now;
	pid_t holder; /* last known holder, 0 if unknown */
	char holder_comm[LT_COMM_SIZE];
	pid_t holder_tid; /* a futex's: the holding thread, else 0 */
	char holder_thread[LT_COMM_SIZE];
	struct lt_party holders[LT_TOP_PARTIES]; /* most blocking first */
	size_t n_holders;
	struct lt_party waiters[LT_TOP_PARTIES]; /* most waiting first */
	size_t n_waiters;
	const char *stack; /* the stack with the most wait, lines; NULL if none */
	/* Release stacks, most waiting ended first (ns, then count). */
	struct lt_release_stack releases[LT_TOP_RELEASES];
	size_t n_releases;
	/* Kernel locks: the type ("mutex", "rwsem-write", ...) and the
	 * kernel function whose wait first met it; empty for the others. */
	char kernel_type[LT_KTYPE_LEN];
	char caller[LT_CALLER_LEN];
	/* The host it was read from in a fleet view (locktop --host A,B);
	 * NULL for one machine's. */
	const char *host;
	struct lt_figures total;
	struct lt_figures delta;
	/*
	 * One lock site (docs/design.md, "One row per lock site"): the
	 * private copies of one lock in many processes of one program.
	 * procs: the processes whose copies the row adds up, N for a site
	 * row, 1 for any other (0 from a source that does not say).
	 * members: a site row's per-process rows, by id, most wait first.
	 * site: a member's site row, by id; 0 for a row of its own.
	 */
	unsigned int procs;
	const uint64_t *members;
	size_t n_members;
	uint64_t site;
};

struct lt_proc_figures {
	uint64_t waits;
	uint64_t wait_ns;
	uint64_t io_count;
	uint64_t io_ns;
};

struct lt_proc {
	pid_t pid;
	char comm[LT_COMM_SIZE];
	uint64_t top_lock; /* lt_lock.id it waited on most, 0 if none */
	const char *host; /* as lt_lock.host */
	struct lt_proc_figures total;
	struct lt_proc_figures delta;
};

struct lt_file_figures {
	uint64_t reads, writes;
	uint64_t read_bytes, write_bytes;
	uint64_t io_ns;
	uint64_t io_under_lock_ns;
	uint64_t io_hist[LT_HIST_BUCKETS];
};

struct lt_file {
	char name[LT_NAME_LEN];
	uint64_t dev, ino;
	const char *host; /* as lt_lock.host */
	struct lt_file_figures total;
	struct lt_file_figures delta;
};

/* The probes' own cost, from the kernel's BPF statistics. */
/*
 * One probe object's cost. Runs are counted by the probes themselves,
 * always. Time per run comes from the kernel's BPF statistics, which the
 * collector turns on only in sampling windows (one when the probes load,
 * then one every LT_STATS_EVERY reads and LT_STATS_GAP_S, each until it
 * measured enough warm runs, from LT_STATS_WINDOW_MS to a second):
 * they cost every BPF program on the host two clock reads a run. run_ns
 * and delta_ns are runs times the cost per run of the latest window that
 * measured the object at work. A figure from fewer than
 * LT_STATS_MIN_RUNS runs (the probes loaded on an idle host: a few cold
 * runs, many times dearer than warm ones) stands only until the object
 * is busy: a window then opens at once (lt_collector_housekeep(), or the
 * read that finds it busy), once between two regular windows.
 */
struct lt_probe_cost {
	char name[32];
	uint64_t run_cnt; /* total */
	uint64_t run_ns;
	uint64_t delta_cnt; /* during the interval */
	uint64_t delta_ns;
	double ns_per_run; /* measured in the latest window, 0 before one */
	uint64_t sampled_cnt; /* runs the statistics measured, all windows */
	uint64_t sampled_ns;
};

#define LT_STATS_EVERY 10 /* reads between two sampling windows */
#define LT_STATS_WINDOW_MS 100 /* how long one stays open, at least */
#define LT_STATS_MIN_RUNS 1000 /* runs it measures of the busiest probe */
#define LT_STATS_GAP_S 5 /* seconds between two windows, at least */

/* A cycle in the wait-for graph: each member waits on the next. */
struct lt_deadlock {
	size_t n;
	pid_t pids[LT_CYCLE_MAX];
	char comms[LT_CYCLE_MAX][LT_COMM_SIZE];
	uint64_t locks[LT_CYCLE_MAX]; /* lt_lock.id member i waits on */
	const char *host; /* as lt_lock.host */
};

struct lt_kind_figures {
	uint64_t waits;
	uint64_t wait_ns;
};

/*
 * One host of a fleet view: several pmcd read as one (locktop --host
 * A,B). A host that stopped answering is down: its figures of the
 * interval are missing, not zero, and why says why.
 */
#define LT_HOST_LEN 64
struct lt_host {
	char name[LT_HOST_LEN]; /* as the user gave it */
	bool up;
	char why[128]; /* down: the error that took it down */
	double down_since; /* down: wall clock, seconds since the epoch */
	size_t n_locks; /* its locks in the snapshot with waits in the period */
	size_t n_locks_total; /* ... with waits over the run */
	struct lt_kind_figures delta; /* its lock waits, all kinds */
	struct lt_kind_figures total;
	uint64_t events_delta; /* its probes' runs */
	uint64_t drops_delta;
	double cpu_percent; /* its probes' CPU */
	size_t n_deadlocks;
};

struct lt_snapshot {
	double time; /* wall clock, seconds since the epoch */
	double interval_s; /* length of the interval that delta covers */
	double elapsed_s; /* since the collector opened */
	uint64_t drops_total; /* events that could not be counted */
	uint64_t drops_delta;
	/* The same by reason (LT_DROP_REASONS); they add up to the above. */
	uint64_t drop_total[LT_DROP_REASONS];
	uint64_t drop_delta[LT_DROP_REASONS];
	uint64_t events_total; /* probe runs, all probes */
	uint64_t events_delta;
	double cpu_percent; /* probes' CPU over the interval, % of a core */
	double probe_floor_ns; /* what the statistics charge an empty probe */
	double clock_ns; /* one kernel clock read, as a probe pays it */
	uint64_t lock_entries; /* kernel per-lock map: entries in use */
	uint64_t lock_capacity; /* ... and its size; drops start when full */
	uint64_t file_entries; /* kernel per-file I/O map: entries in use */
	uint64_t file_capacity; /* ... and its size */
	uint64_t party_entries; /* kernel holder/waiter map: entries in use */
	uint64_t party_capacity; /* ... and its size */
	bool folding; /* new byte ranges count in their file's other ranges */
	/* The spin sampler: "off" (spinning untraced), "tick" (only the
	 * scheduler tick samples: nothing spun lately) or "on" (its events
	 * run at spin_hz); and how long they ran, in all and in the
	 * interval. */
	const char *spin_sampler;
	double spin_sampler_total_s;
	double spin_sampler_delta_s;
	/* Spinning kernel waits: seen or not, and why not, for people
	 * ("" unless hidden). */
	enum lt_kspins kernel_spins;
	const char *kernel_spins_why;
	bool io_off; /* pread and pwrite untraced here (--no-io) */
	struct lt_kind_figures kind_total[LT_KIND_NR];
	struct lt_kind_figures kind_delta[LT_KIND_NR];
	uint64_t io_hist_delta[LT_HIST_BUCKETS]; /* all pread/pwrite */
	size_t n_locks;
	const struct lt_lock *locks; /* valid until the next read or close */
	/* The lock sites' rows, whose members are among locks; a
	 * consumer walks both with lt_snapshot_rows(), lt_snapshot_row(). */
	size_t n_sites;
	const struct lt_lock *sites;
	size_t n_procs;
	const struct lt_proc *procs;
	size_t n_files;
	const struct lt_file *files;
	size_t n_probes;
	const struct lt_probe_cost *probes;
	size_t n_deadlocks;
	const struct lt_deadlock *deadlocks;
	/* A fleet view's hosts; none (0) for one machine's snapshot. */
	size_t n_hosts;
	const struct lt_host *hosts;
};

struct lt_options {
	/* Trace these, their threads and their descendants, those that run
	 * at the start and those started later; none: all. */
	const pid_t *pids;
	size_t n_pids;
	/* How often the consumer reads (idle slots wait two reads at
	 * least before they go back); 0 means 1000. */
	unsigned int interval_ms;
	bool stacks; /* record the user stack of contended waits */
	bool exact_holds; /* time every file lock hold (LT_HOLD_EVERY) */
	bool verbose; /* route libbpf's debug output to stderr */
	bool no_kernel_locks; /* leave kernel-internal locks untraced */
	bool no_io; /* leave pread and pwrite untraced: no file figures */
	/*
	 * Seconds after which the rows of locks no process can reach any
	 * more (an ended process's private locks) leave the snapshot, with
	 * their holders and waiters, so that a long run's memory stays
	 * bounded under process churn; 0 keeps every row for the whole run,
	 * as summaries and records need. With the kernel's lock or file
	 * map more than a quarter full, the slots of locks and files idle
	 * this long (LT_RETIRE_S when 0) go back too; their rows stay, up
	 * to twice as many as the kernel's map holds when retire_s is set,
	 * beyond which the longest idle leave the snapshot.
	 */
	unsigned int retire_s;
	/*
	 * On-CPU samples per second and CPU that look for threads spinning
	 * on a lock (kind spin): 0 means LT_SPIN_HZ, LT_SPIN_HZ_OFF none.
	 */
	unsigned int spin_hz;
	/*
	 * Sample at spin_hz all the time. Otherwise the scheduler tick
	 * looks for spinning, at no interrupt of its own, and the sampling
	 * events run only while something spun in the last ten seconds.
	 */
	bool spin_always;
};

#define LT_SPIN_HZ_OFF (~0u)

#define LT_RETIRE_S 60 /* retire_s of the agent and the live screen */

struct lt_collector;

/*
 * Checks privileges, BTF and tracefs, loads and attaches the probes.
 * On failure returns a negative errno and writes a message that names
 * the fix into err.
 */
int lt_collector_open(const struct lt_options *opts, struct lt_collector **out,
		      char *err, size_t err_len);

/* Processes traced when the probes were attached; 0: every process. */
size_t lt_collector_traced(const struct lt_collector *c);

/* Reads the maps now. The result belongs to the collector. */
int lt_collector_read(struct lt_collector *c, const struct lt_snapshot **snap);

/* Changes lt_options.interval_ms from the next read on. */
void lt_collector_set_interval(struct lt_collector *c, unsigned int ms);

/* Changes lt_options.retire_s from the next read on. */
void lt_collector_set_retire(struct lt_collector *c, unsigned int s);

/*
 * Housekeeping between reads, cheap when there is nothing to do: judges
 * the futex call sites the probes met since (which function a wait came
 * from decides whether it is a lock's). Consumers that wait in their own
 * loop call it about every LT_HOUSEKEEP_MS.
 */
#define LT_HOUSEKEEP_MS 100
void lt_collector_housekeep(struct lt_collector *c);

/* Detaches every probe, restores what it changed, frees everything. */
void lt_collector_close(struct lt_collector *c);

/*
 * ---- Figures (figures.c): one definition for every consumer ----
 *
 * Batch text and JSON, the screen, records, diff and the PCP agent
 * decide with these which locks to show, in which order, and how
 * figures add up, so that one snapshot shows the same locks in each
 * (docs/design.md, "Which locks are shown").
 */

/* What a view of a snapshot shows. */
struct lt_view {
	bool totals; /* the whole run's figures (total), not delta */
	bool all_kinds; /* event waits (futex-cond) too, not lock kinds only */
	/* A lock site's per-process rows in place of its site row. */
	bool members;
	/* Only rows with a figure the tables show: lt_lock_waited(). */
	bool waited_only;
};

/* The snapshot's rows, locks then lock sites: how many, and row i. */
size_t lt_snapshot_rows(const struct lt_snapshot *s);
const struct lt_lock *lt_snapshot_row(const struct lt_snapshot *s, size_t i);
/* The lock or lock site with this id, NULL if none. */
const struct lt_lock *lt_snapshot_find(const struct lt_snapshot *s,
				       uint64_t id);

/*
 * A row with a figure the screen's and batch text's tables show for
 * the period: a wait, wait time, spin samples or yields, or a thread
 * waiting or spinning on it now. A file lock with only acquisitions and
 * holds (a program that locks a file nobody else does) has none.
 */
bool lt_lock_waited(const struct lt_lock *l, bool totals);

/*
 * A lock's name for people: its name, and for a lock site " (N comm)",
 * the processes whose copies it adds up. Returns buf.
 */
const char *lt_lock_label(const struct lt_lock *l, char *buf, size_t len);
/* The same in at most WIDTH columns, cut as the screen cuts a name:
 * "..", then its end, so that a path keeps its file and what names the
 * lock in it (a tdb's chain) and a site its "(N comm)". A name of more
 * than one byte a character is left whole, for the table to cut. */
const char *lt_lock_label_fit(const struct lt_lock *l, char *buf, size_t len,
			      size_t width);

/* The figures of l for the period: the whole run's, or the interval's. */
const struct lt_figures *lt_lock_figures(const struct lt_lock *l, bool totals);

/*
 * Whether any count or time of f moved: a wait, an acquisition, a
 * conflict, a refused try-lock or deadlock, hold time, I/O under the
 * lock, a wake, or a wait's outcome.
 */
bool lt_figures_active(const struct lt_figures *f);

/*
 * A lock worth showing, whatever its kind: its figures for the period
 * are active (lt_figures_active()), or a thread is blocked on it now.
 */
bool lt_lock_worth_showing(const struct lt_lock *l, bool totals);

/* A kind a view shows: a lock kind, or any with all_kinds. */
bool lt_kind_in_view(enum lt_kind kind, bool all_kinds);

/* A lock a view shows: worth showing, of a kind the view shows, a
 * lock site's row or its members as the view asks (members), and with
 * waited_only a row lt_lock_waited(). */
bool lt_lock_shown(const struct lt_lock *l, const struct lt_view *v);

/*
 * The order of locks, worst first: the longer wait time, then the more
 * waits, then the lower id. Negative when a comes before b, positive
 * when after, 0 for the same lock.
 */
int lt_lock_order(const struct lt_lock *a, const struct lt_lock *b,
		  bool totals);

/*
 * The locks v shows, in lt_lock_order(): the first n into out (room for
 * n), the figures of the others added into *other (NULL: not wanted).
 * Returns how many v shows in all, of which the first n, or all when
 * fewer, were written.
 */
size_t lt_snapshot_shown(const struct lt_snapshot *s, const struct lt_view *v,
			 size_t n, const struct lt_lock **out,
			 struct lt_figures *other);

/*
 * The first n in lt_lock_order() of the locks for which filter is true
 * (NULL: those lt_lock_shown() shows of lock kinds), into out (room for
 * n). *other (NULL: not wanted) receives the sum of the rest. Returns
 * how many were written.
 */
size_t lt_snapshot_top(const struct lt_snapshot *s, bool totals, size_t n,
		       bool (*filter)(const struct lt_lock *l, void *arg),
		       void *arg, const struct lt_lock **out,
		       struct lt_figures *other);

/*
 * Adds f into to, as one lock's figures add into another's or into a
 * sum: counts, times and histograms add up, maxima take the larger.
 */
void lt_figures_add(struct lt_figures *to, const struct lt_figures *f);

/* Adds a lock's figures into its kind's totals. */
void lt_kind_figures_add(struct lt_kind_figures *to,
			 const struct lt_figures *f);

/*
 * The totals by kind: the snapshot's own, or, from a source that keeps
 * none (all zero), the sums of its locks by lt_kind_figures_add().
 */
void lt_snapshot_kinds(const struct lt_snapshot *s, bool totals,
		       struct lt_kind_figures out[LT_KIND_NR]);

/* The value below which the given fraction of a histogram's counts fall. */
uint64_t lt_hist_quantile(const uint64_t *hist, size_t buckets, double q);

/*
 * A wait-time quantile of f: the histogram's bucket bound, never above
 * the longest wait actually seen.
 */
uint64_t lt_wait_quantile(const struct lt_figures *f, double q);

/*
 * The time of `skipped` holds that were not timed, at the mean of the
 * sampled ones: those of the same interval (samples, sample_ns), else
 * all the lock's so far (all_samples, all_sample_ns), else 0.
 */
uint64_t lt_hold_estimate(uint64_t skipped, uint64_t samples,
			  uint64_t sample_ns, uint64_t all_samples,
			  uint64_t all_sample_ns);

/* Human form of a duration in ns, e.g. "812.3ms", into buf. */
const char *lt_format_ns(uint64_t ns, char *buf, size_t len);

/*
 * ---- Clocks (clock.c): one reading of time for every consumer ----
 *
 * Nanoseconds; callers that want seconds or milliseconds divide.
 */

/* CLOCK_MONOTONIC: for intervals, deadlines and ages. */
uint64_t lt_mono_ns(void);
/* CLOCK_REALTIME: since the epoch, for the time a figure was taken. */
uint64_t lt_wall_ns(void);

/*
 * ---- Growable arrays (array.c) ----
 */

/*
 * Grows *array, of *cap elements of elem bytes, to hold need at least:
 * the room doubles, from 64, and what is new is zero-filled. Returns 0,
 * or -ENOMEM with the array and *cap as they were.
 */
int lt_grow(void **array, size_t *cap, size_t need, size_t elem);
/*
 * Gives back most of an array that holds far fewer (n) than it could:
 * when the least room from 64 doubling that holds twice n is half of
 * *cap or less, the array shrinks to it. Without memory the larger
 * array stays, as good.
 */
void lt_shrink(void **array, size_t *cap, size_t n, size_t elem);

/* Threads of a live process, from /proc/PID/stat; 1 when it is gone. */
size_t lt_proc_threads(pid_t pid);
/*
 * The roots and every process that descends from one of them, as /proc
 * shows them now, each once: a malloc'd array in *out (NULL when
 * empty); returns how many.
 */
size_t lt_proc_descendants(const pid_t *roots, size_t n_roots, pid_t **out);
/* The processes whose name (/proc/PID/comm) is comm, but self. */
size_t lt_proc_named(const char *comm, pid_t self, pid_t **out);

#endif /* LOCKTOP_COLLECTOR_H */
