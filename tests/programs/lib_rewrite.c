// SPDX-License-Identifier: MIT
/*
 * lib_rewrite - a probed library rewritten in place (same inode, as `cp`
 * over it does) between a dlclose() and the next dlopen(), for
 * tests/integration/test_rewritten_library.c. The test builds A_SO and B_SO
 * from tests/programs/lib/probelib.c with different code layouts, so that
 * A's probe sites are in the middle of B's instructions.
 *
 *   lib_rewrite LIB A_SO B_SO [GAP_MS]
 *
 * Writes A_SO's bytes into LIB, dlopen()s it, prints "ready pid=P
 * main_tid=T", waits up to 10 s for a tracer to arm it (exit 3 if not),
 * calls its probelib_hit(1), dlclose()s it, waits GAP_MS (default 200),
 * writes B_SO's bytes into LIB (truncating it: same inode), dlopen()s it
 * again, waits up to 2 s for its semaphore, calls probelib_hit(2) and
 * probelib_hello(), prints "rewritten same_inode=0|1 b_armed_ms=N" and exits
 * 0. Exit 2 on a bad argument or a library that does not load.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "ready.h"

/* cp FROM TO without a new inode: truncate and write. */
static int copy_in_place(const char *from, const char *to)
{
	char buf[65536];
	int in = open(from, O_RDONLY | O_CLOEXEC);
	int out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	ssize_t n = 0;

	while (in >= 0 && out >= 0 && (n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n) {
			n = -1;
			break;
		}
	if (in >= 0)
		close(in);
	if (out >= 0 && close(out) != 0)
		n = -1;
	return in < 0 || out < 0 || n < 0 ? -1 : 0;
}

static void *load(const char *path, void (**hit)(int), long (**wait_armed)(long),
		  void (**hello)(void))
{
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		fprintf(stderr, "lib_rewrite: %s\n", dlerror());
		exit(2);
	}
	/* POSIX's way from dlsym's void * to a function pointer. */
	*(void **)hit = dlsym(h, "probelib_hit");
	*(void **)wait_armed = dlsym(h, "probelib_wait_armed");
	*(void **)hello = dlsym(h, "probelib_hello");
	if (!*hit || !*wait_armed || !*hello) {
		fprintf(stderr, "lib_rewrite: %s lacks the probelib functions\n", path);
		exit(2);
	}
	return h;
}

int main(int argc, char **argv)
{
	void (*hit)(int), (*hello)(void);
	long (*wait_armed)(long), b_ms;
	struct stat before, after;
	void *h;

	if (argc < 4) {
		fprintf(stderr, "usage: lib_rewrite LIB A_SO B_SO [GAP_MS]\n");
		return 2;
	}
	if (copy_in_place(argv[2], argv[1]) != 0 || stat(argv[1], &before) != 0) {
		perror("lib_rewrite: writing LIB");
		return 2;
	}
	h = load(argv[1], &hit, &wait_armed, &hello);
	say_ready();
	if (wait_armed(10000) < 0) {
		fprintf(stderr, "lib_rewrite: no tracer armed the library within 10 s\n");
		return 3;
	}
	usleep(100 * 1000); /* every site attached: the armer is the last */
	hit(1);
	dlclose(h);
	usleep((useconds_t)(argc > 4 ? atoi(argv[4]) : 200) * 1000);
	if (copy_in_place(argv[3], argv[1]) != 0 || stat(argv[1], &after) != 0) {
		perror("lib_rewrite: rewriting LIB");
		return 2;
	}
	h = load(argv[1], &hit, &wait_armed, &hello);
	b_ms = wait_armed(2000);
	hit(2);
	hello();
	printf("rewritten same_inode=%d b_armed_ms=%ld\n", before.st_ino == after.st_ino, b_ms);
	fflush(stdout);
	dlclose(h);
	return 0;
}
