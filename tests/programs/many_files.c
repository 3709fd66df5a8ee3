// SPDX-License-Identifier: MIT
/*
 * many_files - a process that maps more files than a tracer holding one file
 * descriptor per file (or per library's probes) can open under the usual
 * soft limit of 1024.
 *
 *   many_files files N SECONDS
 *     maps N distinct small files read-only (made in a temp dir, removed at
 *     the end), prints "ready ...", waits for a tracer, and fires an instant
 *     "tick" every 10 ms for SECONDS. Exits 0 (1: no tracer came).
 *
 *   many_files libs LIB N
 *     copies the shared library LIB (tests/programs/lib/probelib.c, built by
 *     the test) to N files and dlopen()s each: N objects with probes. Prints
 *     "ready ...", waits for a tracer, then up to 20 s for every library's
 *     own semaphore, prints "armed=K" (how many were raised), calls each
 *     armed library's probelib_hit(i) (i its index) and fires "done". Exits 0.
 *
 * Exit 2 on bad arguments or a file it cannot make.
 */
#include <ctrace.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "ready.h"

static char dir[] = "/tmp/many_files.XXXXXX";

static void remove_all(int n, const char *fmt)
{
	char path[128];

	for (int i = 0; i < n; i++) {
		snprintf(path, sizeof(path), fmt, dir, i);
		unlink(path);
	}
	rmdir(dir);
}

static int map_files(int n, int seconds)
{
	struct timespec start, now;
	char path[128];

	for (int i = 0; i < n; i++) {
		int fd;

		snprintf(path, sizeof(path), "%s/f%d", dir, i);
		fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0644);
		if (fd < 0 || write(fd, path, strlen(path) + 1) < 0 ||
		    mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0) == MAP_FAILED) {
			perror(path);
			return 2;
		}
		close(fd);
	}
	if (!ready_and_wait()) {
		remove_all(n, "%s/f%d");
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &start);
	do {
		CTRACE_INSTANT(NULL, "tick", CTRACE_SCOPE_THREAD, NULL);
		usleep(10000);
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while (now.tv_sec - start.tv_sec < seconds);
	remove_all(n, "%s/f%d");
	return 0;
}

/* LIB copied to path. */
static int copy_file(const char *from, const char *to)
{
	struct stat st;
	int in = open(from, O_RDONLY), out = open(to, O_WRONLY | O_CREAT | O_EXCL, 0755);
	int ok = in >= 0 && out >= 0 && fstat(in, &st) == 0 &&
		 sendfile(out, in, NULL, (size_t)st.st_size) == st.st_size;

	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	return ok ? 0 : -1;
}

static int load_libs(const char *lib, int n)
{
	int (**armed)(void) = calloc((size_t)n, sizeof(*armed));
	void (**hit)(int) = calloc((size_t)n, sizeof(*hit));
	struct timespec start, now;
	char path[128];
	int up = 0;

	if (!armed || !hit)
		return 2;
	for (int i = 0; i < n; i++) {
		void *h;

		snprintf(path, sizeof(path), "%s/lib%d.so", dir, i);
		if (copy_file(lib, path) != 0 || !(h = dlopen(path, RTLD_NOW | RTLD_LOCAL))) {
			fprintf(stderr, "many_files: %s: %s\n", path, dlerror());
			return 2;
		}
		*(void **)&armed[i] = dlsym(h, "probelib_armed");
		*(void **)&hit[i] = dlsym(h, "probelib_hit");
		if (!armed[i] || !hit[i]) {
			fprintf(stderr, "many_files: %s: no probelib_armed/probelib_hit\n", path);
			return 2;
		}
	}
	if (!ready_and_wait()) {
		remove_all(n, "%s/lib%d.so");
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &start);
	do {
		up = 0;
		for (int i = 0; i < n; i++)
			up += armed[i]() != 0;
		usleep(10000);
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while (up < n && now.tv_sec - start.tv_sec < 20);
	printf("armed=%d\n", up);
	fflush(stdout);
	for (int i = 0; i < n; i++)
		if (armed[i]())
			hit[i](i);
	CTRACE_INSTANT(NULL, "done", CTRACE_SCOPE_THREAD, NULL);
	remove_all(n, "%s/lib%d.so");
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 4 || !mkdtemp(dir)) {
		fprintf(stderr, "usage: many_files files N SECONDS | libs LIB N\n");
		return 2;
	}
	if (!strcmp(argv[1], "files"))
		return map_files(atoi(argv[2]), atoi(argv[3]));
	if (!strcmp(argv[1], "libs"))
		return load_libs(argv[2], atoi(argv[3]));
	fprintf(stderr, "usage: many_files files N SECONDS | libs LIB N\n");
	return 2;
}
