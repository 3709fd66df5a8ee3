/* SPDX-License-Identifier: MIT */
/* usdt_attach.h - attaches the probes --usdt names in one mapped object (usdt_attach.c). */
#ifndef CTRACE_USDT_ATTACH_H
#define CTRACE_USDT_ATTACH_H

struct attachment;
struct bpf_map;
struct bpf_program;
struct mapped_object;
struct usdt_specs;

/*
 * Attaches `prog` (ctrace_usdt) at every note of `obj` of a probe `specs`
 * names, for process `pid` (-1: every process, the BPF side keeping the
 * traced ones). Its links join a->links (so they go with the object's);
 * the sites count in a->sites and a->usdt_sites. A probe whose argument
 * specs libbpf cannot decode (%rip-relative) is attached by hand, its
 * specs in `locs` (usdt_locs, bpf/ctrace_record.h). Returns the sites attached, or -errno having said why
 * (-ECANCELED: refused for want of a privilege).
 */
int usdt_attach_object(struct bpf_program *prog, struct bpf_map *locs, int pid, const struct mapped_object *obj,
		       struct usdt_specs *specs, struct attachment *a);

#endif
