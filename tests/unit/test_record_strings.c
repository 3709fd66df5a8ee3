/* SPDX-License-Identifier: MIT */
/*
 * test_record_strings.c - where a batched literal is read from when its
 * process has exec()d since the event: a child of this test (its literals
 * are this test's, at the same addresses) is looked at, then exec()s
 * /bin/sleep, the BPF side's epoch moving on. A second look at it (the
 * loader's rescan, every 100 ms) must keep the first one while the
 * records of that exec are still on their way: the events before them
 * are the old image's. test_exec saw "(unreadable)" for such a literal
 * about 1 run in 10 under load when the rescan replaced it.
 *
 * And the other way round: a rescan while a dlopen()'s records are on
 * their way (ld.so calls _dl_debug_state twice, so the live epoch is two
 * ahead) must still take the new snapshot, or the library's literals are
 * unreadable once the records are read (test_rewritten_library lost them
 * when the first fix skipped that snapshot).
 *
 * Needs root (reading another process's maps' files), as the tracer does.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "encode/json/chrome_trace.h"
#include "ingest/record_strings.h"

/* In .rodata: mapped read-only from this test's file, in the child too. */
static const char before_exec[] = "before-exec, a literal of the old image";

/* Mappings a child makes when told 'M' (alternately readable and executable: none merge). */
#define MANY_MAPS 6000

/* What the child maps when told 'm': a file standing for a library dlopen()ed. */
static const char in_library[] = "a literal of a library mapped after the first look";

/*
 * A child that does as told, a byte at a time on *go: 'x' execs /bin/sleep,
 * 'm' maps `library` read-only and writes back where, 'M' maps it MANY_MAPS
 * times more; end of file: exits.
 */
static pid_t told_child(int *go, int *back, const char *library)
{
	int to[2], from[2];
	pid_t pid;

	if (pipe(to) || pipe(from))
		fail_msg("pipe");
	pid = fork();
	if (pid == 0) {
		char c;

		close(to[1]);
		close(from[0]);
		while (read(to[0], &c, 1) == 1) {
			if (c == 'x')
				execl("/bin/sleep", "sleep", "2", (char *)NULL);
			if (c == 'm') {
				int fd = open(library, O_RDONLY);
				void *at = fd < 0 ? MAP_FAILED :
						    mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);

				if (write(from[1], &at, sizeof(at)) != sizeof(at))
					_exit(1);
			}
			if (c == 'M') /* many more mappings: a look at them takes milliseconds */
				for (int i = 0, fd = open(library, O_RDONLY); fd >= 0 && i < MANY_MAPS; i++)
					mmap(NULL, 4096, i % 2 ? PROT_READ : PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
		}
		_exit(0);
	}
	close(to[0]);
	close(from[1]);
	*go = to[1];
	*back = from[0];
	return pid;
}

/* A file holding in_library, at path (a mkstemp template), and a told_child() that maps it when told 'm'. */
static pid_t child_with_library(char *path, int *go, int *back)
{
	int fd = mkstemp(path);

	if (fd < 0 || write(fd, in_library, sizeof(in_library)) != sizeof(in_library))
		fail_msg("a file to map");
	close(fd);
	return told_child(go, back, path);
}

/* Waits until /proc/PID/exe is /bin/sleep (or what it links to): the new image is mapped. */
static void wait_exec(pid_t pid)
{
	char path[64], exe[256];

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	for (int i = 0; i < 2000; i++) {
		ssize_t n = readlink(path, exe, sizeof(exe) - 1);

		if (n > 0 && (exe[n] = 0, strstr(exe, "sleep")))
			return;
		usleep(1000);
	}
	fail_msg("the child never exec()d");
}

/* Root reads other processes' mapped files; in CI a skip would hide that it never ran. */
static void require_root(void)
{
	const char *ci = getenv("CI");

	if (geteuid() == 0)
		return;
	if (ci && !strcmp(ci, "true"))
		fail_msg("needs root (CI=true)");
	skip();
}

/* A literal event of pid, at addr, read as a batched one is. */
static bool read_literal(struct record_strings *rs, pid_t pid, const char *addr, char *buf,
			 size_t max, const char **str, size_t *len)
{
	struct ctrace_event ev;
	bool truncated;

	memset(&ev, 0, sizeof(ev));
	ev.kind = CTRACE_KIND_INSTANT;
	ev.tgid = ev.tid = (uint32_t)pid;
	ev.arg[record_name_arg(CTRACE_KIND_INSTANT)] = (uint64_t)(uintptr_t)addr;
	return record_strings_read_late(rs, &ev, record_name_arg(CTRACE_KIND_INSTANT), str, len,
					&truncated, buf, max);
}

