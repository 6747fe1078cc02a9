/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Collector internals shared between its files; not installed. */
#ifndef LOCKTOP_COLLECTOR_INTERNAL_H
#define LOCKTOP_COLLECTOR_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "collector.h"

/*
 * Checks what the probes need and mends what it can (tracefs). Returns 0,
 * or a negative errno with a message naming the fix in err.
 */
int lt_check_environment(char *err, size_t err_len);

/*
 * locktop's PID namespace (the inode of /proc/self/ns/pid), for the
 * probes to name processes as it does; 0 in the initial namespace,
 * where the kernel's numbers are its own. Returns 0, or a negative errno
 * with a message in err when /proc is another namespace's.
 */
int lt_pid_namespace(uint64_t *ino, char *err, size_t err_len);

/* Whether pid is a kernel thread (PF_KTHREAD in /proc/PID/stat). */
bool lt_proc_is_kthread(pid_t pid);

/* The process of thread tid, from /proc/TID/status; 0 if it cannot say. */
pid_t lt_proc_tgid(pid_t tid);

/* The path of descriptor fd in pid, if it still is the file (dev, ino). */
bool lt_proc_fd_path(pid_t pid, int fd, uint64_t dev, uint64_t ino, char *buf,
		     size_t len);

/*
 * The name of process pid, into comm (LT_COMM_SIZE bytes): as the probes
 * kept it in their map comms_fd (once per process, so that one that ended
 * keeps it), else /proc/PID/comm's, else "?".
 */
void lt_proc_comm(int comms_fd, pid_t pid, char *comm);

/* One line of /proc/PID/maps. */
struct lt_vma {
	uint64_t start, end, pgoff;
	uint64_t ino; /* 0 for anonymous memory */
	uint32_t dev; /* as the kernel keeps it: major << 20 | minor */
	char perms[5];
	const char *path; /* "" for anonymous memory; in the line parsed */
};

/*
 * Parses one maps line, in place: its path is ended where the line ends
 * and vma->path points to it. Returns 0, or -1 when it is not one.
 */
int lt_parse_maps_line(char *line, struct lt_vma *vma);

/* A person's name for address addr inside vma (NULL vma: not mapped). */
void lt_name_address(const struct lt_vma *vma, uint64_t addr, char *buf,
		     size_t len);
/* The path vma maps, without the " (deleted)" of a removed file. */
void lt_vma_path(const struct lt_vma *vma, char *buf, size_t len);

/*
 * A PostgreSQL relation's file, by its tablespace, database and file
 * number, under the data directory dir: base/DB/FILE, global/FILE or
 * pg_tblspc/SPC/PG_.../DB/FILE, into out. False when there is no such
 * file with data.
 */
bool lt_relation_file(const char *dir, uint32_t spc, uint32_t db, uint32_t file,
		      char *out, size_t len);

struct lt_where;

/*
 * A futex's name from what the probe saw at the first wait. Returns
 * false when only the full path, from /proc, would do (a shared file).
 */
bool lt_name_where(const struct lt_where *w, uint64_t addr, char *buf,
		   size_t len);

/* The mappings of one process, sorted by address. */
struct lt_vmas {
	pid_t pid;
	struct lt_vma *v;
	size_t n;
	char *text; /* the maps file, which the paths point into */
	bool gone; /* its maps could not be read: none */
	unsigned long long read; /* lt_vma_cache.read when loaded */
	unsigned long long used; /* ... when last asked for */
	unsigned long long again; /* ... when last read again on a miss */
};

int lt_vmas_load(pid_t pid, struct lt_vmas *out);
const struct lt_vma *lt_vmas_find(const struct lt_vmas *vmas, uint64_t addr);
/*
 * The mapping of the program or library image that v (one of vmas) is
 * part of: v itself when it maps a file privately, the image's last file
 * mapping when v is the anonymous mapping right after it (the rest of
 * its .bss); NULL when v is neither.
 */
const struct lt_vma *lt_vmas_image(const struct lt_vmas *vmas,
				   const struct lt_vma *v);
void lt_vmas_free(struct lt_vmas *vmas);

/*
 * The mappings of the processes the collector asked about lately, kept
 * across reads: a process maps its images once, and 32 smbd forked from
 * one parent would otherwise each have their maps read for every lock,
 * holder and call site they bring. An entry read during the read now
 * (read) is fresh; an older one is used where what it says can be
 * checked (a futex's mapping against what the probe saw at its wait) or
 * does not change while the process lives (its images' code), and is
 * read again where it cannot. An ended process's entry goes.
 */
#define LT_VMA_CACHE 64
/* Reads an entry may serve before it is read again in any case. */
#define LT_VMA_KEEP_READS 60
struct lt_vma_cache {
	struct lt_vmas v[LT_VMA_CACHE];
	size_t n;
	unsigned long long read; /* the read now, counted from 0 */
	unsigned long long tick;
};

