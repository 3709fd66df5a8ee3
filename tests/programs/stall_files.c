// SPDX-License-Identifier: MIT
/*
 * stall_files - a process whose /proc/PID/maps names paths that block an
 * open(): it maps two files read-only and unlinks them, so that maps says
 * "DIR/data (deleted)" and "DIR/link (deleted)", and puts a FIFO at
 * "DIR/data (deleted)" and a symlink to another FIFO at "DIR/link (deleted)"
 * (and the same at DIR/data and DIR/link), FIFOs nobody writes to. Run as root, it then drops to nobody, as an
 * unprivileged user would do it. A tracer that opens those names blocks.
 *
 *   stall_files [SECONDS]
 *
 * Prints "ready ...", waits for a tracer, then "armed", and fires an
 * instant "tick" every 10 ms for SECONDS (default 6). Exits 0.
 */
#include <ctrace.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "ready.h"

#define NOBODY 65534

static char dir[] = "/tmp/stall_files.XXXXXX";

/* DIR/name, holding a page of text, mapped read-only then unlinked. */
static const void *map_unlinked(const char *name, char *path, size_t len)
{
	char page[4096];
	void *at;
	int fd;

	snprintf(path, len, "%s/%s", dir, name);
	memset(page, 'x', sizeof(page));
	fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0644);
	if (fd < 0 || write(fd, page, sizeof(page)) != (ssize_t)sizeof(page)) {
		perror(path);
		exit(2);
	}
	at = mmap(NULL, sizeof(page), PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (at == MAP_FAILED || unlink(path) != 0) {
		perror(path);
		exit(2);
	}
	return at;
}

int main(int argc, char **argv)
{
	int seconds = argc > 1 ? atoi(argv[1]) : 6;
	char data[64], link_path[64], fifo2[64], data_deleted[80], link_deleted[80];
	struct timespec start, now;

	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 2;
	}
	map_unlinked("data", data, sizeof(data));
	map_unlinked("link", link_path, sizeof(link_path));
	snprintf(fifo2, sizeof(fifo2), "%s/fifo", dir);
	snprintf(data_deleted, sizeof(data_deleted), "%s (deleted)", data);
	snprintf(link_deleted, sizeof(link_deleted), "%s (deleted)", link_path);
	if (mkfifo(data, 0600) != 0 || mkfifo(data_deleted, 0600) != 0 || mkfifo(fifo2, 0600) != 0 ||
	    symlink(fifo2, link_path) != 0 || symlink(fifo2, link_deleted) != 0) {
		perror("mkfifo");
		return 2;
	}
	if (getuid() == 0 && (chown(dir, NOBODY, NOBODY) != 0 || setgid(NOBODY) != 0 ||
			      setuid(NOBODY) != 0)) {
		perror("dropping to nobody");
		return 2;
	}
	if (!ready_and_wait()) {
		fprintf(stderr, "stall_files: no tracer came\n");
		return 1;
	}
	puts("armed");
	fflush(stdout);
	clock_gettime(CLOCK_MONOTONIC, &start);
	do {
		CTRACE_INSTANT(NULL, "tick", CTRACE_SCOPE_THREAD, NULL);
		usleep(10000);
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while (now.tv_sec - start.tv_sec < seconds);
	unlink(data);
	unlink(data_deleted);
	unlink(link_path);
	unlink(link_deleted);
	unlink(fifo2);
	rmdir(dir);
	return 0;
}
