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
 *   CTRACE_TRIGGER("request failed");    // --ring: write what led here
 *   if (CTRACE_ENABLED()) { ...prepare costly arguments... }
 */
#ifndef CTRACE_H
#define CTRACE_H

#include <stddef.h> /* NULL, for the default context */

#include "../usdt/ctrace_site.h"
#include "../usdt/ctrace_args.h"

/*
 * Categories: `#define CTRACE_CATEGORY net` before including this header
 * puts every site of the file in category net (an identifier; default
 * ctrace), written as "cat" in the trace. `ctrace-bpf --categories net,db`
 * traces only those, `--categories -verbose` all but that; a site of a
 * category not traced costs what an untraced site costs (its own
 * semaphore stays 0) and evaluates nothing. One site of another category:
 *
 *   CTRACE_IN(verbose, INSTANT, NULL, "cache probe", CTRACE_SCOPE_THREAD, NULL);
 *   if (CTRACE_ENABLED_IN(verbose)) { ... }
 *
 * CTRACE_IN(cat, KIND, ...) takes the arguments of CTRACE_KIND; every
 * macro but CTRACE_SCOPE (its end is a function of the file's category).
 */
#ifndef CTRACE_CATEGORY
#define CTRACE_CATEGORY ctrace
#endif
#define CTRACE_IN(cat, kind, ...) CTRACE__CAT(CTRACE__, CTRACE__CAT(kind, _IN))(cat, __VA_ARGS__)
#define CTRACE_ENABLED_IN(cat) CTRACE__CAST(int, CTRACE__ARMED_IN(cat))
#define CTRACE__SCOPE_IN(cat, ...) CTRACE_IN_does_not_take_SCOPE_use_CTRACE_CATEGORY

#define CTRACE_VERSION_MAJOR 0
#define CTRACE_VERSION_MINOR 3

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
#define CTRACE_ENABLED() CTRACE_ENABLED_IN(CTRACE_CATEGORY)

/*
 * While a batching tracer is attached (ctrace_batch_semaphore, see
 * usdt/ctrace_batch.h), an event is appended to the thread's buffer;
 * otherwise, or when the append declines, the per-event site fires.
 * desc: kind (bpf/ctrace_record.h's numbers), argument words, which word
 * is the name and which the args (7: none), literal bits.
 */
#define CTRACE__DESC(kind, words, name_w, args_w, lit)                         \
	CTRACE__CAST(unsigned int, (kind) | (words) << 8 | (name_w) << 12 |    \
				   (args_w) << 16 | CTRACE__U64(lit) << 20)
/*
 * alen: the args' length when the site knows it (typed pairs: their
 * encoder's end), passed in tsc's place so that the append need not
 * measure them; 0 (a constant: no code) elsewhere.
 */
#define CTRACE__ARGS_LEN_DESC(alen) (CTRACE__CAST(unsigned int, (alen) != 0) * CTRACE__BD_ARGS_LEN)
#define CTRACE__BATCHED(desc, a0, a1, a2, a3, tsc)                             \
	(ctrace_batch_semaphore.semaphore != 0 &&                              \
	 ctrace__batch_append(desc, a0, a1, a2, a3, tsc) == 0)
/*
 * A site of another category than the default batches too, its event
 * carrying its category (a per-event site's is told by which uprobe
 * fired): the address of the category's name, a string literal, which the
 * loader reads as it reads a literal name and looks up among the
 * categories it traces. A constant address: the compiler computes it where
 * it is stored, never keeping it in a register across the append's calls.
 */
#define CTRACE__BATCHED_IN(cat, ...) CTRACE__CAT(CTRACE__BATCHED_IN_, CTRACE__IS_DEFAULT(cat))(cat, __VA_ARGS__)
#define CTRACE__BATCHED_IN_1(cat, ...) CTRACE__BATCHED(__VA_ARGS__)
#define CTRACE__BATCHED_IN_0(cat, desc, a0, a1, a2, a3, tsc)                   \
	(ctrace_batch_semaphore.semaphore != 0 &&                              \
	 ctrace__batch_append_in((desc) | CTRACE__BD_CATEGORY, a0, a1, a2, a3, tsc, \
				 CTRACE__PTR(CTRACE__XSTR(cat))) == 0)

