/* SPDX-License-Identifier: MIT */
/*
 * tracer_priority.h - the tracer's CPU share in its bounded phases. A
 * target that keeps every CPU busy with hundreds of threads leaves a
 * thread at an equal share a few thousandths of one: the load and attach
 * (the verifier's work, from main() on: parsing vmlinux's BTF comes before),
 * and the stop (detach, drain, the file's end),
 * would take minutes. In those phases every thread of the tracer runs at
 * nice -20 (root may; otherwise nothing changes); while it traces it
 * competes on equal terms, and a watcher thread at -20, asleep but for a
 * look every WATCH_STEP_NS, raises it again the moment the stop is asked
 * for or its time comes: at an equal share the loop itself would reach
 * its stop only seconds late.
 */
#ifndef CTRACE_TRACER_PRIORITY_H
#define CTRACE_TRACER_PRIORITY_H

#include <signal.h>
#include <stdint.h>

/* How often the watcher looks (a wakeup of a few microseconds). */
#define WATCH_STEP_NS (10 * 1000000L)

/* Every thread of the tracer at nice -20 (threads started later inherit it from theirs). */
void tracer_priority_raise(void);

/* Every thread back to the nice value the tracer started with. */
void tracer_priority_restore(void);

/* In a launched command's child, before its exec: the nice value the tracer started with (async-signal-safe). */
void tracer_priority_for_child(void);

/*
 * Starts the watcher (call it raised, before tracer_priority_restore):
 * every thread goes up at raise_at_ns (CLOCK_MONOTONIC; 0: never) or once
 * *stop_request is set, whichever comes first.
 */
void tracer_priority_watch(uint64_t raise_at_ns, volatile sig_atomic_t *stop_request);
/* The watcher gone (at the stop, raised by then). */
void tracer_priority_watch_end(void);

#endif
