// SPDX-License-Identifier: LGPL-2.1-or-later
/* Stacks: the worst of each lock, unwound while its process lives. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "state.h"
#include "futex.skel.h"

/* Keeps a release stack among the lock's top ones, by the waiting it
 * ended, then by its releases. */
static void rank_release(struct lock_state *s, const struct release_top *r)
{
	size_t k = s->n_rel;

	if (!r->count && !r->ns)
		return;
	if (k == LT_TOP_RELEASES) {
		if (r->ns < s->rel[k - 1].ns ||
		    (r->ns == s->rel[k - 1].ns &&
		     r->count <= s->rel[k - 1].count))
			return;
		k--;
	} else {
		s->n_rel++;
	}
	for (; k > 0 &&
	       (s->rel[k - 1].ns < r->ns ||
		(s->rel[k - 1].ns == r->ns && s->rel[k - 1].count < r->count));
	     k--)
		s->rel[k] = s->rel[k - 1];
	s->rel[k] = *r;
}

static int merge_stack(struct lt_collector *c, const void *key,
		       const void *value)
{
	const struct lt_stack_key *sk = key;
	const struct lt_stack_stat *percpu = value;
	uint64_t ns = 0, count = 0, tgid = 0;
	struct lock_state *s;
	ssize_t i;
	int cpu;

	i = lt_index_find(&c->locktab.lock_ix, &sk->lock, c->locktab.lstate);
	if (i < 0)
		return 0;
	for (cpu = 0; cpu < c->opts.ncpus; cpu++) {
		ns += percpu[cpu].ns;
		count += percpu[cpu].count;
		if (percpu[cpu].tgid)
			tgid = percpu[cpu].tgid;
	}
	s = &c->locktab.lstate[i];
	if (sk->role == LT_STACK_RELEASE) {
		struct release_top r = { .stack_id = sk->stack_id,
					 .count = count,
					 .ns = ns,
					 .pid = (pid_t)tgid };

		if (!s->rel_read) {
			s->n_rel = 0;
			s->rel_read = true;
		}
		rank_release(s, &r);
	} else if (ns > s->top_stack_ns) {
		s->top_stack_ns = ns;
		s->top_stack = sk->stack_id;
		s->top_stack_pid = (pid_t)tgid;
	}
	/* No process can wait there again: exits_forget() takes it from
	 * the kernel's map once this read has its figures (the text shown
	 * stays). */
	if (c->exits.n_gone && exits_private_gone(c, &sk->lock)) {
		if (lt_grow((void **)&c->exits.gone_stacks,
			    &c->exits.cap_gone_stacks,
			    c->exits.n_gone_stacks + 1,
			    sizeof(*c->exits.gone_stacks)))
			return -ENOMEM;
		c->exits.gone_stacks[c->exits.n_gone_stacks++] = *sk;
	}
	return 0;
}

/*
 * The frames of a stack: unwound with CFI from the snapshot of its first
 * wait, or as far as the kernel's frame-pointer walk went (which, in code
 * without frame pointers, runs into data after the first frame).
 */
static int stack_frames(struct lt_collector *c, const struct lt_stack_key *sk,
			pid_t pid, __u64 *ips)
{
	__u32 id = (__u32)sk->stack_id;
	int n = 0, k;

	if (!bpf_map_lookup_elem(bpf_map__fd(c->obj.futex->maps.stack_snaps),
				 sk, c->stacktab.snap_buf))
		n = lt_unwind(c->naming.syms, pid,
			      (const uint64_t *)c->stacktab.snap_buf->regs,
			      c->stacktab.snap_buf->data,
			      c->stacktab.snap_buf->len, (uint64_t *)ips,
			      LT_STACK_DEPTH);
	if (n > 1)
		return n;
	if (bpf_map_lookup_elem(bpf_map__fd(c->obj.futex->maps.stacks), &id,
				ips))
		return 0;
	for (k = 0; k < LT_STACK_DEPTH && ips[k] >= 0x10000; k++)
		;
	return k;
}

/* A stack as text, one frame a line; NULL if it has no frames. */
static char *stack_text(struct lt_collector *c, const struct lt_stack_key *sk,
			pid_t pid)
{
	__u64 ips[LT_STACK_DEPTH];
	size_t len = 0, cap = LT_STACK_DEPTH * (LT_SYM_LEN + 1);
	char *text, line[LT_SYM_LEN];
	int k, n;

	n = stack_frames(c, sk, pid, ips);
	if (!n)
		return NULL;
	text = malloc(cap);
	if (!text)
		return NULL;
	text[0] = '\0';
	for (k = 0; k < n; k++) {
		/* Past a frame nothing can name, the walk is not to be
		 * trusted: the process is gone, or the frames are data. */
		if (!lt_symbolize(c->naming.syms, pid, ips[k], line,
				  sizeof(line))) {
			if (k)
				break;
			snprintf(line, sizeof(line), "0x%llx",
				 (unsigned long long)ips[k]);
		}
		len += snprintf(text + len, cap - len, "%s%s", len ? "\n" : "",
				line);
		if (len >= cap)
			break;
	}
	return text;
}

