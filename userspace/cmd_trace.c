// SPDX-License-Identifier: MIT
/*
 * cmd_trace.c - `ctrace-bpf -p PID`, `--exe PATH`, `-- CMD`: attach to the
 * ctrace probes of processes and write what they report as a Chrome Trace
 * Event JSON file (Perfetto UI, chrome://tracing). The options, the output,
 * the session (session.h: load, attach, targets, the loop), the exit code.
 */
#include <stdio.h>
#include <string.h>
#include "commands.h"
#include "output_file.h"
#include "session.h"
#include "term_safe.h"
#include "trace_summary.h"

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
	fprintf(stderr, "ctrace-bpf: %s: %llu events written%s, %llu dropped%s. Open it in Perfetto UI (https://ui.perfetto.dev)%s\n",
		s->stats.stop_reason, (unsigned long long)(s->stats.events_written + rot->events_before), files,
		(unsigned long long)s->stats.dropped,
		s->stats.dropped ? " (the ring buffer was full)" : "",
		s->o->perfetto ? "" : " or chrome://tracing"); /* chrome://tracing reads JSON only */
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
	trace_summary_init(&summary);
	if (o.otlp_file)
		o.output = "/dev/null"; /* -o FILE.otlp.json: the OTLP lines instead of the Chrome trace */
	otlp_export_open(&otlp, o.otlp_url, o.otlp_file);
	if (output_begin(&out, o.output,
			 &(struct output_limits){ o.max_size, o.max_files, &s.stats, o.ring_size, o.perfetto },
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
		if (session_start(&s, &out) == 0) {
			session_run(&s);
			session_stop(&s);
			if (output_end(&out, &s.stats) == 0) {
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
	return session_end(&s, code);
}