#define CTRACE_SPAN_BEGIN(marker, span, name, args) CTRACE__SPAN_BEGIN_IN(CTRACE_CATEGORY, marker, span, name, args)
#define CTRACE__SPAN_BEGIN_IN(cat, marker, span, name, args)                   \
	CTRACE__WHEN_ARMED_IN(cat, CTRACE__SPAN_BEGIN_BODY(cat, marker, span, name, args, 0u))
#define CTRACE__SPAN_BEGIN_BODY(cat, marker, span, name, args, alen)           \
		unsigned long long ctrace__a0 = CTRACE__PTR(marker);           \
		unsigned long long ctrace__a1 = CTRACE__PTR(span);             \
		unsigned long long ctrace__a2 = CTRACE__PTR(name);             \
		unsigned long long ctrace__a3 = CTRACE__PTR(args);             \
		if (!CTRACE__BATCHED_IN(cat, CTRACE__DESC(1u, 4u, 2u, 3u,              \
				CTRACE__LIT(name) | CTRACE__LIT(args) << 1) |  \
				CTRACE__ARGS_LEN_DESC(alen),                   \
				ctrace__a0, ctrace__a1, ctrace__a2, ctrace__a3, CTRACE__U64(alen))) \
			CTRACE__SITE4L_IN(cat, span_begin, ctrace__a0, ctrace__a1,     \
				       ctrace__a2, ctrace__a3,                 \
				       CTRACE__LIT(name) | CTRACE__LIT(args) << 1);

#define CTRACE_SPAN_END(span, args) CTRACE__SPAN_END_IN(CTRACE_CATEGORY, span, args)
#define CTRACE__SPAN_END_IN(cat, span, args)                                   \
	CTRACE__WHEN_ARMED_IN(cat, CTRACE__SPAN_END_BODY(cat, span, args, 0u))
#define CTRACE__SPAN_END_BODY(cat, span, args, alen)                           \
		unsigned long long ctrace__a0 = CTRACE__PTR(span);             \
		unsigned long long ctrace__a1 = CTRACE__PTR(args);             \
		if (!CTRACE__BATCHED_IN(cat, CTRACE__DESC(2u, 2u, 7u, 1u,              \
				CTRACE__LIT(args) << 1) | CTRACE__ARGS_LEN_DESC(alen), \
				ctrace__a0, ctrace__a1, 0, 0, CTRACE__U64(alen))) \
			CTRACE__SITE2L_IN(cat, span_end, ctrace__a0, ctrace__a1,       \
				       CTRACE__LIT(args) << 1);

#define CTRACE_INSTANT(marker, name, scope, args) CTRACE__INSTANT_IN(CTRACE_CATEGORY, marker, name, scope, args)
#define CTRACE__INSTANT_IN(cat, marker, name, scope, args)                     \
	CTRACE__WHEN_ARMED_IN(cat, CTRACE__INSTANT_BODY(cat, marker, name, scope, args, 0u))
#define CTRACE__INSTANT_BODY(cat, marker, name, scope, args, alen)             \
		unsigned long long ctrace__a0 = CTRACE__PTR(marker);           \
		unsigned long long ctrace__a1 = CTRACE__PTR(name);             \
		unsigned long long ctrace__a2 = CTRACE__U64(scope);            \
		unsigned long long ctrace__a3 = CTRACE__PTR(args);             \
		if (!CTRACE__BATCHED_IN(cat, CTRACE__DESC(3u, 4u, 1u, 3u,              \
				CTRACE__LIT(name) | CTRACE__LIT(args) << 1) |  \
				CTRACE__BD_SMALL2 | CTRACE__ARGS_LEN_DESC(alen), \
				ctrace__a0, ctrace__a1, ctrace__a2, ctrace__a3, CTRACE__U64(alen))) \
			CTRACE__SITE4L_IN(cat, instant, ctrace__a0, ctrace__a1,        \
				       ctrace__a2, ctrace__a3,                 \
				       CTRACE__LIT(name) | CTRACE__LIT(args) << 1);

