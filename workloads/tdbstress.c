// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * tdbstress: Samba's tdb (the system's libtdb) under tdbtorture's mix of
 * operations, with no transactions and no traversals, as in the tdb
 * mutex announcement's runs. N processes share one database; each runs
 * LOOPS operations on short random keys: a reopen, delete, store,
 * append, a chain-locked read-modify-write, or a fetch. This is the real store
 * that lockbench --tdb imitates, for checking the probes and their cost
 * against software none of us wrote.
 *
 *   tdbstress [-n PROCS] [-l LOOPS] [-H HASH] [-m] [-s SEED] [-p PATH]
 *             [-w SECONDS]
 *
 * -m uses tdb's robust mutexes for the chains (TDB_MUTEX_LOCKING); the
 * record, open and active locks stay fcntl locks, as tdb takes them.
 * Prints one JSON object: the run's size, its elapsed time and the
 * children's user and system CPU. -w keeps the database open in the
 * parent for SECONDS after the children end (or until a signal ends
 * it), as a server's parent keeps its stores once a client's process
 * has gone.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <tdb.h>
#include <time.h>
#include <unistd.h>

/* tdbtorture's sizes and odds: one in N. */
#define REOPEN_PROB 30
#define KEYLEN 3
#define DATALEN 100
#define DELETE_PROB 8
#define STORE_PROB 4
#define APPEND_PROB 6
#define LOCKSTORE_PROB 5

struct opts {
	int procs;
	long loops;
	int hash;
	bool mutex;
	unsigned seed;
	const char *path;
	unsigned int linger; /* -w: seconds the parent keeps the file */
};

static TDB_DATA random_buf(unsigned *rs, int maxlen)
{
	int len = 1 + rand_r(rs) % maxlen, i;
	unsigned char *p = malloc((size_t)len);
	TDB_DATA d = { .dptr = p, .dsize = p ? (size_t)len : 0 };

	for (i = 0; p && i < len; i++)
		p[i] = (unsigned char)('a' + rand_r(rs) % 26);
	return d;
}

/* One of tdbtorture's operations, chosen as it chooses. */
static int one_op(struct tdb_context *db, unsigned *rs)
{
	TDB_DATA k = random_buf(rs, KEYLEN), d = random_buf(rs, DATALEN);
	TDB_DATA got;
	int ret = 0;

	if (!k.dptr || !d.dptr) {
		ret = -1;
	} else if (rand_r(rs) % REOPEN_PROB == 0) {
		/* Closes and opens again: the open lock, the active lock. */
		ret = tdb_reopen(db);
	} else if (rand_r(rs) % DELETE_PROB == 0) {
		tdb_delete(db, k); /* a missing key is no failure */
	} else if (rand_r(rs) % STORE_PROB == 0) {
		ret = tdb_store(db, k, d, TDB_REPLACE);
	} else if (rand_r(rs) % APPEND_PROB == 0) {
		ret = tdb_append(db, k, d);
	} else if (rand_r(rs) % LOCKSTORE_PROB == 0) {
		ret = tdb_chainlock(db, k);
		if (!ret) {
			got = tdb_fetch(db, k);
			ret = tdb_store(db, k, got.dptr ? got : d, TDB_REPLACE);
			free(got.dptr);
			tdb_chainunlock(db, k);
		}
	} else {
		got = tdb_fetch(db, k);
		free(got.dptr);
	}
	free(k.dptr);
	free(d.dptr);
	return ret;
}

static int flags_of(const struct opts *o)
{
	return TDB_INCOMPATIBLE_HASH | (o->mutex ? TDB_MUTEX_LOCKING : 0);
}

/* A child reopens the database it inherited, as tdbtorture's do: a
 * process has each tdb open once, with its own descriptor and locks. */
