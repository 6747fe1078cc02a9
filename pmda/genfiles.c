// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * genfiles: writes pmdalocktop's pmns and help files from the metric
 * table (metrics.def), after checking the table: names and PMIDs unique,
 * every metric and instance domain with both helps.
 *
 * The help file lists instance domains, then metrics, in the table's
 * order. The pmns has a block per node of the name tree, depth first; a
 * node lists its subtrees in the order the table first names them and
 * its metrics, in the places metrics first come, in PMID order.
 *
 * Usage: genfiles PMNS HELP
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "metrics.h"

#define MAX_NODES 64
#define MAX_CHILDREN 64
#define MAX_PATH 128
#define LEAF_COLUMN 24 /* where a leaf's PMID starts, tabs reaching it */

struct child {
	char name[MAX_PATH];
	int metric; /* row of a leaf; -1 for a subtree */
	int node; /* node of a subtree */
};

struct node {
	char path[MAX_PATH];
	struct child children[MAX_CHILDREN];
	int n;
};

static struct node nodes[MAX_NODES];
static int n_nodes;

static const char pmns_head[] =
	"/*\n"
	" * Metric names of pmdalocktop. LOCKTOP is replaced by the domain number\n"
	" * (domain.h) when Install adds this to the PMNS.\n"
	" */\n";

static const char help_head[] =
	"#\n"
	"# Help text of pmdalocktop, in newhelp(1) form. Install compiles it.\n"
	"#\n"
	"# \"@ LOCKTOP.N\" lines describe instance domain N; Install replaces\n"
	"# LOCKTOP with the domain number.\n"
	"#\n";

static void die(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));

