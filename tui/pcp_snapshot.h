/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The PCP source's instances, by group, with the values of their last
 * fetches, and the snapshot made of them (pcp_snapshot.c): shared by
 * source_pcp.c and pcp_snapshot.c only.
 */
#ifndef LOCKTOP_PCP_SNAPSHOT_H
#define LOCKTOP_PCP_SNAPSHOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "collector.h"

/* Which table a metric's instances belong to; G_AGENT: the metrics of the
 * whole agent and its probes, one instance. */
enum group { G_LOCK, G_KIND, G_PROC, G_FILE, G_PROG, G_HIST, G_AGENT, G_NR };

/*
 * Number slots of an instance; strings have their own. Each value has a
 * slot of its own, but where another group's value is a lock's figure
 * in the same sense it goes in that figure's slot: a kind's and a
 * process's waits and wait time are S_FIG_waits and S_FIG_wait_ns (the
 * same figure, summed by kind or process), a file's I/O under a lock is
 * S_FIG_io_under_lock_ns, and a file's device and inode are S_DEV and
 * S_INO, as a lock's are.
 */
enum slot {
/* A lock's figures, as figures.def lists them: S_FIG_waits... */
#define LT_COUNT(NAME, STAT, JSON, PCP, RECORD) S_FIG_##NAME,
#define LT_DERIVED(NAME, JSON, PCP, RECORD) S_FIG_##NAME,
#include "figures.def"
	S_WAIT_MAX,
	S_HOLD_MAX,
	S_WAITERS,
	S_SPINNING,
	S_HOLDER,
	S_HOLDER_TID,
	S_ID,
	S_ADDRESS,
	S_DEV,
	S_INO,
	S_START,
	S_END,
	S_PID,
	S_NHOLDERS,
	S_NWAITERS,
	S_SITE_PROCS, /* a lock site's processes */
	S_PARTY, /* the top holders' and waiters' numbers: PARTY_SLOT() */
	/* The top holders' threads' TIDs: HOLDER_TID() */
	S_HOLDER_TIDS = S_PARTY + 2 * LT_TOP_PARTIES * 3,
	/* A process's and a file's pread/pwrite calls and time */
	S_IO_COUNT = S_HOLDER_TIDS + LT_TOP_PARTIES,
	S_IO_NS,
	/* A process's */
	S_TOP_LOCK,
	/* A file's */
	S_IO_BYTES,
	S_READS,
	S_WRITES,
	S_READ_BYTES,
	S_WRITE_BYTES,
	/* The agent's */
	S_EVENTS,
	S_DROPS,
	S_NS_PER_EVENT, /* a double, stored as its bits */
	S_CPU, /* a double, stored as its bits */
	S_DEADLOCKS,
	S_LOCK_ENTRIES,
	S_LOCK_CAPACITY,
	S_FILE_ENTRIES,
	S_FILE_CAPACITY,
	S_PARTY_ENTRIES,
	S_PARTY_CAPACITY,
	S_FOLDING,
	S_IO_TRACED, /* locktop.control.io: 0 with the agent's -I */
	/* A probe program's */
	S_RUNS,
	S_RUN_NS,
	/* A histogram bucket's */
	S_COUNT,
	S_NSLOTS
};

enum str_slot {
	T_KIND,
	T_HOLDER_COMM,
	T_HOLDER_THREAD,
	T_KEY,
	T_COMM,
	T_PIDS,
	T_HOLDERS,
	T_WAITERS,
	T_STACK,
	T_CYCLES,
	T_KERNEL_TYPE,
	T_CALLER,
	T_PARTY_COMM, /* the top holders' and waiters' comms: PARTY_COMM() */
	/* The top holders' threads' names: HOLDER_THREAD() */
	T_HOLDER_THREADS = T_PARTY_COMM + 2 * LT_TOP_PARTIES,
	T_NSTRS = T_HOLDER_THREADS + LT_TOP_PARTIES,
};

/* The numbers of a lock's holder or waiter of a rank, 0 the first. */
enum party_num { P_PID, P_COUNT, P_NS };
#define PARTY_SLOT(waiter, rank, num) \
	(S_PARTY + (LT_TOP_PARTIES * (waiter) + (rank)) * 3 + (num))
#define PARTY_COMM(waiter, rank) \
	(T_PARTY_COMM + LT_TOP_PARTIES * (waiter) + (rank))
/* A holder's thread that held most, of a rank, 0 the first: 0 and no
 * name where a process holds the lock, and from an agent or archive
 * without them. */
#define HOLDER_TID(rank) (S_HOLDER_TIDS + (rank))
#define HOLDER_THREAD(rank) (T_HOLDER_THREADS + (rank))

/* One instance of one group: a lock, a process, a file... */
struct ent {
	int inst;
	unsigned int seen; /* the fetch that last had it */
	char name[LT_NAME_LEN];
	uint64_t cur[S_NSLOTS], prev[S_NSLOTS], base[S_NSLOTS];
	bool counter[S_NSLOTS];
	bool have[S_NSLOTS];
	char *str[T_NSTRS];
	pid_t *pids;
	size_t n_pids, cap_pids;
};

struct table {
	struct ent *ents;
	size_t n, cap;
	int *hash; /* index + 1 by instance; open addressing */
	size_t hash_cap;
};

/* The snapshot made of the tables, and the arrays it points into. */
struct pcp_snap {
	struct lt_snapshot snap;
	struct lt_lock *locks;
	struct lt_proc *procs;
	struct lt_file *files;
	struct lt_probe_cost *probes;
	struct lt_deadlock *deadlocks;
	size_t cap_locks, cap_procs, cap_files, cap_probes, cap_deadlocks;
};

/*
 * Makes ps->snap of the instances that fetch gen had: deltas since the
 * fetch before, totals since the first. -ENOMEM without memory.
 */
int pcp_snap_build(struct pcp_snap *ps, struct table tables[G_NR],
		   unsigned int gen);
void pcp_snap_free(struct pcp_snap *ps);

#endif
