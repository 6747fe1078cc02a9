// SPDX-License-Identifier: GPL-2.0-or-later
/* locktop diff --plot: the wait time per interval, charted by gnuplot. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include "diff.h"

static int write_series(const char *path, const struct record *r,
			bool all_kinds)
{
	FILE *f = fopen(path, "we");
	double t = 0;
	struct rec_fig fig;
	size_t i;

	if (!f)
		return -1;
	for (i = 0; i < r->n_intervals; i++) {
		const struct rec_set *s = &r->intervals[i];

		t += s->interval_s;
		diff_row_fig(s, DIFF_KIND_ALL, NULL, all_kinds, &fig);
		fprintf(f, "%.3f %.6f\n", s->elapsed_s > 0 ? s->elapsed_s : t,
			(double)fig.wait_ns / 1e6);
	}
	if (!r->n_intervals)
		fprintf(f, "0 0\n");
	return fclose(f) ? -1 : 0;
}

/* gnuplot strings are in single quotes, where '' is a quote. */
static void gp_string(FILE *f, const char *s)
{
	fputc('\'', f);
	for (; *s; s++) {
		if (*s == '\'')
			fputc('\'', f);
		if ((unsigned char)*s >= ' ')
			fputc(*s, f);
	}
	fputc('\'', f);
}

static int run_gnuplot(const char *script, char *err, size_t err_len)
{
	int status;
	pid_t pid;

	pid = fork();
	if (pid < 0) {
		snprintf(err, err_len, "--plot: fork: %s", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		execlp("gnuplot", "gnuplot", script, (char *)NULL);
		fprintf(stderr, "locktop: cannot run gnuplot: %s\n",
			strerror(errno));
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			snprintf(err, err_len, "--plot: waitpid: %s",
				 strerror(errno));
			return -1;
		}
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		snprintf(err, err_len,
			 "--plot: gnuplot failed (status %d); is it installed "
			 "(apt-get install gnuplot-nox)?",
			 WIFEXITED(status) ? WEXITSTATUS(status) : -1);
		return -1;
	}
	return 0;
}

int diff_plot(const struct record *const rec[2], const char *const rec_path[2],
	      bool all_kinds, const char *svg, char *err, size_t err_len)
{
	static const char *const names[] = { "before.dat", "after.dat",
					     "plot.gp" };
	const char *tmp = getenv("TMPDIR");
	char dir[256], path[3][320], title[600];
	int s, ret = -1;
	FILE *f;

	if (!tmp || !*tmp || strlen(tmp) > 200)
		tmp = "/tmp";
	snprintf(dir, sizeof(dir), "%s/locktop-plot.XXXXXX", tmp);
	if (!mkdtemp(dir)) {
		snprintf(err, err_len,
			 "--plot: temporary directory in %.200s: %s", tmp,
			 strerror(errno));
		return -1;
	}
	for (s = 0; s < 3; s++)
		snprintf(path[s], sizeof(path[s]), "%s/%s", dir, names[s]);
	for (s = 0; s < 2; s++) {
		if (write_series(path[s], rec[s], all_kinds)) {
			snprintf(err, err_len, "--plot: %.300s: %s", path[s],
				 strerror(errno));
			goto out;
		}
	}
	f = fopen(path[2], "we");
	if (!f) {
		snprintf(err, err_len, "--plot: %.300s: %s", path[2],
			 strerror(errno));
		goto out;
	}
	fprintf(f, "set terminal svg size 900,450 dynamic "
		   "background rgb 'white'\nset output ");
	gp_string(f, svg);
	fprintf(f, "\nset title 'Lock wait time per interval'\n"
		   "set xlabel 'seconds since the start'\n"
		   "set ylabel 'wait time in the interval (ms)'\n"
		   "set grid\nset key outside bottom center horizontal\n"
		   "set yrange [0:*]\nplot ");
	for (s = 0; s < 2; s++) {
		snprintf(title, sizeof(title), "%s: %.500s",
			 s ? "after" : "before", rec_path[s]);
		gp_string(f, path[s]);
		fprintf(f, " using 1:2 with linespoints lw 2 title ");
		gp_string(f, title);
		fprintf(f, "%s", s ? "\n" : ", ");
	}
	if (fclose(f)) {
		snprintf(err, err_len, "--plot: %s", strerror(errno));
		goto out;
	}
	ret = run_gnuplot(path[2], err, err_len);
out:
	for (s = 0; s < 3; s++)
		unlink(path[s]);
	rmdir(dir);
	return ret;
}