static void die(const char *fmt, ...)
{
	va_list ap;

	fputs("genfiles: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static int node_of(const char *path)
{
	int i;

	for (i = 0; i < n_nodes; i++)
		if (!strcmp(nodes[i].path, path))
			return i;
	if (n_nodes == MAX_NODES)
		die("too many nodes at %s", path);
	snprintf(nodes[n_nodes].path, MAX_PATH, "%s", path);
	return n_nodes++;
}

static struct child *child_of(struct node *nd, const char *name)
{
	int i;

	for (i = 0; i < nd->n; i++)
		if (!strcmp(nd->children[i].name, name))
			return &nd->children[i];
	if (nd->n == MAX_CHILDREN)
		die("too many children under %s", nd->path);
	memset(&nd->children[nd->n], 0, sizeof(nd->children[0]));
	snprintf(nd->children[nd->n].name, MAX_PATH, "%s", name);
	nd->children[nd->n].metric = -1;
	return &nd->children[nd->n++];
}

/* Adds a metric's name to the tree, each node it passes through too. */
static void add_name(int row)
{
	const char *name = ltpm_metrics[row].name;
	char path[MAX_PATH], part[MAX_PATH];
	const char *dot = strchr(name, '.'), *next;
	struct child *c;
	size_t len;
	int nd;

	if (!dot || strlen(name) >= MAX_PATH)
		die("bad metric name %s", name);
	snprintf(path, sizeof(path), "%.*s", (int)(dot - name), name);
	nd = node_of(path);
	for (; dot; dot = next) {
		next = strchr(dot + 1, '.');
		len = next ? (size_t)(next - dot - 1) : strlen(dot + 1);
		snprintf(part, sizeof(part), "%.*s", (int)len, dot + 1);
		c = child_of(&nodes[nd], part);
		if (!next) {
			if (c->node)
				die("%s is a metric and a node", name);
			if (c->metric >= 0)
				die("%s is named twice", name);
			c->metric = row;
			return;
		}
		if (c->metric >= 0)
			die("%s is a metric and a node", name);
		snprintf(path, sizeof(path), "%.*s", (int)(next - name), name);
		c->node = node_of(path);
		nd = c->node;
	}
}

/* A row's PMID less its domain: cluster and item. */
static unsigned long pmid_of(int row)
{
	return (unsigned long)ltpm_metrics[row].cluster << 10 |
	       ltpm_metrics[row].item;
}

static int by_pmid(const void *x, const void *y)
{
	unsigned long p = pmid_of(*(const int *)x),
		      q = pmid_of(*(const int *)y);

	return (p > q) - (p < q);
}

/* A node's metrics, in its metrics' places, go in PMID order. */
static void sort_leaves(struct node *nd)
{
	int rows[MAX_CHILDREN], n = 0, i;

	for (i = 0; i < nd->n; i++)
		if (nd->children[i].metric >= 0)
			rows[n++] = nd->children[i].metric;
	qsort(rows, n, sizeof(rows[0]), by_pmid);
	for (i = 0, n = 0; i < nd->n; i++) {
		struct child *c = &nd->children[i];
		const char *name;

		if (c->metric < 0)
			continue;
		c->metric = rows[n++];
		name = strrchr(ltpm_metrics[c->metric].name, '.') + 1;
		snprintf(c->name, MAX_PATH, "%s", name);
	}
}

static void write_node(FILE *f, int i)
{
	struct node *nd = &nodes[i];
	int k;

	fprintf(f, "\n%s {\n", nd->path);
	for (k = 0; k < nd->n; k++) {
		const struct child *c = &nd->children[k];
		int col = 4 + (int)strlen(c->name);

		fprintf(f, "    %s", c->name);
		if (c->metric < 0) {
			fputc('\n', f);
			continue;
		}
		do {
			fputc('\t', f);
			col = (col / 8 + 1) * 8;
		} while (col < LEAF_COLUMN);
		fprintf(f, "LOCKTOP:%u:%u\n", ltpm_metrics[c->metric].cluster,
			ltpm_metrics[c->metric].item);
	}
	fputs("}\n", f);
	for (k = 0; k < nd->n; k++)
		if (nd->children[k].metric < 0)
			write_node(f, nd->children[k].node);
}

/* The name tree, nodes[0] its root ("locktop"). */
static void build_tree(void)
{
	int row, i;

	for (row = 0; row < LTPM_N_METRICS; row++)
		add_name(row);
	for (i = 0; i < n_nodes; i++)
		sort_leaves(&nodes[i]);
}

static void write_pmns(FILE *f)
{
	fputs(pmns_head, f);
	write_node(f, 0);
}

static void write_help(FILE *f)
{
	int i;

	fputs(help_head, f);
	for (i = 0; i < N_INDOMS; i++)
		fprintf(f, "\n@ LOCKTOP.%d %s\n%s\n", i, ltpm_indoms[i].oneline,
			ltpm_indoms[i].help);
	for (i = 0; i < LTPM_N_METRICS; i++)
		fprintf(f, "\n@ %s %s\n%s\n", ltpm_metrics[i].name,
			ltpm_metrics[i].oneline, ltpm_metrics[i].help);
}

static void check_help(const char *what, const char *oneline, const char *help)
{
	if (!oneline || !*oneline || strchr(oneline, '\n'))
		die("%s: the one-line help is empty or not one line", what);
	if (!help || !*help || help[strlen(help) - 1] == '\n')
		die("%s: the help is empty or ends in a newline", what);
}

static void check_table(void)
{
	int i, j;

	for (i = 0; i < N_INDOMS; i++)
		check_help("an instance domain", ltpm_indoms[i].oneline,
			   ltpm_indoms[i].help);
	for (i = 0; i < LTPM_N_METRICS; i++) {
		const struct ltpm_metric *m = &ltpm_metrics[i];

		if (!m->name || strncmp(m->name, "locktop.", 8))
			die("row %d: no name under locktop.", i);
		check_help(m->name, m->oneline, m->help);
		if (m->cluster >= 1u << 12 || m->item >= 1u << 10)
			die("%s: cluster or item out of range", m->name);
		if (m->indom != PM_INDOM_NULL && m->indom >= N_INDOMS)
			die("%s: no such instance domain", m->name);
		for (j = 0; j < i; j++)
			if (pmid_of(i) == pmid_of(j))
				die("%s: its PMID is taken", m->name);
	}
}

static void write_file(const char *path, void (*emit)(FILE *))
{
	FILE *f = fopen(path, "w");
	int bad;

	if (!f)
		die("cannot write %s", path);
	emit(f);
	bad = ferror(f);
	if (fclose(f) || bad)
		die("cannot write %s", path);
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: %s PMNS HELP\n", argv[0]);
		return 2;
	}
	check_table();
	build_tree();
	write_file(argv[1], write_pmns);
	write_file(argv[2], write_help);
	return 0;
}
