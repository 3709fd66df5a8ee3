/* SPDX-License-Identifier: MIT */
/*
 * preflight.h - the checks that turn a kernel or permission problem into one
 * line saying what to do, before libbpf prints pages of verifier noise.
 */
#ifndef CTRACE_PREFLIGHT_H
#define CTRACE_PREFLIGHT_H

#include <stdbool.h>

/* Each returns true when fine, or prints one line to stderr and returns false. */
bool preflight_privileges(void);
bool preflight_kernel(void);

#endif
