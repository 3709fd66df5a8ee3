/* SPDX-License-Identifier: MIT */
/*
 * ctrace.h - trace points for ctrace-bpf. Header-only: include it, nothing to
 * link, no constructor, no thread, no allocation, no syscall.
 *
 * Every macro below is a USDT probe (provider "ctrace") behind one semaphore.
 * While no tracer is attached a macro costs one load and one not-taken branch,
 * and its arguments are not evaluated. Run `ctrace-bpf -p PID` (as root) to
 * attach and write a Chrome Trace Event JSON file for Perfetto UI.
 *
 *   marker  any pointer, or NULL for the default context (the process itself).
 *           CTRACE_NEW_PID(marker, ...) gives a marker a pseudo-process of its
 *           own; CTRACE_DISCARD(marker) returns it to the default context.
 *   name    NUL-terminated string (literal or built at run time).
 *   args    NULL or the text of a JSON object, e.g. "{\"bytes\":42}".
 *           Anything else is kept in the trace as a string.
 *
 *   struct ctrace_span sp;
 *   CTRACE_SPAN_BEGIN(NULL, &sp, "read", NULL);
 *   ...                                   // may end on another thread
 *   CTRACE_SPAN_END(&sp, "{\"bytes\":42}");
 *
 *   CTRACE_INSTANT(NULL, "cache flush", CTRACE_SCOPE_PROCESS, NULL);
 *   CTRACE_COUNTER_SET(NULL, "queue depth", 12);
 *   CTRACE_COUNTER_ADD(NULL, "bytes read", n);
 *   if (CTRACE_ENABLED()) { ...prepare costly arguments... }
 */
#ifndef CTRACE_H
#define CTRACE_H

#include <stddef.h> /* NULL, for the default context */

#include "../usdt/ctrace_site.h"

#define CTRACE_VERSION_MAJOR 0
#define CTRACE_VERSION_MINOR 1

/* Scopes of CTRACE_INSTANT: the Chrome trace "s" field. */
#define CTRACE_SCOPE_GLOBAL 'g'
#define CTRACE_SCOPE_PROCESS 'p'
#define CTRACE_SCOPE_THREAD 't'

/*
 * A span in flight. Only its address matters to the tracer (it pairs BEGIN
 * with END); it must stay valid, and not be reused for another span, until
 * CTRACE_SPAN_END.
 */
struct ctrace_span {
	unsigned long long ctrace_reserved;
};

/* True while a tracer is attached: guard costly argument preparation. */
#define CTRACE_ENABLED() ((int)CTRACE__ARMED())

#define CTRACE_SPAN_BEGIN(marker, span, name, args)                            \
	do {                                                                   \
		if (CTRACE__ARMED())                                           \
			CTRACE__SITE4(span_begin, CTRACE__PTR(marker),         \
				      CTRACE__PTR(span), CTRACE__PTR(name),    \
				      CTRACE__PTR(args));                      \
	} while (0)

#define CTRACE_SPAN_END(span, args)                                            \
	do {                                                                   \
		if (CTRACE__ARMED())                                           \
			CTRACE__SITE2(span_end, CTRACE__PTR(span),             \
				      CTRACE__PTR(args));                      \
	} while (0)

#define CTRACE_INSTANT(marker, name, scope, args)                              \
	do {                                                                   \
		if (CTRACE__ARMED())                                           \
			CTRACE__SITE4(instant, CTRACE__PTR(marker),            \
				      CTRACE__PTR(name), CTRACE__U64(scope),   \
				      CTRACE__PTR(args));                      \
	} while (0)

/*
 * Counter values travel as the IEEE-754 bit pattern of a double (a USDT
 * argument is an integer register; bpftrace shows these bits as an integer).
 */
#define CTRACE__COUNTER(probe, marker, name, value)                            \
	do {                                                                   \
		if (CTRACE__ARMED()) {                                         \
			double ctrace__d = (double)(value);                    \
			unsigned long long ctrace__bits;                       \
			__builtin_memcpy(&ctrace__bits, &ctrace__d,            \
					 sizeof(ctrace__bits));                \
			CTRACE__SITE3(probe, CTRACE__PTR(marker),              \
				      CTRACE__PTR(name), ctrace__bits);        \
		}                                                              \
	} while (0)

#define CTRACE_COUNTER_SET(marker, name, value)                                \
	CTRACE__COUNTER(counter_set, marker, name, value)
#define CTRACE_COUNTER_ADD(marker, name, value)                                \
	CTRACE__COUNTER(counter_add, marker, name, value)

#define CTRACE_NEW_PID(marker, pname)                                          \
	do {                                                                   \
		if (CTRACE__ARMED())                                           \
			CTRACE__SITE2(new_pid, CTRACE__PTR(marker),            \
				      CTRACE__PTR(pname));                     \
	} while (0)

#define CTRACE_DISCARD(marker)                                                 \
	do {                                                                   \
		if (CTRACE__ARMED())                                           \
			CTRACE__SITE1(discard, CTRACE__PTR(marker));           \
	} while (0)

#endif /* CTRACE_H */
