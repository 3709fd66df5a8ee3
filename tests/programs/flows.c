// SPDX-License-Identifier: MIT
/*
 * flows - CTRACE_FLOW_OUT / CTRACE_FLOW_IN as programs use them, for
 * test_flows. After the tracer armed the probes (exit 3 if none came):
 *
 *   flows handoff N   an acceptor thread hands N requests to a worker
 *                     thread: each accepted in a span "accept" (BEGIN/END)
 *                     with FLOW_OUT(id), handled in a CTRACE_SCOPE "handle"
 *                     with FLOW_IN(id), nested in a span "work" (every
 *                     other "accept" ends after its "handle"). Every
 *                     request has the same id 7: taken in before the next
 *                     is sent, so each is its own flow.
 *   flows fork        a message to a forked child: the parent sends
 *                     FLOW_OUT(0x5eed) in its span "send", then forks; the
 *                     child takes it in with FLOW_IN in its scope "receive"
 *                     (trace it with -f).
 *   flows unmatched   a flow never taken in (id 1, in span "lonely-out"),
 *                     an IN never sent (id 2, in scope "lonely-in"), an
 *                     OUT outside any span (id 3) whose IN (span "late-in")
 *                     has no start, an OUT sent twice (id 4) before its IN
 *                     (in scope "twice-in"): the first is never taken in.
 * Prints "flows done" at the end.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "ready.h"

static int to_worker[2], to_acceptor[2];
static int requests;

static void *acceptor(void *arg)
{
	(void)arg;
	for (int i = 0; i < requests; i++) {
		struct ctrace_span sp;
		unsigned long long id = 7;
		char ack;

		CTRACE_SPAN_BEGIN(NULL, &sp, "accept", NULL);
		usleep(200);
		CTRACE_FLOW_OUT(id);
		usleep(200);
		/* Every other request: the span ends after the worker's, which takes it in. */
		if (i % 2 == 0)
			CTRACE_SPAN_END(&sp, NULL);
		if (write(to_worker[1], &id, sizeof(id)) != sizeof(id))
			exit(4);
		/* Taken in before the next: the id is free again. */
		if (read(to_acceptor[0], &ack, 1) != 1)
			exit(4);
		if (i % 2 == 1)
			CTRACE_SPAN_END(&sp, NULL);
	}
	return NULL;
}

static void *worker(void *arg)
{
	struct ctrace_span work;

	(void)arg;
	CTRACE_SPAN_BEGIN(NULL, &work, "work", NULL);
	for (int i = 0; i < requests; i++) {
		unsigned long long id;

		if (read(to_worker[0], &id, sizeof(id)) != sizeof(id))
			exit(4);
		{
			CTRACE_SCOPE(NULL, "handle", NULL);
			usleep(200);
			CTRACE_FLOW_IN(id);
			usleep(200);
		}
		if (write(to_acceptor[1], "k", 1) != 1)
			exit(4);
	}
	CTRACE_SPAN_END(&work, NULL);
	return NULL;
}

static int handoff(int n)
{
	pthread_t a, w;

	requests = n;
	if (pipe(to_worker) || pipe(to_acceptor))
		return 4;
	pthread_create(&w, NULL, worker, NULL);
	pthread_create(&a, NULL, acceptor, NULL);
	pthread_join(a, NULL);
	pthread_join(w, NULL);
	return 0;
}

static int fork_message(void)
{
	struct ctrace_span sp;
	int status;
	pid_t child;

	CTRACE_SPAN_BEGIN(NULL, &sp, "send", NULL);
	CTRACE_FLOW_OUT(0x5eed);
	usleep(1000);
	CTRACE_SPAN_END(&sp, NULL);
	child = fork();
	if (child == 0) {
		usleep(20000); /* the tracer attaches the child's probes at its fork */
		{
			CTRACE_SCOPE(NULL, "receive", NULL);
			usleep(500);
			CTRACE_FLOW_IN(0x5eed);
			usleep(500);
		}
		_exit(0);
	}
	if (child < 0 || waitpid(child, &status, 0) != child || !WIFEXITED(status))
		return 4;
	return WEXITSTATUS(status);
}

static int unmatched(void)
{
	struct ctrace_span sp;

	CTRACE_SPAN_BEGIN(NULL, &sp, "lonely-out", NULL);
	CTRACE_FLOW_OUT(1);
	CTRACE_SPAN_END(&sp, NULL);
	{
		CTRACE_SCOPE(NULL, "lonely-in", NULL);
		CTRACE_FLOW_IN(2);
	}
	CTRACE_FLOW_OUT(3);
	usleep(100);
	CTRACE_SPAN_BEGIN(NULL, &sp, "late-in", NULL);
	CTRACE_FLOW_IN(3);
	CTRACE_SPAN_END(&sp, NULL);
	CTRACE_SPAN_BEGIN(NULL, &sp, "twice-out", NULL);
	CTRACE_FLOW_OUT(4);
	usleep(100);
	CTRACE_FLOW_OUT(4);
	CTRACE_SPAN_END(&sp, NULL);
	{
		CTRACE_SCOPE(NULL, "twice-in", NULL);
		CTRACE_FLOW_IN(4);
	}
	return 0;
}

int main(int argc, char **argv)
{
	int rc;

	if (argc < 2)
		return 2;
	if (!ready_and_wait())
		return 3;
	if (!strcmp(argv[1], "handoff"))
		rc = handoff(argc > 2 ? atoi(argv[2]) : 3);
	else if (!strcmp(argv[1], "fork"))
		rc = fork_message();
	else if (!strcmp(argv[1], "unmatched"))
		rc = unmatched();
	else
		return 2;
	printf("flows done\n");
	fflush(stdout);
	return rc;
}