/* A link-map or exec record of pid, read: the point of the ring moves to `epoch`. */
static void read_record(struct record_strings *rs, uint32_t kind, pid_t pid, uint32_t epoch)
{
	struct ctrace_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.kind = kind;
	ev.tgid = ev.tid = (uint32_t)pid;
	ev.arg[0] = (uint32_t)pid;
	ev.arg[2] = epoch;
	record_strings_resolve(rs, &ev);
}

/* rs watching the BPF side's arrays as the loader does (exec_began NULL: no exec watch). */
static void strings_init(struct record_strings *rs, struct trace_stats *stats,
			 const volatile uint32_t *epochs, const volatile uint64_t *exec_began)
{
	memset(stats, 0, sizeof(*stats));
	record_strings_init(rs, stats);
	record_strings_watch_epochs(rs, &(struct process_epochs){ epochs, exec_began });
}

/* The told_child pid execs /bin/sleep; back once sleep is mapped. */
static void exec_sleep(int go, pid_t pid)
{
	if (write(go, "x", 1) != 1)
		fail_msg("write");
	wait_exec(pid);
}

/* The told_child pid killed and reaped, its pipes closed. */
static void end_child(pid_t pid, int go, int back)
{
	int status;

	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	close(go);
	close(back);
}

/* The old image's literal, read as a batched event's is, must be read right. */
static void assert_before_exec_read(struct record_strings *rs, const struct trace_stats *stats, pid_t pid)
{
	const char *str = NULL;
	char buf[CTRACE_NAME_MAX];
	size_t len = 0;

	if (!read_literal(rs, pid, before_exec, buf, sizeof(buf) - 1, &str, &len))
		fail_msg("the old image's literal is unreadable (%llu unreadable strings)",
			 (unsigned long long)stats->unreadable_strings);
	assert_int_equal(len, strlen(before_exec));
	assert_memory_equal(str, before_exec, len);
}

static void test_rescan_during_exec_keeps_the_old_image(void **state)
{
	static uint32_t epochs[PROCESS_EPOCH_SLOTS]; /* the BPF side's, as the loader sees them */
	struct trace_stats stats;
	struct record_strings rs;
	const char *str = NULL;
	char buf[CTRACE_NAME_MAX];
	size_t len = 0;
	int go, back;
	pid_t pid;

	(void)state;
	require_root();
	strings_init(&rs, &stats, epochs, NULL);
	pid = told_child(&go, &back, "/");
	record_strings_snapshot(&rs, pid); /* before its attach */
	epochs[(uint32_t)pid % PROCESS_EPOCH_SLOTS]++; /* its exec, as ctrace_exec bumps it */
	exec_sleep(go, pid);
	record_strings_snapshot(&rs, pid); /* the rescan, the exec's record not read yet */

	assert_before_exec_read(&rs, &stats, pid);
	/* Once the exec's record is read, the old image is gone: its address is sleep's now. */
	read_record(&rs, CTRACE_KIND_EXEC, pid, epochs[(uint32_t)pid % PROCESS_EPOCH_SLOTS]);
	end_child(pid, go, back);
	assert_false(read_literal(&rs, pid, before_exec, buf, sizeof(buf) - 1, &str, &len) &&
		     len == strlen(before_exec) && !memcmp(str, before_exec, len));
	record_strings_free(&rs);
}

/*
 * A child looked at, then mapping a file (a library dlopen()ed) and its
 * epoch moving on twice, the dlopen's two records not read yet; looked at
 * again; then its records read and the child gone: the file's string is
 * read from the snapshot of that epoch.
 */
static void test_rescan_while_dlopen_records_are_on_their_way(void **state)
{
	static uint32_t epochs[PROCESS_EPOCH_SLOTS];
	char library[] = "/tmp/test_record_strings.XXXXXX", buf[CTRACE_NAME_MAX];
	const char *str = NULL, *at;
	struct trace_stats stats;
	struct record_strings rs;
	int go, back, status;
	size_t len = 0;
	uint32_t *epoch;
	pid_t pid;
	bool got;

	(void)state;
	require_root();
	strings_init(&rs, &stats, epochs, NULL);
	pid = child_with_library(library, &go, &back);
	epoch = &epochs[(uint32_t)pid % PROCESS_EPOCH_SLOTS];
	record_strings_snapshot(&rs, pid);
	if (write(go, "m", 1) != 1 || read(back, &at, sizeof(at)) != sizeof(at) || at == MAP_FAILED)
		fail_msg("the child mapped nothing");
	*epoch += 2; /* ld.so's RT_ADD and RT_CONSISTENT */
	record_strings_snapshot(&rs, pid); /* the rescan, the records not read yet */
	read_record(&rs, CTRACE_KIND_LINK_MAP, pid, *epoch - 1);
	read_record(&rs, CTRACE_KIND_LINK_MAP, pid, *epoch);
	close(go); /* it exits */
	close(back);
	waitpid(pid, &status, 0);
	got = read_literal(&rs, pid, at, buf, sizeof(buf) - 1, &str, &len);
	unlink(library);
	if (!got)
		fail_msg("the mapped file's string is unreadable (%llu unreadable strings)",
			 (unsigned long long)stats.unreadable_strings);
	assert_int_equal(len, strlen(in_library));
	assert_memory_equal(str, in_library, len);
	record_strings_free(&rs);
}

