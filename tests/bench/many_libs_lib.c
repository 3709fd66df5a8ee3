// SPDX-License-Identifier: MIT
/*
 * many_libs_lib - one of the shared libraries many_libs loads: every kind of
 * ctrace site, and a way to ask whether this object's semaphore is up (each
 * DSO has its own, hidden). scripts/bench builds it once and copies it to
 * libbench_00.so ... libbench_19.so: distinct files, so the tracer reads and
 * attaches each, as it would distinct libraries.
 */
#include <ctrace.h>

int bench_lib_armed(void)
{
	return CTRACE_ENABLED();
}

void bench_lib_work(void *marker, double v)
{
	struct ctrace_span sp;

	CTRACE_NEW_PID(marker, "bench lib");
	CTRACE_SPAN_BEGIN(marker, &sp, "lib work", NULL);
	CTRACE_INSTANT(marker, "lib instant", CTRACE_SCOPE_THREAD, NULL);
	CTRACE_COUNTER_SET(marker, "lib counter", v);
	CTRACE_COUNTER_ADD(marker, "lib counter", 1);
	CTRACE_SPAN_END(&sp, NULL);
	CTRACE_DISCARD(marker);
#ifdef CTRACE_SCOPE
	{
		CTRACE_SCOPE(marker, "lib scope", NULL);
	}
#endif
}