/*
 * "Something went wrong: keep what led here." For a tracer run with
 * --ring (the flight recorder), writes out the events it keeps, as a trace
 * file of its own, and tracing goes on. Otherwise, and for older tracers
 * and bpftrace, it is a plain process-scoped instant named `name` whose
 * args are the marker the tracer recognizes: {"ctrace_trigger":true}.
 *
 *   if (latency_ms > 500) CTRACE_TRIGGER("slow request");
 */
#define CTRACE__TRIGGER_ARGS "{\"ctrace_trigger\":true}"
#define CTRACE_TRIGGER(name) CTRACE__TRIGGER_IN(CTRACE_CATEGORY, name)
#define CTRACE__TRIGGER_IN(cat, name)                                          \
	CTRACE__INSTANT_IN(cat, NULL, name, CTRACE_SCOPE_PROCESS, CTRACE__TRIGGER_ARGS)

/*
 * Typed args: one to four key/value pairs instead of an args text, written
 * in the trace as a JSON object with their types kept, with no formatting
 * in the program (usdt/ctrace_args.h says how they travel):
 *
 *   CTRACE_INSTANT_ARGS(NULL, "read", CTRACE_SCOPE_THREAD,
 *                       CTRACE_ARG_INT("fd", fd), CTRACE_ARG_UINT("bytes", n),
 *                       CTRACE_ARG_DOUBLE("ms", ms), CTRACE_ARG_STR("path", path));
 *   -> "args":{"fd":3,"bytes":4096,"ms":0.25,"path":"/etc/hosts"}
 *
 * Keys are string literals of at most 31 bytes. CTRACE_ARG_INT takes any
 * integer as int64, CTRACE_ARG_UINT as uint64, CTRACE_ARG_DOUBLE any number
 * as a double (NaN and infinities are written as the strings "NaN",
 * "Infinity", "-Infinity": JSON has no such numbers), CTRACE_ARG_STR a
 * NUL-terminated string (NULL is written null; one too long for the 512
 * bytes of the pairs is cut and ends "…[truncated]"). As with every macro,
 * nothing is evaluated while no tracer is attached.
 */
#define CTRACE_INSTANT_ARGS(marker, name, scope, ...)                          \
	CTRACE__INSTANT_ARGS_IN(CTRACE_CATEGORY, marker, name, scope, __VA_ARGS__)
#define CTRACE__INSTANT_ARGS_IN(cat, marker, name, scope, ...)                 \
	CTRACE__WHEN_ARMED_IN(cat, CTRACE__KV_BUILD(__VA_ARGS__)               \
		CTRACE__INSTANT_BODY(cat, marker, name, scope, CTRACE__KV_TEXT, CTRACE__KV_LEN))
#define CTRACE_SPAN_BEGIN_ARGS(marker, span, name, ...)                        \
	CTRACE__SPAN_BEGIN_ARGS_IN(CTRACE_CATEGORY, marker, span, name, __VA_ARGS__)
#define CTRACE__SPAN_BEGIN_ARGS_IN(cat, marker, span, name, ...)               \
	CTRACE__WHEN_ARMED_IN(cat, CTRACE__KV_BUILD(__VA_ARGS__)               \
		CTRACE__SPAN_BEGIN_BODY(cat, marker, span, name, CTRACE__KV_TEXT, CTRACE__KV_LEN))
#define CTRACE_SPAN_END_ARGS(span, ...) CTRACE__SPAN_END_ARGS_IN(CTRACE_CATEGORY, span, __VA_ARGS__)
#define CTRACE__SPAN_END_ARGS_IN(cat, span, ...)                               \
	CTRACE__WHEN_ARMED_IN(cat, CTRACE__KV_BUILD(__VA_ARGS__)               \
		CTRACE__SPAN_END_BODY(cat, span, CTRACE__KV_TEXT, CTRACE__KV_LEN))

