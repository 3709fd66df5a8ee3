// SPDX-License-Identifier: MIT
/*
 * session_loop.c - the loop of a session, one chore a function: take the
 * records, report drops and processes left out, push the output out,
 * attach what appeared, rescan the targets, decide to stop; then the stop
 * (detach, drain, the model finished).
 *
 * One record's way (session_take_record): record_decode.c (decode) ->
 * record_strings.c (strings resolved) -> trace_model.c (the model), and
 * the session's own notes (a process to attach, a dlopen() under way).
 */
#include "session/session.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <bpf/libbpf.h>
#include "ctrace.skel.h"
#include "attach/batch_watch.h"
#include "capture/capture_journal.h"
#include "model/model_facts.h"
#include "ingest/remote_read.h"
#include "lib/term_safe.h"
#include "session/traced_set.h"
#include "session/tracer_priority.h"
#include "ingest/usdt_strings.h"

/*
 * libbpf's consume goes on while records keep coming: under a flood it
 * would never return, and Ctrl-C, -d, the drop reports and the 50 ms
 * flushes would wait. So a round ends after ROUND_NS of work (or at the
 * deadline), then the loop does its chores and comes back. A count of
 * records would not do: with the CPUs saturated by the target the tracer
 * gets a small share of one, and 65536 records took seconds (-d 2 lasted
 * 6 s). The clock is read every CLOCK_EVERY records (a vDSO call, ~25 ns,
 * against ~1 us a record).
 */
#define ROUND_NS (10 * 1000000ull)
#define CLOCK_EVERY 16
#define END_OF_ROUND (-ECANCELED)

static bool round_over(struct session *s)
{
	return ++s->batch % CLOCK_EVERY == 0 && session_now_ns(CLOCK_MONOTONIC) >= s->round_end_ns;
}

static void round_begin(struct session *s, uint64_t deadline)
{
	uint64_t now = session_now_ns(CLOCK_MONOTONIC);

	s->batch = 0;
	s->round_end_ns = now + ROUND_NS;
	if (deadline && deadline < s->round_end_ns)
		s->round_end_ns = deadline > now ? deadline : now;
}

/*
 * What a record tells the session itself: processes to attach (a fork, an
 * exec) and a dlopen() under way. False when the record has nothing for
 * the trace.
 */
bool session_note_process_change(struct session *s, const struct ctrace_event *ev)
{
	if (s->replay)
		return ev->kind != CTRACE_KIND_LINK_MAP; /* a conversion attaches nothing */
	if (ev->kind == CTRACE_KIND_FORK || ev->kind == CTRACE_KIND_EXEC)
		session_add_pending(s, (int)(ev->kind == CTRACE_KIND_FORK ? ev->arg[1] : ev->arg[0]));
	if (ev->kind == CTRACE_KIND_LINK_MAP) {
		/*
		 * A dlopen() under way: its library may be used the moment it
		 * returns, so its probes are attached now, not after the rest of
		 * this round's records. Nothing to show in the trace.
		 */
		if (!s->stop_ns && targets_has(&s->targets, (int)ev->arg[0]))
			session_attach_process(s, (int)ev->arg[0]);
		return false;
	}
	if (ev->kind == CTRACE_KIND_EXEC && ev->arg[1] && ev->arg[1] != ev->arg[0]) {
		/* exec() from a thread: the links bound to the old main thread are dead. */
		attach_forget_process(&s->att, (int)ev->arg[0]);
		link_map_watch_forget(&s->dl, (int)ev->arg[0]);
	}
	return true;
}

/* The merge hands events on in time order: to the model. */
static void model_event(void *session, const struct ctrace_event *ev)
{
	struct session *s = session;

	if (ev->kind == CTRACE_KIND_LINK_MAP)
		return; /* for the session and the batches' literals only */
	model_facts_event(&s->model, ev);
	trace_model_event(&s->model, ev);
}

