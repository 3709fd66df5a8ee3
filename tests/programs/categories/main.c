// SPDX-License-Identifier: MIT
/*
 * main.c - the categories program: the default category ctrace here, one
 * site of category verbose (CTRACE_IN), net.c and db.c one category each,
 * libcatplugin.so of its own (tests/integration/test_categories.c).
 *
 *   categories EXPECTED   EXPECTED: the categories the tracer is to arm,
 *                         comma-separated ("-": none)
 *
 * Prints "ready", waits until every expected category is armed (10 s at
 * most), fires every site ROUNDS times, then the ORDER_EVENTS events of
 * cats.h (categories interleaved on one thread), then prints one line a category:
 * "cat NAME armed=A semaphore=S evals=E" (read while still traced), and
 * exits 0 (1 if an expected category never came).
 */
#include <string.h>
#include "../ready.h"
#include "cats.h"

#define ROUNDS 3

static unsigned evals, verbose_evals_n;

/* The args of a site: counts its evaluations in *n (none while its category is not traced). */
static const char *args_of(unsigned *n, int round)
{
	static char buf[32];

	(*n)++;
	snprintf(buf, sizeof(buf), "{\"round\":%d}", round);
	return buf;
}

void ctrace_fire(int round)
{
	CTRACE_INSTANT(NULL, "ctrace-instant", CTRACE_SCOPE_THREAD, args_of(&evals, round));
	{
		CTRACE_SCOPE(NULL, "ctrace-scope", NULL);
	}
}

void verbose_fire(int round)
{
	CTRACE_IN(verbose, INSTANT, NULL, "verbose-instant", CTRACE_SCOPE_THREAD,
		  args_of(&verbose_evals_n, round));
	if (CTRACE_ENABLED_IN(verbose))
		verbose_evals_n++;
}

static void order_fire(void)
{
	for (int i = 0; i < ORDER_EVENTS; i++) {
		switch (i % 4) {
		case 0:
			CTRACE_INSTANT_ARGS(NULL, "order", CTRACE_SCOPE_THREAD, CTRACE_ARG_INT("i", i));
			break;
		case 1:
			CTRACE_IN(verbose, INSTANT_ARGS, NULL, "order", CTRACE_SCOPE_THREAD, CTRACE_ARG_INT("i", i));
			break;
		case 2:
			net_order(i);
			break;
		default:
			CTRACE_COUNTER_SET(NULL, "order", i);
			break;
		}
	}
}

int ctrace_armed(void) { return CTRACE_ENABLED(); }
unsigned ctrace_sem_value(void) { return ctrace_semaphore; }
unsigned ctrace_evals(void) { return evals; }
int verbose_armed(void) { return CTRACE_ENABLED_IN(verbose); }
unsigned verbose_sem_value(void) { return __extension__ CAT_SEMAPHORE_VALUE(verbose); }
unsigned verbose_evals(void) { return verbose_evals_n; }

static const struct {
	const char *name;
	void (*fire)(int);
	int (*armed)(void);
	unsigned (*semaphore)(void);
	unsigned (*evals)(void);
} cats[] = {
#define CAT(c) { #c, c##_fire, c##_armed, c##_sem_value, c##_evals },
	CAT(ctrace) CAT(verbose) CAT(net) CAT(db) CAT(plugin)
#undef CAT
};
#define N_CATS (sizeof(cats) / sizeof(cats[0]))

static int expected(const char *list, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = list; (p = strstr(p, name)); p += n)
		if ((p == list || p[-1] == ',') && (p[n] == ',' || p[n] == '\0'))
			return 1;
	return 0;
}

int main(int argc, char **argv)
{
	const char *want = argc > 1 ? argv[1] : "-";
	int missing = 1;

	say_ready();
	for (int ms = 0; ms < 10000 && missing; ms++) {
		missing = 0;
		for (size_t i = 0; i < N_CATS; i++)
			if (expected(want, cats[i].name) && !cats[i].armed())
				missing = 1;
		if (missing)
			usleep(1000);
	}
	if (missing) {
		printf("not every expected category was armed: %s\n", want);
		return 1;
	}
	for (int round = 0; round < ROUNDS; round++)
		for (size_t i = 0; i < N_CATS; i++)
			cats[i].fire(round);
	order_fire();
	for (size_t i = 0; i < N_CATS; i++)
		printf("cat %s armed=%d semaphore=%u evals=%u\n", cats[i].name, cats[i].armed(),
		       cats[i].semaphore(), cats[i].evals());
	return 0;
}
