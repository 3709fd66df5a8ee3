// SPDX-License-Identifier: MIT
#include "ingest/stack_trace.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ingest/stack_symbols.h"

struct cached_symbols {
	struct stack_symbols s;
	char *object;
};

void stack_trace_init(struct stack_trace *t, unsigned how, unsigned depth, const char *why)
{
	memset(t, 0, sizeof(*t));
	t->stats.how = how;
	t->stats.depth = depth;
	t->stats.how_why = why;
	stack_frames_init(&t->frames);
	stack_unwind_init(&t->unwind);
	key_map_init(&t->syms);
	key_map_init(&t->chains);
}

static void free_cached(const void *key, size_t len, void *value, void *ctx)
{
	struct cached_symbols *c = value;

	(void)key, (void)len, (void)ctx;
	stack_symbols_free(&c->s);
	free(c->object);
	free(c);
}

void stack_trace_free(struct stack_trace *t)
{
	key_map_each(&t->syms, free_cached, NULL);
	key_map_free(&t->syms);
	key_map_free(&t->chains);
	stack_frames_free(&t->frames);
	stack_unwind_free(&t->unwind);
}

/*
 * The frames of one pc, looked up once per object and address: by the
 * object's build-id, so that every process mapping it (and every epoch of
 * one) shares them; an object without one by process and pc.
 */
