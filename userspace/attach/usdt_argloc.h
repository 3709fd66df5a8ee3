/* SPDX-License-Identifier: MIT */
/*
 * usdt_argloc.h - where a USDT note's arguments are (x86-64), parsed from
 * its argument specs ("-4@%eax 8@16(%rbp) -4@$1 -4@40+CheckpointStats(%rip)"),
 * for the probes the loader attaches itself (usdt_attach.c): libbpf 1.1
 * decodes every form but the %rip-relative one, and refuses the whole probe
 * for it. The result is bpf/ctrace_record.h's struct ctrace_usdt_arg_loc,
 * but for a %rip-relative argument, whose symbol the caller resolves.
 */
#ifndef CTRACE_USDT_ARGLOC_H
#define CTRACE_USDT_ARGLOC_H

#include <stddef.h>
#include <stdint.h>
#include "ctrace_record.h"

#define USDT_SYM_MAX 128

struct usdt_argloc {
	struct ctrace_usdt_arg_loc loc; /* rip-relative: a DEREF of the IP, off = the number beside the symbol */
	char sym[USDT_SYM_MAX];         /* rip-relative: the symbol; "" otherwise */
};

/*
 * Parses the space-separated specs `args` into out[0..CTRACE_USDT_ARGS):
 * the number of arguments, or -1 with a one-line reason in err (a form
 * not known, more than CTRACE_USDT_ARGS arguments).
 */
int usdt_argloc_parse(const char *args, struct usdt_argloc *out, char *err, size_t errlen);

#endif
