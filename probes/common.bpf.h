/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What every probe object has: the globals the collector writes into
 * each, the maps they share, and the helpers the probes share. Each
 * object declares all the maps, used or not, so that the collector can
 * hand each the futex object's (maps.bpf.h). The pieces, by concern:
 */
#ifndef LOCKTOP_PROBES_COMMON_BPF_H
#define LOCKTOP_PROBES_COMMON_BPF_H

#include "common.h"
#include "globals.bpf.h" /* settings, epoch, slot_gen */
#include "maps.bpf.h" /* the maps, shared_maps.def's and more */
#include "probe_counts.bpf.h" /* runs and drops */
#include "threads.bpf.h" /* each thread's state */
#include "syscalls.bpf.h" /* an fd's file, an interrupted call */
#include "processes.bpf.h" /* PIDs here, the traced set, names */
#include "slots.bpf.h" /* slots: where figures live */
#include "figures.bpf.h" /* a wait or hold added to figures */
#include "parties.bpf.h" /* holders and waiters credited */

#endif /* LOCKTOP_PROBES_COMMON_BPF_H */