static const struct cached_symbols *symbols(struct stack_trace *t, uint32_t tgid, Dwfl_Module *mod,
					     uint64_t pc, bool ret)
{
	unsigned char key[64];
	const unsigned char *id = NULL;
	GElf_Addr id_vaddr, start = 0;
	int id_len = dwfl_module_build_id(mod, &id, &id_vaddr);
	size_t klen;
	struct cached_symbols *c;
	uint64_t addr = pc;

	dwfl_module_info(mod, NULL, &start, NULL, NULL, NULL, NULL, NULL);
	if (id_len > 0 && id_len <= 40) {
		addr = pc - start; /* the same object elsewhere in another process */
		memcpy(key, id, (size_t)id_len);
		klen = (size_t)id_len;
	} else {
		memcpy(key, &tgid, 4);
		klen = 4;
	}
	memcpy(key + klen, &addr, 8);
	key[klen + 8] = ret;
	klen += 9;
	c = key_map_get(&t->syms, key, klen);
	if (c)
		return c;
	c = calloc(1, sizeof(*c));
	if (!c) {
		fputs("ctrace-bpf: out of memory\n", stderr);
		abort();
	}
	stack_symbols_of(mod, pc, ret, &c->s);
	c->object = strdup(dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
	if (!c->object) {
		fputs("ctrace-bpf: out of memory\n", stderr);
		abort();
	}
	key_map_put(&t->syms, key, klen, c);
	return c;
}

struct chain {
	const char *object[CTRACE_STACK_DEPTH_MAX];
	const char *name[CTRACE_STACK_DEPTH_MAX];
	char addr_buf[CTRACE_STACK_DEPTH_MAX][24];
	size_t n, max;
	uint32_t unsymbolized; /* frames written as an address */
	uint32_t outside;      /* ... of those, in no object known (yet) */
};

static void add_pc(struct stack_trace *t, struct chain *c, uint32_t tgid, uint64_t pc, bool ret)
{
	Dwfl_Module *mod = c->n < c->max ? stack_unwind_module(&t->unwind, tgid, pc) : NULL;
	const struct cached_symbols *s;

	if (c->n >= c->max)
		return;
	if (!mod) {
		snprintf(c->addr_buf[c->n], sizeof(c->addr_buf[0]), "0x%" PRIx64, pc);
		c->object[c->n] = "[unknown]";
		c->name[c->n] = c->addr_buf[c->n];
		c->n++;
		c->unsymbolized++;
		c->outside++;
		return;
	}
	s = symbols(t, tgid, mod, pc, ret);
	if (!s->s.symbolized)
		c->unsymbolized++;
	for (size_t i = 0; i < s->s.n && c->n < c->max; i++) {
		c->object[c->n] = s->object;
		c->name[c->n] = s->s.names[i];
		c->n++;
	}
}

/*
 * Most events come from a few call paths: a chain of pcs seen before in the
 * process is looked up once. Bounded: emptied when it holds this many.
 */
#define CHAINS_MAX 65536
/* A return address has bit 63 set in the key (no user pc has it). */
#define RETURN_BIT (1ull << 63)

static uint32_t chain_id(struct stack_trace *t, uint32_t tgid, const uint64_t *pcs, const bool *act,
			 size_t n, size_t max)
{
	unsigned char key[4 + CTRACE_STACK_DEPTH_MAX * 8];
	uintptr_t id;
	struct chain c;
	uint32_t parent = 0;

	memcpy(key, &tgid, 4);
	for (size_t i = 0; i < n; i++) {
		uint64_t k = pcs[i] | (act[i] ? 0 : RETURN_BIT);

		memcpy(key + 4 + 8 * i, &k, 8);
	}
	/* The value: the innermost frame's id, and (above bit 32) its unsymbolized frames. */
	id = (uintptr_t)key_map_get(&t->chains, key, 4 + 8 * n);
	if (id) {
		t->stats.frames_unsymbolized += (uint64_t)id >> 32;
		return (uint32_t)id;
	}
	c.unsymbolized = c.outside = 0;
	c.n = 0;
	c.max = max;
	for (size_t i = 0; i < n; i++)
		add_pc(t, &c, tgid, pcs[i], !act[i]);
	for (size_t i = c.n; i-- > 0;)
		parent = stack_frames_id(&t->frames, parent, c.object[i], c.name[i]);
	if (t->chains.count >= CHAINS_MAX) {
		key_map_free(&t->chains);
		key_map_init(&t->chains);
	}
	t->stats.frames_unsymbolized += c.unsymbolized;
	/* A pc in no object may be in one mapped later (or garbage): not kept. */
	if (c.outside)
		return parent;
	key_map_put(&t->chains, key, 4 + 8 * n, (void *)(uintptr_t)((uint64_t)c.unsymbolized << 32 | parent));
	return parent;
}

/* The parts of a stack record: how, err, n, then what follows (record_decode checked the sizes). */
uint32_t stack_trace_event(struct stack_trace *t, const struct ctrace_event *ev, const void *part,
			   size_t len)
{
	struct ctrace_stack st;
	const unsigned char *rest;
	uint64_t pcs[CTRACE_STACK_DEPTH_MAX];
	bool act[CTRACE_STACK_DEPTH_MAX];
	size_t n = 0, max = t->stats.depth ? t->stats.depth : 32;

	if (!part || len < sizeof(st))
		return 0;
	memcpy(&st, part, sizeof(st));
	rest = (const unsigned char *)part + sizeof(st);
	t->stats.stacks++;
	if (st.err < 0)
		t->stats.capture_errors++;
	if (max > CTRACE_STACK_DEPTH_MAX)
		max = CTRACE_STACK_DEPTH_MAX;
	if (st.how == CTRACE_STACK_FP) {
		n = st.n < max ? st.n : max;
		for (size_t i = 0; i < n; i++) {
			memcpy(&pcs[i], rest + 8 * i, 8);
			act[i] = i == 0; /* the site's own pc; then return addresses */
		}
	} else {
		struct stack_sample s = { .tid = ev->tid };
		bool complete = false;

		memcpy(s.regs, rest, sizeof(s.regs));
		s.stack = rest + sizeof(s.regs);
		s.stack_len = st.n;
		n = stack_unwind_dwarf(&t->unwind, ev->tgid, &s, pcs, act, max, &complete);
		if (!complete)
			t->stats.not_unwound++;
		if (!n) { /* nothing unwound: the site's own pc at least */
			pcs[0] = s.regs[16];
			act[0] = true;
			n = 1;
		}
	}
	t->stats.objects_unreadable = t->unwind.objects_failed;
	t->stats.processes_let_go = t->unwind.evicted;
	if (!n) {
		t->stats.empty++;
		return 0;
	}
	return chain_id(t, ev->tgid, pcs, act, n, max);
}