/* A batched event's literal, read as a late string is. */
static bool batch_read_str(void *session, const struct ctrace_event *ev, int arg, const char **str,
			   size_t *len, bool *truncated, char *buf, size_t max)
{
	struct session *s = session;

	return record_strings_read_late(&s->strings, ev, arg, str, len, truncated, buf, max);
}

void session_begin_batches(struct session *s)
{
	batch_path_init(&s->bpath, !s->o->no_batch, &s->tsc, &s->stats, &s->stop_ns,
			s->out->facts.start_mono_ns, model_event, s);
	s->out->facts.event_path = s->o->no_batch ? "per_event" : "batched";
	s->out->facts.event_path_why = s->o->event_path_why;
	s->bpath.read_str = batch_read_str;
	s->bpath.read_ctx = s;
	if (s->cap) /* the batches go undecoded into the capture, with the loader's reads of buffers */
		capture_watch_batches(s);
}

void session_decoded_record(struct session *s, const void *data, size_t size)
{
	struct ctrace_event ev;
	bool shown;

	if (s->bpath.on && batch_path_record(&s->bpath, data, size))
		return;
	if (record_decode(data, size, &ev) < 0) {
		s->stats.bad_records++;
		return;
	}
	if (s->o->stack_depth) { /* symbolized now, while the process's objects are as they were */
		size_t len = 0;
		const void *part = record_stack_part(data, size, &len);

		if (part)
			ev.sf = stack_trace_event(&s->stacks, &ev, part, len);
	}
	if (s->stop_ns && ev.ts_ns > s->stop_ns) {
		s->stats.records_after_stop++;
		return;
	}
	record_strings_resolve(&s->strings, &ev);
	usdt_strings_resolve(&s->strings, &ev, s->usdt_strings);
	shown = session_note_process_change(s, &ev);
	if (s->bpath.on)
		batch_path_push(&s->bpath, &ev); /* in time order; a LINK_MAP forgets batched literals */
	else if (shown)
		model_event(s, &ev);
}

int session_take_record(void *session, void *data, size_t size)
{
	struct session *s = session;

	if (s->cap) {
		/* A capture: the bytes moved, nothing decoded (session_capture.c). */
		capture_take_record(s, data, size);
		return round_over(s) ? END_OF_ROUND : 0;
	}
	if (s->counting_only) {
		/* A batch's events are counted lost by their numbers. */
		if (!s->bpath.on || !batch_path_count_unread(&s->bpath, data, size))
			s->unread_at_stop++;
		return 0;
	}
	s->stats.records++;
	session_decoded_record(s, data, size);
	/* This record is taken (libbpf moved past it before calling us). */
	return round_over(s) ? END_OF_ROUND : 0;
}

/* A round of records: 0, or -errno when the ring buffer cannot be read (said). */
static int take_records(struct session *s)
{
	uint64_t round_start = session_now_ns(CLOCK_MONOTONIC);
	int err;

	round_begin(s, s->deadline_ns);
	/*
	 * The BPF side wakes us only once a share of the ring is waiting:
	 * take what is there on every round anyway, so events arrive within
	 * ~10 ms. Behind (the last round ran out of time), no wait at all.
	 */
	err = ring_buffer__poll(s->rb, s->ring_behind ? 0 : 10);
	if (err >= 0 || err == -EINTR)
		err = ring_buffer__consume(s->rb);
	s->ring_behind = err == END_OF_ROUND;
	/* Idle buffers read, and what is behind the watermark handed on. */
	batch_path_rediscover(&s->bpath, s->skel->bss->batch_dropped, false, session_now_ns(CLOCK_MONOTONIC));
	{
		uint64_t now = session_now_ns(CLOCK_MONOTONIC), drained = err == END_OF_ROUND ? 0 : round_start;

		batch_path_tick(&s->bpath, now, drained);
		if (s->cap) { /* the conversion's merge moves on where this one would have */
			uint64_t tick[2] = { now, drained };

			capture_name_new_threads(s);
			capture_put(s->cap, CAPTURE_TICK, tick, sizeof(tick));
			capture_check_backlog(s);
		}
	}
	if (err == END_OF_ROUND)
		err = 0; /* more may be waiting: the next round takes it */
	if (err < 0 && err != -EINTR) {
		fprintf(stderr, "ctrace-bpf: reading events failed: %s\n", strerror(-err));
		return err;
	}
	return 0;
}