/*
 * Counter values travel as the IEEE-754 bit pattern of a double (a USDT
 * argument is an integer register; bpftrace shows these bits as an integer).
 */
#define CTRACE__COUNTER(cat, probe, kind, marker, name, value)                 \
	CTRACE__WHEN_ARMED_IN(cat,                                                     \
		double ctrace__d = CTRACE__DOUBLE(value);                      \
		unsigned long long ctrace__bits;                               \
		unsigned long long ctrace__a0 = CTRACE__PTR(marker);           \
		unsigned long long ctrace__a1 = CTRACE__PTR(name);             \
		__builtin_memcpy(&ctrace__bits, &ctrace__d, sizeof(ctrace__bits)); \
		if (!CTRACE__BATCHED_IN(cat, CTRACE__DESC(kind, 3u, 1u, 7u, CTRACE__LIT(name)), \
				ctrace__a0, ctrace__a1, ctrace__bits, 0, 0))   \
			CTRACE__SITE3L_IN(cat, probe, ctrace__a0, ctrace__a1,          \
				       ctrace__bits, CTRACE__LIT(name));)

#define CTRACE_COUNTER_SET(marker, name, value)                                \
	CTRACE__COUNTER_SET_IN(CTRACE_CATEGORY, marker, name, value)
#define CTRACE_COUNTER_ADD(marker, name, value)                                \
	CTRACE__COUNTER_ADD_IN(CTRACE_CATEGORY, marker, name, value)
#define CTRACE__COUNTER_SET_IN(cat, marker, name, value)                       \
	CTRACE__COUNTER(cat, counter_set, 4u, marker, name, value)
#define CTRACE__COUNTER_ADD_IN(cat, marker, name, value)                       \
	CTRACE__COUNTER(cat, counter_add, 5u, marker, name, value)

#define CTRACE_NEW_PID(marker, pname) CTRACE__NEW_PID_IN(CTRACE_CATEGORY, marker, pname)
#define CTRACE__NEW_PID_IN(cat, marker, pname)                                          \
	CTRACE__WHEN_ARMED_IN(cat,                                                     \
		unsigned long long ctrace__a0 = CTRACE__PTR(marker);           \
		unsigned long long ctrace__a1 = CTRACE__PTR(pname);            \
		if (!CTRACE__BATCHED_IN(cat, CTRACE__DESC(6u, 2u, 1u, 7u, CTRACE__LIT(pname)), \
				ctrace__a0, ctrace__a1, 0, 0, 0))              \
			CTRACE__SITE2L_IN(cat, new_pid, ctrace__a0, ctrace__a1,        \
				       CTRACE__LIT(pname));)

#define CTRACE_DISCARD(marker) CTRACE__DISCARD_IN(CTRACE_CATEGORY, marker)
#define CTRACE__DISCARD_IN(cat, marker)                                                 \
	CTRACE__WHEN_ARMED_IN(cat,                                                     \
		unsigned long long ctrace__a0 = CTRACE__PTR(marker);           \
		if (!CTRACE__BATCHED_IN(cat, CTRACE__DESC(7u, 1u, 7u, 7u, 0u),         \
				ctrace__a0, 0, 0, 0, 0))                       \
			CTRACE__SITE1_IN(cat, discard, ctrace__a0);)

/*
 * Flows: an arrow from the span enclosing CTRACE_FLOW_OUT(id) to the span
 * enclosing the CTRACE_FLOW_IN(id) that runs next with the same id, on any
 * thread or process of the trace (a request handed from an acceptor to a
 * worker, a message to a child). id: any 64-bit integer the program
 * chooses, unique among its flows in flight across every process traced
 * together; it may be used again once taken in. Each call must be inside a
 * span (a CTRACE_SPAN_BEGIN/END pair ending on the same thread, or a
 * CTRACE_SCOPE) of its thread: a flow outside any span, an OUT never taken
 * in and an IN never sent are shown and counted in the trace's metadata.
 */
