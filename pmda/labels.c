// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Instance labels: each lock instance says its name and kind, so that a
 * query across hosts (pmseries, with the hostname label pmcd adds) can
 * select one lock by what it is: locktop.lock.wait.time{lock_kind ==
 * "fcntl"}, {lock_name == "/srv/db/table.tdb:4096"}.
 */
#include <stdio.h>
#include <string.h>
#include "agent.h"

/* s as a JSON string's contents: quotes, backslashes and controls escaped. */
static void json_escape(const char *s, char *out, size_t len)
{
	size_t o = 0;

	for (; *s && o + 7 < len; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\') {
			out[o++] = '\\';
			out[o++] = (char)c;
		} else if (c < 0x20) {
			o += (size_t)snprintf(out + o, len - o, "\\u%04x", c);
		} else {
			out[o++] = (char)c;
		}
	}
	out[o] = 0;
}

static int label_cb(pmInDom indom, unsigned int inst, pmLabelSet **lp)
{
	char name[2 * LT_NAME_LEN], kind[32];
	const struct lt_lock *l;

	if (indom != indomtab[LOCK_INDOM].it_indom)
		return 0;
	if ((int)inst == agent.other_inst)
		return pmdaAddLabels(lp, "{\"lock_name\":\"other\","
					 "\"lock_kind\":\"other\"}");
	l = refs_find(&agent.locks, inst);
	if (!l)
		return 0;
	json_escape(l->name, name, sizeof(name));
	json_escape(lt_kind_name(l->kind), kind, sizeof(kind));
	return pmdaAddLabels(lp, "{\"lock_name\":\"%s\",\"lock_kind\":\"%s\"}",
			     name, kind);
}

void label_callbacks(pmdaInterface *dispatch)
{
	pmdaSetLabelCallBack(dispatch, label_cb);
}
