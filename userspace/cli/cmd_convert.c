// SPDX-License-Identifier: MIT
/*
 * cmd_convert.c - `ctrace-bpf convert FILE.ctrace -o OUT`: a capture
 * (-o FILE.ctrace, capture_format.h) written as a trace in any format the
 * trace command writes (.json, .json.gz, .pftrace), the same trace the
 * live session would have written (capture_replay.c).
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include "offline/capture_replay.h"
#include "capture/capture_journal.h"
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
	"  -h, --help         this text\n";

int cmd_convert(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct capture_convert_result res;
	struct trace_summary summary;
	const char *out = NULL;
	bool quiet = false;
	int c, err;

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
		default:
			fprintf(stderr, "ctrace-bpf: convert: unknown option or missing value '%s'; see ctrace-bpf convert --help\n",
				argv[optind - 1]);
			return 2;
		}
	}
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
		trace_summary_print(stderr, &summary,
				    &(struct summary_losses){ .known = true, .dropped = res.dropped },
				    SUMMARY_TOP_SPANS, SUMMARY_TOP_OTHERS);
	}
	trace_summary_free(&summary);
	return err < 0 ? 1 : 0;
}
