// SPDX-License-Identifier: MIT
/*
 * retitle - a program that retitles itself as servers do (setproctitle:
 * redis, nginx, postgres), writing over its argument area, for
 * test_target_names. `retitle MODE ARG...`, before its ready line:
 *   - whole: the area zeroed, "retitle: worker" written at its start (what
 *     libbsd's and postgres's setproctitle leave: the title, then NULs);
 *   - head: only the area's first 64 bytes zeroed, then the title written
 *     (what redis's and nginx's leave when the arguments are longer: the
 *     title, NULs, then the tail of the old arguments);
 *   - none: left as it is.
 * Then one span once traced (exit 3 if no tracer came), "retitle done".
 */
#include <stdio.h>
#include <string.h>
#include "ready.h"

#define TITLE "retitle: worker"
#define HEAD_BYTES 64

int main(int argc, char **argv)
{
	struct ctrace_span span;
	char *area_end = argv[argc - 1] + strlen(argv[argc - 1]) + 1;
	size_t area = (size_t)(area_end - argv[0]);

	if (argc < 2) {
		fprintf(stderr, "usage: retitle whole|head|none ARG...\n");
		return 2;
	}
	if (!strcmp(argv[1], "whole") || !strcmp(argv[1], "head")) {
		if (area < HEAD_BYTES + 16) {
			fprintf(stderr, "retitle: give more than %d bytes of arguments\n", HEAD_BYTES + 16);
			return 2;
		}
		memset(argv[0], 0, !strcmp(argv[1], "whole") ? area : HEAD_BYTES);
		memcpy(argv[0], TITLE, sizeof(TITLE));
	}
	if (!ready_and_wait())
		return 3;
	CTRACE_SPAN_BEGIN(NULL, &span, "retitled", NULL);
	CTRACE_SPAN_END(&span, NULL);
	printf("retitle done\n");
	fflush(stdout);
	return 0;
}
