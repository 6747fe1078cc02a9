#!/usr/bin/python3
"""Writes a pmlogger archive of two locks whose figures the PCP source
once dropped: a spin lock's samples and sched_yield calls, and a file
lock's EDEADLK refusals (locktop.lock.deadlocks). The metrics' numbers
come from the agent's pmns, so the archive is what the agent writes.

    mkfigures.py ARCHIVE PMNS [SAMPLES]"""
import re
import sys
from pcp import pmi
from cpmapi import (PM_TYPE_U64, PM_TYPE_STRING, PM_SEM_COUNTER,
                    PM_SEM_DISCRETE, PM_TIME_NSEC)

path, pmns = sys.argv[1], sys.argv[2]
samples = int(sys.argv[3]) if len(sys.argv) > 3 else 4
DOM = 245

# "node {" opens a node; "name LOCKTOP:CLUSTER:ITEM" is a metric in it.
pmids, node = {}, None
for line in open(pmns):
    opened = re.match(r"^(\S+) \{", line)
    leaf = re.match(r"^\s+(\S+)\s+LOCKTOP:(\d+):(\d+)", line)
    if opened:
        node = opened.group(1)
    elif leaf and node:
        pmids[node + "." + leaf.group(1)] = (int(leaf.group(2)),
                                             int(leaf.group(3)))

log = pmi.pmiLogImport(path)
log.pmiSetHostname("archived-host")
log.pmiSetTimezone("UTC")
lock_indom = log.pmiInDom(DOM, 0)
units = {
    "ns": log.pmiUnits(0, 1, 0, 0, PM_TIME_NSEC, 0),
    "count": log.pmiUnits(0, 0, 1, 0, 0, 0),
    "none": log.pmiUnits(0, 0, 0, 0, 0, 0),
}
METRICS = {
    "wait.count": (PM_TYPE_U64, PM_SEM_COUNTER, "count"),
    "wait.time": (PM_TYPE_U64, PM_SEM_COUNTER, "ns"),
    "samples": (PM_TYPE_U64, PM_SEM_COUNTER, "count"),
    "yields": (PM_TYPE_U64, PM_SEM_COUNTER, "count"),
    "deadlocks": (PM_TYPE_U64, PM_SEM_COUNTER, "count"),
    "kind": (PM_TYPE_STRING, PM_SEM_DISCRETE, "none"),
}
for short, (typ, sem, unit) in METRICS.items():
    name = "locktop.lock." + short
    cluster, item = pmids[name]
    log.pmiAddMetric(name, log.pmiID(DOM, cluster, item), typ, lock_indom,
                     sem, units[unit])

# Per second: the spin lock 997 samples (about 1 ms of spinning each)
# and 50 yields; the file lock 2 waits and 1 refusal.
LOCKS = {
    "spinner+0x4010": {"kind": "spin", "samples": 997, "yields": 50,
                       "wait.count": 0, "wait.time": 997000000,
                       "deadlocks": 0},
    "/srv/dl.dat+0x0": {"kind": "fcntl", "samples": 0, "yields": 0,
                        "wait.count": 2, "wait.time": 3000000,
                        "deadlocks": 1},
}
for n, name in enumerate(LOCKS):
    log.pmiAddInstance(lock_indom, name, n)

t0 = 1700000000
for i in range(samples):
    for name, figs in LOCKS.items():
        for short, step in figs.items():
            value = step if short == "kind" else str(step * i)
            log.pmiPutValue("locktop.lock." + short, name, value)
    log.pmiWrite(t0 + i, 0)
log.pmiEnd()
