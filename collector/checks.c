// SPDX-License-Identifier: LGPL-2.1-or-later
/* What the probes need from this machine, each failure naming its fix. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include "internal.h"

#define CAP_SYS_ADMIN_BIT 21
#define CAP_PERFMON_BIT 38
#define CAP_BPF_BIT 39

static const char *const futex_tp = "events/syscalls/sys_enter_futex/id";

static int fail(char *err, size_t len, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
	return code;
}

static int effective_caps(uint64_t *caps)
{
	char line[256];
	FILE *f = fopen("/proc/self/status", "re");
	int ret = -ENOENT;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long v;

		if (sscanf(line, "CapEff: %llx", &v) == 1) {
			*caps = v;
			ret = 0;
			break;
		}
	}
	fclose(f);
	return ret;
}

static int check_privileges(char *err, size_t len)
{
	uint64_t caps = 0;
	bool bpf, perfmon, admin;

	if (effective_caps(&caps))
		return 0; /* cannot tell: let the load say */
	bpf = caps & (1ULL << CAP_BPF_BIT);
	perfmon = caps & (1ULL << CAP_PERFMON_BIT);
	admin = caps & (1ULL << CAP_SYS_ADMIN_BIT);
	if ((bpf && perfmon) || admin)
		return 0;
	return fail(err, len, -EPERM,
		    "tracing needs root, or the capabilities CAP_BPF and "
		    "CAP_PERFMON (missing:%s%s); run it with sudo, or grant "
		    "them with: setcap cap_bpf,cap_perfmon,cap_sys_ptrace+ep "
		    "$(command -v locktop)",
		    bpf ? "" : " CAP_BPF", perfmon ? "" : " CAP_PERFMON");
}

static bool tracefs_ready(void)
{
	char path[128];

	snprintf(path, sizeof(path), "/sys/kernel/tracing/%s", futex_tp);
	if (!access(path, R_OK))
		return true;
	snprintf(path, sizeof(path), "/sys/kernel/debug/tracing/%s", futex_tp);
	return !access(path, R_OK);
}

static int check_tracefs(char *err, size_t len)
{
	struct stat st;

	if (tracefs_ready())
		return 0;
	if (stat("/sys/kernel/tracing/events", &st)) {
		if (mount("nodev", "/sys/kernel/tracing", "tracefs", 0, NULL))
			return fail(err, len, -errno,
				    "tracefs is not mounted and mounting it "
				    "failed (%s); mount it with: mount -t "
				    "tracefs nodev /sys/kernel/tracing",
				    strerror(errno));
		if (tracefs_ready())
			return 0;
	}
	return fail(err, len, -ENOENT,
		    "the kernel has no syscall tracepoints "
		    "(/sys/kernel/tracing/%s is missing); it needs "
		    "CONFIG_FTRACE_SYSCALLS=y",
		    futex_tp);
}

#define INIT_PIDNS_INO 0xEFFFFFFCU /* the kernel's PROC_PID_INIT_INO */

int lt_pid_namespace(uint64_t *ino, char *err, size_t err_len)
{
	struct stat st;
	char self[32];
	ssize_t n;

	*ino = 0;
	/* What /proc calls us: a /proc of another namespace names every
	 * process the probes name wrongly. */
	n = readlink("/proc/self", self, sizeof(self) - 1);
	if (n > 0) {
		self[n] = '\0';
		if (strtol(self, NULL, 10) != getpid())
			return fail(err, err_len, -EXDEV,
				    "/proc shows another PID namespace's "
				    "processes (it calls locktop %s, this "
				    "namespace %d); mount this namespace's: "
				    "mount -t proc proc /proc (or unshare "
				    "--mount-proc)",
				    self, (int)getpid());
	}
	if (stat("/proc/self/ns/pid", &st) || st.st_ino == INIT_PIDNS_INO)
		return 0;
	*ino = st.st_ino;
	return 0;
}

int lt_check_environment(char *err, size_t err_len)
{
	int ret;

	ret = check_privileges(err, err_len);
	if (ret)
		return ret;
	if (access("/sys/kernel/btf/vmlinux", R_OK))
		return fail(err, err_len, -ENOENT,
			    "the kernel has no BTF (/sys/kernel/btf/vmlinux is "
			    "missing); locktop needs a kernel built with "
			    "CONFIG_DEBUG_INFO_BTF=y");
	return check_tracefs(err, err_len);
}
