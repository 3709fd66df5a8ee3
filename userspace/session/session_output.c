// SPDX-License-Identifier: MIT
#include "session/session_output.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "cli/commands.h"
#include "io/output_file.h"

static uint64_t now_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static bool on_stdout(const struct trace_output *out)
{
	return !strcmp(out->path, "-");
}

/*
 * Perfetto's format, with $CTRACE_PFTRACE_JSON set: the JSON kept there
 * too (for JSON tools, or to compare), opened as the trace is. Its fd, -1
 * when not asked, or -errno having said why.
 */
static int json_kept(void)
{
	const char *keep = getenv("CTRACE_PFTRACE_JSON");
	bool created;
	int fd;

	if (!keep || !*keep)
		return -1;
	fd = output_open(keep, &created);
	return fd == -1 ? -EBADF : fd;
}

/* The one line that says the output failed, and (launch mode) what becomes of the command. */
static void say_write_failed(struct trace_output *out, const char *path, int err)
{
	fprintf(stderr, "ctrace-bpf: writing %s failed: %s%s\n", strcmp(path, "-") ? path : "standard output",
		strerror(err), out->failure_note);
	out->failure_said = true;
}

/*
 * Perfetto's format: the packets into w, and with CTRACE_PFTRACE_JSON the
 * JSON beside it, both from the model's events (two encoders).
 */
static int perfetto_begin(struct trace_output *out)
{
	jw_packets(&out->w);
	out->pf = pftrace_encoder_new(&out->w);
	if (!out->pf || (out->json_fd >= 0 && jw_init(&out->json_w, out->json_fd, 1 << 20) < 0)) {
		fputs("ctrace-bpf: out of memory\n", stderr);
		return -ENOMEM;
	}
	jw_write_behind(&out->w);
	trace_fanout_add(&out->fan, pftrace_encoder(out->pf));
	trace_fanout_begin(&out->fan, &out->facts);
	if (out->json_fd >= 0) {
		jw_write_behind(&out->json_w);
		chrome_trace_begin(&out->tf, &out->json_w, &out->facts);
		trace_fanout_add(&out->fan, chrome_trace_encoder(&out->tf));
	}
	return 0;
}

