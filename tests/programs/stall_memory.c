// SPDX-License-Identifier: MIT
/*
 * stall_memory - a process whose memory blocks whoever reads it: a page
 * registered with userfaultfd (missing faults) that it never serves. A
 * read of that page from another process (process_vm_readv) waits in the
 * kernel, killable only, until the process serves the fault or exits.
 * Needs the right to userfaultfd (root, or vm.unprivileged_userfaultfd=1):
 * a handler for kernel faults too, which is what a remote read makes.
 *
 *   stall_memory SECONDS
 *
 * Prints "ready ...", waits for a tracer, fires an instant "tick", then one
 * whose name is a pointer into that page (the probe cannot read it; a
 * tracer that reads it later from the process blocks), then "tick" every
 * 10 ms for SECONDS, then "end". Exits 0; 2 if userfaultfd is refused.
 * Traced per event only (--no-batch): a batched site copies its name in
 * the process, and this one would block itself.
 */
#include <ctrace.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "ready.h"

int main(int argc, char **argv)
{
	int seconds = argc > 1 ? atoi(argv[1]) : 30;
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = { .mode = UFFDIO_REGISTER_MODE_MISSING };
	struct timespec start, now;
	long page = sysconf(_SC_PAGESIZE);
	int uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	char *held;

	if (uffd < 0 || ioctl(uffd, UFFDIO_API, &api) != 0) {
		perror("userfaultfd");
		return 2;
	}
	held = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	reg.range.start = (unsigned long)held;
	reg.range.len = (unsigned long)page;
	if (held == MAP_FAILED || ioctl(uffd, UFFDIO_REGISTER, &reg) != 0) {
		perror("UFFDIO_REGISTER");
		return 2;
	}
	if (!ready_and_wait()) {
		fprintf(stderr, "stall_memory: no tracer came\n");
		return 1;
	}
	CTRACE_INSTANT(NULL, "tick", CTRACE_SCOPE_THREAD, NULL);
	CTRACE_INSTANT(NULL, held + 64, CTRACE_SCOPE_THREAD, NULL);
	puts("held");
	fflush(stdout);
	clock_gettime(CLOCK_MONOTONIC, &start);
	do {
		CTRACE_INSTANT(NULL, "tick", CTRACE_SCOPE_THREAD, NULL);
		usleep(10000);
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while (now.tv_sec - start.tv_sec < seconds);
	CTRACE_INSTANT(NULL, "end", CTRACE_SCOPE_THREAD, NULL);
	return 0;
}
