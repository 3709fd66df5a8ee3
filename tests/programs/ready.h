/* SPDX-License-Identifier: MIT */
/*
 * ready.h - the start every test program makes with the harness
 * (tests/lib/trace_run.h): it prints "ready pid=P main_tid=T", the line
 * tr_wait_line() waits for before it starts the tracer, then waits up to 10 s
 * for the tracer to arm the probes (CTRACE_ENABLED()). What to do when none
 * came (the exit code, a message) is each program's own.
 */
#ifndef CTRACE_TEST_PROGRAM_READY_H
#define CTRACE_TEST_PROGRAM_READY_H

#include <ctrace.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Prints the ready line (flushed: the harness reads it from a file). */
static inline void say_ready(void)
{
	printf("ready pid=%d main_tid=%d\n", (int)getpid(), (int)syscall(SYS_gettid));
	fflush(stdout);
}

/* 1 once a tracer armed the probes, 0 if none did within 10 s. */
static inline int wait_for_tracer(void)
{
	for (int waited_ms = 0; !CTRACE_ENABLED(); waited_ms++) {
		if (waited_ms == 10000)
			return 0;
		usleep(1000);
	}
	return 1;
}

/* say_ready, then wait_for_tracer. */
static inline int ready_and_wait(void)
{
	say_ready();
	return wait_for_tracer();
}

#endif
