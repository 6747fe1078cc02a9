// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Lock backends. Each acquisition first tries without blocking; only when
 * that fails does it count as contended, and only the blocking part that
 * follows is timed. That split is the ground truth the probes are held to.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "lockbench.h"

_Static_assert(sizeof(pthread_mutex_t) <= LB_LOCK_SLOT, "mutex slot");

/* Spins of the adaptive lock before it sleeps in the kernel. */
#define ADAPTIVE_SPINS 200
/* Ceiling of the spinlock's exponential backoff, in PAUSEs. */
#define SPIN_BACKOFF_MAX 1024u
/* How long a futex sleeper waits before it looks for a stuck holder. */
#define FUTEX_NAP_NS 50000000L

enum { ACQ_OK, ACQ_BUSY, ACQ_OWNER_DEAD, ACQ_ABORT };

uint64_t lb_lock_offset(const struct lb_run *run, unsigned idx)
{
	if (run->cfg->lock == LB_LOCK_FLOCK)
		return 0;
	return run->lay.lock_off + (uint64_t)idx * LB_LOCK_SLOT;
}

void lb_lock_name(const struct lb_run *run, unsigned idx, char *buf, size_t len)
{
	if (run->cfg->lock == LB_LOCK_FLOCK)
		snprintf(buf, len, "file");
	else if (idx == 0)
		snprintf(buf, len, "freelist");
	else
		snprintf(buf, len, "chain %u", idx - 1);
}

/* flock has one lock for the whole file, so it has one statistics entry. */
unsigned lb_lock_nstat(const struct lb_config *cfg, uint64_t nlocks)
{
	return cfg->lock == LB_LOCK_FLOCK ? 1 : (unsigned)nlocks;
}

static uint32_t *lock_word(const struct lb_run *run, unsigned idx)
{
	return (uint32_t *)(run->map + run->lay.lock_off +
			    (uint64_t)idx * LB_LOCK_SLOT);
}

static pthread_mutex_t *lock_mutex(const struct lb_run *run, unsigned idx)
{
	return (pthread_mutex_t *)lock_word(run, idx);
}

void lb_locks_init(struct lb_run *run)
{
	pthread_mutexattr_t attr;

	if (run->cfg->lock != LB_LOCK_MUTEX)
		return;
	pthread_mutexattr_init(&attr);
	pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
	pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_ROBUST);
	for (uint64_t i = 0; i < run->lay.nlocks; i++)
		pthread_mutex_init(lock_mutex(run, (unsigned)i), &attr);
	pthread_mutexattr_destroy(&attr);
}

static long futex(uint32_t *uaddr, int op, uint32_t val,
		  const struct timespec *ts)
{
	/* No FUTEX_PRIVATE_FLAG: the word is shared through a file mapping. */
	return syscall(SYS_futex, uaddr, op, val, ts, NULL, 0);
}

/*
 * Spin and adaptive locks have no owner-death notice: a holder that dies
 * leaves the word set for good. After --stuck-timeout the waiter reports
 * the lock and the run is aborted instead of hanging.
 */
