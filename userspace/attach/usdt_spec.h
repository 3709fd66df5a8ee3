/* SPDX-License-Identifier: MIT */
/*
 * usdt_spec.h - what --usdt asks for: the USDT probes of other programs
 * (PostgreSQL, the JVM, libstdc++, CPython) to trace, and what each hit
 * becomes in the trace.
 *
 *   --usdt PROVIDER:NAME[(ARGn=str,...)]            an instant per hit
 *   --usdt PROVIDER:BEGIN[(..)]~PROVIDER:END[(..)][,name=ARGn]
 *                                                    a span per pair, per thread
 *   --usdt cxx | python | postgres | java            a preset: several of the above
 *
 * Each probe (one provider:name) has an index, which rides in its BPF
 * cookie with how each argument is read (bpf/ctrace_record.h's
 * CTRACE_USDT_HOW_*): the record says which probe it came from.
 */
#ifndef CTRACE_USDT_SPEC_H
#define CTRACE_USDT_SPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "ctrace_record.h"

#define USDT_SPECS_MAX 32
#define USDT_PROBES_MAX 64 /* the cookie's low 16 bits hold the index */
#define USDT_WORD_MAX 64   /* a provider's or a probe's name (usdt_notes.h's USDT_NAME_MAX) */
#define USDT_TITLE_MAX 96
#define USDT_ENDS_MAX 4    /* BEGIN~END|END...: a transaction commits or aborts */

enum usdt_role { USDT_ROLE_INSTANT, USDT_ROLE_BEGIN, USDT_ROLE_END };

/* One provider:name to attach. */
struct usdt_probe {
	char provider[USDT_WORD_MAX];
	char name[USDT_WORD_MAX];
	unsigned spec;       /* the spec it belongs to */
	enum usdt_role role;
	uint8_t how[CTRACE_USDT_ARGS]; /* CTRACE_USDT_HOW_* */
	char arg_names[CTRACE_USDT_ARGS][USDT_WORD_MAX]; /* "": "argN" */
	bool demangle[CTRACE_USDT_ARGS];         /* a C++ type's mangled name (cxx) */
	/*
	 * Bit i: argument i is signed ("-4@%eax"), from the first note of the
	 * probe attached (usdt_attach.c); its notes elsewhere say the same.
	 */
	uint16_t signed_args;
	bool signs_known;
};

/* What one --usdt (or a preset's line) asks for. */
struct usdt_spec {
	char title[USDT_TITLE_MAX]; /* the events' name when no argument names them */
	bool span;
	unsigned begin;             /* probe index (an instant's only probe) */
	unsigned end[USDT_ENDS_MAX]; /* a span's ends */
	unsigned n_ends;
	int name_arg;               /* a span's or instant's name from this string argument; -1: title */
	int name_arg2;              /* name=ARGn.ARGm: this one after a '.'; -1: none */
	/*
	 * A span's end pairs only with an open begin whose name argument is the
	 * same string (python: a function__return closes its own call's entry,
	 * never an outer one's). Needs name_arg on both ends.
	 */
	bool end_names_match;
	bool dotted; /* ,dotted: '/' in the name becomes '.' (the JVM's java/lang/String) */
	int thread_name_arg; /* ,thread=ARGn: that string names the thread it fires on; -1: none */
	const char *preset;                      /* the preset it came from; NULL: given */
	/*
	 * Why its begin probe does not fire for every call in an object it
	 * was found in (usdt_interpreter.h), said once; NULL: it does. A
	 * preset's span is then not attached there (its ends would fire for
	 * nothing but their cost); a given one is, as asked.
	 */
	const char *begin_fires_rarely;
};

struct usdt_specs {
	struct usdt_spec spec[USDT_SPECS_MAX];
	size_t n;
	struct usdt_probe probe[USDT_PROBES_MAX];
	size_t n_probes;
	char given[512]; /* the --usdt arguments, comma-joined (metadata) */
};

/*
 * Adds what one --usdt argument asks for: 0, or -1 with a one-line reason
 * in err (what to write instead).
 */
int usdt_specs_add(struct usdt_specs *s, const char *arg, char *err, size_t errlen);

/* The BPF cookie of probe i: its index and how its arguments are read. */
uint64_t usdt_probe_cookie(const struct usdt_specs *s, size_t i);

/* The probe a record's cookie names, or NULL (a record from another version). */
const struct usdt_probe *usdt_probe_of_cookie(const struct usdt_specs *s, uint64_t cookie);

#endif
