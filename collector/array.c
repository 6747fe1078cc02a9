// SPDX-License-Identifier: LGPL-2.1-or-later
/* Growable arrays, for every consumer. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "collector.h"

int lt_grow(void **array, size_t *cap, size_t need, size_t elem)
{
	size_t ncap = *cap ? *cap : 64;
	void *n;

	if (need <= *cap)
		return 0;
	while (ncap < need)
		ncap *= 2;
	n = realloc(*array, ncap * elem);
	if (!n)
		return -ENOMEM;
	memset((char *)n + *cap * elem, 0, (ncap - *cap) * elem);
	*array = n;
	*cap = ncap;
	return 0;
}

void lt_shrink(void **array, size_t *cap, size_t n, size_t elem)
{
	size_t ncap = 64;
	void *p;

	while (ncap < n * 2)
		ncap *= 2;
	if (ncap * 2 > *cap)
		return;
	p = realloc(*array, ncap * elem);
	if (!p)
		return; /* the larger array stays, as good */
	*array = p;
	*cap = ncap;
}
