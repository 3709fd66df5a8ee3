// SPDX-License-Identifier: MIT
#include "record_decode.h"

#include <errno.h>
#include <string.h>

/* The one table of event kinds: probe name and where its strings are. */
static const struct {
	const char *probe;
	int name_arg, args_arg;
} kinds[CTRACE_KIND_MAX + 1] = {
	[CTRACE_KIND_SPAN_BEGIN] = { "span_begin", 2, 3 },
	[CTRACE_KIND_SPAN_END] = { "span_end", -1, 1 },
	[CTRACE_KIND_INSTANT] = { "instant", 1, 3 },
	[CTRACE_KIND_COUNTER_SET] = { "counter_set", 1, -1 },
	[CTRACE_KIND_COUNTER_ADD] = { "counter_add", 1, -1 },
	[CTRACE_KIND_NEW_PID] = { "new_pid", 1, -1 },
	[CTRACE_KIND_DISCARD] = { "discard", -1, -1 },
	[CTRACE_KIND_SCOPE] = { "scope", 1, 2 },
	/* From the kernel's tracepoints: their strings are never user pointers. */
	[CTRACE_KIND_FORK] = { "(fork)", -1, -1 },
	[CTRACE_KIND_EXEC] = { "(exec)", -1, -1 },
	[CTRACE_KIND_SCOPE_TSC] = { "scope_tsc", 1, 2 },
};

const char *record_kind_probe(unsigned kind)
{
	return kind >= 1 && kind <= CTRACE_KIND_MAX ? kinds[kind].probe : NULL;
}

int record_name_arg(unsigned kind)
{
	return record_kind_probe(kind) ? kinds[kind].name_arg : -1;
}

int record_args_arg(unsigned kind)
{
	return record_kind_probe(kind) ? kinds[kind].args_arg : -1;
}

int record_decode(const void *data, size_t size, struct ctrace_event *out)
{
	struct ctrace_record r;
	const char *bytes = data;

	if (size < sizeof(r))
		return -EINVAL;
	memcpy(&r, data, sizeof(r)); /* the ring buffer only guarantees 8-byte alignment */
	if (!record_kind_probe(r.kind))
		return -EINVAL;
	if (r.name_len > CTRACE_NAME_MAX || r.args_len > CTRACE_ARGS_MAX ||
	    sizeof(r) + (size_t)r.name_len + r.args_len != size)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	out->ts_ns = r.ts_ns;
	out->tgid = r.tgid;
	out->tid = r.tid;
	out->kind = r.kind;
	memcpy(out->arg, r.arg, sizeof(out->arg));
	out->tsc = r.tsc;
	out->name = bytes + sizeof(r);
	out->name_len = r.name_len;
	out->name_flags = CTRACE_NAME_FLAGS(r.flags);
	out->args = bytes + sizeof(r) + r.name_len;
	out->args_len = r.args_len;
	out->args_flags = CTRACE_ARGS_FLAGS(r.flags);
	return 0;
}