/*
 * Unwinds the stacks the probes kept since the last look, at once, while
 * their processes most likely live: a short-lived one may be gone by the
 * next read, and its modules with it.
 */
void stacks_resolve(struct lt_collector *c)
{
	int qfd = bpf_map__fd(c->obj.futex->maps.new_snaps);
	int sfd = bpf_map__fd(c->obj.futex->maps.stack_snaps);
	struct lt_stack_key sk;
	bool created;
	ssize_t i;

	while (!bpf_map_lookup_and_delete_elem(qfd, NULL, &sk)) {
		if (bpf_map_lookup_elem(sfd, &sk, c->stacktab.snap_buf))
			continue;
		i = lt_index_state(
			&c->stacktab.stext_ix, (void **)&c->stacktab.stexts,
			&c->stacktab.n_stexts, &c->stacktab.cap_stexts,
			sizeof(*c->stacktab.stexts), &sk, sizeof(sk), &created);
		if (i >= 0 && created)
			c->stacktab.stexts[i].text = stack_text(
				c, &sk, (pid_t)c->stacktab.snap_buf->tgid);
		/* The text is ours now: the snapshot's room goes to the
		 * next new stack. */
		bpf_map_delete_elem(sfd, &sk);
	}
}

/* The lock's worst stack as text, one frame a line. */
static void show_stack(struct lt_collector *c, struct lock_state *s)
{
	struct lt_stack_key sk = { .lock = s->key,
				   .stack_id = s->top_stack,
				   .role = LT_STACK_WAIT };
	ssize_t i;
	char *text;

	if (s->top_stack < 0 || s->top_stack == s->shown_stack)
		return;
	i = lt_index_find(&c->stacktab.stext_ix, &sk, c->stacktab.stexts);
	if (i >= 0 && c->stacktab.stexts[i].text)
		text = strdup(c->stacktab.stexts[i].text);
	else
		text = stack_text(c, &sk, s->top_stack_pid);
	if (!text)
		return;
	free(s->stack);
	s->stack = text;
	s->shown_stack = s->top_stack;
}

/*
 * A stack's text, kept for the collector's life once made: from its
 * snapshot's unwind, else made now; NULL when nothing names a frame.
 */
static const char *kept_text(struct lt_collector *c,
			     const struct lt_stack_key *sk, pid_t pid)
{
	bool created;
	ssize_t i;

	i = lt_index_state(&c->stacktab.stext_ix, (void **)&c->stacktab.stexts,
			   &c->stacktab.n_stexts, &c->stacktab.cap_stexts,
			   sizeof(*c->stacktab.stexts), sk, sizeof(*sk),
			   &created);
	if (i < 0)
		return NULL;
	if (!c->stacktab.stexts[i].text)
		c->stacktab.stexts[i].text = stack_text(c, sk, pid);
	return c->stacktab.stexts[i].text;
}

/* The lock's release stacks, as text, for its snapshot. */
static void show_releases(struct lt_collector *c, struct lock_state *s,
			  struct lt_lock *l)
{
	struct lt_stack_key sk = { .lock = s->key, .role = LT_STACK_RELEASE };
	const char *text;
	size_t k;

	size_t j;

	l->n_releases = 0;
	for (k = 0; k < s->n_rel; k++) {
		sk.stack_id = s->rel[k].stack_id;
		text = kept_text(c, &sk, s->rel[k].pid);
		if (!text)
			continue;
		/* Code without frame pointers gives the kernel's walk
		 * frames of its own each time: one unwound stack may come
		 * under several ids, and is one release stack. */
		for (j = 0; j < l->n_releases; j++)
			if (!strcmp(l->releases[j].stack, text))
				break;
		if (j == l->n_releases) {
			l->releases[j].stack = text;
			l->releases[j].count = 0;
			l->releases[j].ns = 0;
			l->n_releases++;
		}
		l->releases[j].count += s->rel[k].count;
		l->releases[j].ns += s->rel[k].ns;
	}
}

int stacks_read(struct lt_collector *c)
{
	size_t i;
	int err;

	for (i = 0; i < c->locktab.n_locks; i++) {
		c->locktab.lstate[i].top_stack_ns = 0;
		c->locktab.lstate[i].rel_read = false;
	}
	c->exits.n_gone_stacks = 0;
	err = mapio_each_entry(c, bpf_map__fd(c->obj.futex->maps.lock_stacks),
			       sizeof(struct lt_stack_key),
			       sizeof(struct lt_stack_stat), true, merge_stack,
			       NULL);
	if (err)
		return err;
	for (i = 0; i < c->locktab.n_locks; i++) {
		show_stack(c, &c->locktab.lstate[i]);
		c->locktab.locks[i].stack = c->locktab.lstate[i].stack;
		show_releases(c, &c->locktab.lstate[i], &c->locktab.locks[i]);
	}
	return 0;
}
