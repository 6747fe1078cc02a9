// SPDX-License-Identifier: LGPL-2.1-or-later
/* Which waits are locks: the call sites, judged by their functions. */
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "state.h"
#include "futex.skel.h"

/* glibc's wait helpers: the caller says what they wait for. */
static const char *const helper_fns[] = {
	"futex_abstimed_wait",
	"futex_wait",
	"syscall",
};

static const char *const lock_fns[] = {
	"mutex", "rwlock", "lll_lock", "lll_clocklock", "spin_lock",
};

/* C++'s atomic waits (std::latch, std::counting_semaphore, atomic<T>::wait)
 * come through libstdc++'s __platform_wait. */
static const char *const event_fns[] = {
	"cond",	   "sem_",	"barrier",	 "join",	"once",
	"sigwait", "nanosleep", "platform_wait", "atomic_wait",
};

static bool name_has(const char *name, const char *const *parts, size_t n,
		     bool prefix)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (prefix ? !strncmp(name, parts[i], strlen(parts[i])) :
			     strstr(name, parts[i]) != NULL)
			return true;
	return false;
}

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

/* The verdict on the function at ip in pid; see enum lt_site_verdict. */
static struct lt_site judge_function(struct lt_collector *c, pid_t pid,
				     uint64_t ip, bool *found)
{
	/* No verdict: the wait is a lock's, as one no symbol names. */
	struct lt_site v = { .verdict = LT_SITE_VALUE };
	const char *name;
	char buf[LT_SYM_LEN];
	int64_t ra_off;

	/* ip follows the syscall or call instruction: look inside it. */
	*found = ip && lt_function_at(c->naming.syms, pid, ip - 1, buf,
				      sizeof(buf), &ra_off);
	if (!*found)
		return v;
	name = buf;
	while (*name == '_')
		name++;
	if (name_has(name, helper_fns, N_OF(helper_fns), true)) {
		if (ra_off >= 0 && ra_off < 4096) {
			v.verdict = LT_SITE_CALLER;
			v.ra_off = (__s32)ra_off;
		}
	} else if (name_has(name, lock_fns, N_OF(lock_fns), false)) {
		v.verdict = LT_SITE_LOCK;
	} else if (name_has(name, event_fns, N_OF(event_fns), false)) {
		v.verdict = LT_SITE_EVENT;
	}
	return v;
}

struct site_memo {
	struct lt_image_key k;
	struct lt_site v;
	bool found; /* v is its function's verdict: a symbol was found */
};

/*
 * The verdict on site ip in pid: judged once for its place in its image,
 * which every process that maps the image shares (a server's forked
 * workers meet the same sites).
 */
static struct lt_site judge_site(struct lt_collector *c, pid_t pid, uint64_t ip)
{
	const struct lt_vma *vma;
	struct lt_image_key k;
	struct site_memo *m = NULL;
	struct lt_site v;
	bool created, found;

	vma = ip ? lt_vma_cache_find(&c->naming.vmas, pid, ip - 1) : NULL;
	if (lt_image_key_of(vma, ip - 1, 0, &k))
		m = lt_image_memo_state(&c->callsites.memo, sizeof(*m), &k,
					&created);
	if (m && m->found)
		return m->v;
	/* No symbol (yet: the process may have ended first) is no verdict
	 * to give every process. */
	v = judge_function(c, pid, ip, &found);
	if (m && found) {
		m->v = v;
		m->found = true;
	}
	return v;
}

/*
 * Judges the call sites the probes met since the last read. A site's
 * first waits are classified by value alone; later ones by the verdict.
 */
void sites_judge(struct lt_collector *c)
{
	int qfd = bpf_map__fd(c->obj.futex->maps.new_sites);
	int sfd = bpf_map__fd(c->obj.futex->maps.sites);
	struct lt_site_key k;
	struct lt_site v;

	while (!bpf_map_lookup_and_delete_elem(qfd, NULL, &k)) {
		v = judge_site(c, (pid_t)k.tgid, k.ip);
		bpf_map_update_elem(sfd, &k, &v, BPF_EXIST);
		if (!lt_grow((void **)&c->callsites.site_keys,
			     &c->callsites.cap_sites, c->callsites.n_sites + 1,
			     sizeof(*c->callsites.site_keys)))
			c->callsites.site_keys[c->callsites.n_sites++] = k;
	}
}
