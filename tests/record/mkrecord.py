#!/usr/bin/env python3
"""Writes a synthetic locktop record (docs/record.md), for the tests of
locktop diff that need no BPF: known figures, known noise.

mkrecord.py OUT [--intervals N] [--interval S] [--noise F] [--seed N]
            [--lock KIND,KEY,WAITS,WAIT_NS[,HOLD_NS[,TRYLOCK_FAILURES]]]...

Each --lock gives per-interval figures; every interval scales them by
1 + noise * uniform(-1, 1). A lock's waits all fall in the log2 bucket
of its mean wait, so its p99 is that bucket's upper bound.
"""
import argparse
import json
import random


def fig(waits, wait_ns, hold_ns, tryfail):
    hist = []
    if waits:
        b = max(0, int(wait_ns // waits).bit_length() - 1)
        hist = [0] * b + [waits]
    p99 = (2 << (len(hist) - 1)) - 1 if hist else 0
    return {"waits": waits, "wait_ns": wait_ns,
            "max_wait_ns": wait_ns // waits if waits else 0,
            "p99_wait_ns": p99, "hold_ns": hold_ns, "acquires": waits,
            "contended": waits, "trylock_failures": tryfail,
            "io_under_lock_ns": 0, "wait_hist": hist}


def add(a, b):
    out = dict(a)
    for k in ("waits", "wait_ns", "hold_ns", "acquires", "contended",
              "trylock_failures", "io_under_lock_ns"):
        out[k] = a[k] + b[k]
    out["max_wait_ns"] = max(a["max_wait_ns"], b["max_wait_ns"])
    h = [0] * max(len(a["wait_hist"]), len(b["wait_hist"]))
    for src in (a["wait_hist"], b["wait_hist"]):
        for i, v in enumerate(src):
            h[i] += v
    out["wait_hist"] = h
    out["p99_wait_ns"] = max(a["p99_wait_ns"], b["p99_wait_ns"])
    return out


def kinds_of(locks):
    kinds = {}
    for l in locks:
        f = {k: v for k, v in l.items() if k not in ("key", "name", "kind")}
        kinds[l["kind"]] = add(kinds[l["kind"]], f) if l["kind"] in kinds else f
    return kinds


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--intervals", type=int, default=10)
    ap.add_argument("--interval", type=float, default=1.0)
    ap.add_argument("--noise", type=float, default=0.1)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--lock", action="append", default=[])
    ap.add_argument("--version", type=int, default=1)
    a = ap.parse_args()
    rnd = random.Random(a.seed)
    specs = []
    for s in a.lock:
        p = s.split(",")
        kind, key = p[0], p[1]
        nums = [int(x) for x in p[2:]] + [0, 0, 0, 0]
        specs.append((kind, key, nums[0], nums[1], nums[2], nums[3]))
    intervals, total = [], {}
    for i in range(a.intervals):
        locks = []
        for kind, key, w, ns, hold, tf in specs:
            m = 1 + a.noise * rnd.uniform(-1, 1)
            f = fig(int(w * m), int(ns * m), int(hold * m), int(tf * m))
            if not (f["waits"] or f["hold_ns"] or f["trylock_failures"]):
                continue
            l = {"key": kind + ":" + key, "name": key, "kind": kind}
            l.update(f)
            locks.append(l)
            k = l["key"]
            total[k] = add(total[k], f) if k in total else dict(l)
        intervals.append({"time": 1.7e9 + (i + 1) * a.interval,
                          "interval_s": a.interval,
                          "elapsed_s": (i + 1) * a.interval, "drops": 0,
                          "kinds": kinds_of(locks), "locks": locks})
    final_locks = list(total.values())
    elapsed = a.intervals * a.interval
    rec = {"format": "locktop-record", "version": a.version,
           "host": "synthetic", "kernel": "Linux test", "release": "test",
           "cmdline": "mkrecord.py " + a.out, "command": None, "pids": [],
           "start_time": 1.7e9, "start": "2023-11-14T22:13:20Z",
           "interval_s": a.interval, "duration_s": None,
           "intervals": intervals,
           "final": {"time": 1.7e9 + elapsed, "interval_s": elapsed,
                     "elapsed_s": elapsed, "drops": 0,
                     "kinds": kinds_of(final_locks), "locks": final_locks},
           "exit_status": None, "ended_by": "duration",
           "end_time": 1.7e9 + elapsed}
    with open(a.out, "w") as f:
        json.dump(rec, f)
        f.write("\n")


main()
