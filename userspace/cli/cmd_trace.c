// SPDX-License-Identifier: MIT
/*
 * cmd_trace.c - `ctrace-bpf -p PID`, `--exe PATH`, `-- CMD`: attach to the
 * ctrace probes of processes and write what they report as a Chrome Trace
 * Event JSON file (Perfetto UI, chrome://tracing). The options, the output,
 * the session (session.h: load, attach, targets, the loop), the exit code.
 */
#include <stdio.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <stdlib.h>
#include "capture/capture_journal.h"
#include "cli/commands.h"
#include "cli/trace_behind.h"
#include "io/output_file.h"
#include "session/session.h"
#include "lib/term_safe.h"
#include "encode/trace_summary.h"

/* ctrace-PID.json, or with --exe alone ctrace-PROGRAM.json. */
static const char *default_output(const struct session *s, char *buf, size_t len)
{
	const char *exe = s->o->exe, *ext = s->o->perfetto ? "pftrace" : "json";

	if (s->first_pid)
		snprintf(buf, len, "ctrace-%d.%s", s->first_pid, ext);
	else
		snprintf(buf, len, "ctrace-%s.%s", strrchr(exe, '/') ? strrchr(exe, '/') + 1 : exe, ext);
	return buf;
}

static void say_written(const struct session *s, const struct trace_output *out)
{
	const struct trace_rotation *rot = &out->rot;
	char files[128] = "";

	if (out->ring) {
		fprintf(stderr, "ctrace-bpf: %s: flight recorder: %u dumps, the last %s; %llu events overwritten in the ring, %llu dropped%s\n",
			s->stats.stop_reason, out->fr.dumps, out->dump_path,
			(unsigned long long)out->fr.overwritten_total,
			(unsigned long long)s->stats.dropped,
			s->stats.dropped ? " (the ring buffer was full)" : "");
		return;
	}
	if (rot->index > 1 && rot->max_files && rot->index > rot->max_files)
		snprintf(files, sizeof(files), " in %llu files, of which the oldest %llu were removed (--max-files)",
			 rot->index, rot->index - rot->max_files);
	else if (rot->index > 1)
		snprintf(files, sizeof(files), " in %llu files", rot->index);
	say_trace_written(s->stats.stop_reason, s->stats.events_written + rot->events_before, files, s->stats.dropped,
			  s->o->perfetto);
}

void say_trace_written(const char *reason, uint64_t events, const char *files, uint64_t dropped, bool pftrace)
{
	fprintf(stderr, "ctrace-bpf: %s: %llu events written%s, %llu dropped%s. Open it in Perfetto UI (https://ui.perfetto.dev)%s\n",
		reason, (unsigned long long)events, files, (unsigned long long)dropped,
		dropped ? " (the ring buffer was full)" : "",
		pftrace ? "" : " or chrome://tracing"); /* chrome://tracing reads JSON only */
}

/*
 * A trace that never had a probe (a program without ctrace's macros, an
 * interpreter built without USDT probes, a plugin host that never loaded
 * the plugin): said at the end too, with every object looked in, as the
 * start's "waiting" line was said before the program exec()d or loaded
 * what it ran.
 */
static void say_nothing_attached(const struct session *s)
{
	fprintf(stderr, "ctrace-bpf: no probe was attached in the whole trace (looked in: %s): the file names the processes and threads, nothing they did. `ctrace-bpf list PROGRAM` shows a program's probes: ctrace's come from include/ctrace.h's CTRACE_* macros%s\n",
		s->att.looked_in[0] ? TERM_SAFE(s->att.looked_in) : "no mapped files",
		s->o->usdt ? ", --usdt's from its USDT notes (a Python, JVM or PostgreSQL built without dtrace probes has none)" : "");
}

/* The summary of what was written (trace_summary.h), as `ctrace-bpf report FILE` prints it. */
static void say_summary(const struct session *s, const struct trace_output *out,
			const struct trace_summary *sum)
{
	struct summary_losses l = {
		.known = true,
		.dropped = s->stats.dropped,
		.unfinished_spans = s->stats.unfinished_spans,
		.unmatched_ends = s->stats.unmatched_ends,
		.ring = out->ring,
		.overwritten = out->fr.overwritten_total,
	};

	for (unsigned i = 0; i < s->stats.n_bounds; i++)
		l.evicted += s->stats.bounds[i]->evicted;
	trace_summary_print(stderr, sum, &l, SUMMARY_TOP_SPANS, SUMMARY_TOP_OTHERS);
}

