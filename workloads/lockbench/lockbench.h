/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * lockbench: many workers hammer one hash table that lives in a shared
 * file mapping, under a choice of lock backends, and count every wait.
 */
#ifndef LOCKBENCH_H
#define LOCKBENCH_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum lb_exit {
	LB_EXIT_OK = 0,
	LB_EXIT_FAIL = 1,
	LB_EXIT_USAGE = 2,
	LB_EXIT_STUCK = 3,
};

enum lb_lock_kind {
	LB_LOCK_FCNTL,
	LB_LOCK_OFD,
	LB_LOCK_FLOCK,
	LB_LOCK_MUTEX,
	LB_LOCK_SPIN,
	LB_LOCK_ADAPTIVE,
	LB_LOCK_KINDS
};

enum lb_io_kind { LB_IO_MMAP, LB_IO_PREAD, LB_IO_LSEEK, LB_IO_KINDS };

enum lb_op {
	LB_OP_FETCH,
	LB_OP_STORE,
	LB_OP_DELETE,
	LB_OP_APPEND,
	LB_OP_LOCKSTORE,
	LB_OPS
};

extern const char *const lb_lock_names[LB_LOCK_KINDS];
extern const char *const lb_io_names[LB_IO_KINDS];
extern const char *const lb_op_names[LB_OPS];

int lb_lock_kind_parse(const char *s);
int lb_io_kind_parse(const char *s);

#define LB_MAX_PROCS 4096
#define LB_DEFAULT_STUCK_TIMEOUT 10.0

struct lb_config {
	enum lb_lock_kind lock;
	enum lb_io_kind io;
	long procs;
	long loops;
	long hash;
	long long keys; /* 0: four per chain */
	uint64_t seed;
	bool threads;
	const char *path; /* NULL: a fresh name under $TMPDIR or /tmp */
	bool keep;
	bool json;
	long hold_us;
	long think_us;
	long kill_holder;
	double stuck_timeout;
	bool no_repair;
	bool tdb; /* also tdb's record, open and active locks */
	long reopen; /* --tdb: close and reopen every this many ops; 0 never */
	long read_us; /* --tdb: busy-wait on a fetched record, under its lock */
	bool blocking; /* file locks: one blocking call each, as tdb takes them */
};

/*
 * File layout. Everything a worker touches is at a fixed byte offset so
 * that a futex or a byte-range lock seen from outside (dev, inode,
 * offset) can be matched to the lock statistics kept here.
 *
 *   0            header (one page)
 *   lock_off     lock slots, 64 bytes each: slot 0 guards the freelist,
 *                slot 1 + c guards chain c
 *   head_off     chain heads, one 64-bit record offset per chain
 *   journal_off  one undo journal per chain
 *   pool_off     fixed-size records; free ones form the freelist
 */
#define LB_MAGIC 0x314843424b434f4cULL
#define LB_VERSION 1
#define LB_HEADER_SIZE 4096u
#define LB_LOCK_SLOT 64u
#define LB_DATA_MAX 40u

struct lb_header {
	uint64_t magic;
	uint32_t version;
	uint32_t lock_kind;
	uint64_t hash;
	uint64_t nrecords;
	uint64_t lock_off;
	uint64_t head_off;
	uint64_t journal_off;
	uint64_t pool_off;
	uint64_t size;
	uint64_t free_head; /* guarded by lock slot 0 */
};

/*
 * --tdb: tdb's lock bytes in the header page (OPEN_LOCK and ACTIVE_LOCK in
 * tdb's own layout), and the mark of a record deleted while a reader held
 * its record lock (tdb's TDB_DEAD_MAGIC), kept in the record's chain field.
 */
#define LB_OPEN_LOCK 0u
#define LB_ACTIVE_LOCK 4u
#define LB_DEFAULT_REOPEN 500
#define LB_REC_DEAD 0x80000000u

struct lb_record {
	uint64_t next;
	uint32_t key;
	uint32_t chain;
	uint32_t len;
	uint32_t csum;
	uint8_t data[LB_DATA_MAX];
};

#define LB_JOURNAL_IDLE 0u
#define LB_JOURNAL_ACTIVE 1u
#define LB_J_HEAD 1u /* head_before holds the old chain head */
#define LB_J_REC 2u /* rec_old holds the old image of rec_off */

struct lb_journal {
	uint32_t state;
	uint32_t op;
	uint32_t flags;
	uint32_t key;
	uint64_t head_before;
	uint64_t rec_off;
	uint64_t new_rec; /* allocated by the update; freed on rollback */
	struct lb_record rec_old;
	uint8_t pad[24];
};

