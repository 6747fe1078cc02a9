// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Fuzz target for the record loader and what diff computes from a record.
 *
 * Built with -DLOCKTOP_LIBFUZZER and clang -fsanitize=fuzzer it is a
 * libFuzzer target (LLVMFuzzerTestOneInput). Built plainly it is its own
 * deterministic driver: it mutates the seed records (bit flips, JSON
 * tokens, deletions, duplications, truncations, splices) for a bounded
 * number of iterations or seconds, so that the suite can run it under
 * ASan and UBSan with the default compiler.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "diff_priv.h"
#include "record.h"

static size_t parsed_ok;

/* The comparison of a record with itself, in total and per operation. */
static void compare_self(const struct record *r)
{
	struct diff_cmp c = { .rec = { r, r },
			      .path = { "a", "b" },
			      .rule = { .sigma = 2, .threshold_pct = 5 },
			      .all_kinds = true,
			      .per_op = true,
			      .ops = { 1000, 10 } };

	if (!diff_compare(&c) &&
	    (c.n_kinds < 1 || c.n_rows < c.n_kinds + c.n_files + c.n_locks))
		abort();
	diff_cmp_free(&c);
}

/* Everything diff derives from one record, on whatever the loader let by. */
static void exercise(const struct record *r)
{
	char key[LT_NAME_LEN];
	size_t i;
	int k, m;

	for (k = -1; k < LT_KIND_NR; k++)
		for (m = 0; m < REC_METRIC_NR; m++)
			(void)diff_noise(r, k, NULL, true, (enum rec_metric)m);
	for (i = 0; i < r->final.n_locks && i < 64; i++) {
		const struct rec_lock *l = &r->final.locks[i];

		/* The loader leaves one entry per key and kind. */
		if (rec_set_find_kind(&r->final, l->key, l->kind) != l)
			abort();
		for (m = 0; m < REC_METRIC_NR; m++)
			(void)diff_noise(r, (int)l->kind, l->key, false,
					 (enum rec_metric)m);
		record_normalize_key(l->name, key, sizeof(key));
	}
	compare_self(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct record *r;
	char err[256];

	if (record_parse((const char *)data, size, &r, err, sizeof(err)))
		return 0;
	parsed_ok++;
	exercise(r);
	record_free(r);
	return 0;
}

#ifndef LOCKTOP_LIBFUZZER

struct seed {
	char *buf;
	size_t len;
};

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

/* xorshift64*: the same sequence on every run, so a failure reproduces. */
static uint64_t rnd(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ULL;
}

static size_t below(size_t n)
{
	return n ? (size_t)(rnd() % n) : 0;
}

static const char *const tokens[] = {
	"{",
	"}",
	"[",
	"]",
	"\"",
	",",
	":",
	"null",
	"true",
	"-1",
	"0",
	"1e400",
	"-0.0",
	"18446744073709551615",
	"18446744073709551616",
	"9223372036854775808",
	"\\u0000",
	"\"version\":2",
	"\"format\":\"x\"",
	"\"locks\":[{}]",
	"\"wait_hist\":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,"
	"21,22,23,24,25,26,27,28,29,30,31,32,33,34,35,36,37,38,39,40,41]",
	"\"kind\":\"nope\"",
	"\"interval_s\":0",
	"\"interval_s\":1e-300",
	"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[",
};

/* buf has room for cap bytes; returns the new length. */
static size_t mutate(char *buf, size_t len, size_t cap, const struct seed *s,
		     size_t n_seeds)
{
	size_t rounds = 1 + below(4), i, at, n;
	const char *t;
	const struct seed *o;

	for (i = 0; i < rounds; i++) {
		at = below(len + 1);
		switch (below(7)) {
		case 0: /* flip a bit */
			if (len)
				buf[below(len)] ^= (char)(1u << below(8));
			break;
		case 1: /* a JSON token in place of what is there */
		case 2:
			t = tokens[below(sizeof(tokens) / sizeof(*tokens))];
			n = strlen(t);
			if (at + n > cap)
				break;
			if (below(2) && len + n <= cap) { /* insert */
				memmove(buf + at + n, buf + at, len - at);
				len += n;
			} else if (at + n > len) {
				len = at + n;
			}
			memcpy(buf + at, t, n);
			break;
		case 3: /* delete a range */
			n = below(len - at + 1);
			n = n > 64 ? below(64) : n;
			memmove(buf + at, buf + at + n, len - at - n);
			len -= n;
			break;
		case 4: /* duplicate a range */
			n = below(len - at + 1);
			n = n > 256 ? below(256) : n;
			if (len + n > cap)
				break;
			memmove(buf + at + n, buf + at, len - at);
			len += n;
			break;
		case 5: /* truncate */
			len = at;
			break;
		default: /* splice: the tail of another seed */
			o = &s[below(n_seeds)];
			n = below(o->len + 1);
			if (at + (o->len - n) > cap)
				break;
			memcpy(buf + at, o->buf + n, o->len - n);
			len = at + (o->len - n);
			break;
		}
	}
	return len;
}

static int read_seed(const char *path, struct seed *s)
{
	FILE *f = fopen(path, "rb");
	long n;

	if (!f || fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 ||
	    fseek(f, 0, SEEK_SET)) {
		if (f)
			fclose(f);
		return -1;
	}
	s->len = (size_t)n;
	s->buf = malloc(s->len ? s->len : 1);
	if (!s->buf || fread(s->buf, 1, s->len, f) != s->len) {
		fclose(f);
		return -1;
	}
	fclose(f);
	return 0;
}

int main(int argc, char **argv)
{
	long iterations = 10000, seconds = 10, i;
	struct seed seeds[32];
	size_t n_seeds = 0, cap = 0, len, k;
	struct timespec t0, t;
	char *buf;
	int a;

	for (a = 1; a < argc; a++) {
		if (!strcmp(argv[a], "-n") && a + 1 < argc)
			iterations = atol(argv[++a]);
		else if (!strcmp(argv[a], "-t") && a + 1 < argc)
			seconds = atol(argv[++a]);
		else if (n_seeds < 32) {
			if (read_seed(argv[a], &seeds[n_seeds])) {
				fprintf(stderr, "fuzz-record: cannot read %s\n",
					argv[a]);
				return 1;
			}
			n_seeds++;
		}
	}
	if (!n_seeds) {
		fprintf(stderr, "usage: fuzz-record [-n ITER] [-t SECS] "
				"SEED...\n");
		return 2;
	}
	/* The seeds themselves must load, or the mutations prove little. */
	for (k = 0; k < n_seeds; k++) {
		size_t before = parsed_ok;

		LLVMFuzzerTestOneInput((const uint8_t *)seeds[k].buf,
				       seeds[k].len);
		if (parsed_ok == before) {
			fprintf(stderr, "fuzz-record: seed %zu does not load\n",
				k);
			return 1;
		}
		if (seeds[k].len * 2 + 4096 > cap)
			cap = seeds[k].len * 2 + 4096;
	}
	buf = malloc(cap);
	if (!buf)
		return 1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	parsed_ok = 0;
	for (i = 0; i < iterations; i++) {
		const struct seed *s = &seeds[below(n_seeds)];

		memcpy(buf, s->buf, s->len);
		len = mutate(buf, s->len, cap, seeds, n_seeds);
		LLVMFuzzerTestOneInput((const uint8_t *)buf, len);
		if ((i & 255) == 0) {
			clock_gettime(CLOCK_MONOTONIC, &t);
			if (t.tv_sec - t0.tv_sec >= seconds)
				break;
		}
	}
	printf("fuzz-record: %ld inputs, %zu loaded as records\n", i,
	       parsed_ok);
	free(buf);
	for (k = 0; k < n_seeds; k++)
		free(seeds[k].buf);
	return 0;
}
#endif
