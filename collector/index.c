// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * An open-addressing index from fixed-size keys to positions in a
 * caller's array. The keys live in the caller's entries, at the start of
 * each one, so the index stays a plain array of positions.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"

static uint64_t hash_bytes(const void *key, size_t len)
{
	const unsigned char *p = key;
	uint64_t h = 0x9e3779b97f4a7c15ULL, w;
	size_t i;

	for (i = 0; i + 8 <= len; i += 8) {
		memcpy(&w, p + i, 8);
		h = (h ^ w) * 0xbf58476d1ce4e5b9ULL;
		h ^= h >> 31;
	}
	for (; i < len; i++)
		h = (h ^ p[i]) * 0x100000001b3ULL;
	return h ^ (h >> 29);
}

static const void *key_at(const struct lt_index *ix, const void *base, size_t i)
{
	return (const char *)base + i * ix->stride;
}

int lt_index_init(struct lt_index *ix, size_t key_len, size_t stride)
{
	ix->size = 256;
	ix->n = 0;
	ix->key_len = key_len;
	ix->stride = stride;
	ix->slot = calloc(ix->size, sizeof(*ix->slot));
	return ix->slot ? 0 : -ENOMEM;
}

void lt_index_free(struct lt_index *ix)
{
	free(ix->slot);
	ix->slot = NULL;
	ix->size = ix->n = 0;
}

ssize_t lt_index_find(const struct lt_index *ix, const void *key,
		      const void *base)
{
	size_t s = hash_bytes(key, ix->key_len) & (ix->size - 1);

	while (ix->slot[s]) {
		size_t i = ix->slot[s] - 1;

		if (!memcmp(key_at(ix, base, i), key, ix->key_len))
			return (ssize_t)i;
		s = (s + 1) & (ix->size - 1);
	}
	return -1;
}

static void place(uint32_t *slot, size_t size, uint64_t h, size_t i)
{
	size_t s = h & (size - 1);

	while (slot[s])
		s = (s + 1) & (size - 1);
	slot[s] = (uint32_t)i + 1;
}

int lt_index_add(struct lt_index *ix, size_t i, const void *base)
{
	size_t j;

	if ((ix->n + 1) * 2 > ix->size) {
		size_t size = ix->size * 2;
		uint32_t *slot = calloc(size, sizeof(*slot));

		if (!slot)
			return -ENOMEM;
		for (j = 0; j < ix->size; j++) {
			size_t k;

			if (!ix->slot[j])
				continue;
			k = ix->slot[j] - 1;
			place(slot, size,
			      hash_bytes(key_at(ix, base, k), ix->key_len), k);
		}
		free(ix->slot);
		ix->slot = slot;
		ix->size = size;
	}
	place(ix->slot, ix->size, hash_bytes(key_at(ix, base, i), ix->key_len),
	      i);
	ix->n++;
	return 0;
}

/* The state of key in an index over states of the given size; new ones
 * start at zero. */
ssize_t lt_index_state(struct lt_index *ix, void **states, size_t *n,
		       size_t *cap, size_t size, const void *key,
		       size_t key_len, bool *created)
{
	ssize_t i = lt_index_find(ix, key, *states);

	*created = i < 0;
	if (i >= 0)
		return i;
	if (lt_grow(states, cap, *n + 1, size))
		return -ENOMEM;
	i = (ssize_t)*n;
	memset((char *)*states + (size_t)i * size, 0, size);
	memcpy((char *)*states + (size_t)i * size, key, key_len);
	if (lt_index_add(ix, (size_t)i, *states))
		return -ENOMEM;
	(*n)++;
	return i;
}

uint32_t *lt_index_table(size_t n, size_t *size)
{
	size_t sz = 256;

	while (sz < n * 2 + 2)
		sz *= 2;
	*size = sz;
	return calloc(sz, sizeof(uint32_t));
}

void lt_index_refill(struct lt_index *ix, uint32_t *table, size_t size,
		     size_t n, const void *base)
{
	size_t i;

	free(ix->slot);
	ix->slot = table;
	ix->size = size;
	ix->n = n;
	for (i = 0; i < n; i++)
		place(ix->slot, ix->size,
		      hash_bytes(key_at(ix, base, i), ix->key_len), i);
}
