/* SPDX-License-Identifier: MIT */
/*
 * usdt_interpreter.h - what an interpreter build's probes are known to do,
 * told from its file alone: a span whose begin probe does not fire for
 * every call there, so that its end would fire for nothing but cost.
 *
 * CPython 3.11 (gh-98894): python:function__return fires at every return
 * (RETURN_VALUE, YIELD_VALUE, an unwind), but python:function__entry only
 * on the eval loop's tracing path, which runs while sys.settrace or
 * sys.setprofile is set, and at a generator's throw(). 3.12 to 3.14 have
 * neither probe; 3.10 and earlier, and 3.15 (where both were restored),
 * fire both for every call. The version is the file's Py_Version (3.11+).
 */
#ifndef CTRACE_USDT_INTERPRETER_H
#define CTRACE_USDT_INTERPRETER_H

#include "attach/usdt_spec.h"

/*
 * NULL, or why (a phrase) `begin`, a span's begin probe, does not fire for
 * every call in the ELF file at `path`.
 */
const char *usdt_begin_fires_rarely(const char *path, const struct usdt_probe *begin);

#endif
