// SPDX-License-Identifier: MIT
#include "ingest/usdt_strings.h"

#include <stdbool.h>
#include <string.h>
#include "ingest/record_decode.h"
#include "ingest/record_strings.h"

static bool has_fault(const struct ctrace_event *ev)
{
	size_t at = 0;

	while (ev->args_len - at >= sizeof(struct ctrace_usdt_str)) {
		struct ctrace_usdt_str h;

		memcpy(&h, ev->args + at, sizeof(h));
		if (h.status == CTRACE_USDT_STR_FAULT)
			return true;
		at += sizeof(h) + h.len;
		if (at > ev->args_len)
			return false; /* malformed: usdt_model.c counts it */
	}
	return false;
}

void usdt_strings_resolve(struct record_strings *rs, struct ctrace_event *ev, char *buf)
{
	size_t at = 0, out = 0;

	if (ev->kind != CTRACE_KIND_USDT || ev->arg[1] > CTRACE_USDT_ARGS ||
	    ev->name_len != ev->arg[1] * 8 || !has_fault(ev))
		return;
	while (ev->args_len - at >= sizeof(struct ctrace_usdt_str)) {
		struct ctrace_usdt_str h;
		unsigned how;

		memcpy(&h, ev->args + at, sizeof(h));
		at += sizeof(h);
		if (h.len > ev->args_len - at || h.arg >= ev->arg[1] ||
		    out + sizeof(h) + CTRACE_USDT_STR_MAX > USDT_STRINGS_BYTES)
			return; /* malformed: left as it came, for the model to count */
		how = (unsigned)(ev->arg[0] >> (CTRACE_USDT_HOW_SHIFT + 2 * h.arg)) & 3;
		if (h.status == CTRACE_USDT_STR_FAULT && how == CTRACE_USDT_HOW_STR) {
			struct ctrace_event e = *ev;
			const char *s;
			size_t len;
			bool truncated;

			/* The pointer is the argument's value: where late_read looks, arg[0]. */
			memcpy(&e.arg[0], ev->name + 8 * h.arg, 8);
			if (e.arg[0] && record_strings_read_late(rs, &e, 0, &s, &len, &truncated,
								 buf + out + sizeof(h), CTRACE_USDT_STR_MAX)) {
				if (s != buf + out + sizeof(h))
					memmove(buf + out + sizeof(h), s, len);
				h.status = truncated ? CTRACE_USDT_STR_TRUNCATED : CTRACE_USDT_STR_OK;
				h.len = (uint16_t)len;
				memcpy(buf + out, &h, sizeof(h));
				out += sizeof(h) + len;
				continue;
			}
		}
		memcpy(buf + out, &h, sizeof(h));
		memcpy(buf + out + sizeof(h), ev->args + at, h.len);
		out += sizeof(h) + h.len;
		at += h.len;
	}
	ev->args = buf;
	ev->args_len = out;
}
