// SPDX-License-Identifier: MIT
/*
 * The batched path's watermark when a thread's buffer is found gone
 * (userspace/ingest/batch_path.c). A read that finds the process gone
 * (ESRCH) retires its streams, but each thread's last events may still be
 * on their way: the kernel side copied its buffer at its death (a BATCH
 * record, why EXITING) before the read failed, into the ring, which the
 * loader has not drained past that read yet. So a retired stream still
 * holds the other streams' events back until the ring is drained past the
 * read that found it gone, and no longer: the model gets every event once,
 * in time order (merge.late 0, metadata.batch.out_of_order).
 *
 * And a buffer taken over by the next thread while the loader reads it:
 * each thread's events are its own, once.
 *
 * No BPF and no root: the records are built here as the kernel side sends
 * them, the buffers' bytes laid out as usdt/ctrace_batch.h says, with a
 * TSC clock of one tick a nanosecond; the process is a child that has
 * exited and been reaped, so that every read of it fails as the loader's
 * did.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ctrace_record.h"
#include "ingest/batch_path.h"
#include "ingest/batch_split.h"
#include "ingest/remote_read.h"
#include "model/trace_stats.h"

/* Events a stream's copy holds: ts first, first + STEP, ... */
#define EVENTS 11
#define STEP 10

/* Two threads' buffers, at addresses the (gone) process could have had them. */
#define BUF_A 0x7f0000100000ull
#define BUF_B 0x7f0000200000ull

struct seen {
	uint64_t ts;
	uint32_t tid;
	char name[16];
};

static struct seen out[4 * EVENTS];
static size_t n_out;

/* The model: what it was handed, in its order. */
static void model(void *ctx, const struct ctrace_event *ev)
{
	struct seen *s;

	(void)ctx;
	if (n_out == sizeof(out) / sizeof(out[0]))
		fail_msg("more events handed on than were sent");
	s = &out[n_out++];
	s->ts = ev->ts_ns;
	s->tid = ev->tid;
	assert_true(ev->name_len < sizeof(s->name));
	memcpy(s->name, ev->name, ev->name_len);
	s->name[ev->name_len] = '\0';
}

/*
 * The process id of a child that has exited and been reaped: reads of it
 * fail (ESRCH). Were the id taken again meanwhile, the new process would
 * not have the buffers' headers at their addresses: gone all the same.
 */
