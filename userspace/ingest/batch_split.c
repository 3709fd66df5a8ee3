// SPDX-License-Identifier: MIT
#include "ingest/batch_split.h"
#include "lib/categories.h"

#include <string.h>

/* Words of arguments each kind's event carries: the probe's, in note order. */
static int kind_words(unsigned kind)
{
	switch (kind) {
	case CTRACE_KIND_SPAN_BEGIN:
	case CTRACE_KIND_INSTANT:
	case CTRACE_KIND_SCOPE_TSC:
		return 4;
	case CTRACE_KIND_COUNTER_SET:
	case CTRACE_KIND_COUNTER_ADD:
		return 3;
	case CTRACE_KIND_SPAN_END:
	case CTRACE_KIND_NEW_PID:
		return 2;
	case CTRACE_KIND_DISCARD:
	case CTRACE_KIND_FLOW_OUT:
	case CTRACE_KIND_FLOW_IN:
	case CTRACE_KIND_THREAD_NAME:
	case CTRACE_KIND_PROCESS_SORT_INDEX:
	case CTRACE_KIND_THREAD_SORT_INDEX:
		return 1;
	default:
		return -1;
	}
}

bool batch_header_parse(const void *bytes, size_t n, struct batch_header *h)
{
	if (n < BATCH_HEADER_BYTES)
		return false;
	memcpy(&h->magic, bytes, 4);
	memcpy(&h->tid, (const char *)bytes + 4, 4);
	memcpy(&h->first_seq, (const char *)bytes + 8, 8);
	memcpy(&h->len, (const char *)bytes + 16, 4);
	memcpy(&h->count, (const char *)bytes + 20, 4);
	memcpy(&h->pid, (const char *)bytes + 36, 4);
	memcpy(&h->born, (const char *)bytes + 48, 8);
	return h->magic == BATCH_MAGIC && h->len <= n - BATCH_HEADER_BYTES;
}

/* An inline string: its bytes as the per-event path would have copied them. */
static void inline_str(const char **s, size_t *len, unsigned *flags, const unsigned char *p,
		       size_t n, size_t max)
{
	*s = (const char *)p;
	*len = n;
	*flags = 0;
	if (n >= max) { /* as bpf/ctrace.bpf.c's copy_str: "max" is already cut */
		*len = max;
		*flags = CTRACE_STR_TRUNCATED;
	}
}

int64_t batch_split(const void *bytes, size_t n, uint64_t from, uint32_t tgid, uint32_t tid,
		    batch_event_fn fn, void *ctx)
{
	const unsigned char *data = (const unsigned char *)bytes + BATCH_HEADER_BYTES;
	struct batch_header h;
	uint64_t seq;
	size_t off = 0;

	if (!batch_header_parse(bytes, n, &h))
		return -1;
	seq = h.first_seq;
	while (off < h.len) {
		struct batch_event e;
		uint16_t nlen, alen;
		unsigned kind, flags, words, mask, small, cat_words;
		size_t size;
		int name_arg, args_arg, kw;

		if (h.len - off < 16)
			return -1;
		/*
		 * Field by field, not memset(): the compiler made that a
		 * `rep stos` of the whole event, 40% of the split's time (a
		 * tenth of the loader's under a flood of batches).
		 */
		e.ev.ts_ns = 0;
		e.ev.sf = 0;
		e.ev.arg[0] = e.ev.arg[1] = e.ev.arg[2] = e.ev.arg[3] = 0;
		e.ev.tsc = 0;
		e.ev.name = e.ev.args = NULL;
		e.ev.name_len = e.ev.args_len = 0;
		e.ev.name_flags = e.ev.args_flags = 0;
		memcpy(&e.tsc, data + off, 8);
		kind = data[off + 8];
		flags = data[off + 9];
		mask = data[off + 10];
		small = data[off + 11];
		memcpy(&nlen, data + off + 12, 2);
		memcpy(&alen, data + off + 14, 2);
		kw = kind_words(kind);
		if (kw < 0 || mask >> kw)
			return -1;
		/* A 4-bit mask: a table, not __builtin_popcount (a libgcc call without -mpopcnt). */
		words = (0x4332322132212110u >> (4 * mask)) & 15;
		cat_words = !!(flags & BATCH_CATEGORY);
		size = 16 + 8 * (size_t)(words + cat_words) + (((size_t)nlen + alen + 7) & ~(size_t)7);
		if (size > h.len - off)
			return -1;
		if (seq++ < from) {
			off += size;
			continue; /* taken before (an earlier read of the same buffer) */
		}
		e.seq = seq - 1;
		e.ev.tgid = tgid;
		e.ev.tid = tid;
		e.ev.kind = (uint16_t)kind;
		for (unsigned i = 0, w = 0; i < 4; i++)
			if (mask >> i & 1)
				memcpy(&e.ev.arg[i], data + off + 16 + 8 * w++, 8);
		e.category = 0;
		if (cat_words)
			memcpy(&e.category, data + off + 16 + 8 * words, 8);
		/* A category word of 0 names nothing: of no known category, as a forged name is. */
		e.ev.cat = cat_words ? 0 : CATEGORY_DEFAULT_ID;
		if (flags & BATCH_SMALL2)
			e.ev.arg[2] = small;
		/* Inline: a call a field per event was a tenth of the split's time. */
		name_arg = ctrace_kind_name_arg(kind);
		args_arg = ctrace_kind_args_arg(kind);
		if (kind == CTRACE_KIND_SCOPE_TSC)
			e.ev.tsc = e.tsc;
		if (name_arg >= 0 && (flags & BATCH_NAME_INLINE))
			inline_str(&e.ev.name, &e.ev.name_len, &e.ev.name_flags,
				   data + off + 16 + 8 * (words + cat_words), nlen, CTRACE_NAME_MAX - 1);
		if (args_arg >= 0 && (flags & BATCH_ARGS_INLINE))
			inline_str(&e.ev.args, &e.ev.args_len, &e.ev.args_flags,
				   data + off + 16 + 8 * (words + cat_words) + nlen, alen, CTRACE_ARGS_MAX);
		if (!e.ev.name)
			e.ev.name = "";
		if (!e.ev.args)
			e.ev.args = "";
		e.literals = flags & (BATCH_NAME_LITERAL | BATCH_ARGS_LITERAL);
		if (name_arg < 0)
			e.literals &= ~(unsigned)BATCH_NAME_LITERAL;
		if (args_arg < 0)
			e.literals &= ~(unsigned)BATCH_ARGS_LITERAL;
		fn(ctx, &e);
		off += size;
	}
	return (int64_t)seq;
}
