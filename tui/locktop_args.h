/* SPDX-License-Identifier: GPL-2.0-or-later */
/* locktop's command line: the options of locktop and locktop record. */
#ifndef LOCKTOP_ARGS_H
#define LOCKTOP_ARGS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define MAX_PIDS 4096 /* -p: PIDs, and the processes a NAME stands for */
#define EXIT_USAGE 2
#define MAX_HOSTS 64 /* --host A,B,...: a fleet */

struct env {
	bool batch;
	bool json;
	bool all_kinds;
	bool per_process; /* a lock site's members in place of its row */
	bool verbose;
	bool stacks;
	bool exact_holds; /* --exact-holds */
	bool no_kernel_locks; /* --no-kernel-locks */
	bool no_io; /* --no-io */
	bool spin_always; /* --spin-always */
	bool mono;
	const char *host; /* the first of hosts */
	const char *hosts[MAX_HOSTS]; /* --host, each name once */
	size_t n_hosts;
	const char *archive;
	const char *series; /* --series: pmproxy's HOST[:PORT] */
	unsigned int window_s; /* --window */
	unsigned int delay_ms;
	long iterations; /* 0: until stopped */
	long limit; /* -1: the default for the format */
	const char *output;
	const char *ready_file; /* --ready-file: created once attached */
	const char *ops_file; /* record --ops-file: the operation count */
	pid_t pids[MAX_PIDS + 1]; /* and the command's */
	size_t n_pids;
	char **command; /* after "--" */
	bool record; /* locktop record */
	double duration_s; /* record --duration; 0: none */
	long retire_s; /* -1: LT_RETIRE_S on the screen, else never */
	long spin_hz; /* -1: the collector's default, 0: no sampling */
};

/* What the command line asked for; main() adds the command's PID. */
extern struct env env;

/*
 * Parses locktop's command line, or with argv[1] "record" locktop
 * record's. argp says what is wrong and exits with EXIT_USAGE; returns
 * 0, or EXIT_USAGE when argp_parse() fails otherwise.
 */
int args_parse(int argc, char **argv);

#endif /* LOCKTOP_ARGS_H */