/* The mappings of process pid, as last read (read now if never). */
const struct lt_vmas *lt_vma_cache_get(struct lt_vma_cache *vc, pid_t pid);
/* The same, read during the read now. */
const struct lt_vmas *lt_vma_cache_fresh(struct lt_vma_cache *vc, pid_t pid);
/* The mapping of addr in process pid: as last read, or read now when
 * that had none there. */
const struct lt_vma *lt_vma_cache_find(struct lt_vma_cache *vc, pid_t pid,
				       uint64_t addr);
/*
 * The mapping of addr in process pid, as read during the read now; where
 * that has none, read once more (at most once a process a read): the
 * mapping may be newer than that read, or one a kernel reading maps
 * under per-VMA locks skipped while it was split or merged. *vmas: the
 * process's mappings it came from.
 */
const struct lt_vma *lt_vma_cache_find_fresh(struct lt_vma_cache *vc, pid_t pid,
					     uint64_t addr,
					     const struct lt_vmas **vmas);
/* A read ends: what was read so far is no longer fresh. */
void lt_vma_cache_next_read(struct lt_vma_cache *vc);
/* Process pid ended: its entry goes (another may get its PID). */
void lt_vma_cache_drop(struct lt_vma_cache *vc, pid_t pid);
void lt_vma_cache_forget(struct lt_vma_cache *vc);

/*
 * A place in a program's or library's file, the same in every process
 * that maps it: what a call site or a spin loop is judged by, once for
 * all of them. tag tells apart judgements of one place.
 */
struct lt_image_key {
	uint64_t ino, off;
	uint32_t dev, tag;
};

/* The key of addr in vma, when vma maps a file's code or read-only data
 * privately; false otherwise (anonymous or writable memory). */
bool lt_image_key_of(const struct lt_vma *vma, uint64_t addr, uint32_t tag,
		     struct lt_image_key *k);

/*
 * Judgements by image place: states of a fixed size, each starting with
 * its struct lt_image_key. At most LT_IMAGE_MEMO of them are kept.
 */
#define LT_IMAGE_MEMO 65536
struct lt_image_memo {
	struct lt_index *ix;
	void *states;
	size_t n, cap;
};

/* The state of k (size bytes), zero but for its key when *created; NULL
 * when the memo is full or memory ran out. */
void *lt_image_memo_state(struct lt_image_memo *m, size_t size,
			  const struct lt_image_key *k, bool *created);
void lt_image_memo_free(struct lt_image_memo *m);

/* An index from keys at the start of fixed-size entries to positions. */
struct lt_index {
	uint32_t *slot; /* position + 1, 0 for empty */
	size_t size; /* a power of two */
	size_t n;
	size_t key_len;
	size_t stride; /* bytes from one entry to the next */
};

int lt_index_init(struct lt_index *ix, size_t key_len, size_t stride);
void lt_index_free(struct lt_index *ix);
/* The position of key among the entries at base, or -1. */
ssize_t lt_index_find(const struct lt_index *ix, const void *key,
		      const void *base);
/* Indexes entry i (its key already in place at base). */
int lt_index_add(struct lt_index *ix, size_t i, const void *base);
/* The state of key among states of the given size, indexed by ix; one
 * not there yet is added, zero but for its key, and *created says so. */
ssize_t lt_index_state(struct lt_index *ix, void **states, size_t *n,
		       size_t *cap, size_t size, const void *key,
		       size_t key_len, bool *created);
/*
 * Renumbering in two steps that cannot fail once the first succeeded: a
 * table for n entries, then the index remade in it over entries 0..n-1.
 */
uint32_t *lt_index_table(size_t n, size_t *size);
void lt_index_refill(struct lt_index *ix, uint32_t *table, size_t size,
		     size_t n, const void *base);

/* A wait in flight long enough to be part of a deadlock: the process
 * that waits -> the one that holds the lock (0 or less: not known). */
struct lt_wait_edge {
	pid_t waiter, holder;
	uint64_t lock; /* lt_lock.id waited on */
};

struct lt_deadlock;

/*
 * The deadlocks in a wait-for graph of n edges. From each edge in turn,
 * a walk takes its waiter, then each holder met by the first edge that
 * holder waits by, LT_CYCLE_MAX members at most; a walk of two members
 * or more that returns to its start is a deadlock, unless its lowest PID
 * is in one found before. Each is written to out (its members' PIDs and
 * the lock each waits on; comms left empty), max at most. Returns how
 * many were written, or max + 1 when one more was found that did not
 * fit: the same call with room for more writes the same ones first.
 */
size_t lt_find_cycles(const struct lt_wait_edge *edges, size_t n,
		      struct lt_deadlock *out, size_t max);

/* Growable arrays, lt_grow() and lt_shrink(), are in collector.h. */

/* Symbols for user addresses, through elfutils' libdwfl. */
#define LT_SYM_LEN 128
struct lt_symbolizer;
struct lt_symbolizer *lt_symbolizer_new(void);
void lt_symbolizer_free(struct lt_symbolizer *s);
void lt_symbolizer_prune(struct lt_symbolizer *s);
/* Process pid is another program now (an exec): its modules go. */
void lt_symbolizer_forget(struct lt_symbolizer *s, pid_t pid);
int lt_unwind(struct lt_symbolizer *s, pid_t pid, const uint64_t *regs,
	      const void *stack, size_t len, uint64_t *pcs, int max);
