// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Spinning on the CPU: the sampling probe's perf events, one per CPU,
 * run while something spins (spin_pace), and the verdicts on the code
 * sites its samples and the tick's meet (spinsite.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "state.h"
#include "spin.skel.h"
#include "sample_event.h"

#define CODE_BEFORE 512 /* bytes read before a site */
#define CODE_AFTER 256 /* and from it on */

/*
 * Before the probe's load: the scheduler tick's hrtimer function, which
 * its tick program samples at. Unless the sampler runs always, or the
 * kernel's symbols do not name the function: then it does, and the tick
 * program is not loaded. The symbols are read after the kernel lock
 * probe's load, so that they name its programs in the stacks it takes;
 * without that probe, nothing else needs them and they go.
 */
void spin_prepare(struct lt_collector *c)
{
	static const char *const names[] = { "tick_nohz_handler",
					     "tick_sched_timer" };
	uint64_t addr = 0;
	size_t i;

	if (!c->sampler.spin_always && !c->naming.ksyms)
		c->naming.ksyms = lt_ksyms_load_running();
	for (i = 0;
	     !c->sampler.spin_always && c->naming.ksyms && !addr && i < 2; i++)
		addr = lt_ksyms_addr(c->naming.ksyms, names[i]);
	if (!c->obj.klock) {
		lt_ksyms_free(c->naming.ksyms);
		c->naming.ksyms = NULL;
	}
	c->obj.spin->rodata->targ_tick_fn = addr;
	if (!addr) {
		c->sampler.spin_always = true;
		bpf_program__set_autoload(c->obj.spin->progs.lt_spin_tick,
					  false);
	}
}

/* The sampler's events run (on) or not, from now on. */
static void run_sampler(struct lt_collector *c, bool on)
{
	uint64_t now = lt_mono_ns();
	size_t i;

	/* The tick stops sampling as the events start, and the other way
	 * round: no moment has both, or neither for long. */
	if (on)
		__atomic_store_n(&c->obj.spin->bss->sampler_on, 1,
				 __ATOMIC_SEQ_CST);
	for (i = 0; i < c->sampler.n_spin; i++)
		ioctl(c->sampler.spin_fds[i],
		      on ? PERF_EVENT_IOC_ENABLE : PERF_EVENT_IOC_DISABLE, 0);
	if (!on)
		__atomic_store_n(&c->obj.spin->bss->sampler_on, 0,
				 __ATOMIC_SEQ_CST);
	if (c->sampler.sampler_on && !on)
		c->sampler.sampler_ns += now - c->sampler.sampler_since;
	c->sampler.sampler_on = on;
	c->sampler.sampler_since = now;
}

/* Something spun this recently: the sampler runs. */
#define SAMPLER_LINGER_NS 10000000000ULL

void spin_pace(struct lt_collector *c)
{
	uint64_t at, now;
	bool want;

	if (!c->sampler.n_spin || c->sampler.spin_always)
		return;
	at = __atomic_load_n(&c->obj.spin->bss->spun_at, __ATOMIC_RELAXED);
	now = lt_mono_ns();
	want = at && (at > now || now - at < SAMPLER_LINGER_NS);
	if (want != c->sampler.sampler_on)
		run_sampler(c, want);
}

/* The sampler's state for the snapshot, and how long it ran. */
void spin_sampler_read(struct lt_collector *c)
{
	uint64_t ns = c->sampler.sampler_ns;

	if (c->sampler.sampler_on)
		ns += lt_mono_ns() - c->sampler.sampler_since;
	c->snap.spin_sampler = !c->sampler.n_spin    ? "off" :
			       c->sampler.sampler_on ? "on" :
						       "tick";
	c->snap.spin_sampler_total_s = ns / 1e9;
	c->snap.spin_sampler_delta_s = (ns - c->sampler.sampler_ns_read) / 1e9;
	c->sampler.sampler_ns_read = ns;
}

