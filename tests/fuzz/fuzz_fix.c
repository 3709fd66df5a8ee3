// SPDX-License-Identifier: MIT
/*
 * fuzz_fix - libFuzzer harness over `ctrace-bpf fix` (trace_fix.c), which
 * reads files that may be cut anywhere or damaged. Whatever the input:
 * a repair must be one strict JSON document (RFC 8259, tests/lib/json_strict)
 * in valid UTF-8, and an input it calls complete must be one already.
 * Seeds: real traces and cuts of them (tests/fuzz/corpus/fix/).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "json_strict.h"
#include "offline/trace_fix.h"

static char *read_all(int fd, size_t *len)
{
	off_t size = lseek(fd, 0, SEEK_END);
	char *buf = malloc((size_t)size + 1);

	if (!buf || pread(fd, buf, (size_t)size, 0) != size)
		abort();
	buf[size] = '\0';
	*len = (size_t)size;
	return buf;
}

static void must(bool ok, const char *what, const char *why)
{
	if (!ok) {
		fprintf(stderr, "fuzz_fix: %s: %s\n", what, why);
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int in_fd = memfd_create("in", 0), out_fd = memfd_create("out", 0);
	struct trace_fix_result res;
	char why[256] = "";
	size_t len;
	char *out;
	FILE *in;

	if (in_fd < 0 || out_fd < 0 || write(in_fd, data, size) != (ssize_t)size ||
	    lseek(in_fd, 0, SEEK_SET) != 0 || !(in = fdopen(in_fd, "r")))
		abort();
	switch (trace_fix(in, out_fd, &res)) {
	case TRACE_FIX_REPAIRED:
		out = read_all(out_fd, &len);
		must(json_strict_check(out, len, why, sizeof(why)), "the repair is not strict JSON", why);
		free(out);
		break;
	case TRACE_FIX_COMPLETE:
		must(json_strict_check((const char *)data, size, why, sizeof(why)),
		     "an input called complete is not strict JSON", why);
		break;
	case TRACE_FIX_NOT_OURS:
		must(res.why[0] != '\0', "no reason given for refusing", "");
		break;
	default:
		abort(); /* memfds do not fail */
	}
	fclose(in);
	close(out_fd);
	return 0;
}