struct lb_layout {
	uint64_t nlocks;
	uint64_t lock_off;
	uint64_t head_off;
	uint64_t journal_off;
	uint64_t pool_off;
	uint64_t nrecords;
	uint64_t keys;
	uint64_t size;
};

/* Log-linear wait histogram: 8 sub-buckets per power of two. */
#define LB_HIST_BUCKETS 512
unsigned lb_hist_bucket(uint64_t ns);
uint64_t lb_hist_upper(unsigned bucket);

struct lb_lockstat {
	uint64_t acquires;
	uint64_t contended;
	uint64_t wait_ns;
	/* adaptive: acquisitions that called FUTEX_WAIT at least once;
	 * mutex, fcntl, ofd, flock: those whose blocking call slept (a
	 * voluntary context switch) */
	uint64_t slept;
	/* adaptive only: the part of the waits spent in FUTEX_WAIT */
	uint64_t futex_waits; /* FUTEX_WAIT calls */
	uint64_t sleep_ns; /* time inside those calls */
	/* spin and adaptive: the waiter's own CPU time while it spun, a
	 * part of wait_ns (adaptive: before its first FUTEX_WAIT) */
	uint64_t spin_cpu_ns;
	uint64_t hold_ns; /* from the acquire's return to the release's call */
	/* from the granted call's start to the release's return: the
	 * hold as the lock saw it lies between hold_ns and this */
	uint64_t hold_span_ns;
	uint64_t held_at; /* this worker's: when it last got the lock */
	uint64_t called_at; /* this worker's: when the granted call began */
};

/* --tdb: the fcntl locks tdb takes besides its chain and freelist locks. */
enum lb_tdb_lock { LB_TL_RECORD, LB_TL_OPEN, LB_TL_ACTIVE, LB_TL_KINDS };

extern const char *const lb_tdb_lock_names[LB_TL_KINDS];

/* One kind of tdb lock, counted as a kernel tracer sees fcntl calls. */
struct lb_flstat {
	uint64_t acquires; /* granted lock calls */
	uint64_t trylock_failures; /* refused non-blocking calls */
	uint64_t contended; /* refused tries followed by a blocking call */
	uint64_t slept; /* those blocking calls that slept in the kernel */
	uint64_t wait_ns; /* time in those blocking calls */
	uint64_t wait_max;
	uint64_t hold_ns; /* from each grant to the unlock call */
	uint64_t hold_span_ns; /* from the granted call to the unlock's return */
	uint64_t held_at; /* this worker's: when it last got the lock */
	uint64_t called_at; /* this worker's: when the granted call began */
};

struct lb_tdbstat {
	struct lb_flstat tl[LB_TL_KINDS];
	uint64_t reads; /* record read locks taken by fetches */
	uint64_t probes; /* write-lock probes before a delete or a purge */
	uint64_t refused; /* probes refused: the record was being read */
	uint64_t dead_marked; /* deletes that left the record dead */
	uint64_t dead_purged; /* dead records unlinked and freed later */
	uint64_t opens; /* opens, the first ones included */
	uint64_t reopens; /* closes and reopens every --reopen ops */
};

/* One slot per worker in the shared statistics region. */
struct lb_wstats {
	int32_t pid;
	uint32_t gen;
	uint64_t rng; /* generator state at the start of the current op */
	uint64_t loops_done;
	uint64_t end_ns; /* when this slot's last loop finished */
	uint64_t ops[LB_OPS];
	uint64_t ok;
	uint64_t inserts;
	uint64_t deletes;
	uint64_t allocs;
	uint64_t frees;
	uint64_t repairs;
	uint64_t owner_dead;
	uint64_t wait_max;
	/* Record I/O system calls (--io pread or lseek) and their bytes. */
	uint64_t io_reads, io_writes;
	uint64_t io_read_bytes, io_write_bytes;
	struct lb_tdbstat tdb;
	uint32_t kill_plan; /* kills this slot is to suffer */
	uint32_t kill_done;
	int32_t at_kill_point;
	uint64_t hist[LB_HIST_BUCKETS];
} __attribute__((aligned(64)));

struct lb_shared {
	int32_t ready; /* workers waiting at the start line */
	int32_t abort;
	int32_t stuck;
	uint32_t stuck_lock;
	int32_t stuck_holder;
	int32_t stuck_waiter;
	int32_t failed;
	double stuck_waited;
	char fail_msg[256];
};