uint64_t session_kernel_dropped(const struct session *s)
{
	return s->skel ? s->skel->bss->dropped : 0;
}

/* Says in the trace, at about the time it happened, that records were lost. */
void session_report_drops(struct session *s, uint64_t kernel_dropped, uint64_t now)
{
	/* Records left unread at the end of the drain are lost too, and said so. */
	uint64_t total = kernel_dropped + s->unread_at_stop + s->bpath.lost;

	if (s->cap) { /* every round: the conversion's own losses (batches) are said at these times */
		uint64_t d[2] = { now, kernel_dropped + s->shed_events }; /* shed: lost as the ring's are */

		capture_put(s->cap, CAPTURE_DROPS, d, sizeof(d));
	}
	if (total <= s->drops_reported)
		return; /* (a forged capture's count may go down: nothing said) */
	/* Found after the stop, they happened before it: nothing is stamped later. */
	if (s->stop_ns && now > s->stop_ns)
		now = s->stop_ns;
	model_facts_process(&s->model, (uint32_t)s->first_pid);
	trace_model_drops(&s->model, (uint32_t)s->first_pid, now, total - s->drops_reported, total);
	s->drops_reported = total;
}

static void report_drops(struct session *s)
{
	session_report_drops(s, session_kernel_dropped(s), session_now_ns(CLOCK_MONOTONIC));
}

/* Says once in the trace, and on stderr, that processes were left out of the full table. */
static void report_untraced(struct session *s)
{
	uint64_t total = s->skel->bss->traced_full + s->untraced_by_loader;
	uint64_t now = session_now_ns(CLOCK_MONOTONIC);

	if (total == s->untraced_reported)
		return;
	if (!s->untraced_reported)
		fprintf(stderr, "ctrace-bpf: the table of traced processes is full: new processes are not traced (counted in metadata.untraced_processes)\n");
	if (s->stop_ns && now > s->stop_ns)
		now = s->stop_ns;
	if (s->cap) {
		uint64_t u[2] = { now, total };

		capture_put(s->cap, CAPTURE_UNTRACED, u, sizeof(u));
	}
	traced_set_report_full(s->model.out, (uint32_t)s->first_pid, now, total - s->untraced_reported, total);
	s->untraced_reported = total;
	s->stats.untraced_processes = total;
}

/* Processes the kernel told of: a followed child, an exec, a dlopen. */
static void attach_what_appeared(struct session *s)
{
	for (size_t i = 0; i < s->n_pending; i++) {
		int pid = s->pending[i];

		if (targets_has(&s->targets, pid))
			session_attach_process(s, pid); /* exec: the new image */
		else
			session_add_target(s, pid);
		/* A new image has its own dynamic linker. */
		link_map_watch_process(&s->dl, s->skel->progs.ctrace_link_map, s->att.multi, pid);
		model_facts_threads(&s->model, (uint32_t)pid);
	}
	s->n_pending = 0;
}

/*
 * How often the maps are looked at again: 100 ms, or CTRACE_RESCAN_MS (for
 * tests: an hour leaves the dynamic linker's hook alone to find a dlopen()).
 */
static uint64_t rescan_interval_ns(void)
{
	static uint64_t ns;
	const char *v;

	if (!ns) {
		v = getenv("CTRACE_RESCAN_MS");
		ns = (v && atol(v) > 0 ? (uint64_t)atol(v) : 100) * 1000000ull;
	}
	return ns;
}

