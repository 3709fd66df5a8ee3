// SPDX-License-Identifier: MIT
/*
 * probe_sites - one site of every ctrace macro, run once. It exists to be
 * read, not traced: tests/unit/test_usdt_notes.c compiles it as a PIE, a
 * non-PIE executable and a shared library (where probe_sites_fire is the
 * entry point) and checks the notes and file offsets found in each. Building
 * it also checks that the header compiles cleanly under strict flags.
 */
#include <ctrace.h>
#include <stdio.h>

/* Not static: the shared-library build exports it. */
int probe_sites_fire(int n);

int probe_sites_fire(int n)
{
	struct ctrace_span sp;
	char name[32];

	/* A name built at run time, as a real program would. */
	snprintf(name, sizeof(name), "step %d", n);
	CTRACE_NEW_PID(&sp, "probe sites");
	CTRACE_SPAN_BEGIN(NULL, &sp, name, "{\"n\":1}");
	CTRACE_INSTANT(NULL, "instant", CTRACE_SCOPE_THREAD, NULL);
	CTRACE_COUNTER_SET(NULL, "level", n * 1.5);
	CTRACE_COUNTER_ADD(NULL, "total", n);
	CTRACE_SPAN_END(&sp, NULL);
	CTRACE_DISCARD(&sp);
	return CTRACE_ENABLED();
}

int main(void)
{
	/* Untraced, the probes are skipped and ENABLED is false. */
	return probe_sites_fire(1) ? 1 : 0;
}
