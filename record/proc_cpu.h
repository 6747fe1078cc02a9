/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The CPU time of `locktop record --pid`'s processes and their
 * descendants over a recording, from /proc (proc_cpu.c says what is
 * counted).
 */
#ifndef LOCKTOP_PROC_CPU_H
#define LOCKTOP_PROC_CPU_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define PROC_CPU_MAX_ROOTS 4096

struct proc_cpu;

/* Follows the trees of roots; with n 0, *out is NULL and all is a no-op. */
int proc_cpu_open(const pid_t *roots, size_t n, struct proc_cpu **out);
/* The figures now: the start of the recording. */
int proc_cpu_start(struct proc_cpu *pc);
/* A look at the trees: new descendants join, ended ones settle. */
int proc_cpu_sample(struct proc_cpu *pc);
/*
 * User and system seconds since proc_cpu_start(), and in *lost the
 * processes that ended with no parent in the tree to wait for them
 * (their time after their last sample is missing). False before a start.
 */
bool proc_cpu_total(const struct proc_cpu *pc, double *user, double *sys,
		    size_t *lost);
void proc_cpu_free(struct proc_cpu *pc);

#endif /* LOCKTOP_PROC_CPU_H */
