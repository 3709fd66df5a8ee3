// SPDX-License-Identifier: MIT
#include "ingest/stack_frames.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/grow_array.h"

void stack_frames_init(struct stack_frames *t)
{
	memset(t, 0, sizeof(*t));
	key_map_init(&t->ids);
	key_map_init(&t->categories);
}

static void free_category(const void *key, size_t len, void *value, void *ctx)
{
	(void)key, (void)len, (void)ctx;
	free(value);
}

void stack_frames_free(struct stack_frames *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->v[i].name);
	free(t->v);
	key_map_free(&t->ids);
	key_map_each(&t->categories, free_category, NULL);
	key_map_free(&t->categories);
	memset(t, 0, sizeof(*t));
}

static const char *category_copy(struct stack_frames *t, const char *category)
{
	size_t len = strlen(category);
	char *c = key_map_get(&t->categories, category, len);

	if (c)
		return c;
	c = strdup(category);
	if (!c) {
		fputs("ctrace-bpf: out of memory\n", stderr);
		abort();
	}
	key_map_put(&t->categories, category, len, c);
	return c;
}

uint32_t stack_frames_id(struct stack_frames *t, uint32_t parent, const char *category,
			 const char *name)
{
	size_t clen = strlen(category), nlen = strlen(name), klen = 4 + clen + 1 + nlen;
	char stack_key[256], *key = klen <= sizeof(stack_key) ? stack_key : malloc(klen);
	uintptr_t id;

	if (!key) {
		fputs("ctrace-bpf: out of memory\n", stderr);
		abort();
	}
	/* The category's NUL keeps "a" + "bc" apart from "ab" + "c". */
	memcpy(key, &parent, 4);
	memcpy(key + 4, category, clen + 1);
	memcpy(key + 4 + clen + 1, name, nlen);
	id = (uintptr_t)key_map_get(&t->ids, key, klen);
	if (!id) {
		char *copy = strdup(name);

		if (!copy || GROW_ARRAY(t->v, t->cap, t->n, 256) < 0) {
			fputs("ctrace-bpf: out of memory\n", stderr);
			abort();
		}
		t->v[t->n++] = (struct stack_frame){ copy, category_copy(t, category), parent };
		id = t->n;
		key_map_put(&t->ids, key, klen, (void *)id);
	}
	if (key != stack_key)
		free(key);
	return (uint32_t)id;
}
