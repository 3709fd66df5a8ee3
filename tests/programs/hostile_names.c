// SPDX-License-Identifier: MIT
/*
 * hostile_names - names that would drive a terminal, for
 * test_terminal_names. Before its ready line (so the tracer finds them at
 * its start):
 *   - the process names itself (prctl PR_SET_NAME) with an ESC sequence,
 *     an OSC title, CR and the C1 CSI (U+009B);
 *   - thread "hostile" names itself the same way (pthread_setname_np);
 *   - a file named with ESC, OSC, CR, BS, C1 and an invalid UTF-8 byte, in
 *     the directory argv[1], is mapped executable.
 * After the tracer armed the probes (exit 3 if none came), the thread gives
 * itself a longer such name (CTRACE_THREAD_NAME) and fires an instant; the
 * main thread fires a span, an instant and a counter named the same way.
 * Prints "hostile names done".
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>
#include "ready.h"

/* 15 bytes at most: the kernel's comm. Clears the screen, titles the window, returns the cursor. */
#define PROCESS_NAME "\033[2J\033]0;pwn\a\r\xc2\x9b"
#define THREAD_COMM "\033]0;t\a\033[H\r\b"
#define THREAD_NAME "thread \033[2J\033]0;owned\a\rFAKE \xc2\x9b" "31m"
/* Escape sequences, CR, BS, a lone C1 CSI byte, DEL and a C1 OSC: a terminal would act on each. */
#define FILE_NAME "lib\033[2J\033]0;owned\a\r\bFAKE\x9b" "31m\x7f\xc2\x9d" ".so"
#define SPAN_NAME "span \033[2J\033]2;owned\a\rFAKE"
#define INSTANT_NAME "instant \033[1A\033[2K\b\x7f\xc2\x9b" "1A"
#define COUNTER_NAME "counter \033]0;owned\033\\\r"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int thread_named, go;

static void set_and_signal(int *var)
{
	pthread_mutex_lock(&lock);
	*var = 1;
	pthread_cond_broadcast(&cond);
	pthread_mutex_unlock(&lock);
}

static void wait_until(const int *var)
{
	pthread_mutex_lock(&lock);
	while (!*var)
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);
}

static void *hostile(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), THREAD_COMM);
	set_and_signal(&thread_named);
	wait_until(&go);
	CTRACE_THREAD_NAME(THREAD_NAME);
	CTRACE_INSTANT(NULL, INSTANT_NAME, CTRACE_SCOPE_THREAD, NULL);
	return NULL;
}

/* The file made and mapped executable: 0, or -1 having said why. */
static int map_hostile_file(const char *dir)
{
	char path[512];
	void *p;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, FILE_NAME);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	if (fd < 0 || ftruncate(fd, 4096) < 0) {
		perror("hostile_names: the file");
		return -1;
	}
	p = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED) {
		perror("hostile_names: mmap");
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct ctrace_span span;
	pthread_t t;

	if (argc != 2) {
		fprintf(stderr, "usage: hostile_names DIR\n");
		return 2;
	}
	if (map_hostile_file(argv[1]) < 0)
		return 1;
	prctl(PR_SET_NAME, PROCESS_NAME, 0, 0, 0);
	pthread_create(&t, NULL, hostile, NULL);
	wait_until(&thread_named);
	if (!ready_and_wait())
		return 3;
	CTRACE_SPAN_BEGIN(NULL, &span, SPAN_NAME, NULL);
	usleep(1000);
	CTRACE_SPAN_END(&span, NULL);
	CTRACE_INSTANT(NULL, INSTANT_NAME, CTRACE_SCOPE_THREAD, NULL);
	CTRACE_COUNTER_SET(NULL, COUNTER_NAME, 7);
	set_and_signal(&go);
	pthread_join(t, NULL);
	printf("hostile names done\n");
	fflush(stdout);
	return 0;
}