static uint32_t gone_pid(void)
{
	pid_t pid = fork();
	int status;

	assert_true(pid >= 0);
	if (pid == 0)
		_exit(0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	return (uint32_t)pid;
}

/*
 * A copy of a thread's buffer as ctrace_batch.h lays it out: the 64-byte
 * header, then `count` instants stamped first_ts, first_ts + STEP, ...,
 * each with an inline name "<prefix><i>" (no literal: nothing to read
 * from the process) and its scope as the small byte. Returns its bytes.
 */
static size_t buffer_copy(unsigned char *b, uint32_t pid, uint32_t tid, uint64_t born, unsigned count,
			  uint64_t first_ts, char prefix)
{
	uint32_t magic = BATCH_MAGIC, len = 0, version = 1;
	uint64_t first_seq = 0;

	memset(b, 0, BATCH_HEADER_BYTES);
	for (unsigned i = 0; i < count; i++) {
		unsigned char *e = b + BATCH_HEADER_BYTES + len;
		uint64_t tsc = first_ts + (uint64_t)i * STEP;
		char name[8];
		uint16_t nlen = (uint16_t)snprintf(name, sizeof(name), "%c%u", prefix, i), alen = 0;

		memset(e, 0, 16 + 8);
		memcpy(e, &tsc, 8);
		e[8] = CTRACE_KIND_INSTANT;
		e[9] = BATCH_NAME_INLINE | BATCH_SMALL2;
		e[10] = 0; /* no argument word: the name inline, the scope in the small byte */
		e[11] = 't';
		memcpy(e + 12, &nlen, 2);
		memcpy(e + 14, &alen, 2);
		memcpy(e + 16, name, nlen);
		len += 16 + ((nlen + 7u) & ~7u);
	}
	memcpy(b, &magic, 4);
	memcpy(b + 4, &tid, 4);
	memcpy(b + 8, &first_seq, 8);
	memcpy(b + 16, &len, 4);
	memcpy(b + 20, &count, 4);
	memcpy(b + 32, &version, 4);
	memcpy(b + 36, &pid, 4);
	memcpy(b + 48, &born, 8);
	return BATCH_HEADER_BYTES + len;
}

/* A BATCH record of the ring, stamped ts, of that copy of thread tid's buffer at buf; into the batch path. */
static void batch_record(struct batch_path *bp, uint64_t ts, uint32_t pid, uint32_t tid, uint64_t buf,
			 uint64_t born, uint64_t why, unsigned count, uint64_t first_ts, char prefix)
{
	static unsigned char rec[sizeof(struct ctrace_record) + CTRACE_BATCH_BYTES];
	struct ctrace_record r;

	memset(&r, 0, sizeof(r));
	r.kind = CTRACE_KIND_BATCH;
	r.ts_ns = ts;
	r.tgid = pid;
	r.tid = tid;
	r.arg[0] = buf;
	r.arg[1] = buffer_copy(rec + sizeof(r), pid, tid, born, count, first_ts, prefix);
	r.arg[2] = why;
	r.arg[3] = count; /* first_seq 0: the number after its last event */
	memcpy(rec, &r, sizeof(r));
	assert_true(batch_path_record(bp, rec, sizeof(r) + r.arg[1]));
}

struct fixture {
	struct tsc_clock tsc;
	struct tsc_piece piece;
	struct trace_stats stats;
	uint64_t stop_ns;
	struct batch_path bp;
	uint32_t pid, tid_a, tid_b;
};

/*
 * Two threads A and B of a process that is gone by the loader's first
 * read. Both announced their buffers early (HELLO, at 10 and 20); B
 * flushed its full buffer (events 100..200) at 205. A's events (50..150)
 * are only in the kernel side's copy at A's death (EXITING, at 215),
 * which the ring holds, not yet drained: the last round that emptied the
 * ring began at 210. The loader's read at 220 finds both gone.
 */
static void gone_before_the_read(struct fixture *f)
{
	memset(f, 0, sizeof(*f));
	n_out = 0;
	/* One tick a nanosecond, from 0 on: an event's TSC is its time. */
	f->piece = (struct tsc_piece){ 0, 0, 1.0 };
	f->tsc.pieces = &f->piece;
	f->tsc.n = f->tsc.cap = 1;
	f->tsc.ticks_per_ns = 1.0;
	f->pid = gone_pid();
	f->tid_a = f->pid;
	f->tid_b = f->pid + 1;
	batch_path_init(&f->bp, true, &f->tsc, &f->stats, &f->stop_ns, 0, model, NULL);

	batch_record(&f->bp, 10, f->pid, f->tid_a, BUF_A, 5, CTRACE_BATCH_WHY_HELLO, 0, 0, 'A');
	batch_record(&f->bp, 20, f->pid, f->tid_b, BUF_B, 6, CTRACE_BATCH_WHY_HELLO, 0, 0, 'B');
	batch_record(&f->bp, 205, f->pid, f->tid_b, BUF_B, 6, CTRACE_BATCH_WHY_FULL, EVENTS, 100, 'B');
	batch_path_tick(&f->bp, 220, 210);
}

static void teardown(struct fixture *f)
{
	batch_path_free(&f->bp);
	remote_read_end();
}

/* Each of the stream's events exactly once in what the model saw. */
static void each_once(char prefix)
{
	for (unsigned i = 0; i < EVENTS; i++) {
		char name[8];
		unsigned times = 0;

		snprintf(name, sizeof(name), "%c%u", prefix, i);
		for (size_t k = 0; k < n_out; k++)
			times += !strcmp(out[k].name, name);
		if (times != 1)
			fail_msg("%s handed on %u times", name, times);
	}
}

static void in_time_order(void)
{
	for (size_t k = 1; k < n_out; k++)
		if (out[k].ts < out[k - 1].ts)
			fail_msg("%s (ts %llu) handed on after %s (ts %llu)", out[k].name,
				 (unsigned long long)out[k].ts, out[k - 1].name, (unsigned long long)out[k - 1].ts);
}

/*
 * The read at 220 retires both streams; the ring drained to 210 does not
 * let B's events go, nor does a later drain from 218: A's copy at its
 * death (215) may be in what is left. Once it came and the ring is
 * drained past the read (225), A's and B's events go, interleaved in time
 * order, none late.
 */
static void test_gone_thread_last_copy_in_order(void **state)
{
	struct fixture f;
	size_t after_read, after_drain_before_read;

	(void)state;
	gone_before_the_read(&f);
	after_read = n_out;
	batch_path_tick(&f.bp, 222, 218);
	after_drain_before_read = n_out;
	batch_record(&f.bp, 215, f.pid, f.tid_a, BUF_A, 5, CTRACE_BATCH_WHY_EXITING, EVENTS, 50, 'A');
	batch_path_tick(&f.bp, 230, 225);

	in_time_order();
	assert_int_equal(f.bp.merge.late, 0);
	each_once('A');
	each_once('B');
	assert_int_equal(n_out, 2 * EVENTS);
	/* Nothing went before the ring was drained past the read that found the threads gone. */
	assert_int_equal(after_read, 0);
	assert_int_equal(after_drain_before_read, 0);

	batch_path_finish(&f.bp, -1);
	assert_int_equal(n_out, 2 * EVENTS);
	assert_int_equal(f.stats.merge_late, 0);
	assert_int_equal(f.bp.lost, 0);
	teardown(&f);
}

/*
 * ...and no longer: a thread whose last copy never comes (A: its exit
 * copy lost) holds nobody back once the ring is drained past the read.
 * B's events, and a per-event record's (222), go at the tick that says
 * the ring was drained from 225; nothing from before is held.
 */
static void test_gone_thread_holds_only_until_the_ring_passes_the_read(void **state)
{
	struct fixture f;
	struct ctrace_event ev;

	(void)state;
	gone_before_the_read(&f);
	memset(&ev, 0, sizeof(ev));
	ev.ts_ns = 222;
	ev.tgid = f.pid;
	ev.tid = f.tid_b;
	ev.kind = CTRACE_KIND_INSTANT;
	ev.arg[2] = 't';
	ev.name = "per-event";
	ev.name_len = strlen(ev.name);
	ev.args = "";
	batch_path_push(&f.bp, &ev);
	batch_path_tick(&f.bp, 230, 225);

	assert_int_equal(n_out, EVENTS + 1);
	in_time_order();
	each_once('B');
	assert_string_equal(out[EVENTS].name, "per-event");
	assert_int_equal(f.bp.merge.late, 0);
	teardown(&f);
}

/*
 * A thread's buffer taken over by the next thread between the loader's
 * read of its header and its read of its events (ctrace__batch_start: a
 * buffer whose thread has exited goes to the next thread that starts).
 * The old thread never flushed it, so its first_seq was 0 and the new
 * thread's is 0 again: that number alone does not show the takeover. The
 * loader's reads are of this process's own memory, and the takeover is
 * made by the test's remote_read (linked in place of the loader's: see the
 * Makefile) just before the events' read goes through.
 */
static unsigned char taken_over[CTRACE_BATCH_BYTES] __attribute__((aligned(64)));
static struct {
	bool armed;
	uint32_t pid, tid;
	uint64_t born;
} takeover;

ssize_t __real_remote_read(pid_t pid, void *to, uint64_t addr, size_t n);
ssize_t __wrap_remote_read(pid_t pid, void *to, uint64_t addr, size_t n);

ssize_t __wrap_remote_read(pid_t pid, void *to, uint64_t addr, size_t n)
{
	if (takeover.armed && addr == (uintptr_t)taken_over + BATCH_HEADER_BYTES) {
		/* The new thread: its header, then 2 events over the old thread's first 2. */
		buffer_copy(taken_over, takeover.pid, takeover.tid, takeover.born, 2, 300, 'B');
		takeover.armed = false;
	}
	return __real_remote_read(pid, to, addr, n);
}

/*
 * Thread A (born 5) announced the buffer at 10 and put events A0..A2 in it
 * (at 50..70), then exited: the kernel side's copy at its death (EXITING,
 * 240) is in the ring, not yet drained when the loader reads A's buffer at
 * 320. Thread tid_b (born 250, announced at 260) takes the buffer over in
 * the middle of that read and puts B0, B1 (300, 310) in it; it exits at
 * 330. Each thread's events are handed on once, as its own.
 */
static void takeover_during_a_read(uint32_t tid_b)
{
	struct fixture f;
	uint64_t buf = (uintptr_t)taken_over;

	memset(&f, 0, sizeof(f));
	n_out = 0;
	f.piece = (struct tsc_piece){ 0, 0, 1.0 };
	f.tsc.pieces = &f.piece;
	f.tsc.n = f.tsc.cap = 1;
	f.tsc.ticks_per_ns = 1.0;
	f.pid = (uint32_t)getpid();
	f.tid_a = f.pid;
	f.tid_b = tid_b;
	batch_path_init(&f.bp, true, &f.tsc, &f.stats, &f.stop_ns, 0, model, NULL);

	batch_record(&f.bp, 10, f.pid, f.tid_a, buf, 5, CTRACE_BATCH_WHY_HELLO, 0, 0, 'A');
	buffer_copy(taken_over, f.pid, f.tid_a, 5, 3, 50, 'A');
	takeover = (typeof(takeover)){ true, f.pid, f.tid_b, 250 };
	batch_path_tick(&f.bp, 320, 235);
	assert_false(takeover.armed); /* the read came to A's events */

	batch_record(&f.bp, 240, f.pid, f.tid_a, buf, 5, CTRACE_BATCH_WHY_EXITING, 3, 50, 'A');
	batch_record(&f.bp, 260, f.pid, f.tid_b, buf, 250, CTRACE_BATCH_WHY_HELLO, 0, 0, 'B');
	batch_record(&f.bp, 330, f.pid, f.tid_b, buf, 250, CTRACE_BATCH_WHY_EXITING, 2, 300, 'B');
	batch_path_tick(&f.bp, 400, 400);
	batch_path_finish(&f.bp, -1);

	for (size_t k = 0; k < n_out; k++) {
		uint32_t owner = out[k].name[0] == 'A' ? f.tid_a : f.tid_b;

		if (out[k].tid != owner)
			fail_msg("%s (ts %llu) handed on as thread %u's, not %u's", out[k].name,
				 (unsigned long long)out[k].ts, out[k].tid, owner);
	}
	for (unsigned i = 0; i < 3 + 2; i++) {
		char name[8];
		unsigned times = 0;

		snprintf(name, sizeof(name), "%c%u", i < 3 ? 'A' : 'B', i < 3 ? i : i - 3);
		for (size_t k = 0; k < n_out; k++)
			times += !strcmp(out[k].name, name);
		if (times != 1)
			fail_msg("%s handed on %u times", name, times);
	}
	in_time_order();
	assert_int_equal(f.bp.lost, 0);
	teardown(&f);
}

/* The next thread has another tid: its events must not be the dead thread's. */
static void test_takeover_during_a_read_by_another_thread(void **state)
{
	(void)state;
	takeover_during_a_read((uint32_t)getpid() + 1);
}

/* The next thread has the dead one's tid, reused: only its `born` tells them apart. */
static void test_takeover_during_a_read_by_a_reused_tid(void **state)
{
	(void)state;
	takeover_during_a_read((uint32_t)getpid());
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gone_thread_last_copy_in_order),
		cmocka_unit_test(test_gone_thread_holds_only_until_the_ring_passes_the_read),
		cmocka_unit_test(test_takeover_during_a_read_by_another_thread),
		cmocka_unit_test(test_takeover_during_a_read_by_a_reused_tid),
	};

	return cmocka_run_group_tests_name("batch_path", tests, NULL, NULL);
}
