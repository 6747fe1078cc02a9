#!/usr/bin/python3
"""Writes a small pmlogger archive with pmdalocktop's metric names and
known values, so that locktop's PCP source can be checked without the
agent: two locks and one kind, counters that grow by a fixed step; the
mutex is a lock site of three processes. The
mutex's holders and waiters come as numbers (locktop.lock.party), the
fcntl lock's only as text, as an agent before those numbers wrote them."""
import sys
from pcp import pmi
from cpmapi import (PM_TYPE_U64, PM_TYPE_U32, PM_TYPE_STRING, PM_SEM_COUNTER,
                    PM_SEM_INSTANT, PM_SEM_DISCRETE, PM_INDOM_NULL,
                    PM_TIME_NSEC)

path = sys.argv[1]
samples = int(sys.argv[2]) if len(sys.argv) > 2 else 6
DOM = 245
log = pmi.pmiLogImport(path)
log.pmiSetHostname("archived-host")
log.pmiSetTimezone("UTC")
lock_indom = log.pmiInDom(DOM, 0)
kind_indom = log.pmiInDom(DOM, 1)
ns = log.pmiUnits(0, 1, 0, 0, PM_TIME_NSEC, 0)
count = log.pmiUnits(0, 0, 1, 0, 0, 0)
none = log.pmiUnits(0, 0, 0, 0, 0, 0)

def metric(name, item, typ, indom, sem, units, cluster=0):
    log.pmiAddMetric(name, log.pmiID(DOM, cluster, item), typ, indom, sem,
                     units)

metric("locktop.lock.wait.count", 0, PM_TYPE_U64, lock_indom, PM_SEM_COUNTER, count)
metric("locktop.lock.wait.time", 1, PM_TYPE_U64, lock_indom, PM_SEM_COUNTER, ns)
metric("locktop.lock.wait.max", 2, PM_TYPE_U64, lock_indom, PM_SEM_INSTANT, ns)
metric("locktop.lock.hold.time", 4, PM_TYPE_U64, lock_indom, PM_SEM_COUNTER, ns)
metric("locktop.lock.contended", 8, PM_TYPE_U64, lock_indom, PM_SEM_COUNTER, count)
metric("locktop.lock.trylock_failures", 9, PM_TYPE_U64, lock_indom, PM_SEM_COUNTER, count)
metric("locktop.lock.waiters", 16, PM_TYPE_U32, lock_indom, PM_SEM_INSTANT, count)
metric("locktop.lock.holder", 17, PM_TYPE_U32, lock_indom, PM_SEM_INSTANT, none)
metric("locktop.lock.kind", 19, PM_TYPE_STRING, lock_indom, PM_SEM_DISCRETE, none)
metric("locktop.lock.site_procs", 48, PM_TYPE_U32, lock_indom, PM_SEM_INSTANT, count)
metric("locktop.lock.holders", 32, PM_TYPE_STRING, lock_indom, PM_SEM_INSTANT, none)
metric("locktop.lock.waited_by", 33, PM_TYPE_STRING, lock_indom, PM_SEM_INSTANT, none)
metric("locktop.lock.party.nholders", 32, PM_TYPE_U32, lock_indom, PM_SEM_INSTANT, count, 8)
metric("locktop.lock.party.nwaiters", 33, PM_TYPE_U32, lock_indom, PM_SEM_INSTANT, count, 8)
for role, base in (("holder", 0), ("waiter", 16)):
    for rank in range(1, 5):
        item = base + (rank - 1) * 4
        name = "locktop.lock.party.%s%d." % (role, rank)
        metric(name + "pid", item, PM_TYPE_U32, lock_indom, PM_SEM_INSTANT, none, 8)
        metric(name + "comm", item + 1, PM_TYPE_STRING, lock_indom, PM_SEM_INSTANT, none, 8)
        metric(name + "count", item + 2, PM_TYPE_U64, lock_indom, PM_SEM_INSTANT, count, 8)
        metric(name + "time", item + 3, PM_TYPE_U64, lock_indom, PM_SEM_INSTANT, ns, 8)
metric("locktop.kind.wait.count", 0, PM_TYPE_U64, kind_indom, PM_SEM_COUNTER, count, 1)
metric("locktop.kind.wait.time", 1, PM_TYPE_U64, kind_indom, PM_SEM_COUNTER, ns, 1)

