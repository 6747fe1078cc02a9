/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A client of pmproxy's REST API (series_http.c), for source_series.c. */
#ifndef LOCKTOP_SERIES_HTTP_H
#define LOCKTOP_SERIES_HTTP_H

#include <stddef.h>
#include <json-c/json.h>
#include "collector.h"

/* s with everything but unreserved characters %-escaped, for a URL. */
void http_encode(const char *s, char *out, size_t len);

/*
 * GET path from pmproxy at host:port and parse the body: the JSON, which
 * the caller puts, or NULL with a message in err (no answer, not 200,
 * not JSON).
 */
json_object *http_get_json(const char *host, const char *port, const char *path,
			   char *err, size_t err_len);

#endif
