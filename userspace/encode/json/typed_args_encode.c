// SPDX-License-Identifier: MIT
#include "encode/json/typed_args_encode.h"

#include <string.h>

#define CTRACE_ARGS_FORMAT_ONLY
#include "ctrace_args.h"

#define STR_LEN_MAX 16383 /* two septets */
#define KEY_MAX 254       /* its length + 1 in a byte */

void typed_text_begin(struct typed_text *t)
{
	memcpy(t->b, CTRACE__KV_MAGIC, 2);
	t->n = 2;
}

/* Every pair is written whole or not at all. */
static bool fits(const struct typed_text *t, const char *key, size_t value_bytes)
{
	size_t klen = strlen(key);

	return klen <= KEY_MAX && t->n + 2 + klen + value_bytes <= sizeof(t->b);
}

static void put_key(struct typed_text *t, char type, const char *key)
{
	size_t klen = strlen(key);

	t->b[t->n++] = type;
	t->b[t->n++] = (char)(klen + 1);
	memcpy(t->b + t->n, key, klen);
	t->n += klen;
}

/* 7 bits a byte from the lowest, each byte's top bit set. */
static void put_septets(struct typed_text *t, uint64_t v, int count)
{
	for (int i = 0; i < count; i++, v >>= 7)
		t->b[t->n++] = (char)(0x80 | (v & 0x7f));
}

void typed_text_flag(struct typed_text *t, char type, const char *key)
{
	if (fits(t, key, 0))
		put_key(t, type, key);
}

void typed_text_num(struct typed_text *t, char type, const char *key, uint64_t v)
{
	if (!fits(t, key, CTRACE__KV_NUM_BYTES))
		return;
	put_key(t, type, key);
	put_septets(t, v, CTRACE__KV_NUM_BYTES);
}

void typed_text_str(struct typed_text *t, const char *key, const char *s, size_t len, bool cut)
{
	size_t room;

	if (!fits(t, key, CTRACE__KV_LEN_BYTES))
		return;
	room = sizeof(t->b) - t->n - 2 - strlen(key) - CTRACE__KV_LEN_BYTES;
	if (len > STR_LEN_MAX || len > room) {
		len = len > STR_LEN_MAX ? STR_LEN_MAX : len;
		len = len > room ? room : len;
		cut = true;
	}
	put_key(t, cut ? 'S' : 's', key);
	put_septets(t, len, CTRACE__KV_LEN_BYTES);
	memcpy(t->b + t->n, s, len);
	t->n += len;
}
