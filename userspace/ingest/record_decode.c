// SPDX-License-Identifier: MIT
#include "ingest/record_decode.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

/* Built from the kinds table of ctrace_record.h: each kind's probe name. */
static const char *const kind_probe[CTRACE_KIND_MAX + 1] = {
#define PROBE_KIND(kind, num, probe, ...) [num] = #probe,
	CTRACE_PROBE_KINDS(PROBE_KIND)
#undef PROBE_KIND
	/* From the kernel: their strings are never user pointers. */
#define PROCESS_KIND(kind, num, what) [num] = "(" #what ")",
	CTRACE_PROCESS_KINDS(PROCESS_KIND)
#undef PROCESS_KIND
	/* Other programs' probes (--usdt): their strings come in the record. */
#define FOREIGN_KIND(kind, num, what) [num] = "(" #what ")",
	CTRACE_FOREIGN_KINDS(FOREIGN_KIND)
#undef FOREIGN_KIND
};

const char *record_kind_probe(unsigned kind)
{
	return kind >= 1 && kind <= CTRACE_KIND_MAX ? kind_probe[kind] : NULL;
}

/* The BPF program copied the strings from these (the same table). */
int record_name_arg(unsigned kind)
{
	return ctrace_kind_name_arg(kind);
}

int record_args_arg(unsigned kind)
{
	return ctrace_kind_args_arg(kind);
}

/* --stacks' part: its header, then exactly what its `how` and `n` say. */
static bool stack_part_fits(const char *p, size_t len)
{
	struct ctrace_stack st;

	if (len < sizeof(st))
		return false;
	memcpy(&st, p, sizeof(st));
	len -= sizeof(st);
	if (st.how == CTRACE_STACK_FP)
		return st.n <= CTRACE_STACK_DEPTH_MAX && len == (size_t)st.n * 8;
	if (st.how == CTRACE_STACK_DWARF)
		return st.n <= CTRACE_STACK_BYTES && len == CTRACE_STACK_REGS * 8 + (size_t)st.n;
	return false;
}

const void *record_stack_part(const void *data, size_t size, size_t *len)
{
	struct ctrace_record r;
	size_t strings;

	memcpy(&r, data, sizeof(r));
	strings = sizeof(r) + (size_t)r.name_len + r.args_len;
	if (strings >= size)
		return NULL;
	*len = size - strings;
	return (const char *)data + strings;
}

int record_decode(const void *data, size_t size, struct ctrace_event *out)
{
	size_t stack_len;
	struct ctrace_record r;
	const char *bytes = data;

	if (size < sizeof(r))
		return -EINVAL;
	memcpy(&r, data, sizeof(r)); /* the ring buffer only guarantees 8-byte alignment */
	if (!record_kind_probe(r.kind))
		return -EINVAL;
	if (r.name_len > CTRACE_NAME_MAX || r.args_len > CTRACE_ARGS_MAX ||
	    sizeof(r) + (size_t)r.name_len + r.args_len > size)
		return -EINVAL;
	stack_len = size - (sizeof(r) + (size_t)r.name_len + r.args_len);
	/* Bytes after the strings: only a whole stack part (--stacks). */
	if (stack_len && !stack_part_fits(bytes + size - stack_len, stack_len))
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
	out->cat = (uint8_t)(r.flags >> 8);
	return 0;
}
