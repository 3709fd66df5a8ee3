// SPDX-License-Identifier: MIT
/*
 * plugin_host - a process with no ctrace probes of its own (it does not
 * include ctrace.h) that loads a library with probes later, as a plugin
 * host or an interpreter loading an extension does. For
 * tests/integration/test_libraries.c.
 *
 *   plugin_host SO DELAY_MS
 *     Prints "ready pid=P main_tid=T", sleeps DELAY_MS, dlopen()s SO (a
 *     library built from tests/programs/lib/probelib.c), waits up to 2 s
 *     for its semaphore, prints "plugin armed_ms=N" (-1: never), calls its
 *     probelib_hit(7), waits 100 ms and exits 0. With SO "-" it loads
 *     nothing: it sleeps DELAY_MS and exits 0.
 *
 * Exit 2 on bad arguments or a library that does not load.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "ready.h"

int main(int argc, char **argv)
{
	void (*hit)(int);
	long (*wait_armed)(long);
	void *h;
	long ms;

	if (argc != 3) {
		fputs("usage: plugin_host SO|- DELAY_MS\n", stderr);
		return 2;
	}
	say_ready();
	usleep((useconds_t)(atol(argv[2]) * 1000));
	if (!strcmp(argv[1], "-"))
		return 0;
	h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "dlopen %s: %s\n", argv[1], dlerror());
		return 2;
	}
	*(void **)&hit = dlsym(h, "probelib_hit");
	*(void **)&wait_armed = dlsym(h, "probelib_wait_armed");
	if (!hit || !wait_armed) {
		fprintf(stderr, "%s: not a probelib\n", argv[1]);
		return 2;
	}
	ms = wait_armed(2000);
	printf("plugin armed_ms=%ld\n", ms);
	fflush(stdout);
	hit(7);
	usleep(100 * 1000);
	return 0;
}
