// SPDX-License-Identifier: MIT
/*
 * lifecycle - a traced program for the tests of what a trace leaves in a
 * process and what the next one finds there (tests/integration/test_lifecycle.c).
 * Every event is numbered, so that a trace can be checked for gaps.
 *
 *   lifecycle paced MS SECONDS   every MS ms a counter "n" (0, 1, 2, ...), for
 *                                SECONDS, traced or not: the process a user
 *                                traces again and again
 *   lifecycle churn N ALIVE      waits for a tracer, then starts N threads, at
 *                                most ALIVE at a time, each emitting one
 *                                instant "t" then returning; prints "done N"
 *   lifecycle reexec K E         waits for a tracer, emits E instants "e" with
 *                                args {"k":K}, then exec()s itself with K-1
 *                                and address randomization off (the new
 *                                image's buffers at the old one's addresses),
 *                                down to 0
 *   lifecycle vfork K            waits for a tracer, then K times: vfork(), the
 *                                child emits one instant "child" and _exit()s;
 *                                the parent emits "parent" after each
 *   lifecycle failexec K         waits for a tracer, then K times: an instant
 *                                "try" and an exec() of a path that does not
 *                                exist (it fails, as execvp's search of PATH
 *                                does); prints "done"
 *   lifecycle forge N            waits for a tracer, emits "before", then
 *                                announces N buffers that are not (its own
 *                                calls of the batch flush, a hostile
 *                                program's), prints "forged", emits "after"
 *                                1 s later, prints "done" and lives 4 s more
 *   lifecycle bursts MS ROUNDS   ROUNDS times: waits for a tracer, a thread
 *                                fires instants "b" flat out for MS ms while
 *                                another fires 1000 in the middle, prints
 *                                "emitted round=R n=N", waits for the tracer
 *                                to go; exits 3 if none came within 60 s
 */
#include <ctrace.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "ready.h"

static void paced(int ms, int seconds)
{
	struct timespec start, now;

	say_ready();
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (long i = 0;; i++) {
		CTRACE_COUNTER_SET(NULL, "n", i);
		usleep((useconds_t)ms * 1000);
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec - start.tv_sec >= seconds)
			break;
	}
}

static void *one_event(void *arg)
{
	(void)arg;
	CTRACE_INSTANT(NULL, "t", CTRACE_SCOPE_THREAD, NULL);
	return NULL;
}

/* N threads, at most `alive` at once (joined oldest first). */
static int churn(int n, int alive)
{
	pthread_t *t = calloc((size_t)alive, sizeof(*t));

	if (!t || !ready_and_wait())
		return 1;
	for (int i = 0; i < n; i++) {
		if (i >= alive)
			pthread_join(t[i % alive], NULL);
		if (pthread_create(&t[i % alive], NULL, one_event, NULL))
			return 1;
	}
	for (int i = n > alive ? n - alive : 0; i < n; i++)
		pthread_join(t[i % alive], NULL);
	printf("done %d\n", n);
	fflush(stdout);
	free(t);
	return 0;
}

static int reexec(const char *self, int k, int e)
{
	char kb[16], eb[16], args[32];

	/* The first image says ready and waits; the others are traced already. */
	if (!getenv("LIFECYCLE_EXECED")) {
		if (!ready_and_wait())
			return 1;
		setenv("LIFECYCLE_EXECED", "1", 1);
	}
	snprintf(args, sizeof(args), "{\"k\":%d}", k);
	for (int i = 0; i < e; i++)
		CTRACE_INSTANT(NULL, "e", CTRACE_SCOPE_THREAD, args);
	if (k == 0) {
		puts("done");
		fflush(stdout);
		return 0;
	}
	personality(ADDR_NO_RANDOMIZE);
	snprintf(kb, sizeof(kb), "%d", k - 1);
	snprintf(eb, sizeof(eb), "%d", e);
	execl(self, self, "reexec", kb, eb, (char *)NULL);
	perror("execl");
	return 1;
}

static int vforks(int k)
{
	if (!ready_and_wait())
		return 1;
	for (int i = 0; i < k; i++) {
		pid_t c = vfork();

		if (c == 0) {
			CTRACE_INSTANT(NULL, "child", CTRACE_SCOPE_THREAD, NULL);
			_exit(0);
		}
		if (c < 0)
			return 1;
		waitpid(c, NULL, 0);
		CTRACE_INSTANT(NULL, "parent", CTRACE_SCOPE_THREAD, NULL);
	}
	puts("done");
	fflush(stdout);
	return 0;
}

static atomic_int round_on, round_no, done_no;

struct burster {
	pthread_t thread;
	int quiet;               /* 1000 instants in the middle of each round, not a flood */
	int ms;
	unsigned long long n[64]; /* fired in each round */
};

