// SPDX-License-Identifier: GPL-2.0-or-later
/* Instance names that PCP tells apart, in a pmdaCache domain. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdbool.h>
#include <pcp/pmapi.h>
#include <pcp/pmda.h>
#include "instname.h"
#include "model.h"

/* Whether an instance of indom, live or not, has name's first word. */
static bool head_taken(pmInDom indom, const char *name)
{
	char head[LT_NAME_LEN + 64];

	/* A name without a space matches any whose first word it is. */
	snprintf(head, sizeof(head), "%.*s", (int)strcspn(name, " "), name);
	return pmdaCacheLookupName(indom, head, NULL, NULL) >= 0;
}

int ltpm_activate(pmInDom indom, const char *base, const void *key, int keylen,
		  const char *const *tags, size_t n_tags)
{
	char name[LT_NAME_LEN + 64];
	char *oname = NULL;
	int inst, sts;
	size_t t;

	sts = pmdaCacheLookupKey(indom, NULL, keylen, key, &oname, &inst, NULL);
	if (sts == PMDA_CACHE_ACTIVE)
		return inst;
	if (sts == PMDA_CACHE_INACTIVE && oname) {
		/* With the key again: a plain store would drop it. */
		snprintf(name, sizeof(name), "%s", oname);
		return pmdaCacheStoreKey(indom, PMDA_CACHE_ADD, name, keylen,
					 key, NULL);
	}

	for (t = 0; t <= n_tags; t++) {
		if (t == 0)
			snprintf(name, sizeof(name), "%s", base);
		else
			ltpm_unique_name(base, tags[t - 1], name, sizeof(name));
		if (head_taken(indom, name))
			continue;
		sts = pmdaCacheStoreKey(indom, PMDA_CACHE_ADD, name, keylen,
					key, NULL);
		if (sts >= 0)
			return sts;
	}
	return PM_ERR_INST;
}

static int int_cmp(const void *x, const void *y)
{
	int a = *(const int *)x, b = *(const int *)y;

	return (a > b) - (a < b);
}

void ltpm_hide_stale(pmInDom indom, int *live, size_t n)
{
	char **stale = NULL, *name;
	size_t n_stale = 0, cap = 0, i;
	int inst;

	if (n)
		qsort(live, n, sizeof(*live), int_cmp);
	pmdaCacheOp(indom, PMDA_CACHE_WALK_REWIND);
	while ((inst = pmdaCacheOp(indom, PMDA_CACHE_WALK_NEXT)) >= 0) {
		if (n && bsearch(&inst, live, n, sizeof(*live), int_cmp))
			continue;
		if (pmdaCacheLookup(indom, inst, &name, NULL) !=
			    PMDA_CACHE_ACTIVE ||
		    lt_grow((void **)&stale, &cap, n_stale + 1, sizeof(*stale)))
			continue;
		stale[n_stale] = strdup(name);
		if (stale[n_stale])
			n_stale++;
	}
	/* Hidden after the walk, which the changes would disturb. */
	for (i = 0; i < n_stale; i++) {
		pmdaCacheStore(indom, PMDA_CACHE_HIDE, stale[i], NULL);
		free(stale[i]);
	}
	free(stale);
}
