/* SPDX-License-Identifier: MIT */
/*
 * literal_cache.h - the strings that probe sites pass as literals.
 *
 * A site tells the BPF program when its name or args is a string literal
 * (usdt/ctrace_site.h); the program copies it the first time and then
 * sends only its address. This cache keeps the first copy and serves it
 * from then on (reading the process only if the copy was lost). An address
 * holds one literal only while one object stays mapped there: when another
 * may have been mapped (dlclose, dlopen, exec), the BPF program copies the
 * literal again, and that copy replaces the one kept here. A forked child
 * runs its parent's image: until it execs, its literals are its parent's.
 */
#ifndef CTRACE_LITERAL_CACHE_H
#define CTRACE_LITERAL_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "lib/key_map.h"
#include "model/table_bound.h"

struct literal_cache {
	struct key_map strings; /* {tgid, generation, address} -> struct literal * */
	struct key_map gens;    /* tgid -> generation (bumped at exec) */
	struct key_map parents; /* child tgid -> parent tgid, until the child execs */
	uint64_t reads;         /* strings read from processes */
	/*
	 * strings' budget (trace_model_limit_memory() sets it): the literal
	 * used least recently is forgotten, and read again from the process
	 * if it is referred to later (unreadable once the process is gone).
	 */
	struct table_bound bound;
};

void literal_cache_init(struct literal_cache *c);
void literal_cache_free(struct literal_cache *c);

/* Remembers a literal the probe copied, in place of what the address held. */
void literal_cache_put(struct literal_cache *c, uint32_t tgid, uint64_t addr,
		       const char *s, size_t len, bool truncated);
/*
 * The literal at `addr` in process `tgid`, at most `max` bytes: remembered,
 * else read from the process (or its parents): true with *s, *len and
 * *truncated set, false if it cannot be read.
 */
bool literal_cache_get(struct literal_cache *c, uint32_t tgid, uint64_t addr,
		       size_t max, const char **s, size_t *len, bool *truncated);
/* The process exec'd: its old literals are gone. */
void literal_cache_exec(struct literal_cache *c, uint32_t tgid);
/* The process forked: the child shares the parent's image until it execs. */
void literal_cache_fork(struct literal_cache *c, uint32_t parent, uint32_t child);

#endif
