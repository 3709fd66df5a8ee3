/* SPDX-License-Identifier: MIT */
/*
 * capture_replay.h - a capture (capture_format.h) turned into a trace: its
 * records given to the session's own decode -> strings -> batches' merge
 * -> model -> writer path (session_decoded_record), its side records in
 * place of the live world's answers, in the order the live session had
 * them. No process is read: strings the capture does not hold come from
 * the files its looks at /proc/PID/maps named, if they are still the same.
 */
#ifndef CTRACE_CAPTURE_REPLAY_H
#define CTRACE_CAPTURE_REPLAY_H

#include <stdbool.h>
#include <stdint.h>

struct trace_summary;

struct capture_convert_result {
	uint64_t records, events, dropped;
	uint64_t unfinished_spans, unmatched_ends, evicted; /* the summary's losses */
	bool cut;             /* the capture ended before its END record */
	char stop_reason[64];
};

/*
 * Writes the trace of the capture at `in` to `out` (any format -o takes:
 * .json, .json.gz, .pftrace); summary (may be NULL) is fed as the live
 * trace's is. 0, or -errno having said why in one line. A capture cut
 * short converts up to its last whole record, said on stderr.
 */
int capture_convert(const char *in, const char *out, struct trace_summary *summary,
		    struct capture_convert_result *res);
/*
 * The same, of a capture the tracer is still writing (the trace command's
 * conversion behind it, cmd_convert.c): writer_alive is the read end of a
 * pipe the tracer holds open until the capture is whole (taken over);
 * files_from the socket the tracer hands its mapped files over
 * (capture_files.h), or -1.
 */
int capture_convert_following(const char *in, int writer_alive, int files_from, const char *out,
			      struct trace_summary *summary,
			      struct capture_convert_result *res);

#endif
