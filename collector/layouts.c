// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Known lock layouts: which lock of a store a byte range or a lock word
 * of its file is, told by the file's own header. `layouts` has one row
 * per layout: the magic its files start with, its locks at fixed places,
 * and for the rest (chains, records) a function of the header.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include "state.h"

#define HEAD_LEN 256
#define HEAD_CACHE 64
/* A file not recognised is looked at again after this long: a store
 * locks its file before it writes the header. */
#define RECHECK_NS 1000000000ULL

struct layout;

/* The first bytes of a file, by its identity. */
struct file_head {
	uint64_t dev, ino;
	uint64_t read_ns; /* 0: an empty slot */
	const struct layout *layout; /* NULL: none */
	size_t n;
	unsigned char b[HEAD_LEN];
	char shown[LT_NAME_LEN - 48]; /* the full path it was named by */
};

struct lt_layouts {
	struct file_head heads[HEAD_CACHE];
	size_t next; /* the slot a new file takes */
};

/* A lock at a fixed place: a byte range, or a lock word at start. */
struct fixed_lock {
	uint64_t start, end; /* end inclusive */
	bool word;
	const char *what;
};

struct layout {
	const char *name; /* the key's prefix */
	const char *magic;
	size_t magic_len;
	const struct fixed_lock *fixed; /* ends with what == NULL */
	bool (*name_at)(const struct file_head *h,
			const struct lt_layout_place *p, char *what,
			size_t len);
};

static uint32_t le32(const struct file_head *h, size_t off)
{
	uint32_t v;

	if (off + 4 > h->n)
		return 0;
	memcpy(&v, h->b + off, 4);
	return v;
}

/* ---- tdb (Samba's lib/tdb: tdb_private.h, lock.c, mutex.c) ---- */

#define TDB_HEADER_LEN 168 /* sizeof(struct tdb_header), FREELIST_TOP */
#define TDB_HASH_SIZE 36 /* offsetof(struct tdb_header, hash_size) */
#define TDB_FEATURES 60 /* feature_flags */
#define TDB_MUTEX_SIZE 64 /* mutex_size */
#define TDB_FEATURE_MUTEX 1
#define TDB_MUTEX_LEN 40 /* sizeof(pthread_mutex_t), x86-64 */
/* struct tdb_mutexes at the file's start: the header, allrecord_mutex,
 * short allrecord_lock, then hashchains[]: 0 the freelist, 1 + N chain N. */
#define TDB_ALLRECORD_MUTEX TDB_HEADER_LEN
#define TDB_CHAIN_MUTEXES 216

static const struct fixed_lock tdb_fixed[] = {
	{ 0, 0, false, "open lock" }, /* OPEN_LOCK */
	{ 4, 4, false, "active lock" }, /* ACTIVE_LOCK */
	{ 8, 8, false, "transaction lock" }, /* TRANSACTION_LOCK */
	/* lock_offset(-1) = FREELIST_TOP - 4 */
	{ TDB_HEADER_LEN - 4, TDB_HEADER_LEN - 4, false, "freelist" },
	{ TDB_ALLRECORD_MUTEX, TDB_ALLRECORD_MUTEX, true, "allrecord mutex" },
	{ TDB_CHAIN_MUTEXES, TDB_CHAIN_MUTEXES, true, "freelist" },
	{ 0 },
};

/* A mutex-mode lock word: a chain's mutex. */
static bool tdb_word(const struct file_head *h, uint64_t off, char *what,
		     size_t len)
{
	uint32_t hash = le32(h, TDB_HASH_SIZE);
	uint64_t i;

	if (!(le32(h, TDB_FEATURES) & TDB_FEATURE_MUTEX) ||
	    off >= le32(h, TDB_MUTEX_SIZE) || off < TDB_CHAIN_MUTEXES ||
	    (off - TDB_CHAIN_MUTEXES) % TDB_MUTEX_LEN)
		return false;
	i = (off - TDB_CHAIN_MUTEXES) / TDB_MUTEX_LEN;
	if (!i || i > hash)
		return false;
	snprintf(what, len, "chain %" PRIu64, i - 1);
	return true;
}

/*
 * A byte range: lock_offset(N) = FREELIST_TOP + 4 * N is chain N's
 * byte; the allrecord lock takes the chains' bytes (in halves while
 * others hold some) and lock_offset(hash_size) to the end; past the
 * hash table a byte is the lock of the record at that offset.
 */
static bool tdb_range(const struct file_head *h, uint64_t start, uint64_t end,
		      char *what, size_t len)
{
	uint64_t hash = le32(h, TDB_HASH_SIZE);
	uint64_t chains_end = TDB_HEADER_LEN + 4 * hash;

	if (!hash || start < TDB_HEADER_LEN)
		return false;
	if (start == TDB_HEADER_LEN && end == LT_OFFSET_EOF) {
		snprintf(what, len, "allrecord lock");
	} else if (start == chains_end && end == LT_OFFSET_EOF) {
		snprintf(what, len, "all records");
	} else if (start < chains_end && (start - TDB_HEADER_LEN) % 4 == 0 &&
		   end == start) {
		snprintf(what, len, "chain %" PRIu64,
			 (start - TDB_HEADER_LEN) / 4);
	} else if (start < chains_end && end < chains_end && end > start &&
		   (start - TDB_HEADER_LEN) % 4 == 0 &&
		   (end + 1 - TDB_HEADER_LEN) % 4 == 0) {
		snprintf(what, len, "chains %" PRIu64 "..%" PRIu64,
			 (start - TDB_HEADER_LEN) / 4,
			 (end - TDB_HEADER_LEN) / 4);
	} else if (start >= chains_end + 4 && end == start) {
		snprintf(what, len, "record 0x%" PRIx64, start);
	} else {
		return false;
	}
	return true;
}

