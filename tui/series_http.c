// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A small client of pmproxy's REST API: one GET at a time, a connection
 * each, the answer read until whole (chunked, or by its length), its
 * body parsed as JSON.
 */
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include "series_http.h"

#define HTTP_TIMEOUT_MS 10000
#define HTTP_MAX_BYTES (64UL << 20)

void http_encode(const char *s, char *out, size_t len)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t o = 0;

	for (; *s && o + 4 < len; s++) {
		unsigned char c = (unsigned char)*s;

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || strchr("-_.~,", c)) {
			out[o++] = (char)c;
		} else {
			out[o++] = '%';
			out[o++] = hex[c >> 4];
			out[o++] = hex[c & 15];
		}
	}
	out[o] = 0;
}

static int dial(const char *host, const char *port, char *err, size_t err_len)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res, *ai;
	int fd = -1, ret;

	ret = getaddrinfo(host, port, &hints, &res);
	if (ret) {
		snprintf(err, err_len, "%s: %s", host, gai_strerror(ret));
		return -1;
	}
	for (ai = res; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC,
			    ai->ai_protocol);
		if (fd < 0)
			continue;
		if (!connect(fd, ai->ai_addr, ai->ai_addrlen))
			break;
		ret = errno;
		close(fd);
		fd = -1;
		errno = ret;
	}
	if (fd < 0)
		snprintf(err, err_len, "cannot connect to pmproxy on %s:%s: %s",
			 host, port, strerror(errno));
	freeaddrinfo(res);
	return fd;
}

/*
 * A chunked body decoded in place: 1 when its last chunk is in, 0 while
 * more is to come, -1 when it is not chunked as HTTP/1.1 says; at eof,
 * whole chunks are the whole body. (pmproxy 6.0 cuts a chunked answer
 * after its first chunk when asked to close the connection: it is asked
 * nothing, and the answer ends with its last chunk.)
 */
static int dechunk(char *body, size_t n, bool eof, size_t *out)
{
	size_t i = 0, o = 0;

	for (;;) {
		char *end;
		unsigned long len = strtoul(body + i, &end, 16);
		char *crlf = memmem(body + i, n - i, "\r\n", 2);

		if (eof && i == n) {
			*out = o;
			return 1;
		}
		if (!crlf)
			return 0;
		if (end == body + i)
			return -1;
		i = (size_t)(crlf - body) + 2;
		if (!len) {
			*out = o;
			return 1;
		}
		if (i + len + 2 > n)
			return 0;
		memmove(body + o, body + i, len);
		o += len;
		i += len + 2;
	}
}

/* An answer's body, whole: *body its start, *len its length; 0 until. */
static int whole(char *buf, size_t n, bool eof, char **body, size_t *len)
{
	char *hdr_end = memmem(buf, n, "\r\n\r\n", 4), *cl;
	size_t have;

	if (!hdr_end)
		return 0;
	*hdr_end = 0;
	*body = hdr_end + 4;
	have = n - (size_t)(*body - buf);
	if (strcasestr(buf, "transfer-encoding: chunked")) {
		char *copy = malloc(have + 1);
		int r;

		*hdr_end = '\r';
		if (!copy)
			return -1;
		memcpy(copy, *body, have);
		copy[have] = 0;
		r = dechunk(copy, have, eof, len);
		if (r == 1) {
			memcpy(*body, copy, *len);
			(*body)[*len] = 0;
			*hdr_end = 0;
		}
		free(copy);
		return r;
	}
	cl = strcasestr(buf, "content-length:");
	*hdr_end = '\r';
	if (cl && have < strtoul(cl + 15, NULL, 10))
		return eof ? -1 : 0;
	*hdr_end = 0;
	*len = have;
	(*body)[have] = 0;
	return 1;
}

/* Reads one answer: *buf holds it, *body its body, whole. */
static int read_answer(int fd, char **buf, char **body, char *err,
		       size_t err_len)
{
	size_t cap = 0, n = 0, len;
	struct pollfd p = { .fd = fd, .events = POLLIN };
	ssize_t r;
	int w;

	*buf = NULL;
	for (;;) {
		if (lt_grow((void **)buf, &cap, n + 65537, 1))
			break;
		if (poll(&p, 1, HTTP_TIMEOUT_MS) <= 0) {
			snprintf(err, err_len, "pmproxy did not answer");
			return -ETIMEDOUT;
		}
		r = read(fd, *buf + n, cap - n - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			snprintf(err, err_len, "reading from pmproxy: %s",
				 strerror(errno));
			return -EIO;
		}
		n += (size_t)r;
		(*buf)[n] = 0;
		w = whole(*buf, n, !r, body, &len);
		if (w > 0)
			return 0;
		if (w < 0 || !r) {
			snprintf(err, err_len, "pmproxy's answer is cut short");
			return -EIO;
		}
		if (n > HTTP_MAX_BYTES)
			break;
	}
	snprintf(err, err_len, "pmproxy's answer is too big");
	return -ENOMEM;
}

json_object *http_get_json(const char *host, const char *port, const char *path,
			   char *err, size_t err_len)
{
	char req[8192], *buf = NULL, *body = NULL;
	json_object *j = NULL;
	size_t len;
	int fd, st = 0;

	len = (size_t)snprintf(req, sizeof(req),
			       "GET %s HTTP/1.1\r\nHost: %s:%s\r\n"
			       "Accept: application/json\r\n\r\n",
			       path, host, port);
	if (len >= sizeof(req)) {
		snprintf(err, err_len, "query too long");
		return NULL;
	}
	fd = dial(host, port, err, err_len);
	if (fd < 0)
		return NULL;
	if (write(fd, req, len) != (ssize_t)len) {
		snprintf(err, err_len, "writing to pmproxy: %s",
			 strerror(errno));
		close(fd);
		return NULL;
	}
	if (read_answer(fd, &buf, &body, err, err_len))
		goto out;
	if (sscanf(buf, "HTTP/%*s %d", &st) != 1) {
		snprintf(err, err_len, "pmproxy gave no HTTP answer");
		goto out;
	}
	j = json_tokener_parse(body);
	if (st != 200 || !j) {
		json_object *msg = NULL;

		if (j)
			json_object_object_get_ex(j, "message", &msg);
		snprintf(err, err_len, "pmproxy answered %d to %s: %.200s", st,
			 path, msg ? json_object_get_string(msg) : "not JSON");
		json_object_put(j);
		j = NULL;
	}
out:
	free(buf);
	close(fd);
	return j;
}
