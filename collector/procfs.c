// SPDX-License-Identifier: LGPL-2.1-or-later
/* What /proc tells the consumers of a process, so that they only draw. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "collector.h"

size_t lt_proc_threads(pid_t pid)
{
	char path[64], buf[512], *p;
	size_t n = 0;
	long t = 1;
	FILE *f;
	int i;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "re");
	if (!f)
		return 1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	/* comm may hold spaces; fields count from its closing paren. */
	p = strrchr(buf, ')');
	for (i = 2; p && i < 20; i++)
		p = strchr(p + 1, ' ');
	if (p)
		t = strtol(p + 1, NULL, 10);
	return t > 0 ? (size_t)t : 1;
}