/* Every 100 ms: libraries loaded since (dlopen), and the names of new threads. */
static void rescan(struct session *s, uint64_t now)
{
	if (now < s->next_scan_ns)
		return;
	for (size_t i = 0; i < s->targets.n; i++) {
		if (s->targets.v[i].gone)
			continue;
		session_attach_process(s, s->targets.v[i].pid);
		model_facts_threads(&s->model, (uint32_t)s->targets.v[i].pid);
	}
	tsc_clock_update(&s->tsc);
	if (s->cap)
		capture_note_tsc(&s->tsc, &s->cap_tsc_written);
	s->next_scan_ns = now + rescan_interval_ns();
}

/* A target that was waiting for probes: the first have come. */
static void say_first_probes(struct session *s)
{
	struct trace_facts *facts = &s->out->facts;

	if (facts->probes_attached || !s->att.sites)
		return;
	facts->probes_attached = s->att.sites;
	if (!s->o->quiet)
		fprintf(stderr, "ctrace-bpf: tracing process %d (%s): %u probes in %u objects\n",
			s->first_pid, TERM_SAFE(s->target.comm), s->att.sites, s->att.objects_with_probes);
}

/*
 * The stop is short and bounded (the detach, the drain, the file's end),
 * and a target that keeps every CPU busy would stretch it many times, and
 * the deadline's round too: from BOOST_BEFORE_NS before the deadline (or
 * the stop, whatever its cause), the tracer runs at a high priority
 * (tracer_priority.h).
 */
#define BOOST_BEFORE_NS (50 * 1000000ull)

static void stop_at_high_priority(struct session *s)
{
	tracer_priority_raise();
	s->boosted = true;
}

static const char *signal_reason(int sig)
{
	return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "SIGHUP";
}

/* Why to stop now (the trace's stop_reason), or NULL to go on. */
static const char *stop_reason(struct session *s, uint64_t now)
{
	if (session_stop_signal)
		return signal_reason(session_stop_signal);
	if (s->deadline_ns && now + BOOST_BEFORE_NS >= s->deadline_ns)
		stop_at_high_priority(s);
	if (s->deadline_ns && now >= s->deadline_ns)
		return "duration elapsed";
	/* The file's end first: it cut the trace short, whatever happened after (the target's exit). */
	if (s->out->rot.full)
		return "--max-size reached";
	if (s->out->w.err)
		return "write error";
	if (s->cap && s->cap->err)
		return "write error";
	/*
	 * The kernel's table, not only the targets the loader heard of: a
	 * child whose fork notice is still in the ring keeps the trace on.
	 */
	if (!s->o->exe && targets_all_gone(&s->targets) &&
	    !traced_set_any_alive(bpf_map__fd(s->skel->maps.traced_tgids)))
		return s->targets.n > 1 ? "every traced process exited" : "target exited";
	return NULL;
}

/* The status line's figures, twice a second on a terminal (status_line.h). */
static void show_status(struct session *s, uint64_t now)
{
	struct status_figures f = {
		.events = s->out->tf.events,
		.dropped = s->skel->bss->dropped + s->unread_at_stop + s->bpath.lost,
		.bytes = s->out->w.written + s->out->rot.bytes_before, /* every file of a rotation */
	};

	if (s->cap) { /* a capture: its events, counted undecoded, and its bytes */
		f.events = s->captured_events + s->bpath.captured;
		f.bytes = s->cap->written;
		f.captured = true;
	}

	if (s->status.fd < 0 || now < s->status.next_ns)
		return;
	for (size_t i = 0; i < s->targets.n; i++)
		f.processes += !s->targets.v[i].gone;
	status_line_tick(&s->status, now, &f);
}