/* Moves the epoch on once, a little after it is told to: while a look is being taken. */
struct bump {
	volatile uint32_t *epoch;
	volatile int go;
};

static void *bump_soon(void *arg)
{
	struct bump *b = arg;

	while (!b->go)
		;
	usleep(300);
	(*b->epoch)++;
	return NULL;
}

/*
 * A look again in the same epoch (after an attach: the process, armed,
 * runs on) that the epoch moved on during must not replace the exact look
 * of that epoch: its events would then have no true look (CI#7: an exec
 * right after the attach, the old image's literal "(unreadable)").
 */
static void test_inexact_look_keeps_the_exact_one(void **state)
{
	static uint32_t epochs[PROCESS_EPOCH_SLOTS];
	char library[] = "/tmp/test_record_strings.XXXXXX", buf[CTRACE_NAME_MAX];
	const char *str = NULL, *at;
	struct trace_stats stats;
	struct record_strings rs;
	int go, back, status;
	struct bump b = { 0 };
	size_t len = 0;
	pthread_t t;
	pid_t pid;
	bool got;

	(void)state;
	require_root();
	strings_init(&rs, &stats, epochs, NULL);
	pid = child_with_library(library, &go, &back);
	if (write(go, "m", 1) != 1 || read(back, &at, sizeof(at)) != sizeof(at) || at == MAP_FAILED)
		fail_msg("the child mapped nothing");
	if (write(go, "M", 1) != 1)
		fail_msg("write");
	usleep(200000); /* its mappings made */
	b.epoch = &epochs[(uint32_t)pid % PROCESS_EPOCH_SLOTS];
	record_strings_snapshot(&rs, pid); /* exact: nothing moves */
	if (pthread_create(&t, NULL, bump_soon, &b))
		fail_msg("pthread_create");
	b.go = 1;
	record_strings_snapshot_again(&rs, pid); /* the epoch moves on during it */
	pthread_join(t, NULL);
	close(go); /* it exits: its strings are read from the files */
	close(back);
	waitpid(pid, &status, 0);
	got = read_literal(&rs, pid, at, buf, sizeof(buf) - 1, &str, &len);
	unlink(library);
	if (!got)
		fail_msg("the mapped file's string, of the epoch looked at exactly, is unreadable (%llu unreadable strings)",
			 (unsigned long long)stats.unreadable_strings);
	assert_int_equal(len, strlen(in_library));
	assert_memory_equal(str, in_library, len);
	record_strings_free(&rs);
}

/*
 * A look again while an exec is under way: the new image is mapped (the
 * kernel maps it before the epoch moves on, at sched_process_exec) and
 * the exec watch has noted the epoch the exec began in. That look must
 * not stand for the old image, whose events come first: the old image's
 * literal, once the process is gone, is read from the first look's file.
 * CI: test_exec's "before-exec" read "(unreadable)" (about 1 run in 30
 * under ASan), the look again after an attach landing inside the exec.
 */
static void test_look_during_an_exec_keeps_the_old_image(void **state)
{
	static uint32_t epochs[PROCESS_EPOCH_SLOTS];
	static uint64_t exec_began[PROCESS_EPOCH_SLOTS];
	struct trace_stats stats;
	struct record_strings rs;
	int go, back;
	size_t slot;
	pid_t pid;

	(void)state;
	require_root();
	strings_init(&rs, &stats, epochs, exec_began);
	pid = told_child(&go, &back, "/");
	slot = (uint32_t)pid % PROCESS_EPOCH_SLOTS;
	record_strings_snapshot(&rs, pid); /* before its attach */
	/* The exec watch, as the exec starts: one exec begun, in this epoch. */
	exec_began[slot] = 1ull << 32 | (epochs[slot] + 1);
	exec_sleep(go, pid);
	record_strings_snapshot_again(&rs, pid); /* after the attach: the new image, the old epoch */
	end_child(pid, go, back);
	assert_before_exec_read(&rs, &stats, pid);
	record_strings_free(&rs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rescan_during_exec_keeps_the_old_image),
		cmocka_unit_test(test_rescan_while_dlopen_records_are_on_their_way),
		cmocka_unit_test(test_inexact_look_keeps_the_exact_one),
		cmocka_unit_test(test_look_during_an_exec_keeps_the_old_image),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