static bool give_up(struct lb_worker *w, unsigned idx, uint64_t t0,
		    pid_t holder)
{
	struct lb_shared *sh = w->run->sh;
	uint64_t waited;
	int zero = 0;

	if (__atomic_load_n(&sh->abort, __ATOMIC_RELAXED))
		return true;
	waited = lb_now_ns() - t0;
	if (waited < (uint64_t)(w->run->cfg->stuck_timeout * 1e9))
		return false;
	if (__atomic_compare_exchange_n(&sh->stuck, &zero, 1, false,
					__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		sh->stuck_lock = idx;
		sh->stuck_holder = holder;
		sh->stuck_waiter = w->tid;
		sh->stuck_waited = (double)waited / 1e9;
	}
	__atomic_store_n(&sh->abort, 1, __ATOMIC_RELEASE);
	return true;
}

/* The fcntl command of a lock call of the run's kind (fcntl or ofd). */
int lb_setlk_cmd(const struct lb_run *run, bool wait)
{
	if (run->cfg->lock == LB_LOCK_OFD)
		return wait ? F_OFD_SETLKW : F_OFD_SETLK;
	return wait ? F_SETLKW : F_SETLK;
}

static int posix_lock(struct lb_worker *w, unsigned idx, bool wait)
{
	bool ofd = w->run->cfg->lock == LB_LOCK_OFD;
	struct flock fl = { .l_type = F_WRLCK,
			    .l_whence = SEEK_SET,
			    .l_start = (off_t)lb_lock_offset(w->run, idx),
			    .l_len = 1 };
	int cmd = lb_setlk_cmd(w->run, wait);

	for (;;) {
		if (fcntl(w->fd, cmd, &fl) == 0)
			return ACQ_OK;
		if (errno == EINTR)
			continue;
		if (!wait && (errno == EAGAIN || errno == EACCES))
			return ACQ_BUSY;
		/*
		 * Locks are always taken chain first, freelist second, so a
		 * deadlock report can only be the kernel's conservative
		 * detector; waiting again is right.
		 */
		if (wait && errno == EDEADLK) {
			sched_yield();
			continue;
		}
		lb_worker_die(w, "%s lock at offset %llu: %s",
			      ofd ? "F_OFD_SETLK" : "F_SETLK",
			      (unsigned long long)fl.l_start, strerror(errno));
	}
}

static void posix_unlock(struct lb_worker *w, unsigned idx)
{
	struct flock fl = { .l_type = F_UNLCK,
			    .l_whence = SEEK_SET,
			    .l_start = (off_t)lb_lock_offset(w->run, idx),
			    .l_len = 1 };

	/* tdb unlocks with the blocking command (fcntl_unlock()). */
	if (fcntl(w->fd, lb_setlk_cmd(w->run, w->run->cfg->blocking), &fl))
		lb_worker_die(w, "unlock at offset %llu: %s",
			      (unsigned long long)fl.l_start, strerror(errno));
}

static int flock_lock(struct lb_worker *w, bool wait)
{
	for (;;) {
		if (flock(w->fd, LOCK_EX | (wait ? 0 : LOCK_NB)) == 0)
			return ACQ_OK;
		if (errno == EINTR)
			continue;
		if (!wait && errno == EWOULDBLOCK)
			return ACQ_BUSY;
		lb_worker_die(w, "flock: %s", strerror(errno));
	}
}

/* The calling thread's voluntary context switches so far. */
long lb_thread_vcsw(void)
{
	struct rusage ru;

	return getrusage(RUSAGE_THREAD, &ru) ? 0 : ru.ru_nvcsw;
}

/*
 * A refused try is not a sleep: pthread_mutex_lock first tries again in
 * user space, and only when that fails does it wait in the kernel. The
 * thread's voluntary context switches around the blocking call tell the
 * two apart, so `slept` counts what the kernel saw.
 */
static int mutex_lock(struct lb_worker *w, unsigned idx, bool wait)
{
	pthread_mutex_t *m = lock_mutex(w->run, idx);
	long vcsw = wait ? lb_thread_vcsw() : 0;
	int r = wait ? pthread_mutex_lock(m) : pthread_mutex_trylock(m);

	if (wait && lb_thread_vcsw() != vcsw)
		w->ls[idx].slept++;

	switch (r) {
	case 0:
		return ACQ_OK;
	case EBUSY:
		if (!wait)
			return ACQ_BUSY;
		break;
	case EOWNERDEAD:
		return ACQ_OWNER_DEAD;
	default:
		break;
	}
	lb_worker_die(w, "pthread_mutex_%s: %s", wait ? "lock" : "trylock",
		      strerror(r));
}

static bool cas(uint32_t *word, uint32_t from, uint32_t to)
{
	return __atomic_compare_exchange_n(word, &from, to, false,
					   __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
}

/*
 * Test-and-test-and-set: the word holds the owner's tid, 0 when free.
 * Only a contended acquisition gets here, so only it pays for the two
 * reads of the thread's CPU clock around its spin.
 */
static int spin_wait(struct lb_worker *w, unsigned idx, uint64_t t0)
{
	uint32_t *word = lock_word(w->run, idx);
	uint64_t cpu0 = lb_thread_cpu_ns();
	unsigned backoff = 1, rounds = 0;
	int r = ACQ_OK;
	uint32_t v;

	for (;;) {
		v = __atomic_load_n(word, __ATOMIC_RELAXED);
		if (v == 0 && cas(word, 0, (uint32_t)w->tid))
			break;
		for (unsigned i = 0; i < backoff; i++)
			lb_cpu_relax();
		if (backoff < SPIN_BACKOFF_MAX)
			backoff <<= 1;
		if ((++rounds & 15) == 0 && give_up(w, idx, t0, (pid_t)v)) {
			r = ACQ_ABORT;
			break;
		}
	}
	w->ls[idx].spin_cpu_ns += lb_thread_cpu_ns() - cpu0;
	return r;
}

/* adaptive's bounded spin, timed on the thread's CPU clock. */
static bool adaptive_spin(struct lb_worker *w, unsigned idx)
{
	uint32_t *word = lock_word(w->run, idx);
	uint64_t cpu0 = lb_thread_cpu_ns();
	bool got = false;

	for (int i = 0; i < ADAPTIVE_SPINS && !got; i++) {
		got = __atomic_load_n(word, __ATOMIC_RELAXED) == 0 &&
		      cas(word, 0, 1);
		if (!got)
			lb_cpu_relax();
	}
	w->ls[idx].spin_cpu_ns += lb_thread_cpu_ns() - cpu0;
	return got;
}

/*
 * glibc's 0/1/2 futex mutex (free, locked, locked with sleepers), with a
 * bounded spin first: a short critical section is usually over before a
 * sleep and a wake-up would be. The owner's tid sits in the next word,
 * only to name the holder of a stuck lock.
 */
static int adaptive_wait(struct lb_worker *w, unsigned idx, uint64_t t0)
{
	struct lb_lockstat *ls = &w->ls[idx];
	uint32_t *word = lock_word(w->run, idx);
	bool slept = false;
	struct timespec nap = { .tv_nsec = FUTEX_NAP_NS };

	if (adaptive_spin(w, idx))
		return ACQ_OK;
	while (__atomic_exchange_n(word, 2, __ATOMIC_ACQUIRE) != 0) {
		uint64_t s0 = lb_now_ns();
		long r = futex(word, FUTEX_WAIT, 2, &nap);
		int err = errno;

		/* Kept apart so the kernel's view of the sleeps can be
		 * checked without the spinning before them. */
		ls->sleep_ns += lb_now_ns() - s0;
		ls->futex_waits++;
		/* A call that found the word changed returned at once. */
		if (!slept && !(r && err == EAGAIN)) {
			ls->slept++;
			slept = true;
		}
		if (r && err != EAGAIN && err != ETIMEDOUT && err != EINTR)
			lb_worker_die(w, "FUTEX_WAIT: %s", strerror(err));
		if (give_up(w, idx, t0,
			    (pid_t)__atomic_load_n(word + 1, __ATOMIC_RELAXED)))
			return ACQ_ABORT;
	}
	return ACQ_OK;
}

static int backend_lock(struct lb_worker *w, unsigned idx, bool wait,
			uint64_t t0)
{
	switch (w->run->cfg->lock) {
	case LB_LOCK_FCNTL:
	case LB_LOCK_OFD:
		return posix_lock(w, idx, wait);
	case LB_LOCK_FLOCK:
		return flock_lock(w, wait);
	case LB_LOCK_MUTEX:
		return mutex_lock(w, idx, wait);
	case LB_LOCK_SPIN:
		if (!wait)
			return cas(lock_word(w->run, idx), 0,
				   (uint32_t)w->tid) ?
				       ACQ_OK :
				       ACQ_BUSY;
		return spin_wait(w, idx, t0);
	case LB_LOCK_ADAPTIVE:
		if (!wait)
			return cas(lock_word(w->run, idx), 0, 1) ? ACQ_OK :
								   ACQ_BUSY;
		return adaptive_wait(w, idx, t0);
	default:
		break;
	}
	return ACQ_ABORT;
}

int lb_lock_acquire(struct lb_worker *w, unsigned idx)
{
	struct lb_run *run = w->run;
	struct lb_lockstat *ls;
	uint64_t t0, dt;
	int r;

	if (w->direct)
		return 0;
	if (run->cfg->lock == LB_LOCK_FLOCK && w->depth++)
		return 0;
	ls = &w->ls[run->cfg->lock == LB_LOCK_FLOCK ? 0 : idx];
	ls->called_at = lb_now_ns();
	/* --blocking: one blocking call, as tdb_lock() makes; whether it
	 * waited is the kernel's to say, and no truth counts it. */
	r = backend_lock(w, idx, run->cfg->blocking, 0);
	if (r == ACQ_BUSY) {
		/* A file lock's blocking call may find the lock free by now;
		 * whether it slept is what the kernel saw. */
		bool file = run->cfg->lock == LB_LOCK_FCNTL ||
			    run->cfg->lock == LB_LOCK_OFD ||
			    run->cfg->lock == LB_LOCK_FLOCK;
		long vcsw = file ? lb_thread_vcsw() : 0;

		t0 = lb_now_ns();
		ls->called_at = t0;
		r = backend_lock(w, idx, true, t0);
		dt = lb_now_ns() - t0;
		if (file && lb_thread_vcsw() != vcsw)
			ls->slept++;
		ls->contended++;
		ls->wait_ns += dt;
		w->st->hist[lb_hist_bucket(dt)]++;
		if (dt > w->st->wait_max)
			w->st->wait_max = dt;
	}
	if (r == ACQ_ABORT)
		return -1;
	ls->acquires++;
	ls->held_at = lb_now_ns();
	if (run->cfg->lock == LB_LOCK_ADAPTIVE)
		__atomic_store_n(lock_word(run, idx) + 1, (uint32_t)w->tid,
				 __ATOMIC_RELAXED);
	if (r == ACQ_OWNER_DEAD) {
		/*
		 * The previous owner died inside its critical section: undo
		 * its half-done update before the mutex is usable again.
		 */
		w->st->owner_dead++;
		if (idx > 0 && !run->cfg->no_repair)
			lb_table_repair_chain(w, idx - 1);
		pthread_mutex_consistent(lock_mutex(run, idx));
	}
	return 0;
}

/* The unlock itself, of whichever kind the run uses. */
static void release_backend(struct lb_worker *w, unsigned idx)
{
	struct lb_run *run = w->run;
	uint32_t *word;
	int r;

	switch (run->cfg->lock) {
	case LB_LOCK_FCNTL:
	case LB_LOCK_OFD:
		posix_unlock(w, idx);
		break;
	case LB_LOCK_FLOCK:
		if (--w->depth == 0 && flock(w->fd, LOCK_UN))
			lb_worker_die(w, "flock unlock: %s", strerror(errno));
		break;
	case LB_LOCK_MUTEX:
		r = pthread_mutex_unlock(lock_mutex(run, idx));
		if (r)
			lb_worker_die(w, "pthread_mutex_unlock: %s",
				      strerror(r));
		break;
	case LB_LOCK_SPIN:
		__atomic_store_n(lock_word(run, idx), 0, __ATOMIC_RELEASE);
		break;
	case LB_LOCK_ADAPTIVE:
		word = lock_word(run, idx);
		__atomic_store_n(word + 1, 0, __ATOMIC_RELAXED);
		if (__atomic_exchange_n(word, 0, __ATOMIC_RELEASE) == 2)
			futex(word, FUTEX_WAKE, 1, NULL);
		break;
	default:
		break;
	}
}

void lb_lock_release(struct lb_worker *w, unsigned idx)
{
	struct lb_run *run = w->run;
	struct lb_lockstat *ls = NULL;

	if (w->direct)
		return;
	if (run->cfg->lock != LB_LOCK_FLOCK || w->depth == 1) {
		ls = &w->ls[run->cfg->lock == LB_LOCK_FLOCK ? 0 : idx];
		ls->hold_ns += lb_now_ns() - ls->held_at;
	}
	release_backend(w, idx);
	if (ls)
		ls->hold_span_ns += lb_now_ns() - ls->called_at;
}

/*
 * After the run: a spin or adaptive word still set means a holder died
 * with it; a robust mutex whose owner died is recovered here exactly as a
 * worker would have.
 */
void lb_locks_check(struct lb_run *run, struct lb_worker *w)
{
	struct lb_result *res = &run->res;
	char name[32];

	for (uint64_t i = 0; i < run->lay.nlocks; i++) {
		unsigned idx = (unsigned)i;
		uint32_t *word = lock_word(run, idx);
		pthread_mutex_t *m;
		pid_t holder;
		int r;

		lb_lock_name(run, idx, name, sizeof(name));
		switch (run->cfg->lock) {
		case LB_LOCK_SPIN:
		case LB_LOCK_ADAPTIVE:
			if (!__atomic_load_n(word, __ATOMIC_ACQUIRE))
				break;
			holder = (pid_t)(run->cfg->lock == LB_LOCK_SPIN ?
						 word[0] :
						 word[1]);
			if (!res->stuck) {
				run->sh->stuck_lock = idx;
				run->sh->stuck_holder = holder;
				run->sh->stuck_waiter = 0;
			}
			res->stuck = true;
			lb_result_error(
				res,
				"%s lock '%s' (offset %llu) is still held by pid %d, which %s",
				lb_lock_names[run->cfg->lock], name,
				(unsigned long long)lb_lock_offset(run, idx),
				holder,
				lb_pid_alive(holder) ? "is alive" : "is gone");
			break;
		case LB_LOCK_MUTEX:
			m = lock_mutex(run, idx);
			r = pthread_mutex_trylock(m);
			if (r == EOWNERDEAD) {
				res->check_owner_dead++;
				if (idx > 0 && !run->cfg->no_repair)
					lb_table_repair_chain(w, idx - 1);
				pthread_mutex_consistent(m);
				r = 0;
			}
			if (r == 0)
				pthread_mutex_unlock(m);
			else
				lb_result_error(
					res, "mutex '%s' cannot be taken: %s",
					name, strerror(r));
			break;
		default:
			break;
		}
	}
}