/* One sampling event per CPU, attached to the sampler program. */
static int attach_events(struct lt_collector *c, char *err, size_t err_len)
{
	bool clock = false;
	int cpu, fd;
	long err_no;

	c->sampler.spin_fds =
		calloc((size_t)c->opts.ncpus, sizeof(*c->sampler.spin_fds));
	c->sampler.spin_links =
		calloc((size_t)c->opts.ncpus, sizeof(*c->sampler.spin_links));
	if (!c->sampler.spin_fds || !c->sampler.spin_links)
		return -ENOMEM;
	for (cpu = 0; cpu < c->opts.ncpus; cpu++) {
		fd = lt_sample_event(c->sampler.spin_hz, cpu, &clock);
		if (fd < 0) {
			if (errno == ENODEV || errno == ENXIO)
				continue; /* a possible CPU not online */
			err_no = errno;
			snprintf(err, err_len,
				 "cannot sample CPU %d for spinning: %s "
				 "(--spin-hz 0 turns sampling off)",
				 cpu, strerror((int)err_no));
			return (int)-err_no;
		}
		c->sampler.spin_fds[c->sampler.n_spin] = fd;
		c->sampler.spin_links[c->sampler.n_spin] =
			bpf_program__attach_perf_event(
				c->obj.spin->progs.lt_spin_sample, fd);
		if (!c->sampler.spin_links[c->sampler.n_spin]) {
			err_no = errno;
			close(fd);
			snprintf(err, err_len,
				 "cannot attach the spin sampler: %s",
				 strerror((int)err_no));
			return (int)-err_no;
		}
		c->sampler.n_spin++;
	}
	return 0;
}

int spin_attach(struct lt_collector *c, char *err, size_t err_len)
{
	int ret;

	/* Sampling off is the spin kind off: sched_yield is not counted. */
	if (!c->sampler.spin_hz)
		return 0;
	c->obj.spin->bss->sampler_on = 1; /* the tick waits for the events */
	ret = spin_bpf__attach(c->obj.spin);
	if (ret) {
		snprintf(err, err_len,
			 "cannot attach the sched_yield and tick probes: %s",
			 strerror(-ret));
		return ret;
	}
	ret = attach_events(c, err, err_len);
	if (ret)
		return ret;
	/* Attached events run; unless always, they wait for spinning. */
	c->sampler.sampler_on = true;
	c->sampler.sampler_since = lt_mono_ns();
	if (!c->sampler.spin_always)
		run_sampler(c, false);
	return 0;
}

void spin_detach(struct lt_collector *c)
{
	size_t i;

	for (i = 0; i < c->sampler.n_spin; i++) {
		bpf_link__destroy(c->sampler.spin_links[i]);
		close(c->sampler.spin_fds[i]);
	}
	c->sampler.n_spin = 0;
	free(c->sampler.spin_links);
	free(c->sampler.spin_fds);
	c->sampler.spin_links = NULL;
	c->sampler.spin_fds = NULL;
}

/*
 * The code around ip in the process whose memory is fd, into buf (room
 * for CODE_BEFORE + CODE_AFTER): *base is the address of buf[0]. Pages
 * that cannot be read end it (before ip, they start it later).
 */
static size_t read_code(int fd, uint64_t ip, uint8_t *buf, uint64_t *base)
{
	uint64_t from = ip > CODE_BEFORE ? ip - CODE_BEFORE : 0, a;
	size_t n = 0, piece;
	ssize_t got;

	*base = from;
	for (a = from; a < ip + CODE_AFTER; a += piece) {
		piece = 4096 - (a & 4095);
		if (a + piece > ip + CODE_AFTER)
			piece = ip + CODE_AFTER - a;
		got = pread(fd, buf + n, piece, (off_t)a);
		if (got == (ssize_t)piece) {
			n += piece;
			continue;
		}
		if (a >= ip)
			break;
		n = 0; /* a hole before ip: start after it */
		*base = a + piece;
	}
	return n;
}

/* A relax helper at addr in the process whose memory is at *fd. */
static bool is_relax(void *arg, uint64_t addr)
{
	uint8_t b[16];

	return pread(*(int *)arg, b, sizeof(b), (off_t)addr) ==
		       (ssize_t)sizeof(b) &&
	       lt_spin_relax_code(b, sizeof(b));
}

/* A place in an image judged to hold no spin loop, for every process. */
struct spin_memo {
	struct lt_image_key k;
	bool none;
};

/*
 * The verdict on site k, from its process's code and where it lies. Most
 * sites the sampler meets are no spin loop, and a server's processes
 * meet the same ones: a place in an image found to hold none is not read
 * again in another process (a loop's verdict holds its addresses, and is
 * made in each).
 */
