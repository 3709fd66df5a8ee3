/* SPDX-License-Identifier: MIT */
/*
 * Every public macro, in code that is both C and C++, for the compile
 * matrix (compile_matrix): the header must build cleanly with every
 * compiler, standard, optimization level and link mode a user may pick.
 * Run untraced it must do nothing and exit 0; the arguments must not be
 * evaluated (the counters below would change).
 */
#include <ctrace.h>

static int evaluated;

static const char *name_of(const char *s)
{
	evaluated++;
	return s;
}

#ifdef ALL_MACROS_LIBRARY
int all_macros_fire(int n);
int all_macros_fire(int n)
#else
int main(int argc, char **argv)
#endif
{
	struct ctrace_span sp;
	static int marker;
	const char *args = "{\"k\":1}";
#ifdef ALL_MACROS_LIBRARY
	int argc = n;
#else
	(void)argv;
#endif

	CTRACE_SCOPE(&marker, name_of("scope"), args);
	CTRACE_SPAN_BEGIN(NULL, &sp, name_of("span"), args);
	CTRACE_INSTANT(&marker, name_of("instant"), CTRACE_SCOPE_GLOBAL, NULL);
	CTRACE_INSTANT(NULL, "p", CTRACE_SCOPE_PROCESS, args);
	CTRACE_INSTANT(NULL, "t", CTRACE_SCOPE_THREAD, NULL);
	CTRACE_TRIGGER(name_of("trigger"));
	CTRACE_IN(ctrace, TRIGGER, "trigger in the default category");
	CTRACE_COUNTER_SET(NULL, name_of("c"), argc * 1.5);
	CTRACE_COUNTER_ADD(&marker, "c", argc);
	CTRACE_NEW_PID(&marker, name_of("pseudo"));
	CTRACE_DISCARD(&marker);
	CTRACE_FLOW_OUT(argc);
	CTRACE_FLOW_IN(0x100000000ull);
	CTRACE_THREAD_NAME(name_of("worker"));
	CTRACE_THREAD_NAME("main");
	CTRACE_PROCESS_SORT_INDEX(-argc);
	CTRACE_THREAD_SORT_INDEX(argc);
	CTRACE_SPAN_END(&sp, NULL);
	CTRACE_INSTANT_ARGS(NULL, "typed", CTRACE_SCOPE_THREAD, CTRACE_ARG_INT("i", argc),
			    CTRACE_ARG_UINT("u", sizeof(sp)), CTRACE_ARG_DOUBLE("d", argc * 0.5),
			    CTRACE_ARG_STR("s", name_of("v")));
	CTRACE_SPAN_BEGIN_ARGS(&marker, &sp, "typed span", CTRACE_ARG_INT("n", -argc));
	CTRACE_SPAN_END_ARGS(&sp, CTRACE_ARG_STR("res", name_of("ok")));
	if (CTRACE_ENABLED())
		evaluated += 100;
	return evaluated; /* 0 when untraced */
}