static int child(const struct opts *o, struct tdb_context *db, int id, int go)
{
	unsigned rs = o->seed * 7919u + (unsigned)id;
	char c;
	long i;

	/* All start together: the parent closes the pipe once all forked. */
	while (read(go, &c, 1) < 0 && errno == EINTR)
		;
	close(go);

	if (tdb_reopen(db)) {
		fprintf(stderr, "tdbstress: child %d: tdb_reopen %s: %s\n", id,
			o->path, strerror(errno));
		return 1;
	}
	for (i = 0; i < o->loops; i++)
		if (one_op(db, &rs)) {
			fprintf(stderr, "tdbstress: child %d: %s\n", id,
				tdb_errorstr(db));
			tdb_close(db);
			return 1;
		}
	tdb_close(db);
	return 0;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double tv_s(struct timeval tv)
{
	return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

static int parse(int argc, char **argv, struct opts *o)
{
	int c;

	while ((c = getopt(argc, argv, "n:l:H:ms:p:w:")) != -1) {
		switch (c) {
		case 'n':
			o->procs = atoi(optarg);
			break;
		case 'l':
			o->loops = atol(optarg);
			break;
		case 'H':
			o->hash = atoi(optarg);
			break;
		case 'm':
			o->mutex = true;
			break;
		case 's':
			o->seed = (unsigned)strtoul(optarg, NULL, 0);
			break;
		case 'p':
			o->path = optarg;
			break;
		case 'w':
			o->linger = (unsigned int)strtoul(optarg, NULL, 10);
			break;
		default:
			return -1;
		}
	}
	if (o->procs < 1 || o->procs > 4096 || o->loops < 1 || o->hash < 1 ||
	    optind != argc)
		return -1;
	return 0;
}

int main(int argc, char **argv)
{
	struct opts o = { .procs = 100,
			  .loops = 2000,
			  .hash = 1000,
			  .seed = (unsigned)getpid(),
			  .path = "tdbstress.tdb" };
	struct tdb_context *db;
	struct rusage ru;
	int i, st, failed = 0, go[2];
	double t0;

	if (parse(argc, argv, &o)) {
		fprintf(stderr,
			"usage: tdbstress [-n PROCS] [-l LOOPS] [-H HASH] [-m] "
			"[-s SEED] [-p PATH] [-w SECONDS]\n");
		return 2;
	}
	if (o.mutex && !tdb_runtime_check_for_robust_mutexes()) {
		fprintf(stderr, "tdbstress: no robust mutexes here\n");
		return 1;
	}
	/* Made empty here, and held open so no child clears it again. */
	db = tdb_open(o.path, o.hash, flags_of(&o) | TDB_CLEAR_IF_FIRST,
		      O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (!db) {
		fprintf(stderr, "tdbstress: tdb_open %s: %s\n", o.path,
			strerror(errno));
		return 1;
	}
	if (pipe(go)) {
		perror("tdbstress: pipe");
		return 1;
	}
	for (i = 0; i < o.procs; i++) {
		pid_t pid = fork();

		if (pid < 0) {
			perror("tdbstress: fork");
			failed++;
			break;
		}
		if (!pid) {
			close(go[1]);
			_exit(child(&o, db, i, go[0]));
		}
	}
	t0 = now_s();
	close(go[0]);
	close(go[1]);
	while (wait(&st) > 0)
		failed += !WIFEXITED(st) || WEXITSTATUS(st);
	getrusage(RUSAGE_CHILDREN, &ru);
	printf("{\"procs\": %d, \"loops\": %ld, \"hash\": %d, \"locking\": "
	       "\"%s\", \"elapsed_s\": %.3f, \"user_s\": %.3f, \"sys_s\": "
	       "%.3f, \"failed\": %d}\n",
	       o.procs, o.loops, o.hash, o.mutex ? "mutex" : "fcntl",
	       now_s() - t0, tv_s(ru.ru_utime), tv_s(ru.ru_stime), failed);
	fflush(stdout);
	if (o.linger)
		sleep(o.linger);
	tdb_close(db);
	return failed ? 1 : 0;
}
