// SPDX-License-Identifier: MIT
#include "session_output.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "commands.h"
#include "output_file.h"

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

int output_begin(struct trace_output *out, const char *path, const struct output_limits *limits,
		 const struct proc_facts *target)
{
	memset(out, 0, sizeof(*out));
	out->fd = -1;
	if (trace_rotation_init(&out->rot, path, limits->max_size, limits->max_files) < 0)
		return -ENAMETOOLONG;
	out->path = strcmp(path, "-") ? out->rot.path : path;
	path = out->path;
	/* Before attaching: a bad output path must not touch the target at all. */
	out->fd = output_open(path, &out->created);
	if (out->fd < 0)
		return out->fd;
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
	if (jw_init(&out->w, out->fd, 1 << 20) < 0) {
		fputs("ctrace-bpf: out of memory\n", stderr);
		return -ENOMEM;
	}
	/* FILE.json.gz: gzip, by the name alone (as Perfetto UI tells it by the bytes). "-" stays plain. */
	if (!on_stdout(out) && trace_sink_path_is_gzip(path) && jw_gzip(&out->w) < 0) {
		fputs("ctrace-bpf: out of memory\n", stderr);
		return -ENOMEM;
	}
	jw_write_behind(&out->w); /* the write(2)s (and the compression) off the loop that reads the ring */
	out->facts.tracer_version = CTRACE_BPF_VERSION;
	out->facts.target = target;
	chrome_trace_begin(&out->tf, &out->w, &out->facts);
	trace_rotation_attach(&out->rot, &out->tf, &out->w, &out->fd, &out->facts, limits->stats);
	return 0;
}

/*
 * Out every 50 ms: if the tracer is killed (or the disk fills), the file
 * holds all but the last ~50 ms, and `ctrace-bpf fix` closes it.
 */
void output_flush_every(struct trace_output *out, uint64_t now)
{
	if (now < out->next_flush_ns)
		return;
	jw_hand_on(&out->w); /* to the writer thread: the loop does not wait for the disk */
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
	jw_flush(&out->w);
	if (!on_stdout(out))
		fdatasync(out->fd);
}

int output_end(struct trace_output *out, struct trace_stats *stats)
{
	chrome_trace_end(&out->tf, &out->facts, stats);
	stats->events_written = out->tf.events;
	if (jw_finish(&out->w) < 0 || out->w.err) {
		fprintf(stderr, "ctrace-bpf: writing %s failed: %s\n", out->path, strerror(out->w.err));
		return out->w.err ? -out->w.err : -EIO;
	}
	if (!on_stdout(out) && fsync(out->fd) != 0 && errno != EINVAL) {
		int err = -errno;

		fprintf(stderr, "ctrace-bpf: writing %s failed: %s\n", out->path, strerror(-err));
		return err;
	}
	return 0;
}

void output_close(struct trace_output *out, bool remove)
{
	jw_free(&out->w);
	trace_rotation_free(&out->rot);
	if (out->fd >= 0)
		close(out->fd);
	out->fd = -1;
	if (remove && out->created)
		unlink(out->path);
}
