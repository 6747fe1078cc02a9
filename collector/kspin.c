// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Whether this kernel reports its spinning lock waits. The lock
 * tracepoints see a contended spinlock only where its slow path reaches
 * them; a guest without paravirtual spinlocks spins in virt_spin_lock(),
 * which has none, so its spinlocks never show while its sleeping locks
 * (mutexes, rwsems) still do. The kernel lock probe marks the first
 * spinning wait it sees from any task; where none came by the time the
 * probes are attached, two threads of ours contend on a file's lock
 * context spinlock (flc_lock) for a moment, which on a kernel that
 * reports them raises thousands of events in a few milliseconds.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include "state.h"
#include "klock.skel.h"

#define SELFTEST_MS 200 /* how long the threads may contend */
#define SELFTEST_POLL_MS 5

struct contender {
	pthread_t thread;
	int fd;
	off_t byte; /* each its own: neither ever blocks */
	volatile bool *stop;
};

/* Takes and drops a lock on its byte: each call takes flc_lock. */
static void *contend(void *arg)
{
	struct contender *t = arg;
	struct flock fl = { .l_whence = SEEK_SET,
			    .l_start = t->byte,
			    .l_len = 1 };

	while (!*t->stop) {
		fl.l_type = F_WRLCK;
		fcntl(t->fd, F_OFD_SETLK, &fl);
		fl.l_type = F_UNLCK;
		fcntl(t->fd, F_OFD_SETLK, &fl);
	}
	return NULL;
}

static bool reported(const struct lt_collector *c)
{
	return __atomic_load_n(&c->obj.klock->bss->spin_reported,
			       __ATOMIC_RELAXED) != 0;
}

/* Contends until the kernel reports it, or SELFTEST_MS. */
static void selftest(struct lt_collector *c)
{
	struct timespec poll = { 0, SELFTEST_POLL_MS * 1000000L };
	struct contender t[2];
	volatile bool stop = false;
	int fd, i, n = 0, ms;

	fd = memfd_create("locktop-kspin", MFD_CLOEXEC);
	if (fd < 0)
		return;
	for (i = 0; i < 2; i++) {
		t[i] = (struct contender){ .fd = fd, .byte = i, .stop = &stop };
		if (pthread_create(&t[i].thread, NULL, contend, &t[i]))
			break;
		n++;
	}
	for (ms = 0; n == 2 && ms < SELFTEST_MS && !reported(c);
	     ms += SELFTEST_POLL_MS)
		nanosleep(&poll, NULL);
	stop = true;
	for (i = 0; i < n; i++)
		pthread_join(t[i].thread, NULL);
	close(fd);
}

/* Whether /proc/cpuinfo flags a hypervisor. */
static bool under_hypervisor(void)
{
	char line[4096];
	bool found = false;
	FILE *f = fopen("/proc/cpuinfo", "re");

	while (f && !found && fgets(line, sizeof(line), f))
		found = !strncmp(line, "flags", 5) &&
			strstr(line, " hypervisor");
	if (f)
		fclose(f);
	return found;
}

static const char *hidden_why(void)
{
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		return "one CPU is online: no kernel spinlock is ever "
		       "contended";
	if (under_hypervisor())
		return "this kernel does not report them: a guest without "
		       "paravirtual spinlocks spins in virt_spin_lock(), which "
		       "has no tracepoint (two threads contending on a file "
		       "lock's spinlock raised no event); sleeping kernel "
		       "locks still show";
	return "this kernel does not report them (two threads contending "
	       "on a file lock's spinlock raised no event); sleeping kernel "
	       "locks still show";
}

void kspin_check(struct lt_collector *c)
{
	c->snap.kernel_spins = LT_KSPINS_OFF;
	c->snap.kernel_spins_why = "";
	if (!c->obj.klock)
		return;
	if (!reported(c))
		selftest(c);
	kspin_read(c);
}

void kspin_read(struct lt_collector *c)
{
	if (!c->obj.klock)
		return;
	if (reported(c)) {
		c->snap.kernel_spins = LT_KSPINS_VISIBLE;
		c->snap.kernel_spins_why = "";
	} else if (c->snap.kernel_spins != LT_KSPINS_HIDDEN) {
		c->snap.kernel_spins = LT_KSPINS_HIDDEN;
		c->snap.kernel_spins_why = hidden_why();
	}
}
