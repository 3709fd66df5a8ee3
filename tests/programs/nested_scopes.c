// SPDX-License-Identifier: MIT
/*
 * nested_scopes - CTRACE_SCOPEs nested the tightest ways real code nests
 * them, for test_scope_nesting (every child slice must lie within its
 * parent's):
 *   "level" depth 0..DEPTH-1, recursing, each holding a "head" scope that
 *           starts right after it and ends right before it (no work between
 *           their edges): args {"req":R,"depth":D};
 *   a request loop like a server's: "request" {"req":R} holds "parse", then
 *           ITEMS "item" {"req":R,"item":I} each holding a "lookup", then
 *           "respond" (parse/respond carry the request's args, lookup its
 *           item's).
 * Prints "ready pid=N main_tid=N", waits for the tracer, runs, prints
 * "done scopes=N" and exits 0.
 */
#define _GNU_SOURCE
#include <ctrace.h>
#include <stdio.h>
#include <unistd.h>
#include "ready.h"

#define REQUESTS 200
#define DEPTH 8
#define ITEMS 3

static volatile unsigned long sink;
static unsigned long scopes;

static void spin(int n)
{
	for (int i = 0; i < n; i++)
		sink++;
}

static void level(int req, int depth)
{
	char args[48];

	snprintf(args, sizeof(args), "{\"req\":%d,\"depth\":%d}", req, depth);
	CTRACE_SCOPE(NULL, "level", args);
	CTRACE_SCOPE(NULL, "head", args);
	scopes += 2;
	spin(depth * 10);
	if (depth + 1 < DEPTH)
		level(req, depth + 1);
}

static void lookup(const char *args)
{
	CTRACE_SCOPE(NULL, "lookup", args);
	scopes++;
	spin(50);
}

static void request(int req)
{
	char args[32];

	snprintf(args, sizeof(args), "{\"req\":%d}", req);
	CTRACE_SCOPE(NULL, "request", args);
	scopes++;
	{
		CTRACE_SCOPE(NULL, "parse", args);
		scopes++;
		spin(100);
	}
	for (int i = 0; i < ITEMS; i++) {
		char item_args[48];

		snprintf(item_args, sizeof(item_args), "{\"req\":%d,\"item\":%d}", req, i);
		CTRACE_SCOPE(NULL, "item", item_args);
		scopes++;
		lookup(item_args);
	}
	CTRACE_SCOPE(NULL, "respond", args);
	scopes++;
	spin(30);
}

int main(void)
{
	if (!ready_and_wait())
		return 3;
	for (int r = 0; r < REQUESTS; r++)
		level(r, 0);
	for (int r = 0; r < REQUESTS; r++)
		request(r);
	printf("done scopes=%lu\n", scopes);
	return 0;
}