/*
 * One thread for all the rounds (its buffer numbers on from one trace to
 * the next): the flood fires while its round is on, the quiet one fires
 * 1000 instants once the flood has filled the ring.
 */
static void *burst(void *arg)
{
	struct burster *b = arg;

	for (int r = 1; r < 64; r++) {
		while (atomic_load(&round_no) < r)
			usleep(100);
		if (b->quiet) {
			usleep((useconds_t)b->ms * 500);
			for (int i = 0; i < 1000; i++)
				CTRACE_INSTANT(NULL, "b", CTRACE_SCOPE_THREAD, NULL);
			b->n[r] = 1000;
		} else {
			while (atomic_load_explicit(&round_on, memory_order_acquire)) {
				CTRACE_INSTANT(NULL, "b", CTRACE_SCOPE_THREAD, NULL);
				b->n[r]++;
			}
		}
		atomic_fetch_add(&done_no, 1);
	}
	return NULL;
}

/* Each round: what two threads fired while the round's tracer was attached throughout. */
static int bursts(int ms, int rounds)
{
	static struct burster b[2];

	say_ready();
	for (int i = 0; i < 2; i++) {
		b[i].quiet = i;
		b[i].ms = ms;
		pthread_create(&b[i].thread, NULL, burst, &b[i]);
	}
	for (int r = 1; r <= rounds && r < 64; r++) {
		/* The harness reads each round's trace before it starts the next tracer: 60 s, not 10. */
		int waited_ms = 0;

		for (; !CTRACE_ENABLED() && waited_ms < 60000; waited_ms++)
			usleep(1000);
		if (!CTRACE_ENABLED())
			return 3;
		atomic_store(&round_on, 1);
		atomic_store(&round_no, r);
		usleep((useconds_t)ms * 1000);
		atomic_store(&round_on, 0);
		while (atomic_load(&done_no) < 2 * r)
			usleep(100);
		printf("emitted round=%d n=%llu armed=%d\n", r, b[0].n[r] + b[1].n[r], CTRACE_ENABLED() ? 1 : 0);
		fflush(stdout);
		while (CTRACE_ENABLED())
			usleep(1000);
	}
	return 0;
}

static int failexecs(int k)
{
	char *const argv[] = { "/nonexistent/lifecycle", NULL };

	if (!ready_and_wait())
		return 1;
	for (int i = 0; i < k; i++) {
		CTRACE_INSTANT(NULL, "try", CTRACE_SCOPE_THREAD, NULL);
		execv(argv[0], argv);
	}
	puts("done");
	fflush(stdout);
	return 0;
}

/* Announcements of 1024 places in one region, each time as another thread's taking (born). */
static int forge(long n)
{
	unsigned char *region = calloc(1024, CTRACE__BATCH_HEADER);

	if (!region || !ready_and_wait())
		return 1;
	CTRACE_INSTANT(NULL, "before", CTRACE_SCOPE_THREAD, NULL);
	for (long i = 0; i < n; i++) {
		struct ctrace__batch *b = (struct ctrace__batch *)(void *)(region + (i % 1024) * CTRACE__BATCH_HEADER);

		b->magic = CTRACE__BATCH_MAGIC;
		b->tid = (unsigned)syscall(SYS_gettid);
		b->pid = (unsigned)getpid();
		b->born = (unsigned long long)i + 1;
		ctrace__batch_flush(b, CTRACE__BATCH_HELLO);
	}
	puts("forged");
	fflush(stdout);
	sleep(1);
	CTRACE_INSTANT(NULL, "after", CTRACE_SCOPE_THREAD, NULL);
	puts("done");
	fflush(stdout);
	sleep(4);
	free(region);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "paced")) {
		paced(atoi(argv[2]), atoi(argv[3]));
		return 0;
	}
	if (argc == 4 && !strcmp(argv[1], "churn"))
		return churn(atoi(argv[2]), atoi(argv[3]));
	if (argc == 4 && !strcmp(argv[1], "reexec"))
		return reexec(argv[0], atoi(argv[2]), atoi(argv[3]));
	if (argc == 3 && !strcmp(argv[1], "vfork"))
		return vforks(atoi(argv[2]));
	if (argc == 3 && !strcmp(argv[1], "failexec"))
		return failexecs(atoi(argv[2]));
	if (argc == 3 && !strcmp(argv[1], "forge"))
		return forge(atol(argv[2]));
	if (argc == 4 && !strcmp(argv[1], "bursts"))
		return bursts(atoi(argv[2]), atoi(argv[3]));
	fprintf(stderr, "usage: lifecycle paced MS SECONDS | churn N ALIVE | reexec K E | vfork K | failexec K | forge N | bursts MS ROUNDS\n");
	return 2;
}