#define CTRACE__FLOW(cat, probe, kind, id)                                     \
	CTRACE__WHEN_ARMED_IN(cat,                                             \
		unsigned long long ctrace__a0 = CTRACE__U64(id);               \
		if (!CTRACE__BATCHED_IN(cat, CTRACE__DESC(kind, 1u, 7u, 7u, 0u), \
				ctrace__a0, 0, 0, 0, 0))                       \
			CTRACE__SITE1_IN(cat, probe, ctrace__a0);)
#define CTRACE_FLOW_OUT(id) CTRACE__FLOW_OUT_IN(CTRACE_CATEGORY, id)
#define CTRACE_FLOW_IN(id) CTRACE__FLOW_IN_IN(CTRACE_CATEGORY, id)
#define CTRACE__FLOW_OUT_IN(cat, id) CTRACE__FLOW(cat, flow_out, 14u, id)
#define CTRACE__FLOW_IN_IN(cat, id) CTRACE__FLOW(cat, flow_in, 15u, id)

/*
 * CTRACE_THREAD_NAME(name): the calling thread's name in the trace (any
 * length; the kernel's comm, 15 bytes, is not changed). A later
 * pthread_setname_np() or prctl(PR_SET_NAME) of the thread renames it again.
 */
#define CTRACE_THREAD_NAME(name) CTRACE__THREAD_NAME_IN(CTRACE_CATEGORY, name)
#define CTRACE__THREAD_NAME_IN(cat, name)                                      \
	CTRACE__WHEN_ARMED_IN(cat,                                             \
		unsigned long long ctrace__a0 = CTRACE__PTR(name);             \
		if (!CTRACE__BATCHED_IN(cat, CTRACE__DESC(16u, 1u, 0u, 7u, CTRACE__LIT(name)), \
				ctrace__a0, 0, 0, 0, 0))                       \
			CTRACE__SITE1L_IN(cat, thread_name, ctrace__a0, CTRACE__LIT(name));)

/*
 * The order of tracks in the viewer: the process's among processes, the
 * calling thread's among its process's threads (lower first; the trace's
 * process_sort_index / thread_sort_index metadata). n: an integer.
 */
#define CTRACE__SORT_INDEX(cat, probe, kind, n)                                \
	CTRACE__WHEN_ARMED_IN(cat,                                             \
		unsigned long long ctrace__a0 = CTRACE__U64(n);                \
		if (!CTRACE__BATCHED_IN(cat, CTRACE__DESC(kind, 1u, 7u, 7u, 0u), \
				ctrace__a0, 0, 0, 0, 0))                       \
			CTRACE__SITE1_IN(cat, probe, ctrace__a0);)
#define CTRACE_PROCESS_SORT_INDEX(n) CTRACE__PROCESS_SORT_INDEX_IN(CTRACE_CATEGORY, n)
#define CTRACE_THREAD_SORT_INDEX(n) CTRACE__THREAD_SORT_INDEX_IN(CTRACE_CATEGORY, n)
#define CTRACE__PROCESS_SORT_INDEX_IN(cat, n) CTRACE__SORT_INDEX(cat, process_sort_index, 17u, n)
#define CTRACE__THREAD_SORT_INDEX_IN(cat, n) CTRACE__SORT_INDEX(cat, thread_sort_index, 18u, n)

/*
 * CTRACE_SCOPE(marker, name, args): a span from here to the end of the
 * enclosing block, the cheapest way to trace a function:
 *
 *   void parse(void) { CTRACE_SCOPE(NULL, "parse", NULL); ... }
 *
 * It costs one probe hit, not two: while traced, the start reads the time
 * stamp counter (rdtsc, no syscall) and the end fires one probe carrying
 * the ticks elapsed and the end's own TSC. ctrace-bpf converts both edges
 * with one monotonic TSC-to-clock mapping, so that a scope nested in another
 * lies within it exactly (an end stamped when the probe runs would be late
 * by a uprobe's varying entry cost). Probe "scope_tsc"; headers before 0.2
 * sent "scope" with the ticks only, still traced as before. A scope
 * entered before the tracer attached is not traced. The cleanup attribute
 * (C, gcc and clang) or a destructor (C++) ends it on every way out.
 */