bool lt_function_at(struct lt_symbolizer *s, pid_t pid, uint64_t addr,
		    char *name, size_t len, int64_t *ra_off);
/*
 * "func+0x1a (libc.so.6)" for code at addr in pid, "libc.so.6+0x2a1f0"
 * where no symbol precedes it; false if it cannot say.
 */
bool lt_symbolize(struct lt_symbolizer *s, pid_t pid, uint64_t addr, char *buf,
		  size_t len);
/*
 * Data at addr in pid, in the image one of whose mappings holds
 * in_image: "table_lock (prog)", "area+0x40 (prog)" by the symbol that
 * covers it (.symtab, else .dynsym), else "prog+0x44120", the address
 * the image's ELF file gives it; false if it cannot say.
 */
bool lt_name_image(struct lt_symbolizer *s, pid_t pid, uint64_t in_image,
		   uint64_t addr, char *buf, size_t len);
/* A symbol's name as people write it: C++ names demangled. */
void lt_demangle(const char *sym, char *out, size_t len);

/*
 * The kernel's symbols, from a kallsyms file (/proc/kallsyms), sorted by
 * address: functions and data, of the kernel and its modules.
 */
struct lt_ksyms;
struct lt_ksyms *lt_ksyms_load(const char *path);
/*
 * Adds a System.map's data symbols, moved by the offset KASLR gave the
 * image (from _text in both); -1 when the file cannot be read or is not
 * the running build's.
 */
int lt_ksyms_add_map(struct lt_ksyms *k, const char *path);
/* /proc/kallsyms, and where it lists no data, /boot/System.map-RELEASE. */
struct lt_ksyms *lt_ksyms_load_running(void);
void lt_ksyms_free(struct lt_ksyms *k);
/* A symbol's address by name, or 0. */
uint64_t lt_ksyms_addr(const struct lt_ksyms *k, const char *name);
/*
 * The symbol addr falls in (the last one at or below it, of the kernel
 * image or a module): its name, and its type letter and addr's offset
 * into it in *type and *off; NULL below the first.
 */
const char *lt_ksyms_find(const struct lt_ksyms *k, uint64_t addr, char *type,
			  uint64_t *off);
/* Whether addr is in the kernel image's data: [_sdata, _end). */
bool lt_ksyms_static(const struct lt_ksyms *k, uint64_t addr);
/* Whether addr is in the kernel's lock or scheduler text. */
bool lt_ksyms_lock_text(const struct lt_ksyms *k, uint64_t addr);
/* One x86-64 instruction, as far as spin loops need it (x86.c). */
struct lt_x86_insn {
	unsigned int len;
	unsigned int opcode; /* one byte, or 0x0f00 | the second */
	unsigned int reg; /* ModRM reg field, with REX.R */
	int rm; /* the r/m register when mod is 3, else -1 */
	int base; /* the memory operand's base, 16 for RIP, -1: none */
	bool mem; /* has a memory operand */
	bool indexed; /* ... with an index register */
	bool lock, rep, pause;
	bool load; /* reads its memory operand: mov, cmp, test, ... */
	bool atomic; /* xchg, a locked op, cmpxchg, xadd on memory */
	bool branch; /* a relative jump, conditional or not */
	bool jump; /* control does not fall through: jmp, ret */
	bool call; /* clobbers the caller-saved registers */
	int64_t disp;
	int32_t rel; /* branch: the target is the end plus rel */
	unsigned int writes; /* registers written, 1 << enum lt_x86_reg */
};

/* Decodes the instruction at p; returns its length, -1 if unknown. */
int lt_x86_decode(const uint8_t *p, size_t n, struct lt_x86_insn *in);

struct lt_spin_site;

/* Code around a site: b[0..n) at address base, and a way to tell
 * whether the function at an address is a relax helper. */
struct lt_spin_code {
	const uint8_t *b;
	size_t n;
	uint64_t base;
	bool (*is_relax)(void *arg, uint64_t addr);
	void *arg;
};

/* Whether the code b[0..n) is a relax helper: PAUSE; RET. */
bool lt_spin_relax_code(const uint8_t *b, size_t n);

/*
 * The verdict on the code at ip (enum lt_spin_verdict, probes/spin.h).
 * caller: ip is the return address of a call to a relax helper.
 */
struct lt_spin_site lt_spin_judge(const struct lt_spin_code *code, uint64_t ip,
				  bool caller);

/*
 * Whether code in the mapping named image (a path, or "[vdso]" as
 * /proc/PID/maps names it) may spin on a lock of the program: not the
 * kernel's vDSO, whose loops are seqcount reads of its clock data.
 */
bool lt_spin_image_may_lock(const char *image);

#endif /* LOCKTOP_COLLECTOR_INTERNAL_H */
