// SPDX-License-Identifier: MIT
/*
 * fuzz_pftrace - libFuzzer harness over the .pftrace reader
 * (pftrace_read.c, what `report` reads a .pftrace through), whose input is
 * any file a user names: whatever the bytes, no crash, no leak, no
 * sanitizer report, and what it writes is strict JSON in valid UTF-8
 * (protobuf strings from elsewhere need not be).
 * Seed: a real .pftrace of every_macro (corpus/pftrace/).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "json_strict.h"
#include "encode/perfetto/pftrace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	FILE *in = fmemopen((void *)data, size ? size : 1, "r"), *out = tmpfile();
	char why[256], *text;
	struct stat st;

	if (!in || !out)
		abort();
	if (!size)
		fgetc(in); /* fmemopen takes no empty buffer: read its one byte away */
	if (pftrace_to_json(in, out, why, sizeof(why)) == 0) {
		fflush(out);
		if (fstat(fileno(out), &st) != 0)
			abort();
		text = malloc((size_t)st.st_size + 1);
		if (!text || pread(fileno(out), text, (size_t)st.st_size, 0) != st.st_size)
			abort();
		text[st.st_size] = 0;
		if (!json_strict_check(text, (size_t)st.st_size, why, sizeof(why))) {
			fprintf(stderr, "fuzz_pftrace: not strict JSON: %s\n%.2000s\n", why, text);
			abort();
		}
		free(text);
	}
	fclose(in);
	fclose(out);
	return 0;
}
