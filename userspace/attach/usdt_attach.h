/* SPDX-License-Identifier: MIT */
/* usdt_attach.h - attaches the probes --usdt names in one mapped object (usdt_attach.c). */
#ifndef CTRACE_USDT_ATTACH_H
#define CTRACE_USDT_ATTACH_H

#include <stdbool.h>
#include <stdint.h>

struct bpf_link;
struct bpf_map;
struct bpf_program;
struct mapped_object;
struct usdt_specs;

/* What the attaches of --usdt probes share from one object to the next (attach.c holds it). */
struct usdt_attach_state {
	/* Takes each link made (0), or fails (-ENOMEM) and the link is destroyed. */
	int (*keep_link)(void *ctx, struct bpf_link *link);
	void *ctx;
	uint32_t loc_slots; /* slots of usdt_locs written */
	unsigned refused;   /* probes left out: argument specs not decoded, a table full (said) */
	bool verbose;
};

/*
 * Attaches `prog` (ctrace_usdt) at every note of `obj` of a probe `specs`
 * names, for process `pid` (-1: every process, the BPF side keeping the
 * traced ones). Its links go to st->keep_link (attach.c: with the
 * object's). A probe whose argument
 * specs libbpf cannot decode (%rip-relative) is attached by hand, its
 * specs in `locs` (usdt_locs, bpf/ctrace_record.h). Returns the sites attached, or -errno having said why
 * (-ECANCELED: refused for want of a privilege).
 */
int usdt_attach_object(struct bpf_program *prog, struct bpf_map *locs, int pid, const struct mapped_object *obj,
		       struct usdt_specs *specs, struct usdt_attach_state *st);

#endif
