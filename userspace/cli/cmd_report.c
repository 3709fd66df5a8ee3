// SPDX-License-Identifier: MIT
/*
 * cmd_report.c - `ctrace-bpf report [--top N] FILE`: the summary the trace
 * command prints at its end (trace_summary.h), for any trace file it wrote,
 * plain or gzip (trace_report.c reads it), or a capture (-o FILE.ctrace),
 * converted first.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "offline/capture_replay.h"
#include "capture/capture_journal.h"
#include "cli/commands.h"
#include "lib/term_safe.h"
#include "offline/trace_report.h"

static const char usage_text[] =
	"Usage: ctrace-bpf report [--top N] FILE\n"
	"\n"
	"Summarizes a trace written by ctrace-bpf (JSON, gzip, .pftrace or a .ctrace\n"
	"capture, converted first): the span names\n"
	"by total time (count, total, mean, p50, p99; percentiles within 3.2%), the\n"
	"instant names by count, the counters by samples, and what the trace lost.\n"
	"The same summary the trace command prints when it ends.\n"
	"\n"
	"  -n, --top N        show N span names (default 10) and (N+1)/2 of the others\n"
	"  -h, --help         this text\n";

#define TOP_DEFAULT SUMMARY_TOP_SPANS

/* Before the summary, what the file holds: its events and their span of time, lines skipped. */
static void say_span_of_time(const char *path, const struct trace_report *r)
{
	printf("%s: %llu events over %.3f s", path, (unsigned long long)r->events,
	       r->last_ts_us > r->first_ts_us ? (r->last_ts_us - r->first_ts_us) / 1e6 : 0.0);
	if (r->damaged_lines)
		printf(", %llu damaged lines skipped", (unsigned long long)r->damaged_lines);
	if (r->async_unpaired)
		printf(", %llu cross-thread span ends without their other end", (unsigned long long)r->async_unpaired);
	putchar('\n');
}

int cmd_report(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "top", required_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct trace_report r;
	char converted[4200];
	bool remove_after = false;
	const char *path;
	long top = TOP_DEFAULT;
	int err_read;
	char *end;
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "n:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'n':
			top = strtol(optarg, &end, 10);
			if (*end || end == optarg || top < 1 || top > 100000) {
				fprintf(stderr, "ctrace-bpf: report --top needs a number from 1 to 100000, not '%s'\n", optarg);
				return 2;
			}
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		default:
			fprintf(stderr, "ctrace-bpf: report: unknown option or missing value '%s'; see ctrace-bpf report --help\n",
				argv[optind - 1]);
			return 2;
		}
	}
	if (optind != argc - 1) {
		fputs("ctrace-bpf: report needs one trace file: ctrace-bpf report FILE\n", stderr);
		return 2;
	}
	path = argv[optind];
	if (capture_path(argv[optind])) {
		/* A capture: converted first, into a file of its own that goes at once (capture_replay.h). */
		struct capture_convert_result res;
		const char *tmp = getenv("TMPDIR");
		int fd, err;

		snprintf(converted, sizeof(converted), "%s/ctrace-report-XXXXXX.json", tmp && *tmp ? tmp : "/tmp");
		fd = mkstemps(converted, 5);
		if (fd < 0) {
			fprintf(stderr, "ctrace-bpf: report: cannot make a file to convert %s into (%s): %s\n",
				TERM_SAFE(argv[optind]), TERM_SAFE(converted), strerror(errno));
			return 1;
		}
		close(fd);
		err = capture_convert(argv[optind], converted, NULL, &res);
		if (err < 0) {
			unlink(converted);
			return 1;
		}
		path = converted;
		remove_after = true;
	}
	err_read = trace_report_read(path, &r);
	if (remove_after)
		unlink(converted);
	if (err_read < 0) {
		fprintf(stderr, "ctrace-bpf: %s\n", TERM_SAFE(r.why));
		trace_report_free(&r);
		return 1;
	}
	say_span_of_time(argv[optind], &r);
	trace_summary_print(stdout, &r.summary, &r.losses, (size_t)top, (size_t)(top + 1) / 2);
	if (!r.losses.known)
		printf("(%s has no end: it was cut short; ctrace-bpf fix repairs it)\n", argv[optind]);
	trace_report_free(&r);
	return 0;
}