int output_begin(struct trace_output *out, const char *path, const struct output_limits *limits,
		 const struct proc_facts *target)
{
	uint64_t ring = limits->ring;

	memset(out, 0, sizeof(*out));
	trace_fanout_init(&out->fan);
	out->fd = -1;
	out->json_fd = -1;
	if (trace_rotation_init(&out->rot, path, limits->max_size, limits->max_files) < 0)
		return -ENAMETOOLONG;
	out->path = strcmp(path, "-") ? out->rot.path : path;
	if (ring) { /* the first dump's file now: a bad path must be said before attaching */
		out->ring = true;
		out->pattern = path;
		flight_dump_path(path, 1, out->dump_path, sizeof(out->dump_path));
		out->path = out->dump_path;
	}
	path = out->path;
	/* Before attaching: a bad output path must not touch the target at all. */
	out->fd = output_open(path, &out->created);
	if (out->fd < 0)
		return out->fd;
	if (limits->perfetto && (out->json_fd = json_kept()) < -1)
		return out->json_fd;
	/* The trace starts before the first probe can fire. */
	out->facts.start_wall_ns = now_ns(CLOCK_REALTIME);
	out->facts.start_mono_ns = now_ns(CLOCK_MONOTONIC);
	if (target->start_boottime_ns) {
		/* /proc gives the target's start on CLOCK_BOOTTIME; say it on the other two clocks. */
		uint64_t since_start = now_ns(CLOCK_BOOTTIME) - target->start_boottime_ns;

		out->facts.target_start_wall_ns = out->facts.start_wall_ns - since_start;
		out->facts.target_start_mono_ns = out->facts.start_mono_ns > since_start ?
							  out->facts.start_mono_ns - since_start : 0;
	}
	if (limits->replay_facts) {
		out->facts.start_wall_ns = limits->replay_facts->start_wall_ns;
		out->facts.start_mono_ns = limits->replay_facts->start_mono_ns;
		out->facts.target_start_wall_ns = limits->replay_facts->target_start_wall_ns;
		out->facts.target_start_mono_ns = limits->replay_facts->target_start_mono_ns;
	}
	out->facts.tracer_version = CTRACE_BPF_VERSION;
	out->facts.target = target;
	if (out->ring) {
		/* Into memory: the stage, moved to the ring as it fills (flight_recorder.h). */
		if (jw_init(&out->w, -1, flight_stage_size(ring)) < 0 ||
		    flight_recorder_init(&out->fr, ring, &out->w, &out->tf) < 0) {
			fputs("ctrace-bpf: out of memory\n", stderr);
			return -ENOMEM;
		}
		chrome_trace_begin_ring(&out->tf, &out->w, &out->fr);
		trace_fanout_add(&out->fan, chrome_trace_encoder(&out->tf)); /* its end: output_dump()'s */
		out->last_dump_ns = 0;
		return 0;
	}
	if (jw_init(&out->w, out->fd, 1 << 20) < 0) {
		fputs("ctrace-bpf: out of memory\n", stderr);
		return -ENOMEM;
	}
	if (limits->perfetto)
		return perfetto_begin(out);
	/* FILE.json.gz: gzip, by the name alone (as Perfetto UI tells it by the bytes). "-" stays plain JSON. */
	if ((!on_stdout(out) && trace_sink_path_is_gzip(path) ? jw_gzip(&out->w) : 0) < 0) {
		fputs("ctrace-bpf: out of memory\n", stderr);
		return -ENOMEM;
	}
	jw_write_behind(&out->w); /* the write(2)s (and the compression) off the loop that reads the ring */
	chrome_trace_begin(&out->tf, &out->w, &out->facts);
	trace_fanout_add(&out->fan, chrome_trace_encoder(&out->tf));
	trace_rotation_attach(&out->rot, &out->tf, &out->w, &out->fd, &out->facts, limits->stats);
	return 0;
}

int output_dump_open(struct trace_output *out, uint64_t at_ns)
{
	bool created;
	int fd;

	if (out->fd >= 0) /* the first, opened at the start */
		return 0;
	flight_dump_path(out->pattern, out->fr.dumps + 1, out->dump_path, sizeof(out->dump_path));
	fd = output_open(out->dump_path, &created);
	if (fd < 0) {
		out->dumps_failed++;
		out->last_dump_ns = at_ns; /* a trigger tries again after the interval, not in a loop */
		return fd; /* output_open said why */
	}
	out->fd = fd;
	return 0;
}

int output_dump(struct trace_output *out, const struct trace_stats *stats, const char *why,
		uint64_t spans_open, uint64_t at_ns, bool quiet)
{
	struct flight_recorder *fr = &out->fr;
	bool last = !strcmp(why, "end");
	struct flight_dump_facts ff = {
		.ring_bytes = fr->size,
		.dump = fr->dumps + 1,
		.reason = why,
		.trigger = fr->triggers ? fr->trigger_name : NULL,
		.trigger_len = fr->trigger_name_len,
		.triggers = fr->triggers,
		.window_start_ns = out->last_dump_ns ? out->last_dump_ns : out->facts.start_mono_ns,
	};
	struct trace_stats st = *stats;
	struct json_writer fw;
	uint64_t now_ns_at_call = now_ns(CLOCK_MONOTONIC); /* the dump stops the loop: how long, said */
	uint64_t events;
	int fd = out->fd, err = 0;

	if (fd < 0)
		return -EBADF; /* output_dump_open() failed, and said why */
	if (jw_init(&fw, fd, 1 << 20) < 0) {
		fputs("ctrace-bpf: out of memory\n", stderr);
		abort();
	}
	chrome_trace_write_head(&fw, &out->facts);
	events = flight_recorder_write(fr, &fw);
	ff.events_overwritten = fr->overwritten;
	ff.events_overwritten_total = fr->overwritten_total;
	ff.names_left_out = fr->names_left_out;
	ff.spans_open = spans_open;
	st.flight = &ff;
	if (!last) {
		st.stop_reason = "";
		st.stop_mono_ns = at_ns;
		st.unfinished_spans = spans_open;
	}
	chrome_trace_write_end(&out->tf, &fw, events, &out->facts, &st);
	if (jw_flush(&fw) < 0 || fw.err || (fsync(fd) != 0 && errno != EINVAL)) {
		err = fw.err ? -fw.err : -errno;
		say_write_failed(out, out->dump_path, -err);
	}
	jw_free(&fw);
	close(fd);
	out->fd = -1;
	out->created = false; /* written: kept whatever follows */
	fr->dumps++;
	fr->overwritten = 0;
	fr->triggers = 0;
	out->last_dump_ns = at_ns;
	if (err)
		out->dumps_failed++;
	else if (!quiet)
		fprintf(stderr, "ctrace-bpf: flight recorder: wrote %s (%s): %llu events, %llu overwritten before it, in %.0f ms\n",
			out->dump_path, why, (unsigned long long)events,
			(unsigned long long)ff.events_overwritten,
			(double)(now_ns(CLOCK_MONOTONIC) - now_ns_at_call) / 1e6);
	return err;
}

