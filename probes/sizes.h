/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Sizes the probes and the collector's consumers share, defined once:
 * the collector's header spells them for its users (LT_HIST_BUCKETS,
 * LT_COMM_SIZE). No types: the BPF side and user space both include it.
 */
#ifndef LOCKTOP_PROBES_SIZES_H
#define LOCKTOP_PROBES_SIZES_H

/* log2(ns) histogram buckets: bucket i counts [2^i, 2^(i+1)) ns, and the
 * last one also everything longer. */
#define LT_HIST_SLOTS 40
/* A task's command name, with its NUL (TASK_COMM_LEN). */
#define LT_COMM_LEN 16

#endif /* LOCKTOP_PROBES_SIZES_H */
