// SPDX-License-Identifier: MIT
/*
 * cmd_convert.c - `ctrace-bpf convert FILE.ctrace -o OUT`: a capture
 * (-o FILE.ctrace, capture_format.h) written as a trace in any format the
 * trace command writes (.json, .json.gz, .pftrace), the same trace the
 * live session would have written (capture_replay.c).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "offline/capture_replay.h"
#include "capture/capture_journal.h"
#include "io/output_file.h"
#include "cli/commands.h"
#include "lib/term_safe.h"
#include "encode/trace_summary.h"

static const char usage_text[] =
	"Usage: ctrace-bpf convert FILE.ctrace -o OUT [-q]\n"
	"\n"
	"Writes the trace a capture holds (ctrace-bpf -o FILE.ctrace ...) as OUT:\n"
	"OUT.json, OUT.json.gz or OUT.pftrace, as the trace command would have written it.\n"
	"A capture cut short (the tracer killed, a full disk) converts up to its last\n"
	"whole record, and says what was cut.\n"
	"\n"
	"  -o, --output OUT   the trace file to write\n"
	"  -q, --quiet        no summary at the end\n"
	"  -h, --help         this text\n"
	"  --behind FDS, --mode OCTAL\n"
	"                     the trace command's, for the conversion it runs behind\n"
	"                     its capture (not for use by hand)\n";

/* The summary of what was written, with what the conversion found lost (trace_summary.h). */
static void print_summary(const struct trace_summary *summary, const struct capture_convert_result *res)
{
	struct summary_losses l = {
		.known = true,
		.dropped = res->dropped,
		.unfinished_spans = res->unfinished_spans,
		.unmatched_ends = res->unmatched_ends,
		.evicted = res->evicted,
	};

	trace_summary_print(stderr, summary, &l, SUMMARY_TOP_SPANS, SUMMARY_TOP_OTHERS);
}

/*
 * The trace command's conversion behind its capture (cmd_trace.c starts
 * it): the capture being written at fd `capture_fd`, followed while the
 * tracer holds `alive_fd`'s pipe open; the trace command's last lines.
 */
static int convert_behind(int capture_fd, int alive_fd, int files_fd, int out_fd, const char *out, bool quiet)
{
	struct capture_convert_result res;
	struct trace_summary summary;
	char in[64];
	int err;

	snprintf(in, sizeof(in), "/proc/self/fd/%d", capture_fd);
	output_file_give(out, out_fd);
	trace_summary_init(&summary);
	err = capture_convert_following(in, alive_fd, files_fd, out, quiet ? NULL : &summary, &res);
	close(capture_fd);
	if (err == 0 && (!quiet || res.dropped))
		say_trace_written(res.stop_reason[0] ? res.stop_reason : "capture", res.events, "", res.dropped,
				  output_is_pftrace(out));
	if (err == 0 && !quiet)
		print_summary(&summary, &res);
	trace_summary_free(&summary);
	return err < 0 ? 1 : 0;
}

int cmd_convert(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		/* The trace command's own, for the conversion it starts: not for users. */
		{ "behind", required_argument, NULL, 'B' },
		{ "mode", required_argument, NULL, 'm' },
		{ 0 },
	};
	struct capture_convert_result res;
	struct trace_summary summary;
	const char *out = NULL;
	bool quiet = false;
	int c, err, capture_fd = -1, alive_fd = -1, files_fd = -1, out_fd = -1;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "o:qh", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			out = optarg;
			break;
		case 'q':
			quiet = true;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		case 'B':
			if (sscanf(optarg, "%d,%d,%d,%d", &capture_fd, &alive_fd, &files_fd, &out_fd) != 4 ||
			    capture_fd < 0 || alive_fd < 0 || files_fd < 0 || out_fd < 0)
				return 2;
			break;
		case 'm':
			output_file_set_mode((mode_t)strtoul(optarg, NULL, 8));
			break;
		default:
			fprintf(stderr, "ctrace-bpf: convert: unknown option or missing value '%s'; see ctrace-bpf convert --help\n",
				argv[optind - 1]);
			return 2;
		}
	}
	if (capture_fd >= 0 && out && optind == argc)
		return convert_behind(capture_fd, alive_fd, files_fd, out_fd, out, quiet);
	if (optind != argc - 1 || !out) {
		fputs("ctrace-bpf: convert needs a capture and an output: ctrace-bpf convert FILE.ctrace -o OUT.json\n",
		      stderr);
		return 2;
	}
	if (capture_path(out)) {
		fputs("ctrace-bpf: convert writes a trace (-o OUT.json, .json.gz or .pftrace), not another capture\n",
		      stderr);
		return 2;
	}
	trace_summary_init(&summary);
	err = capture_convert(argv[optind], out, quiet ? NULL : &summary, &res);
	if (err == 0 && !quiet) {
		fprintf(stderr, "ctrace-bpf: %s: %llu records converted, %llu events written to %s, %llu dropped\n",
			res.stop_reason[0] ? res.stop_reason : "capture", (unsigned long long)res.records,
			(unsigned long long)res.events, TERM_SAFE(out), (unsigned long long)res.dropped);
		print_summary(&summary, &res);
	}
	trace_summary_free(&summary);
	return err < 0 ? 1 : 0;
}
