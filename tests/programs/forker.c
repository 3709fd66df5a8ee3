// SPDX-License-Identifier: MIT
/*
 * forker - a traced process that makes new processes, for -f/--follow in
 * tests/integration/test_processes.c.
 *
 *   forker [--shared-site] PROG [ARGS...]
 *
 * Prints "ready pid=P main_tid=T", waits up to 10 s for a tracer (exit 3 if
 * none comes), emits "parent-before", then:
 *   1. forks a child, which emits "child-hello", forks a grandchild (which
 *      emits "grandchild-hello" and exits 0), waits for it and exits 0;
 *   2. forks a child that execs PROG ARGS... (a program with probes of its
 *      own, e.g. armed_hello);
 * waits for both, emits "parent-after", prints "children ok" (or "children
 * failed" and how each ended) and exits 0 (1 if a child failed).
 * Every process prints its pid ("child pid=C", "grandchild pid=G",
 * "exec-child pid=E") and every event carries {"pid":N}, the pid as the
 * process itself saw it.
 *
 * Each of these instants is its own probe site (a macro, expanded in place),
 * so no child runs a site its parent already ran. With --shared-site, the
 * parent first emits "parent-shared" (3 times) and the first child "child-shared"
 * through one function, hence one probe site: what real programs do (a
 * child calls the functions its parent called), and what a tracer must
 * survive after the kernel has optimized that site in the parent.
 */
#include <ctrace.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "ready.h"

/* An instant with the caller's pid in its args, at a site of its own. */
#define HELLO(name)                                                            \
	do {                                                                   \
		char hello_args[32];                                           \
		snprintf(hello_args, sizeof(hello_args), "{\"pid\":%d}",       \
			 (int)getpid());                                       \
		CTRACE_INSTANT(NULL, name, CTRACE_SCOPE_THREAD, hello_args);   \
	} while (0)

/* One site, whoever calls it. */
__attribute__((noinline)) static void shared_hello(const char *name)
{
	HELLO(name);
}

/* Forks; the child prints "what pid=N" itself, before it does anything else. */
static pid_t fork_and_say(const char *what)
{
	pid_t pid;

	fflush(stdout); /* or the child would print our buffered lines again */
	pid = fork();
	if (pid == 0) {
		printf("%s pid=%d\n", what, (int)getpid());
		fflush(stdout);
	}
	return pid;
}

/* True if pid exited 0; else says how it ended. */
static int wait_ok(pid_t pid, const char *what)
{
	int status;

	if (pid <= 0 || waitpid(pid, &status, 0) != pid) {
		printf("%s: not started or not waited for\n", what);
		return 0;
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 1;
	if (WIFSIGNALED(status))
		printf("%s killed by signal %d\n", what, WTERMSIG(status));
	else
		printf("%s exited %d\n", what, WEXITSTATUS(status));
	return 0;
}

int main(int argc, char **argv)
{
	pid_t child, grandchild, exec_child;
	int shared = argc > 1 && !strcmp(argv[1], "--shared-site");
	char **prog = argv + 1 + shared;
	int ok;

	if (!prog[0]) {
		fputs("usage: forker [--shared-site] PROG [ARGS...]\n", stderr);
		return 2;
	}
	if (!ready_and_wait()) {
		puts("never armed");
		return 3;
	}
	HELLO("parent-before");
	/* More than once: the kernel optimizes a site only after its first hit. */
	for (int i = 0; shared && i < 3; i++)
		shared_hello("parent-shared");

	child = fork_and_say("child");
	if (child == 0) {
		/* First: the child's first probe is the site its parent optimized. */
		if (shared)
			shared_hello("child-shared");
		HELLO("child-hello");
		grandchild = fork_and_say("grandchild");
		if (grandchild == 0) {
			HELLO("grandchild-hello");
			_exit(0);
		}
		_exit(wait_ok(grandchild, "grandchild") ? 0 : 1);
	}
	exec_child = fork_and_say("exec-child");
	if (exec_child == 0) {
		execv(prog[0], prog);
		perror(prog[0]);
		_exit(127);
	}
	ok = wait_ok(child, "child");
	ok = wait_ok(exec_child, "exec-child") && ok;
	HELLO("parent-after");
	puts(ok ? "children ok" : "children failed");
	return ok ? 0 : 1;
}