/* --ring: a dump on SIGUSR1 at once, on CTRACE_TRIGGER at most once a FLIGHT_TRIGGER_INTERVAL_NS. */
static void flight_dumps(struct session *s, uint64_t now)
{
	struct trace_output *out = s->out;
	const char *why = NULL;

	if (!out->ring)
		return;
	if (session_dump_signal) {
		session_dump_signal = 0;
		why = "SIGUSR1";
	} else if (out->fr.triggers &&
		   (!out->last_dump_ns || now >= out->last_dump_ns + FLIGHT_TRIGGER_INTERVAL_NS)) {
		why = "CTRACE_TRIGGER";
	}
	/* Opened first: the spans open now are written for this dump only once it can be written. */
	if (why && output_dump_open(out, now) == 0)
		output_dump(out, &s->stats, why, trace_model_write_open(&s->model, now), now, s->o->quiet);
}

void session_run(struct session *s)
{
	const char *why = NULL;

	/* The load and attach are done: equal terms while it traces, until the stop nears. */
	tracer_priority_watch(s->deadline_ns > BOOST_BEFORE_NS ? s->deadline_ns - BOOST_BEFORE_NS : s->deadline_ns,
			      &session_stop_signal);
	tracer_priority_restore();

	while (!why) {
		uint64_t now;

		if (take_records(s) < 0) {
			why = "error reading events";
			break;
		}
		report_drops(s);
		report_untraced(s);
		now = session_now_ns(CLOCK_MONOTONIC);
		output_flush_every(s->out, now);
		if (s->cap)
			capture_push(s->cap, now);
		flight_dumps(s, now);
		show_status(s, now);
		attach_what_appeared(s);
		rescan(s, now);
		say_first_probes(s);
		why = stop_reason(s, now);
	}
	s->stats.stop_reason = why;
}

/*
 * What the ring buffer still holds at the stop, taken for at most a share
 * of the run (-d S: S/80, so that -d stays within 10% with the detach and
 * the file's end; otherwise 2 s), however little CPU the target leaves us.
 * What is left then is counted as dropped without being decoded (~20 ns a
 * record), so the file ends on time and says what it lost.
 */
static void drain(struct session *s, double duration)
{
	uint64_t budget = duration > 0 ? (uint64_t)(duration * 1e9 / 80) : 2000000000ull;
	uint64_t end;
	int err;

	if (budget < 20000000ull)
		budget = 20000000ull;
	end = session_now_ns(CLOCK_MONOTONIC) + budget;
	do {
		round_begin(s, end);
		err = ring_buffer__consume(s->rb);
	} while (err == END_OF_ROUND && session_now_ns(CLOCK_MONOTONIC) < end);
	if (err == END_OF_ROUND) {
		s->counting_only = true;
		ring_buffer__consume(s->rb);
		s->counting_only = false;
	}
}

/*
 * The stop: every probe goes, and the linkers' hooks, in threads of their
 * own. Each close waits for an RCU grace period; one after the other, the
 * hooks' and the probes' grace periods would add up.
 */
static void *detach_hooks(void *arg)
{
	link_map_watch_free(arg);
	return NULL;
}

static void *detach_probes(void *arg)
{
	attachment_free(arg);
	return NULL;
}

static void consume_ring(void *rb)
{
	ring_buffer__consume(rb);
}

