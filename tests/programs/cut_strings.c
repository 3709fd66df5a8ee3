// SPDX-License-Identifier: MIT
/*
 * cut_strings - names and args with no NUL before the end of readable
 * memory: each is the last bytes of a page whose next page is PROT_NONE or
 * not mapped at all. The trace must not show them as complete strings.
 *
 * Prints "ready pid=P main_tid=T", waits up to 10 s for a tracer (exits 3
 * if none), then fires on its main thread, and exits 0 half a second later:
 *
 *   I name "cut-before-prot-none" (no NUL; the next page PROT_NONE)
 *   I name "cut-before-unmapped"  (no NUL; the next page unmapped)
 *   I "args-cut" with args {"k":"cut-args"  (no NUL; the next page PROT_NONE)
 *   I "whole" with args {"k":"ends-before-the-page"} (NUL is the page's last byte)
 */
#include <ctrace.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "ready.h"

/* `s` (without its NUL) as the last bytes of a page followed by an unreadable one. */
static const char *at_page_end(const char *s, bool unmap, bool with_nul)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t n = strlen(s) + (with_nul ? 1 : 0);
	char *p = mmap(NULL, (size_t)page * 2, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	memcpy(p + page - n, s, n);
	if (unmap ? munmap(p + page, (size_t)page) : mprotect(p + page, (size_t)page, PROT_NONE))
		return NULL;
	return p + page - n;
}

int main(void)
{
	const char *prot_none = at_page_end("cut-before-prot-none", false, false);
	const char *unmapped = at_page_end("cut-before-unmapped", true, false);
	const char *args = at_page_end("{\"k\":\"cut-args\"", false, false);
	const char *whole = at_page_end("{\"k\":\"ends-before-the-page\"}", false, true);

	if (!prot_none || !unmapped || !args || !whole) {
		perror("cut_strings: mmap");
		return 1;
	}
	if (!ready_and_wait()) {
		fprintf(stderr, "cut_strings: no tracer attached within 10 s\n");
		return 3;
	}
	usleep(100 * 1000); /* every site attached: the armer is the last */
	CTRACE_INSTANT(NULL, prot_none, CTRACE_SCOPE_THREAD, NULL);
	CTRACE_INSTANT(NULL, unmapped, CTRACE_SCOPE_THREAD, NULL);
	CTRACE_INSTANT(NULL, "args-cut", CTRACE_SCOPE_THREAD, args);
	CTRACE_INSTANT(NULL, "whole", CTRACE_SCOPE_THREAD, whole);
	/* Alive a while: the tracer may read a string again from our memory. */
	usleep(500 * 1000);
	return 0;
}