log.pmiAddInstance(lock_indom, "/srv/db/table.tdb+0x1040", 0)
log.pmiAddInstance(lock_indom, "/srv/db/table.tdb+0x1000", 1)
log.pmiAddInstance(kind_indom, "futex", 0)
log.pmiAddInstance(kind_indom, "fcntl", 2)

# The mutex's parties, in numbers: one holder, two waiters, times to
# the nanosecond. Ranks beyond them are 0, as the agent sends them.
mutex = "/srv/db/table.tdb+0x1040"
parties = {"holder": [(4242, "writer", 7, 812345678)],
           "waiter": [(5001, "reader", 60, 30000001), (5002, "scan", 40, 20000002)]}

def put_parties():
    for role, got in parties.items():
        log.pmiPutValue("locktop.lock.party.n%ss" % role, mutex, str(len(got)))
        for rank in range(1, 5):
            pid, comm, n, t = got[rank - 1] if rank <= len(got) else (0, "", 0, 0)
            name = "locktop.lock.party.%s%d." % (role, rank)
            log.pmiPutValue(name + "pid", mutex, str(pid))
            log.pmiPutValue(name + "comm", mutex, comm)
            log.pmiPutValue(name + "count", mutex, str(n))
            log.pmiPutValue(name + "time", mutex, str(t))
    # Its text rounds; the numbers win.
    log.pmiPutValue("locktop.lock.holders", mutex, "writer/4242 7 812.3ms")

# Per second: the mutex 100 waits and 50 ms of waiting, the fcntl lock
# 10 waits and 200 ms.
t0 = 1767225600
for i in range(samples):
    put_parties()
    log.pmiPutValue("locktop.lock.holders", "/srv/db/table.tdb+0x1000", "lockd/77 3 2.5ms")
    log.pmiPutValue("locktop.lock.waited_by", "/srv/db/table.tdb+0x1000",
                    "worker a/81 9 150ms, w/82 1 50us")
    log.pmiPutValue("locktop.lock.wait.count", "/srv/db/table.tdb+0x1040", str(100 * i))
    log.pmiPutValue("locktop.lock.wait.time", "/srv/db/table.tdb+0x1040", str(50000000 * i))
    log.pmiPutValue("locktop.lock.wait.max", "/srv/db/table.tdb+0x1040", "3000000")
    log.pmiPutValue("locktop.lock.hold.time", "/srv/db/table.tdb+0x1040", str(70000000 * i))
    log.pmiPutValue("locktop.lock.contended", "/srv/db/table.tdb+0x1040", str(90 * i))
    log.pmiPutValue("locktop.lock.trylock_failures", "/srv/db/table.tdb+0x1040", str(5 * i))
    log.pmiPutValue("locktop.lock.waiters", "/srv/db/table.tdb+0x1040", "2")
    log.pmiPutValue("locktop.lock.holder", "/srv/db/table.tdb+0x1040", "4242")
    log.pmiPutValue("locktop.lock.kind", "/srv/db/table.tdb+0x1040", "futex")
    # A lock site: the private copies of one mutex in three processes.
    log.pmiPutValue("locktop.lock.site_procs", "/srv/db/table.tdb+0x1040", "3")
    log.pmiPutValue("locktop.lock.site_procs", "/srv/db/table.tdb+0x1000", "1")
    log.pmiPutValue("locktop.lock.wait.count", "/srv/db/table.tdb+0x1000", str(10 * i))
    log.pmiPutValue("locktop.lock.wait.time", "/srv/db/table.tdb+0x1000", str(200000000 * i))
    log.pmiPutValue("locktop.lock.wait.max", "/srv/db/table.tdb+0x1000", "40000000")
    log.pmiPutValue("locktop.lock.kind", "/srv/db/table.tdb+0x1000", "fcntl")
    log.pmiPutValue("locktop.kind.wait.count", "futex", str(100 * i))
    log.pmiPutValue("locktop.kind.wait.time", "futex", str(50000000 * i))
    log.pmiPutValue("locktop.kind.wait.count", "fcntl", str(10 * i))
    log.pmiPutValue("locktop.kind.wait.time", "fcntl", str(200000000 * i))
    log.pmiWrite(t0 + i, 0)
log.pmiEnd()
