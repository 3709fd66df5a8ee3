// SPDX-License-Identifier: MIT
/*
 * outlives - a launched command that outlives its tracer's trace, for
 * tests/integration/test_launch_outlives.c: the tracer's failure (its
 * output gone: a closed pipe, a full disk) must end tracing, not the
 * command.
 *
 *   outlives MARKER [EXIT_CODE]
 *
 * While traced (up to 20 s), fires instants "fill" with 200 bytes of args
 * as fast as it can, so that any output fills or fails soon. Once the
 * probes are disarmed (the tracer detached), it goes on for 1 s more, as
 * a real program would, then writes MARKER ("disarmed" or, had the tracer
 * never let go, "still armed") and exits EXIT_CODE (default 0). A tracer
 * that killed it leaves no MARKER.
 */
#include <ctrace.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	char args[256];
	const char *said;
	double start = now_s();
	int fd;

	if (argc < 2)
		return 2;
	snprintf(args, sizeof(args), "{\"pad\":\"%0200d\"}", 0);
	while (CTRACE_ENABLED() && now_s() - start < 20) {
		for (int i = 0; i < 100; i++)
			CTRACE_INSTANT(NULL, "fill", CTRACE_SCOPE_THREAD, args);
		usleep(100);
	}
	said = CTRACE_ENABLED() ? "still armed\n" : "disarmed\n";
	sleep(1);
	fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, said, strlen(said)) != (ssize_t)strlen(said))
		return 2;
	close(fd);
	return argc > 2 ? atoi(argv[2]) : 0;
}