/*
 * Out every 50 ms: if the tracer is killed (or the disk fills), the file
 * holds all but the last ~50 ms, and `ctrace-bpf fix` closes it.
 */
void output_flush_every(struct trace_output *out, uint64_t now)
{
	if (out->otlp && now >= out->next_flush_ns)
		otlp_export_tick(out->otlp, now);
	if (now < out->next_flush_ns || out->ring)
		return;
	jw_hand_on(&out->w); /* to the writer thread: the loop does not wait for the disk */
	if (out->json_fd >= 0)
		jw_hand_on(&out->json_w);
	/*
	 * And on to the disk, without waiting: the fsync at the end then has
	 * ~50 ms of output to write, not the whole file (0.15 s for 100 MB,
	 * which -d would overrun).
	 */
	sync_file_range(out->fd, 0, 0, SYNC_FILE_RANGE_WRITE);
	out->next_flush_ns = now + 50 * 1000000ull;
}

void output_flush_to_disk(struct trace_output *out)
{
	if (out->ring)
		return; /* in memory until a dump */
	jw_flush(&out->w);
	if (!on_stdout(out))
		fdatasync(out->fd);
}

int output_end(struct trace_output *out, struct trace_stats *stats)
{
	if (out->ring) {
		int err = output_dump_open(out, stats->stop_mono_ns);

		stats->events_written = out->tf.events;
		return err ? err : output_dump(out, stats, "end", 0, stats->stop_mono_ns, true);
	}
	if (out->otlp)
		otlp_export_finish(out->otlp); /* its counts go in the metadata */
	trace_fanout_end(&out->fan, &out->facts, stats);
	stats->events_written = out->pf ? pftrace_encoder_events(out->pf) : out->tf.events;
	if (out->json_fd >= 0 && (jw_finish(&out->json_w) < 0 || out->json_w.err))
		say_write_failed(out, getenv("CTRACE_PFTRACE_JSON"), out->json_w.err ? out->json_w.err : EIO);
	if (jw_finish(&out->w) < 0 || out->w.err) {
		say_write_failed(out, out->path, out->w.err ? out->w.err : EIO);
		return out->w.err ? -out->w.err : -EIO;
	}
	if (!on_stdout(out) && fsync(out->fd) != 0 && errno != EINVAL) {
		int err = -errno;

		say_write_failed(out, out->path, -err);
		return err;
	}
	return 0;
}

void output_close(struct trace_output *out, bool remove)
{
	if (out->ring)
		flight_recorder_free(&out->fr);
	jw_free(&out->w);
	if (out->pf && out->json_fd >= 0)
		jw_free(&out->json_w);
	pftrace_encoder_free(out->pf);
	out->pf = NULL;
	trace_rotation_free(&out->rot);
	if (out->fd >= 0)
		close(out->fd);
	out->fd = -1;
	if (out->json_fd >= 0)
		close(out->json_fd);
	out->json_fd = -1;
	if (remove && out->created)
		unlink(out->path);
}
