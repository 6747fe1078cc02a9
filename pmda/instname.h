/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Instances of a cached instance domain, named so that PCP tells them
 * apart: PCP compares instance names up to their first space, so no
 * two instances share that part.
 */
#ifndef LOCKTOP_PMDA_INSTNAME_H
#define LOCKTOP_PMDA_INSTNAME_H

#include <stddef.h>
#include <pcp/pmapi.h>

/*
 * Makes the instance for key active and returns its number. An entity
 * seen before gets its old name and number back; a new one gets the
 * first of base and base[tag] (ltpm_unique_name) whose part before the
 * first space no other instance has, or PM_ERR_INST.
 */
int ltpm_activate(pmInDom indom, const char *base, const void *key, int keylen,
		  const char *const *tags, size_t n_tags);

/*
 * Hides (marks inactive) every active instance of indom that is not
 * among the n of live, those a refresh made active: what left since the
 * last refresh. A refresh does not mark every instance inactive first,
 * since making one active again through its key leaks a copy of the
 * key inside PCP's cache (libpcp_pmda 6.x); an instance that comes back
 * after it left still does, once.
 */
void ltpm_hide_stale(pmInDom indom, int *live, size_t n);

#endif /* LOCKTOP_PMDA_INSTNAME_H */
