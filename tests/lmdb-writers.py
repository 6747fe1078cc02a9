#!/usr/bin/python3
# lmdb-writers: writer processes contending on one LMDB environment's
# writer mutex (its lock file's mt2_wmutex, a robust process-shared
# mutex). Each child opens the environment itself after the fork, names
# itself COMM (so a tracer can count its waits alone), and runs LOOPS
# write transactions, each holding the writer lock for HOLD_US.
#   lmdb-writers.py DIR PROCS LOOPS HOLD_US COMM
# Prints one JSON object: the children's pids.
import ctypes
import json
import os
import sys
import time

import lmdb


def child(path, loops, hold_us, comm):
    libc = ctypes.CDLL(None)
    libc.prctl(15, comm.encode(), 0, 0, 0)  # PR_SET_NAME
    env = lmdb.open(path, map_size=64 << 20, sync=False, metasync=False)
    key = b"k%d" % os.getpid()
    for i in range(loops):
        with env.begin(write=True) as txn:
            txn.put(key, b"%d" % i)
            end = time.perf_counter() + hold_us / 1e6
            while time.perf_counter() < end:
                pass
    env.close()


def main():
    path, procs, loops, hold_us, comm = sys.argv[1:6]
    lmdb.open(path, map_size=64 << 20).close()
    pids = []
    for _ in range(int(procs)):
        pid = os.fork()
        if pid == 0:
            try:
                child(path, int(loops), int(hold_us), comm)
            finally:
                os._exit(0)
        pids.append(pid)
    status = 0
    for pid in pids:
        _, st = os.waitpid(pid, 0)
        status |= st
    print(json.dumps({"pids": pids, "path": path}))
    return 1 if status else 0


if __name__ == "__main__":
    sys.exit(main())
