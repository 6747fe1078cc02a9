#!/usr/bin/python3
"""Writes a pmlogger archive of one host's lock counters, up to a few
seconds ago, as pmdalocktop's instances and labels make them: each lock
instance carries lock_name and lock_kind; one lock (a spin loop's)
appears only after the first samples, with its labels logged then, as
pmlogger does for a new instance; one has no labels of its own, only
its locktop.lock.kind value. For locktop --series: each lock's kind.

Usage: mkseries.py PATH HOSTNAME"""
import sys
import time
from pcp import pmi
from cpmapi import (PM_TYPE_U64, PM_TYPE_STRING, PM_SEM_COUNTER,
                    PM_SEM_DISCRETE, PM_TIME_NSEC, PM_LABEL_INSTANCES)

path, host = sys.argv[1], sys.argv[2]
DOM = 245
SAMPLES = 20
log = pmi.pmiLogImport(path)
log.pmiSetHostname(host)
log.pmiSetTimezone("UTC")
indom = log.pmiInDom(DOM, 0)
ns = log.pmiUnits(0, 1, 0, 0, PM_TIME_NSEC, 0)
count = log.pmiUnits(0, 0, 1, 0, 0, 0)
none = log.pmiUnits(0, 0, 0, 0, 0, 0)
log.pmiAddMetric("locktop.lock.wait.count", log.pmiID(DOM, 0, 0),
                 PM_TYPE_U64, indom, PM_SEM_COUNTER, count)
log.pmiAddMetric("locktop.lock.wait.time", log.pmiID(DOM, 0, 1),
                 PM_TYPE_U64, indom, PM_SEM_COUNTER, ns)
log.pmiAddMetric("locktop.lock.kind", log.pmiID(DOM, 0, 19),
                 PM_TYPE_STRING, indom, PM_SEM_DISCRETE, none)

# name, kind, labelled, first sample, wait time a sample, waits a sample
LOCKS = [
    ("/srv/db/table.tdb:4096", "fcntl", True, 0, 3000000, 30),
    ("[heap]+0x2a0", "futex", True, 0, 2000000, 20),
    ("spin_site libspin.so+0x1234", "spin", True, 5, 1000000, 10),
    ("/srv/db/table.tdb:8192", "ofd", False, 0, 500000, 5),
]
for inst, (name, kind, labelled, first, _, _) in enumerate(LOCKS):
    log.pmiAddInstance(indom, name, inst)

start = int(time.time()) - SAMPLES - 5
for t in range(SAMPLES):
    for inst, (name, kind, labelled, first, dt, dn) in enumerate(LOCKS):
        if t < first:
            continue
        if t == first and labelled:
            # The instance's labels, as the agent gives them.
            log.pmiPutLabel(PM_LABEL_INSTANCES, indom, inst, "lock_name",
                            name)
            log.pmiPutLabel(PM_LABEL_INSTANCES, indom, inst, "lock_kind",
                            kind)
        n = t - first + 1
        log.pmiPutValue("locktop.lock.wait.time", name, str(n * dt))
        log.pmiPutValue("locktop.lock.wait.count", name, str(n * dn))
        log.pmiPutValue("locktop.lock.kind", name, kind)
    log.pmiWrite(start + t, 0)
log.pmiEnd()
