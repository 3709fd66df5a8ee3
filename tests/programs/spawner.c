// SPDX-License-Identifier: MIT
/*
 * spawner - a traced process that makes many processes, for -f in
 * tests/integration/test_follow_many.c.
 *
 *   spawner burst N MS    forks N children at once, prints "spawned n=N" and
 *                         exits 0 at once; each child sleeps MS ms, emits
 *                         "child-late" {"pid":C} and exits 0.
 *   spawner serial N      forks N children one after the other; each emits
 *                         "child" {"pid":C} and exits 0 before the next is
 *                         forked; prints "serial n=N" and exits 0.
 *   spawner reuse         forks one child, which emits "child" and exits;
 *                         prints "child pid=C" once it is reaped, then waits
 *                         (up to 10 s) for SIGUSR1, emits "parent-end", exits.
 *   spawner bigexit N MB  prints "armed" once traced, waits (up to 10 s) for
 *                         SIGUSR1, then forks N children one after the
 *                         other, printing "child pid=C" for each. The first
 *                         touches MB MiB before its "child" {"pid":C}, so
 *                         that its exit lasts (the kernel frees its memory
 *                         after the exit notice, on 6.18); prints
 *                         "bigexit n=N" and exits 0.
 *   spawner stranger S    not traced: emits "stranger" {"secret":"S"} 5 times
 *                         over 100 ms, prints "stranger pid=P enabled=E", exits.
 *
 * The traced modes print "ready pid=P main_tid=T" and wait up to 10 s for a
 * tracer first (exit 3 if none comes).
 */
#include <ctrace.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "ready.h"

static volatile sig_atomic_t go_on;

static void on_usr1(int sig)
{
	(void)sig;
	go_on = 1;
}

static void wait_armed(void)
{
	if (!ready_and_wait()) {
		puts("never armed");
		exit(3);
	}
}

static void hello(const char *name, const char *key, const char *value)
{
	char args[96];

	if (value)
		snprintf(args, sizeof(args), "{\"%s\":\"%s\"}", key, value);
	else
		snprintf(args, sizeof(args), "{\"pid\":%d}", (int)getpid());
	CTRACE_INSTANT(NULL, name, CTRACE_SCOPE_THREAD, args);
}

static int burst(int n, int ms)
{
	wait_armed();
	fflush(stdout);
	for (int i = 0; i < n; i++) {
		pid_t pid = fork();

		if (pid == 0) {
			usleep((useconds_t)ms * 1000);
			hello("child-late", NULL, NULL);
			_exit(0);
		}
		if (pid < 0) {
			perror("fork");
			return 1;
		}
	}
	printf("spawned n=%d\n", n);
	return 0;
}

static int serial(int n)
{
	wait_armed();
	fflush(stdout);
	for (int i = 0; i < n; i++) {
		pid_t pid = fork();
		int status;

		if (pid == 0) {
			hello("child", NULL, NULL);
			_exit(0);
		}
		if (pid < 0 || waitpid(pid, &status, 0) != pid) {
			perror("fork");
			return 1;
		}
	}
	printf("serial n=%d\n", n);
	return 0;
}

/* `mb` MiB of memory of its own, in small pages: freeing them at the exit takes a while. */
static void hold_memory(size_t mb)
{
	size_t n = mb << 20;
	char *m = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (m == MAP_FAILED)
		return;
	madvise(m, n, MADV_NOHUGEPAGE);
	memset(m, 1, n);
}

static int bigexit(int n, int mb)
{
	struct sigaction sa = { 0 };

	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	wait_armed();
	puts("armed");
	fflush(stdout);
	for (int i = 0; i < 1000 && !go_on; i++)
		usleep(10000);
	for (int i = 0; i < n; i++) {
		pid_t pid = fork();
		int status;

		if (pid == 0) {
			if (i == 0)
				hold_memory((size_t)mb);
			hello("child", NULL, NULL);
			_exit(0);
		}
		printf("child pid=%d\n", (int)pid);
		fflush(stdout);
		if (pid < 0 || waitpid(pid, &status, 0) != pid) {
			perror("fork");
			return 1;
		}
	}
	printf("bigexit n=%d\n", n);
	return 0;
}

static int reuse(void)
{
	struct sigaction sa = { 0 };
	pid_t pid;
	int status;

	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	wait_armed();
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		hello("child", NULL, NULL);
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return 1;
	printf("child pid=%d\n", (int)pid);
	fflush(stdout);
	for (int i = 0; i < 1000 && !go_on; i++)
		usleep(10000);
	hello("parent-end", NULL, NULL);
	return 0;
}

static int stranger(const char *secret)
{
	for (int i = 0; i < 5; i++) {
		hello("stranger", "secret", secret);
		usleep(20000);
	}
	printf("stranger pid=%d enabled=%d\n", (int)getpid(), CTRACE_ENABLED() ? 1 : 0);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "burst"))
		return burst(atoi(argv[2]), atoi(argv[3]));
	if (argc == 3 && !strcmp(argv[1], "serial"))
		return serial(atoi(argv[2]));
	if (argc == 4 && !strcmp(argv[1], "bigexit"))
		return bigexit(atoi(argv[2]), atoi(argv[3]));
	if (argc == 2 && !strcmp(argv[1], "reuse"))
		return reuse();
	if (argc == 3 && !strcmp(argv[1], "stranger"))
		return stranger(argv[2]);
	fputs("usage: spawner burst N MS | serial N | reuse | stranger SECRET\n", stderr);
	return 2;
}