struct ctrace_scope {
	const volatile void *marker;
	const char *name;
	const char *args;
	unsigned long long tsc; /* 0: not traced */
	unsigned int lit;       /* name, args literal (bits 0, 1): known at the start only */
};

static __inline__ unsigned long long ctrace__rdtsc(void)
{
	unsigned int lo, hi;

	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return CTRACE__CAST(unsigned long long, hi) << 32 | lo;
}

static __inline__ void ctrace__scope_end(struct ctrace_scope *s)
{
	if (__builtin_expect(s->tsc != 0, 0)) {
		unsigned long long end = ctrace__rdtsc();

		if (!CTRACE__BATCHED_IN(CTRACE_CATEGORY, CTRACE__DESC(11u, 4u, 1u, 2u, s->lit), CTRACE__PTR(s->marker),
				     CTRACE__PTR(s->name), CTRACE__PTR(s->args), end - s->tsc, end))
			CTRACE__SITE5_IN(CTRACE_CATEGORY, scope_tsc, CTRACE__PTR(s->marker), CTRACE__PTR(s->name),
				      CTRACE__PTR(s->args), end - s->tsc, end);
	}
}

/* The start: evaluates nothing and reads no clock while untraced. */
#define CTRACE__SCOPE_BEGIN(s, marker_, name_, args_)                          \
	do {                                                                   \
		(s).tsc = 0;                                                   \
		CTRACE__SCOPE_WHEN_ARMED_IN(CTRACE_CATEGORY,                   \
			(s).marker = (marker_);                                \
			(s).name = (name_);                                    \
			(s).args = (args_);                                    \
			(s).lit = CTRACE__CAST(unsigned int, CTRACE__LIT(name_) |     \
					       CTRACE__LIT(args_) << 1);       \
			(s).tsc = ctrace__rdtsc(););                           \
	} while (0)

#ifdef __cplusplus
/*
 * C++: a destructor ends the scope. One type per category (an inline
 * destructor is one definition per program, its site one category's).
 */
#define ctrace_scope_guard CTRACE__CAT(ctrace_scope_guard_, CTRACE_CATEGORY)
struct ctrace_scope_guard {
	struct ctrace_scope s;
	~ctrace_scope_guard() { ctrace__scope_end(&s); }
};
#define CTRACE__SCOPE_VAR(var, marker, name, args)                             \
	ctrace_scope_guard var;                                                \
	CTRACE__SCOPE_BEGIN(var.s, marker, name, args)
#else
/*
 * C: the cleanup attribute ends the scope (gcc and clang). For gcc the
 * fields start zeroed: it cannot always see that they are set whenever tsc
 * is (after a goto, in a loop) and would warn -Wmaybe-uninitialized in the
 * user's function; it keeps a scope in registers, so the zeros cost
 * nothing. clang keeps it in memory (they would be stores) and does not warn.
 */
#if defined(__clang__)
#define CTRACE__SCOPE_ZERO
#else
#define CTRACE__SCOPE_ZERO = { 0, 0, 0, 0, 0 }
#endif
#define CTRACE__SCOPE_VAR(var, marker, name, args)                             \
	struct ctrace_scope var __attribute__((cleanup(ctrace__scope_end)))   \
		CTRACE__SCOPE_ZERO;                                            \
	CTRACE__SCOPE_BEGIN(var, marker, name, args)
#endif
#define CTRACE_SCOPE(marker, name, args)                                       \
	CTRACE__SCOPE_VAR(CTRACE__UNIQUE(ctrace__scope_), marker, name, args)

#endif /* CTRACE_H */