static struct lt_spin_site judge(struct lt_collector *c,
				 const struct lt_spin_key *k)
{
	static const struct lt_spin_site none = { .verdict = LT_SPIN_NONE };
	uint8_t buf[CODE_BEFORE + CODE_AFTER];
	struct lt_spin_code code = { .b = buf, .is_relax = is_relax };
	const struct lt_vma *vma;
	struct spin_memo *m = NULL;
	struct lt_image_key ik;
	struct lt_spin_site v;
	char path[64];
	bool created;
	int fd;

	vma = lt_vma_cache_find(&c->naming.vmas, (pid_t)k->tgid, k->ip);
	if (lt_image_key_of(vma, k->ip, 1 + k->pad, &ik))
		m = lt_image_memo_state(&c->sampler.memo, sizeof(*m), &ik,
					&created);
	if (m && m->none)
		return none;
	snprintf(path, sizeof(path), "/proc/%u/mem", k->tgid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return none;
	code.arg = &fd;
	code.n = read_code(fd, k->ip, buf, &code.base);
	v = lt_spin_judge(&code, k->ip, k->pad == 1);
	close(fd);
	if (v.verdict != LT_SPIN_NONE && vma &&
	    !lt_spin_image_may_lock(vma->path))
		v = none;
	/* Only what was read whole is a verdict for every process. */
	if (m && v.verdict == LT_SPIN_NONE && code.n == sizeof(buf))
		m->none = true;
	return v;
}

/* Judges the sites the sampler met since the last look. */
void spin_judge(struct lt_collector *c)
{
	struct lt_spin_key k;
	struct lt_spin_site v;
	int qfd, sfd;

	if (!c->obj.spin)
		return;
	qfd = bpf_map__fd(c->obj.spin->maps.new_spin_sites);
	sfd = bpf_map__fd(c->obj.spin->maps.spin_sites);
	while (!bpf_map_lookup_and_delete_elem(qfd, NULL, &k)) {
		v = judge(c, &k);
		bpf_map_update_elem(sfd, &k, &v, BPF_EXIST);
		if (!lt_grow((void **)&c->sampler.spin_keys,
			     &c->sampler.cap_spin_keys,
			     c->sampler.n_spin_keys + 1,
			     sizeof(*c->sampler.spin_keys)))
			c->sampler.spin_keys[c->sampler.n_spin_keys++] = k;
	}
}

/* Entries of threads that have not spun for this long go. */
#define SPUN_FORGET_NS 10000000000ULL

/* Counts a thread spinning now on the lock of t; 0, or -ENOMEM. */
static int count_spinning(struct lt_collector *c,
			  const struct lt_spin_thread *t)
{
	ssize_t i =
		lt_index_find(&c->locktab.lock_ix, &t->lock, c->locktab.lstate);

	if (i < 0)
		return 0; /* its samples are not read yet: next time */
	if (!c->locktab.locks[i].spinning_now++)
		return push_index(&c->sampler.spinning, &c->sampler.n_spinning,
				  &c->sampler.cap_spinning, (size_t)i);
	return 0;
}

/*
 * The threads spinning now, per lock: those whose latest sample, taken
 * within the interval this read closes, was in a spin loop. Threads that
 * spun no more for a while leave the probe's map.
 */
int spin_threads_read(struct lt_collector *c)
{
	uint64_t now = lt_mono_ns(), window;
	struct lt_spin_thread t;
	__u32 tid, next;
	size_t i, kept = 0;
	int fd, err = 0;
	bool more;

	for (i = 0; i < c->sampler.n_spinning; i++)
		c->locktab.locks[c->sampler.spinning[i]].spinning_now = 0;
	c->sampler.n_spinning = 0;
	if (!c->obj.spin || !c->sampler.n_spin)
		return 0;
	window = (uint64_t)(c->snap.interval_s * 1e9);
	fd = bpf_map__fd(c->obj.spin->maps.spin_threads);
	more = !bpf_map_get_next_key(fd, NULL, &next);
	while (more && !err) {
		tid = next;
		more = !bpf_map_get_next_key(fd, &tid, &next);
		if (bpf_map_lookup_elem(fd, &tid, &t))
			continue;
		if (!t.ts || (t.ts < now && now - t.ts > SPUN_FORGET_NS)) {
			bpf_map_delete_elem(fd, &tid);
			continue;
		}
		kept++;
		if (t.ts > now || now - t.ts <= window)
			err = count_spinning(c, &t);
	}
	/* No thread left: samples that do not spin stop looking, unless
	 * one that spun came in meanwhile (it sets the flag itself, which
	 * this store may undo; the look again sets it back). */
	if (!kept && !err) {
		__atomic_store_n(&c->obj.spin->bss->spin_seen, 0,
				 __ATOMIC_SEQ_CST);
		if (!bpf_map_get_next_key(fd, NULL, &next))
			__atomic_store_n(&c->obj.spin->bss->spin_seen, 1,
					 __ATOMIC_SEQ_CST);
	}
	return err;
}
