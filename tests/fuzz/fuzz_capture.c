// SPDX-License-Identifier: MIT
/*
 * fuzz_capture - libFuzzer harness over `ctrace-bpf convert` (capture_read.c
 * reading a capture, capture_replay.c giving its records to the session's
 * decode -> merge -> model -> writer path), whose input is any file a user
 * names: cut short, damaged, forged, of another version. Whatever the
 * input: no crash, no hang, no leak, no sanitizer report.
 * Seeds: real captures of tests/programs (corpus/capture/), whole and cut.
 */
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "offline/capture_replay.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1, null_fd = -1, err_fd = -1;
	static char path[64];
	struct capture_convert_result res;

	if (fd < 0) {
		fd = memfd_create("fuzz_capture", 0);
		if (fd < 0)
			abort();
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		null_fd = open("/dev/null", O_WRONLY);
		err_fd = dup(2);
		if (null_fd < 0 || err_fd < 0)
			abort();
	}
	if (ftruncate(fd, 0) || pwrite(fd, data, size, 0) != (ssize_t)size)
		abort();
	/* The lines a damaged capture earns are the point, not output worth reading (libFuzzer's own are). */
	fflush(stderr);
	dup2(null_fd, 2);
	capture_convert(path, "/dev/null", NULL, &res);
	fflush(stderr);
	dup2(err_fd, 2);
	return 0;
}
