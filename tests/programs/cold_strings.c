// SPDX-License-Identifier: MIT
/*
 * cold_strings - event names on pages this process never touched (a file
 * mapped, never read), where a probe that cannot fault pages in cannot read
 * them. One name ends at the last byte of its mapping, the page after it
 * inaccessible: a copy of a fixed size past the NUL would fail there.
 *
 *   cold_strings [EXIT_MS]   prints "ready pid=P main_tid=T", waits for the
 *   tracer, fires an instant "edge-name" (the name's NUL is its mapping's
 *   last byte), then an instant "cold-name" (mid-page of another mapping),
 *   then a counter "cold-counter" = 7 named from a third page, then waits
 *   EXIT_MS (default 300) and exits 0. Every page is touched only by the
 *   tracer.
 */
#define _GNU_SOURCE
#include <ctrace.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "ready.h"

#define PAGE 4096

static const char *const names[] = { "edge-name", "cold-name", "cold-counter" };

/* Page i of the file holds names[i]: at the page's end for the first, mid-page for the others. */
static size_t name_offset(int i)
{
	return i == 0 ? PAGE - strlen(names[0]) - 1 : 1000;
}

int main(int argc, char **argv)
{
	int exit_ms = argc > 1 ? atoi(argv[1]) : 300;
	char path[] = "/tmp/cold_strings.XXXXXX";
	static char page[PAGE];
	const char *at[3];
	int fd = mkstemp(path);

	if (fd < 0)
		return 2;
	unlink(path);
	for (int i = 0; i < 3; i++) {
		memset(page, 'x', sizeof(page));
		memcpy(page + name_offset(i), names[i], strlen(names[i]) + 1);
		if (write(fd, page, PAGE) != PAGE)
			return 2;
	}
	for (int i = 0; i < 3; i++) {
		/* Two pages reserved, the file's page over the first: the second stays inaccessible. */
		char *base = mmap(NULL, 2 * PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (base == MAP_FAILED ||
		    mmap(base, PAGE, PROT_READ, MAP_PRIVATE | MAP_FIXED, fd, (off_t)i * PAGE) == MAP_FAILED)
			return 2;
		at[i] = base + name_offset(i);
	}
	if (!ready_and_wait())
		return 3;
	CTRACE_INSTANT(NULL, at[0], CTRACE_SCOPE_THREAD, NULL);
	CTRACE_INSTANT(NULL, at[1], CTRACE_SCOPE_THREAD, NULL);
	CTRACE_COUNTER_SET(NULL, at[2], 7);
	usleep((useconds_t)exit_ms * 1000);
	return 0;
}