int cmd_trace(int argc, char **argv)
{
	struct trace_options o;
	struct session s;
	struct trace_output out;
	struct trace_summary summary;
	struct otlp_export otlp;
	char default_out[300];
	struct capture_writer *cap = NULL;
	struct trace_behind behind = { .alive = -1, .out_fd = -1 };
	bool cap_failed = false;
	const char *capture_path_given = NULL;
	int code;

	trace_options_parse(argc, argv, &o);
	output_file_set_mode(o.output_mode);
	session_init(&s, &o);
	if (session_check(&s) < 0)
		return 1;
	if (session_launch(&s) < 0)
		return 127; /* as a shell says a command it could not run */
	if (!o.output)
		o.output = default_output(&s, default_out, sizeof(default_out));

	code = 1;
	if (capture_path(o.output)) {
		/*
		 * A capture: the records are written undecoded (session_capture.c);
		 * the trace's own writer runs idle, on /dev/null, for its facts.
		 */
		if (!trace_capture_takes(&o) || o.perfetto) {
			fprintf(stderr, "ctrace-bpf: -o FILE.ctrace does not take --stacks, --usdt, --ring, --otlp, --format or --max-size yet: capture without them\n");
			return session_end(&s, 2);
		}
		int err = -ENOMEM;

		cap = calloc(1, sizeof(*cap));
		if (!cap || (err = capture_open(cap, o.output)) < 0) {
			fprintf(stderr, "ctrace-bpf: cannot write %s: %s\n", TERM_SAFE(o.output), strerror(-err));
			if (cap) {
				capture_close(cap);
				unlink(o.output);
			}
			free(cap);
			return session_end(&s, 1);
		}
		capture_path_given = o.output;
		s.cap = cap;
		capture_journal = cap;
		key_map_init(&s.cap_threads);
	} else if (trace_behind_wanted(&o)) {
		/* The trace converted behind a capture (trace_behind.h): the same path, the output another's. */
		if (trace_behind_start(&behind, &o) < 0)
			return session_end(&s, 1);
		cap = &behind.cap;
		s.cap = cap;
		s.backlog_limit = o.max_backlog;
		capture_journal = cap;
		key_map_init(&s.cap_threads);
	}
	trace_summary_init(&summary);
	if (o.otlp_file)
		o.output = "/dev/null"; /* -o FILE.otlp.json: the OTLP lines instead of the Chrome trace */
	otlp_export_open(&otlp, o.otlp_url, o.otlp_file);
	if (output_begin(&out, cap ? "/dev/null" : o.output,
			 &(struct output_limits){ o.max_size, o.max_files, &s.stats, o.ring_size, !cap && o.perfetto, NULL },
			 &s.target) == 0 &&
	    (!otlp.where || otlp_export_start(&otlp, &out.facts) == 0)) {
		if (!o.quiet)
			trace_fanout_add(&out.fan, trace_summary_encoder(&summary));
		if (otlp.where) {
			out.tf.obs = &otlp.obs;
			out.otlp = &otlp;
		}
		if (o.command) /* a failing output ends the trace, never the command */
			snprintf(out.failure_note, sizeof(out.failure_note),
				 "; tracing stopped, %.60s (pid %d) goes on untraced to its end", o.command[0],
				 s.launched.pid);
		if (s.cap) {
			s.out = &out; /* session_start sets it too */
			capture_write_facts(&s);
		}
		if (session_start(&s, &out) == 0) {
			session_run(&s);
			session_stop(&s);
			if (behind.converter) {
				capture_journal = NULL;
				if (capture_close(cap) < 0 || cap->err)
					fprintf(stderr, "ctrace-bpf: writing the capture behind %s failed: %s: the trace holds what came before\n",
						TERM_SAFE(o.output), strerror(cap->err ? cap->err : errno));
			} else if (cap) {
				capture_journal = NULL;
				if (capture_close(cap) < 0 || cap->err) {
					cap_failed = true;
					fprintf(stderr, "ctrace-bpf: writing %s failed: %s: the capture holds what came before\n",
						TERM_SAFE(capture_path_given), strerror(cap->err ? cap->err : errno));
				} else if (!o.quiet || s.stats.dropped) {
					fprintf(stderr, "ctrace-bpf: %s: captured %llu records (%llu bytes) in %s, %llu dropped; `ctrace-bpf convert %s -o FILE` writes the trace\n",
						s.stats.stop_reason, (unsigned long long)s.stats.records,
						(unsigned long long)cap->written, TERM_SAFE(capture_path_given),
						(unsigned long long)s.stats.dropped, TERM_SAFE(capture_path_given));
				}
			}
			if (output_end(&out, &s.stats) < 0) {
				/* said by output_end */
			} else if (behind.converter) {
				code = trace_behind_finish(&behind) == 0 && !cap->err ? 0 : 1;
				if (!o.quiet && !out.facts.probes_attached)
					say_nothing_attached(&s);
			} else if (cap) {
				code = cap_failed ? 1 : 0;
			} else {
				/* A loss is a warning: said even with -q. */
				if ((!o.quiet || s.stats.dropped) && !o.otlp_file)
					say_written(&s, &out);
				if (otlp.where)
					otlp_export_report(&otlp, o.quiet);
				if (!o.quiet)
					say_summary(&s, &out, &summary);
				if (!o.quiet && !out.facts.probes_attached)
					say_nothing_attached(&s);
				code = 0;
			}
		}
	}
	output_close(&out, code && !s.started); /* tracing never started: no file left */
	otlp_export_close(&otlp, code && !s.started);
	trace_summary_free(&summary);
	if (cap) {
		capture_journal = NULL;
		capture_close(cap);
		if (code && !s.started && capture_path_given)
			unlink(capture_path_given);
		key_map_free(&s.cap_threads);
		free(s.cap_new);
		if (cap != &behind.cap)
			free(cap);
	}
	if (behind.converter) {
		if (code && !s.started)
			trace_behind_abandon(&behind);
		else
			code = trace_behind_finish(&behind) ? 1 : code;
	}
	return session_end(&s, code);
}