void session_stop(struct session *s)
{
	struct trace_facts *facts = &s->out->facts;
	pthread_t detacher[3];
	bool detaching[3];

	/*
	 * The stop is now: spans still open end here. Then detach, so that
	 * nothing new arrives, and take what is left.
	 */
	s->stats.stop_mono_ns = session_now_ns(CLOCK_MONOTONIC);
	s->stop_ns = s->stats.stop_mono_ns;
	if (s->cap)
		capture_put(s->cap, CAPTURE_STOP, &s->stop_ns, sizeof(s->stop_ns));
	status_line_end(&s->status);
	s->skel->bss->stopping = true;
	stop_at_high_priority(s);
	tracer_priority_watch_end();
	/* Buffers whose announcement never came (dropped, or a vfork() child's the kernel did not show us) too. */
	batch_path_rediscover(&s->bpath, s->skel->bss->batch_dropped, true, session_now_ns(CLOCK_MONOTONIC));
	batch_path_stop(&s->bpath, consume_ring, s->rb); /* every buffer up to the stop, before the detach */
	/* Every probe attached in the course of the trace (libraries loaded later too). */
	facts->probes_attached = s->att.sites;
	facts->objects_with_probes = s->att.objects_with_probes;
	if (!s->o->no_batch)
		facts->death_watch = batch_watch_mode();
	/*
	 * The detach (one RCU grace period a link, 0.2 s with every CPU busy)
	 * and the drain of what the ring holds overlap: nothing new is recorded
	 * once `stopping` is seen. A record whose program was under way then
	 * (a sleepable one, in a page fault) is in the ring once the detach
	 * is done: the last consume takes it.
	 */
	detaching[0] = pthread_create(&detacher[0], NULL, detach_hooks, &s->dl) == 0;
	if (!detaching[0])
		detach_hooks(&s->dl);
	detaching[1] = pthread_create(&detacher[1], NULL, detach_probes, &s->att) == 0;
	if (!detaching[1])
		detach_probes(&s->att);
	/* The batch buffers' death watches too (five links): their grace periods overlap the others'. */
	detaching[2] = pthread_create(&detacher[2], NULL, batch_watch_stop, s->skel) == 0;
	if (!detaching[2])
		batch_watch_stop(s->skel);
	drain(s, s->o->duration);
	output_flush_to_disk(s->out);
	for (int i = 0; i < 3; i++)
		if (detaching[i])
			pthread_join(detacher[i], NULL);
	s->counting_only = s->unread_at_stop > 0;
	round_begin(s, 0);
	while (ring_buffer__consume(s->rb) == END_OF_ROUND)
		round_begin(s, 0);
	s->counting_only = false;
	if (s->cap && !s->o->no_batch) {
		capture_name_new_threads(s); /* the model is handed the rest now: named as it would be */
		capture_write_unseen(s, bpf_map__fd(s->skel->maps.batch_buffers));
	}
	batch_path_finish(&s->bpath, bpf_map__fd(s->skel->maps.batch_buffers));
	s->stats.batch_lost = s->bpath.lost;
	s->stats.batch_unwatched = s->skel->bss->batch_unwatched;
	s->stats.batch_unread_at_stop = s->bpath.unread_at_stop;
	if (s->stats.batch_unread_at_stop)
		fprintf(stderr, "ctrace-bpf: the buffers of %llu live threads could not be read at the stop (each read of them blocked in its memory): the events they held since their last flush are lost uncounted (metadata.batch.unread_at_stop); --no-batch keeps every event\n",
			(unsigned long long)s->stats.batch_unread_at_stop);
	if (s->stats.batch_unwatched)
		fprintf(stderr, "ctrace-bpf: %llu batch buffers were not watched (the kernel side's table of threads' buffers was full): what a thread left in them when it died is lost uncounted (metadata.batch.unwatched_buffers); --no-batch keeps every event\n",
			(unsigned long long)s->stats.batch_unwatched);
	report_drops(s);
	report_untraced(s);
	s->stats.records_unread_at_stop = s->unread_at_stop;
	{
		struct remote_read_counts rc = remote_read_counts();

		s->stats.remote_reads = rc.reads;
		s->stats.remote_reads_abandoned = rc.abandoned;
		s->stats.remote_reads_refused = rc.refused;
	}
	s->stats.dropped = s->skel->bss->dropped + s->unread_at_stop + s->bpath.lost;
	/*
	 * The file's end cut the trace short in the drain after the stop (the
	 * target exited first, its last events still on their way, as a slow
	 * loader sees it): the trace says so, as stop_reason() does when the
	 * file fills first.
	 */
	if (s->out->rot.full && s->stats.stop_reason && strstr(s->stats.stop_reason, "exited"))
		s->stats.stop_reason = "--max-size reached";
	if (s->cap) {
		capture_write_end(s);
		capture_push(s->cap, UINT64_MAX);
	}
	trace_model_finish(&s->model, s->stats.stop_mono_ns);
	s->model_live = false;
}
