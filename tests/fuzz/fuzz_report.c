// SPDX-License-Identifier: MIT
/*
 * fuzz_report - libFuzzer harness over `ctrace-bpf report` (trace_report.c
 * reading a file through zlib, trace_summary.c printing it), whose input
 * is any file a user names: cut, damaged, gzip or not. Whatever the input:
 * no crash, no leak, no sanitizer report, and a summary whose spans add up
 * (each name's count at most the kind's total).
 * Seeds: a real trace, the same gzip-compressed, a cut one (corpus/report/).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "offline/trace_report.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	static char path[64];
	struct trace_report r;
	FILE *out;
	uint64_t sum = 0;

	if (fd < 0) {
		fd = memfd_create("fuzz_report", 0);
		if (fd < 0)
			abort();
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	if (ftruncate(fd, 0) || pwrite(fd, data, size, 0) != (ssize_t)size)
		abort();
	if (trace_report_read(path, &r) == 0) {
		for (size_t i = 0; i < r.summary.spans.n; i++)
			sum += r.summary.spans.v[i]->count;
		if (sum + r.summary.spans.other.count != r.summary.spans.total)
			abort();
		out = fopen("/dev/null", "w");
		trace_summary_print(out, &r.summary, &r.losses, 10, 5);
		fclose(out);
	}
	trace_report_free(&r);
	return 0;
}
