/* SPDX-License-Identifier: MIT */
/*
 * args_json.c - an event's untrusted `args` text as a JSON object.
 *
 * cJSON 1.7.15 quirks this relies on or works around (checked by experiment):
 *  - it copies string bytes >= 0x80 as they are, in parsing and printing, so
 *    the text is UTF-8-repaired before parsing and the printed text goes
 *    through jw_json_text() (which repairs again, for trees built elsewhere);
 *  - its parser accepts some non-JSON numbers ("01", "1.") and treats every
 *    byte <= 0x20 as whitespace: harmless, the output is re-printed by cJSON,
 *    never the input text;
 *  - it prints NaN and infinities (from "1e999") as null;
 *  - it rejects lone surrogate escapes and nesting deeper than
 *    CJSON_NESTING_LIMIT (so hostile nesting cannot exhaust the stack);
 *  - "\u0000" cuts a string short (strings are C strings): still valid.
 */
#include "encode/json/args_json.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define REPLACEMENT "\xef\xbf\xbd" /* U+FFFD */

/* The repaired text into dst (or only its length if dst is NULL). */
static size_t repair_into(char *dst, const char *src, size_t len)
{
	const unsigned char *p = (const unsigned char *)src;
	size_t i = 0, o = 0;

	while (i < len) {
		int32_t cp;
		size_t k = jw_utf8_next(p + i, len - i, &cp);

		if (cp <= 0) { /* invalid, or NUL: cJSON would stop at it */
			if (dst)
				memcpy(dst + o, REPLACEMENT, 3);
			o += 3;
		} else {
			if (dst)
				memcpy(dst + o, src + i, k);
			o += k;
		}
		i += k;
	}
	return o;
}

/* Repaired src, then suffix (valid UTF-8, no NUL), then a NUL. */
static char *repair_with_suffix(const char *src, size_t len, const char *suffix,
				size_t *out_len)
{
	size_t slen = strlen(suffix), n;
	char *dst;

	if (len > (SIZE_MAX - slen - 1) / 3) /* 3 bytes out per byte in, at most */
		return NULL;
	n = repair_into(NULL, src, len);
	dst = malloc(n + slen + 1);
	if (!dst)
		return NULL;
	repair_into(dst, src, len);
	memcpy(dst + n, suffix, slen + 1);
	if (out_len)
		*out_len = n + slen;
	return dst;
}

char *utf8_repair(const char *src, size_t len, size_t *out_len)
{
	return repair_with_suffix(src ? src : "", src ? len : 0, "", out_len);
}

/* {"raw": s} */
static cJSON *raw_object(const char *s)
{
	cJSON *obj = cJSON_CreateObject();

	if (obj && !cJSON_AddStringToObject(obj, ARGS_RAW_KEY, s)) {
		cJSON_Delete(obj);
		obj = NULL;
	}
	return obj;
}

cJSON *args_parse(const char *text, size_t len, bool truncated)
{
	cJSON *obj = NULL;
	char *s;

	if (!text)
		len = 0;
	/* truncated wins over empty: the reader should see that data was lost */
	if (len == 0 && !truncated)
		return cJSON_CreateObject();
	s = repair_with_suffix(text ? text : "", len,
			       truncated ? JW_TRUNC_SUFFIX : "", NULL);
	if (!s)
		return NULL;
	if (!truncated) {
		/* require_null_terminated: trailing garbage makes it fail */
		obj = cJSON_ParseWithOpts(s, NULL, 1);
		if (obj && !cJSON_IsObject(obj)) {
			cJSON_Delete(obj);
			obj = NULL;
		}
	}
	if (!obj)
		obj = raw_object(s);
	free(s);
	return obj;
}

/* The scratch buffer's first size; it grows to the largest args printed. */
#define SCRATCH_INIT 4096

void jw_cjson(struct json_writer *w, const cJSON *obj)
{
	cJSON *item = (cJSON *)obj; /* cJSON's print API is not const-correct */
	char *big, *grown;
	size_t n, want;

	if (w->err)
		return;
	if (!item) {
		jw_raw(w, "{}", 2);
		return;
	}
	if (!w->scratch) {
		w->scratch = malloc(SCRATCH_INIT);
		w->scratch_cap = w->scratch ? SCRATCH_INIT : 0;
	}
	/* the common case: prints into the reused buffer, no allocation */
	if (w->scratch && w->scratch_cap <= INT_MAX &&
	    cJSON_PrintPreallocated(item, w->scratch, (int)w->scratch_cap, 0)) {
		jw_json_text(w, w->scratch, strlen(w->scratch));
		return;
	}
	/* too small (or a tree cJSON cannot print): let cJSON size it once,
	 * then grow the scratch buffer so the next one of this size fits */
	big = cJSON_PrintUnformatted(item);
	if (!big) {
		jw_raw(w, "{}", 2);
		return;
	}
	n = strlen(big);
	jw_json_text(w, big, n);
	/* +64: cJSON's size estimate is not exact (see cJSON.h); at least
	 * doubling keeps the number of slow prints logarithmic */
	want = w->scratch_cap * 2 > n + 64 ? w->scratch_cap * 2 : n + 64;
	if (n + 64 > w->scratch_cap && want <= INT_MAX) {
		grown = realloc(w->scratch, want);
		if (grown) {
			w->scratch = grown;
			w->scratch_cap = want;
		}
	}
	cJSON_free(big);
}
