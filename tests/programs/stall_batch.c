// SPDX-License-Identifier: MIT
/*
 * stall_batch - a process on the batched path whose memory blocks whoever
 * reads one thread's buffer: that thread fills its buffer past its first
 * page, then the page after it is emptied (MADV_DONTNEED) and registered
 * with userfaultfd (missing faults), never served. The tracer's read of
 * that buffer blocks in the kernel, killable only, so its reads of the
 * process are refused until the process exits; the main thread's buffer
 * then cannot be read at the stop either.
 *
 *   stall_batch SECONDS
 *
 * Prints "ready ...", waits for a tracer, starts the staller (instants
 * "fill", then "stalled" on stdout), fires an instant "tick" every 10 ms
 * for SECONDS, then "end". Exits 0; 2 if userfaultfd is refused.
 * Needs the right to userfaultfd (root, or vm.unprivileged_userfaultfd=1).
 */
#include <ctrace.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "ready.h"

static int uffd;

static void *staller(void *arg)
{
	long page = sysconf(_SC_PAGESIZE);
	struct uffdio_register reg = { .mode = UFFDIO_REGISTER_MODE_MISSING };
	char *held;

	(void)arg;
	/* Past the first page (the header and the first events); not to the end: no flush. */
	while (!ctrace__batch_tls || ctrace__batch_tls->len < (unsigned)page)
		CTRACE_INSTANT(NULL, "fill", CTRACE_SCOPE_THREAD, NULL);
	held = (char *)ctrace__batch_tls + page;
	reg.range.start = (unsigned long)held;
	reg.range.len = (unsigned long)page;
	if (madvise(held, (size_t)page, MADV_DONTNEED) != 0 || ioctl(uffd, UFFDIO_REGISTER, &reg) != 0) {
		perror("stall_batch: UFFDIO_REGISTER");
		exit(2);
	}
	puts("stalled");
	fflush(stdout);
	/* No more events: the next would write into the held page. */
	for (;;)
		pause();
	return NULL;
}

int main(int argc, char **argv)
{
	int seconds = argc > 1 ? atoi(argv[1]) : 30;
	struct uffdio_api api = { .api = UFFD_API };
	struct timespec start, now;
	pthread_t t;

	uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (uffd < 0 || ioctl(uffd, UFFDIO_API, &api) != 0) {
		perror("userfaultfd");
		return 2;
	}
	if (!ready_and_wait()) {
		fprintf(stderr, "stall_batch: no tracer came\n");
		return 1;
	}
	if (pthread_create(&t, NULL, staller, NULL) != 0)
		return 2;
	clock_gettime(CLOCK_MONOTONIC, &start);
	do {
		CTRACE_INSTANT(NULL, "tick", CTRACE_SCOPE_THREAD, NULL);
		usleep(10000);
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while (now.tv_sec - start.tv_sec < seconds);
	CTRACE_INSTANT(NULL, "end", CTRACE_SCOPE_THREAD, NULL);
	return 0;
}
