// SPDX-License-Identifier: LGPL-2.1-or-later
/* Names and text for every consumer: kinds, drop reasons, durations. */
#include <stdio.h>
#include <string.h>
#include "collector.h"

static const char *const kind_names[LT_KIND_NR] = {
#define LT_KIND_ROW(ID, NAME) [LT_KIND_##ID] = NAME,
#include "kinds.def"
};

static const char *const drop_names[LT_DROP_REASONS] = {
	"locks_full", "start_full",  "traced_full", "parties_full",
	"held_full",  "files_full",  "stacks_full", "procs_full",
	"race",	      "slot_return",
};

const char *lt_drop_name(unsigned int reason)
{
	return reason < LT_DROP_REASONS ? drop_names[reason] : "?";
}

const char *lt_kspins_name(enum lt_kspins state)
{
	static const char *const names[] = {
		[LT_KSPINS_OFF] = "off",
		[LT_KSPINS_VISIBLE] = "visible",
		[LT_KSPINS_HIDDEN] = "hidden",
	};

	return (unsigned int)state < sizeof(names) / sizeof(names[0]) ?
		       names[state] :
		       "?";
}

const char *lt_kind_name(enum lt_kind kind)
{
	if ((unsigned int)kind >= LT_KIND_NR)
		return "?";
	return kind_names[kind];
}

int lt_kind_parse(const char *name)
{
	int k;

	for (k = 0; k < LT_KIND_NR; k++)
		if (!strcmp(name, kind_names[k]))
			return k;
	return -1;
}

bool lt_kind_is_lock(enum lt_kind kind)
{
	return kind != LT_KIND_FUTEX_COND;
}

const char *lt_format_ns(uint64_t ns, char *buf, size_t len)
{
	if (ns < 1000)
		snprintf(buf, len, "%lluns", (unsigned long long)ns);
	else if (ns < 1000000)
		snprintf(buf, len, "%.1fus", ns / 1e3);
	else if (ns < 1000000000)
		snprintf(buf, len, "%.1fms", ns / 1e6);
	else
		snprintf(buf, len, "%.2fs", ns / 1e9);
	return buf;
}

/* A lock site's " (N comm)", else "". */
static void site_suffix(const struct lt_lock *l, char *buf, size_t len)
{
	if (l->n_members || l->procs > 1)
		snprintf(buf, len, " (%u %s)",
			 l->procs ? l->procs : (unsigned int)l->n_members,
			 l->comm[0] ? l->comm : "processes");
	else
		buf[0] = '\0';
}

const char *lt_lock_label(const struct lt_lock *l, char *buf, size_t len)
{
	char suffix[48];

	site_suffix(l, suffix, sizeof(suffix));
	snprintf(buf, len, "%s%s", l->name, suffix);
	return buf;
}

static bool ascii(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s >= 0x80)
			return false;
	return true;
}

const char *lt_lock_label_fit(const struct lt_lock *l, char *buf, size_t len,
			      size_t width)
{
	char full[LT_NAME_LEN + 48];
	size_t n;

	lt_lock_label(l, full, sizeof(full));
	n = strlen(full);
	/* As the screen cuts a name (screen_put()): its end kept, after "..". */
	if (n > width && width > 4 && ascii(full))
		snprintf(buf, len, "..%s", full + n - (width - 2));
	else
		snprintf(buf, len, "%s", full);
	return buf;
}