static bool tdb_name_at(const struct file_head *h,
			const struct lt_layout_place *p, char *what, size_t len)
{
	return p->word ? tdb_word(h, p->start, what, len) :
			 tdb_range(h, p->start, p->end, what, len);
}

/* ---- LMDB's lock file (liblmdb mdb.c, MDB_txninfo, POSIX mutexes) ---- */

static const struct fixed_lock lmdb_fixed[] = {
	/* mdb_env_excl_lock(): shared while the environment is open,
	 * exclusive while the lock file is set up */
	{ 0, 0, false, "environment lock" },
	/* mt1.mtb: magic, format, then mtb_rmutex */
	{ 8, 8, true, "reader table mutex" },
	/* mt2, the next cache line: mt2_wmutex */
	{ 64, 64, true, "writer mutex" },
	{ 0 },
};

/* mdb_reader_pid(): each process with readers locks the byte at its pid. */
static bool lmdb_name_at(const struct file_head *h,
			 const struct lt_layout_place *p, char *what,
			 size_t len)
{
	(void)h;
	if (p->word || p->start != p->end)
		return false;
	snprintf(what, len, "reader pid %" PRIu64, p->start);
	return true;
}

/* ---- SQLite's database file (os_unix.c's lock bytes) ---- */

#define SQLITE_PENDING 0x40000000ULL
#define SQLITE_SHARED_FIRST (SQLITE_PENDING + 2)
#define SQLITE_SHARED_SIZE 510

static const struct fixed_lock sqlite_fixed[] = {
	{ SQLITE_PENDING, SQLITE_PENDING, false, "pending byte" },
	{ SQLITE_PENDING + 1, SQLITE_PENDING + 1, false, "reserved byte" },
	{ SQLITE_SHARED_FIRST, SQLITE_SHARED_FIRST + SQLITE_SHARED_SIZE - 1,
	  false, "shared range" },
	{ 0 },
};

/* One row per layout. */
static const struct layout layouts[] = {
	{ "tdb", "TDB file\n", 10, tdb_fixed, tdb_name_at },
	{ "lmdb", "\xde\xc0\xef\xbe", 4, lmdb_fixed,
	  lmdb_name_at }, /* MDB_MAGIC */
	{ "sqlite", "SQLite format 3", 16, sqlite_fixed, NULL },
};

#define N_LAYOUTS (sizeof(layouts) / sizeof(layouts[0]))

/* Reads the head of the file at path, if it is the file (dev, ino). */
static void head_read(struct file_head *h, const char *path)
{
	struct stat st;
	ssize_t n;
	size_t i;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);

	h->n = 0;
	h->layout = NULL;
	if (fd < 0)
		return;
	if (!fstat(fd, &st) && S_ISREG(st.st_mode) && st.st_ino == h->ino &&
	    st.st_dev == makedev(h->dev >> 20, h->dev & 0xfffff)) {
		n = pread(fd, h->b, sizeof(h->b), 0);
		h->n = n > 0 ? (size_t)n : 0;
	}
	close(fd);
	for (i = 0; i < N_LAYOUTS; i++)
		if (h->n >= layouts[i].magic_len &&
		    !memcmp(h->b, layouts[i].magic, layouts[i].magic_len))
			h->layout = &layouts[i];
}

/* The cached head of the file at p, or NULL. */
static struct file_head *head_cached(struct lt_layouts *L,
				     const struct lt_layout_place *p)
{
	size_t i;

	for (i = 0; L && i < HEAD_CACHE; i++)
		if (L->heads[i].read_ns && L->heads[i].dev == p->dev &&
		    L->heads[i].ino == p->ino)
			return &L->heads[i];
	return NULL;
}

static struct file_head *head_of(struct lt_collector *c,
				 const struct lt_layout_place *p)
{
	struct lt_layouts *L = c->naming.layouts;
	struct file_head *h;

	if (!L) {
		L = c->naming.layouts = calloc(1, sizeof(*L));
		if (!L)
			return NULL;
	}
	h = head_cached(L, p);
	if (!h && !p->path)
		return NULL;
	if (!h) {
		h = &L->heads[L->next];
		L->next = (L->next + 1) % HEAD_CACHE;
		h->dev = p->dev;
		h->ino = p->ino;
		h->read_ns = 0;
		h->shown[0] = '\0'; /* another file's */
	}
	if (!h->read_ns ||
	    (!h->layout && p->path && lt_mono_ns() - h->read_ns > RECHECK_NS)) {
		head_read(h, p->path);
		h->read_ns = lt_mono_ns();
	}
	return h;
}

const char *layouts_name(struct lt_collector *c,
			 const struct lt_layout_place *p, char *what,
			 size_t len)
{
	const struct fixed_lock *f;
	struct file_head *h;

	if (!p->ino)
		return NULL;
	h = head_of(c, p);
	if (!h || !h->layout)
		return NULL;
	for (f = h->layout->fixed; f && f->what; f++) {
		if (f->word == p->word && f->start == p->start &&
		    (p->word || f->end == p->end)) {
			snprintf(what, len, "%s", f->what);
			return h->layout->name;
		}
	}
	if (h->layout->name_at && h->layout->name_at(h, p, what, len))
		return h->layout->name;
	return NULL;
}

const char *layouts_path(struct lt_collector *c,
			 const struct lt_layout_place *p, const char *path)
{
	struct file_head *h = head_cached(c->naming.layouts, p);

	if (!h)
		return path;
	if (path[0] == '/') {
		snprintf(h->shown, sizeof(h->shown), "%s", path);
		return path;
	}
	return h->shown[0] ? h->shown : path;
}

void layouts_free(struct lt_collector *c)
{
	free(c->naming.layouts);
	c->naming.layouts = NULL;
}