struct lb_result {
	double elapsed;
	double user;
	double sys;
	long vcsw;
	long ivcsw;
	uint64_t ops;
	uint64_t ok;
	uint64_t opcount[LB_OPS];
	uint64_t inserts;
	uint64_t deletes;
	uint64_t allocs;
	uint64_t frees;
	uint64_t repairs;
	uint64_t owner_dead;
	uint64_t io_reads, io_writes;
	uint64_t io_read_bytes, io_write_bytes;
	uint64_t kills;
	uint64_t acquires;
	uint64_t contended;
	uint64_t wait_ns;
	uint64_t slept;
	uint64_t futex_waits;
	uint64_t sleep_ns;
	uint64_t spin_cpu_ns;
	uint64_t hold_ns;
	uint64_t hold_span_ns;
	uint64_t wait_max;
	uint64_t wait_p50;
	uint64_t wait_p99;
	uint64_t hist[LB_HIST_BUCKETS];
	uint64_t records;
	uint64_t free_records;
	struct lb_tdbstat tdb;
	uint64_t record_offsets; /* distinct record offsets locked */
	uint64_t dead_records; /* dead records in the chains at the end */
	uint64_t check_repairs;
	uint64_t check_owner_dead;
	bool stuck;
	bool failed;
	unsigned nerrors;
	char errors[8][200];
};

struct lb_run {
	const struct lb_config *cfg;
	struct lb_layout lay;
	char path[PATH_MAX];
	bool path_made;
	int fd;
	dev_t dev;
	ino_t ino;
	uint8_t *map;
	struct lb_shared *sh;
	struct lb_wstats *ws;
	struct lb_lockstat *ls; /* procs rows of nstat entries */
	uint8_t *recbits; /* --tdb: procs bitmaps of record offsets locked */
	size_t recbits_size; /* bytes of one worker's bitmap */
	size_t stats_size;
	void *stats_map;
	unsigned nstat;
	pid_t *pids;
	struct lb_result res;
};

struct lb_worker {
	struct lb_run *run;
	unsigned idx;
	int fd;
	pid_t tid;
	unsigned depth; /* flock nesting: every lock is the one file lock */
	bool direct; /* the final check: mmap access, no locking */
	uint64_t rng;
	struct lb_wstats *st;
	struct lb_lockstat *ls;
	uint8_t *recbits;
};

/* util.c */
uint64_t lb_now_ns(void);
uint64_t lb_thread_cpu_ns(void);
long lb_thread_vcsw(void);
int lb_setlk_cmd(const struct lb_run *run, bool wait);
uint64_t lb_rand(uint64_t *state);
uint64_t lb_seed_mix(uint64_t seed, uint64_t stream);
void lb_cpu_relax(void);
bool lb_pid_alive(pid_t pid);
void lb_busy_wait_us(long us);
void lb_sleep_us(long us);
void lb_format_ns(char *buf, size_t len, uint64_t ns);
void lb_result_error(struct lb_result *res, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void lb_worker_die(struct lb_worker *w, const char *fmt, ...)
	__attribute__((format(printf, 2, 3), noreturn));

/* recio.c */
void lb_io_read(struct lb_worker *w, uint64_t off, void *buf, size_t len);
void lb_io_write(struct lb_worker *w, uint64_t off, const void *buf,
		 size_t len);

/* table.c */
int lb_layout_compute(const struct lb_config *cfg, struct lb_layout *lay);
void lb_table_format(struct lb_run *run);
int lb_table_op(struct lb_worker *w);
void lb_table_repair_chain(struct lb_worker *w, uint32_t chain);
void lb_table_check(struct lb_run *run);

/* locks.c */
uint64_t lb_lock_offset(const struct lb_run *run, unsigned idx);
void lb_lock_name(const struct lb_run *run, unsigned idx, char *buf,
		  size_t len);
unsigned lb_lock_nstat(const struct lb_config *cfg, uint64_t nlocks);
void lb_locks_init(struct lb_run *run);
int lb_lock_acquire(struct lb_worker *w, unsigned idx);
void lb_lock_release(struct lb_worker *w, unsigned idx);
void lb_locks_check(struct lb_run *run, struct lb_worker *w);

/* tdbmodel.c */
struct json_object;
void lb_tdb_open(struct lb_worker *w);
void lb_tdb_close(struct lb_worker *w);
void lb_tdb_maybe_reopen(struct lb_worker *w);
void lb_tdb_record_lock(struct lb_worker *w, uint64_t off);
void lb_tdb_record_unlock(struct lb_worker *w, uint64_t off);
bool lb_tdb_record_probe(struct lb_worker *w, uint64_t off);
void lb_tdb_merge(struct lb_run *run);
void lb_tdb_report_human(const struct lb_run *run);
void lb_tdb_report_json(const struct lb_run *run, struct json_object *o);

/* run.c */
int lb_run_main(const struct lb_config *cfg);

/* report.c */
void lb_report_human(const struct lb_run *run);
void lb_report_json(const struct lb_run *run);

/* compare.c */
int lb_compare_main(int argc, char **argv);

#endif
