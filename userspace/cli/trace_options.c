// SPDX-License-Identifier: MIT
#include "cli/trace_options.h"

#include <errno.h>
#include <getopt.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "cli/commands.h"
#include "attach/kernel_features.h"
#include "encode/otlp/otlp_export.h"
#include "io/output_file.h"
#include "io/trace_sink.h"
#include "model/trace_model.h"

static const char usage_text[] =
	"Usage: ctrace-bpf -p PID[,PID...] [options]     trace running processes\n"
	"       ctrace-bpf --exe PATH [options]          every process running PATH\n"
	"       ctrace-bpf [options] -- CMD [ARGS...]    run CMD, traced from its start\n"
	"\n"
	"Attaches to the ctrace probes (include/ctrace.h) of processes and writes a\n"
	"Chrome Trace Event JSON file, for Perfetto UI or chrome://tracing.\n"
	"Tracing stops on Ctrl-C, SIGTERM, after -d SECONDS, or when every traced\n"
	"process has exited; every way of stopping leaves a complete file.\n"
	"\n"
	"  -p, --pid PID,...    the processes to trace (all their threads and libraries,\n"
	"                       also libraries they load later)\n"
	"  -e, --exe PATH       every process running the program PATH, now or later\n"
	"  -f, --follow         also the processes traced processes fork or exec\n"
	"  --user USER          only processes whose real user is USER (a name or a\n"
	"                       uid): with --exe, of the processes running PATH;\n"
	"                       with -p, a process of another user is refused\n"
	"  -o, --output FILE    where to write the trace (default ctrace-PID.json;\n"
	"                       - for standard output); FILE.json.gz: gzip;\n"
	"                       FILE.pftrace: Perfetto's protobuf trace;\n"
	"                       FILE.ctrace: a capture, the records undecoded (the\n"
	"                       tracer's least CPU), made a trace by convert\n"
	"  --format FORMAT      json (default) or perfetto (Perfetto's protobuf trace,\n"
	"                       3.4-3.6x smaller; what -o FILE.pftrace picks), for\n"
	"                       any name and -o -; not with --ring, --max-size or\n"
	"                       --stacks\n"
	"                       FILE.otlp.json: OTLP JSON lines (one export request\n"
	"                       a line, as the OpenTelemetry collector's file\n"
	"                       exporter writes), instead of the Chrome trace\n"
	"  --otlp URL           also export spans (instants as their events) and\n"
	"                       counters (gauges) to an OpenTelemetry collector, OTLP/\n"
	"                       HTTP JSON, gzip: URL/v1/traces and URL/v1/metrics\n"
	"                       (e.g. http://127.0.0.1:4318); sent from a thread of\n"
	"                       its own, tried again with backoff, a bounded queue;\n"
	"                       what is dropped is said at the end and in metadata\n"
	"  --max-size SIZE      no file larger than SIZE (1M to 1024G): with %n in\n"
	"                       FILE (trace-%n.json.gz) a new file 1, 2, ... each time\n"
	"                       one is full, each a whole trace; else tracing stops\n"
	"                       when the file is full\n"
	"  --max-files N        with %n, keep the newest N files (older are removed)\n"
	"  --mode OCTAL         the mode of every file written (default 0600: the\n"
	"                       trace holds what the target sent; 0640 lets the\n"
	"                       file's group read it); read and write bits only\n"
	"  -d, --duration SECS  stop after this many seconds of tracing, counted from\n"
	"                       when every probe is attached (decimals allowed)\n"
	"  -b, --buffer-size SIZE  ring buffer between kernel and tracer, e.g. 64K,\n"
	"                       16M (default 8M; rounded up to a power of two)\n"
	"  --max-memory SIZE    the tracer's memory at most, the ring buffer aside\n"
	"                       (default 128M, at least 32M): past it, what the\n"
	"                       traced process piles up (spans never ended, counter\n"
	"                       names, pseudo-processes, ...) is evicted, oldest\n"
	"                       first, and counted in the trace's metadata.memory\n"
	"  --max-backlog SIZE   converted behind its capture: the capture not yet\n"
	"                       converted at most (default 1G, at least 32M): past\n"
	"                       it, events are dropped (and counted) until the\n"
	"                       conversion has caught up half of it\n"
	"  --ring SIZE          flight recorder: keep only the most recent SIZE of\n"
	"                       events in memory (64K to 1G, e.g. 16M) and write them\n"
	"                       as a complete trace on SIGUSR1, on CTRACE_TRIGGER in\n"
	"                       the program (at most once a second) and at the end;\n"
	"                       each dump is a file of its own: FILE-1.json,\n"
	"                       FILE-2.json, ... for -o FILE.json (%n in the name:\n"
	"                       replaced by the number); tracing goes on after a dump\n"
	"  --fast               attach at each site's 5-byte nop, which kernels with\n"
	"                       the uprobe syscall (6.18) optimize (about 2x faster a\n"
	"                       hit); refused with -f, and refused where the kernel\n"
	"                       optimizes it (6.18 kills a child forked after its\n"
	"                       parent's probes fired); on older kernels no faster, so\n"
	"                       ignored (said); default: the int3 of the note's 1-byte\n"
	"                       nop, safe on every kernel\n"
	"  --no-batch           one probe hit per event, as before 0.3 (and for\n"
	"                       programs built with an older header); default: a\n"
	"                       thread's events come in batches from its buffer\n"
	"                       (also CTRACE_NO_BATCH=1 in the environment)\n"
	"  --stacks[=DEPTH|fp|dwarf,...]  every event carries the user stack where\n"
	"                       its macro ran, DEPTH frames at most (default 32, at\n"
	"                       most 127), symbolized; fp: the kernel walks the frame\n"
	"                       pointers, dwarf: the stack's top is copied and\n"
	"                       unwound from the objects' CFI; default: fp for a\n"
	"                       program built with frame pointers, else dwarf. Takes\n"
	"                       the per-event path (a batched event has no probe hit)\n"
	"  --categories LIST    only the sites of these categories (CTRACE_CATEGORY),\n"
	"                       e.g. net,db; -NAME leaves one out (-verbose: all\n"
	"                       others); sites left out stay as cheap as untraced\n"
	"  --usdt SPEC          also (or only) the USDT probes other programs ship;\n"
	"                       repeatable. PROVIDER:NAME: an instant per hit, its\n"
	"                       arguments typed; PROVIDER:BEGIN~PROVIDER:END: a span\n"
	"                       per pair on each thread; PROVIDER:NAME(ARG1=str) reads\n"
	"                       ARG1 as a string; ,name=ARGn names the event by it.\n"
	"                       Presets: cxx, python, postgres, java\n"
	"  -v, --verbose        say what is attached; show libbpf's messages\n"
	"  -q, --quiet          no status line while tracing, no \"tracing ...\" line and\n"
	"                       no summary at the end; warnings and errors still\n"
	"  -h, --help           this text\n"
	"  -V, --version        the version\n"
	"\n"
	"Needs root (or CAP_BPF, CAP_PERFMON and CAP_SYS_PTRACE). Run via sudo, a\n"
	"launched CMD runs as you, and the trace file is yours. In launch mode the\n"
	"exit code is CMD's (128+N if a signal N killed it). Should the trace's\n"
	"output fail (disk full, a closed pipe), tracing stops, CMD runs on to its\n"
	"end, and the exit code is then CMD's if not 0, else 1.\n"
	"\n"
	"Examples:\n"
	"  sudo ctrace-bpf -p 1234                  # until Ctrl-C or exit, to ctrace-1234.json\n"
	"  sudo ctrace-bpf -p $(pidof myserver) -d 10 -o server.json\n"
	"  sudo ctrace-bpf -p 1234 -o - | gzip > trace.json.gz\n"
	"  sudo ctrace-bpf -o run.json -- ./myprogram --its-flags\n"
	"  sudo ctrace-bpf --exe /usr/local/bin/worker -d 30\n"
	"  sudo ctrace-bpf -p 1234 --ring 16M -o fr.json  # kill -USR1 <tracer>: fr-1.json\n"
	"  sudo ctrace-bpf -p 1234 --otlp http://127.0.0.1:4318  # and ctrace-1234.json\n"
	"Then open the file at https://ui.perfetto.dev (Open trace file).\n"
	"\nOther commands:\n"
	"  ctrace-bpf list -p PID | PATH   list the USDT probes of a process or an ELF file\n"
	"  ctrace-bpf fix FILE             close a trace that was cut short (tracer killed,\n"
	"                                  disk full) so that viewers open it\n"
	"  ctrace-bpf report FILE          the summary printed at the end of a trace (span\n"
	"                                  names by total time, instants, counters, losses)\n"
	"                                  for a trace file: JSON, gzip, .pftrace or .ctrace\n"
	"  ctrace-bpf convert FILE.ctrace -o OUT  a capture as a trace: OUT.json, .json.gz\n"
	"                                  or .pftrace (docs/capture-format.md)\n"
	"See man ctrace-bpf and man ctrace.h.\n";

/*
 * "64K", "16M", "1G" or bytes -> bytes, from min to max (at most 2^40); 0
 * if invalid. Digits only: strtoull alone would take "-64K" as 2^64 - 64
 * Ki, "0x10" as hex and leading blanks, and a suffix could shift a big
 * number past 64 bits (18014398509481988K wraps to 4 KiB).
 */
static unsigned long long parse_bytes(const char *s, unsigned long long min,
				      unsigned long long max)
{
	unsigned long long v = 0;
	const char *end = s;
	unsigned shift = 0;

	while (*end >= '0' && *end <= '9') {
		v = v * 10 + (unsigned)(*end++ - '0');
		if (v > max)
			return 0; /* already over the largest; no overflow below */
	}
	if (end == s)
		return 0;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	}
	if (*end == 'i' || *end == 'b' || *end == 'B')
		end += (*end == 'i' && (end[1] == 'B' || end[1] == 'b')) ? 2 : 1;
	if (*end || v > (max >> shift) || (v << shift) < min)
		return 0;
	return v << shift;
}

/*
 * A ring buffer size: 64K to 1G, rounded up to a power of two; 0 if
 * invalid. A batch (16 KiB and its record's head) must fit, with room for
 * the per-event records that come meanwhile.
 */
static unsigned long parse_size(const char *s)
{
	unsigned long long v = parse_bytes(s, 65536, 1ull << 30), p = 65536;

	if (!v)
		return 0;
	while (p < v)
		p <<= 1;
	return (unsigned long)p;
}

/* The largest --max-memory taken: more than any machine this runs on would give a tracer. */
#define MAX_MEMORY_LIMIT (1ull << 40)

/*
 * Seconds as a user writes them: digits with an optional fraction ("10",
 * "0.5"). strtod alone would also take hex ("0x10" is 16), "inf", "nan",
 * exponents and leading blanks. 0 if invalid.
 */
static double parse_seconds(const char *s)
{
	const char *p = s;
	size_t digits = 0;

	while (*p >= '0' && *p <= '9')
		p++, digits++;
	if (*p == '.')
		for (p++; *p >= '0' && *p <= '9'; p++)
			digits++;
	if (*p || !digits)
		return 0;
	double v = strtod(s, NULL);

	return v > 0 && v <= 1e9 ? v : 0;
}

/*
 * --mode: octal digits, read and write bits only (a trace is no program),
 * the owner's among them (a trace its owner cannot read is a mistake).
 */
static unsigned parse_mode(const char *s)
{
	size_t n = strlen(s);
	unsigned long v;

	if (!n || n > 6 || strspn(s, "01234567") != n ||
	    (v = strtoul(s, NULL, 8)) > 0777 || (v & 0111) || (v & 0600) != 0600) {
		fprintf(stderr, "ctrace-bpf: --mode takes an octal file mode of read and write bits with the owner's, like 0600 or 0640, not '%s'\n",
			s);
		exit(2);
	}
	return (unsigned)v;
}

/* --user: a name, or a uid (digits) with or without a name. */
static void parse_user(const char *arg, struct trace_options *o)
{
	size_t n = strlen(arg);
	struct passwd *pw;

	if (n && strspn(arg, "0123456789") == n) {
		unsigned long long v = n <= 10 ? strtoull(arg, NULL, 10) : ~0ull;

		if (v >= 0xffffffffull) { /* (uid_t)-1 is no user */
			fprintf(stderr, "ctrace-bpf: --user takes a user name or a uid below 4294967295, not '%s'\n", arg);
			exit(2);
		}
		o->user_uid = (unsigned)v;
		pw = getpwuid((uid_t)v);
	} else {
		pw = n ? getpwnam(arg) : NULL;
		if (!pw) {
			fprintf(stderr, "ctrace-bpf: --user takes a user name or uid, and there is no user '%s' (see getent passwd)\n",
				arg);
			exit(2);
		}
		o->user_uid = (unsigned)pw->pw_uid;
	}
	o->user_set = true;
	if (pw) { /* copied: getpw* reuse their buffer */
		static char name[64];

		snprintf(name, sizeof(name), "%s", pw->pw_name);
		o->user_name = name;
	}
}

const char *trace_options_user(const struct trace_options *o, char *buf, size_t len)
{
	if (o->user_name)
		snprintf(buf, len, "%s (uid %u)", o->user_name, o->user_uid);
	else
		snprintf(buf, len, "uid %u", o->user_uid);
	return buf;
}

static void parse_pids(const char *arg, struct trace_options *o)
{
	const char *p = arg;

	while (*p) {
		char *end;
		long v;

		errno = 0;
		v = strtol(p, &end, 10);
		if (errno || end == p || v <= 0 || v > 0x7fffffff || (*end && *end != ',') ||
		    o->n_pids == TRACE_MAX_PIDS) {
			fprintf(stderr, "ctrace-bpf: -p needs process ids (positive numbers, comma-separated), not '%s'\n", arg);
			exit(2);
		}
		o->pids[o->n_pids++] = (int)v;
		p = *end ? end + 1 : end;
	}
	if (!o->n_pids) {
		fprintf(stderr, "ctrace-bpf: -p needs process ids (positive numbers, comma-separated), not '%s'\n", arg);
		exit(2);
	}
}

/*
 * One line for an option getopt refused. getopt_long's optopt is the
 * option's val, which for a long option given a value it does not take
 * ("--fast=1") is an internal letter the user never typed: name what the
 * user wrote instead.
 */
static void bad_option(const char *arg, const struct option *longopts)
{
	if (!strncmp(arg, "--", 2)) {
		size_t len = strcspn(arg + 2, "=");

		for (const struct option *lo = longopts; lo->name; lo++) {
			if (strlen(lo->name) != len || strncmp(lo->name, arg + 2, len))
				continue;
			if (lo->has_arg == no_argument)
				fprintf(stderr, "ctrace-bpf: --%s takes no value; see ctrace-bpf --help\n", lo->name);
			else
				fprintf(stderr, "ctrace-bpf: --%s needs a value; see ctrace-bpf --help\n", lo->name);
			exit(2);
		}
		fprintf(stderr, "ctrace-bpf: unknown option '%.*s'; see ctrace-bpf --help\n",
			(int)(len + 2), arg);
	} else if (optopt && strchr("peodb", optopt)) {
		fprintf(stderr, "ctrace-bpf: option -%c needs a value; see ctrace-bpf --help\n", optopt);
	} else if (optopt) {
		fprintf(stderr, "ctrace-bpf: option -%c is unknown; see ctrace-bpf --help\n", optopt);
	} else {
		fprintf(stderr, "ctrace-bpf: unknown option '%s'; see ctrace-bpf --help\n", arg);
	}
	exit(2);
}

/*
 * --fast only where no traced process's child can die of it. Linux 6.18
 * turns a uprobe on the nop5 into a call to a per-process trampoline page
 * after its first hit, and fork() copies the patched code but not that
 * page: a child that runs a site its parent had hit jumps to an unmapped
 * page (SIGSEGV). The tracer hears of a fork only after the child can run
 * (the child may reach the site at its first instruction), and nothing it
 * could do then is in time, so the rule is made before attaching: never
 * with -f (a followed child runs its parent's sites by design), and not at
 * all where the kernel optimizes the nop5 (every kernel that does so has
 * the bug so far). Elsewhere --fast attaches at the 1-byte nop (said in
 * bpf_load.c). CTRACE_FAST_DESPITE_FORK=1 allows it anyway, for the tests
 * and benchmarks of the nop5 path, whose programs never fork.
 */
static void check_fast(const struct trace_options *o)
{
	const char *force = getenv("CTRACE_FAST_DESPITE_FORK");

	if (!o->fast || (force && !strcmp(force, "1")))
		return;
	if (o->follow) {
		fputs("ctrace-bpf: --fast cannot go with -f: a followed child runs the probe sites its parent hit, and there the optimized nop5 kills it (Linux 6.18); drop --fast\n",
		      stderr);
		exit(2);
	}
	if (kernel_optimizes_nop5()) {
		fputs("ctrace-bpf: --fast is refused on this kernel: it optimizes the nop5 but does not copy the optimized call's trampoline at fork, so a child the traced process forks dies at the first probe site its parent had hit, and no fork can be caught in time; drop --fast\n",
		      stderr);
		exit(2);
	}
}

/* --stacks[=A,B]: each word a depth (1-127), fp or dwarf. */
static void parse_stacks(const char *arg, struct trace_options *o)
{
	char words[64], *save = NULL;

	o->stack_depth = 32;
	if (!arg)
		return;
	if (!*arg || strlen(arg) >= sizeof(words))
		goto bad;
	strcpy(words, arg);
	for (char *w = strtok_r(words, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
		char *end;
		unsigned long n;

		if (!strcmp(w, "fp")) {
			o->stack_how = CTRACE_STACK_FP;
			continue;
		}
		if (!strcmp(w, "dwarf")) {
			o->stack_how = CTRACE_STACK_DWARF;
			continue;
		}
		if (w[0] < '0' || w[0] > '9')
			goto bad;
		n = strtoul(w, &end, 10);
		if (*end || n < 1 || n > CTRACE_STACK_DEPTH_MAX)
			goto bad;
		o->stack_depth = (unsigned)n;
	}
	return;
bad:
	fprintf(stderr, "ctrace-bpf: --stacks takes a depth from 1 to %d and/or fp or dwarf, like --stacks=16 or --stacks=dwarf,64, not '%s'\n",
		CTRACE_STACK_DEPTH_MAX, arg);
	exit(2);
}

/* --format, or the name's .pftrace: Perfetto's protobuf, converted from the JSON as it is written (pftrace.h). */
static void check_format(struct trace_options *o, const char *format)
{
	o->perfetto = format ? !strcmp(format, "perfetto") : o->output && output_is_pftrace(o->output);
	if (!o->perfetto)
		return;
	if (o->output && trace_sink_path_is_gzip(o->output)) {
		fputs("ctrace-bpf: --format perfetto writes a protobuf trace, not gzip: give -o FILE.pftrace\n", stderr);
		exit(2);
	}
	if (o->ring_size || o->max_size || o->max_files || o->stack_depth) {
		fprintf(stderr, "ctrace-bpf: the Perfetto format (-o FILE.pftrace) does not take %s: write JSON (-o FILE.json) for it\n",
			o->ring_size ? "--ring" : o->stack_depth ? "--stacks" : o->max_size ? "--max-size" : "--max-files");
		exit(2);
	}
}

/* --max-size and --max-files against -o: what they need of each other. */
static void check_output_limits(const struct trace_options *o)
{
	bool numbered = o->output && strstr(o->output, "%n");

	if (o->output && !strcmp(o->output, "-") && o->max_size) {
		fputs("ctrace-bpf: --max-size needs a file: with -o - the reader of the pipe decides what to keep\n", stderr);
		exit(2);
	}
	if (numbered && !o->max_size && !o->ring_size) {
		fprintf(stderr, "ctrace-bpf: -o %s numbers files (%%n) only with --max-size SIZE or --ring SIZE; give one, or a name without %%n\n",
			o->output);
		exit(2);
	}
	if (o->max_files && !numbered) {
		fputs("ctrace-bpf: --max-files needs numbered files: -o NAME-%n.json.gz --max-size SIZE\n", stderr);
		exit(2);
	}
}

/* --otlp and -o FILE.otlp.json: one destination, a trace written as it goes. */
static void check_otlp(struct trace_options *o)
{
	if (otlp_export_path_is_file(o->output))
		o->otlp_file = o->output;
	if (o->otlp_file && o->otlp_url) {
		fputs("ctrace-bpf: give --otlp URL or -o FILE.otlp.json, not both (with --otlp, -o names the JSON trace)\n",
		      stderr);
		exit(2);
	}
	if ((o->otlp_file || o->otlp_url) && o->ring_size) {
		fputs("ctrace-bpf: --ring keeps the latest events for its dumps: it does not export OTLP (--otlp, -o FILE.otlp.json)\n",
		      stderr);
		exit(2);
	}
	if (o->otlp_file && o->max_size) {
		fputs("ctrace-bpf: -o FILE.otlp.json is one file: it does not take --max-size\n", stderr);
		exit(2);
	}
	if (o->otlp_file && o->perfetto) {
		fputs("ctrace-bpf: -o FILE.otlp.json writes OTLP JSON lines, not a Perfetto trace: drop --format perfetto\n",
		      stderr);
		exit(2);
	}
}

void trace_options_parse(int argc, char **argv, struct trace_options *o)
{
	static const struct option longopts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "exe", required_argument, NULL, 'e' },
		{ "follow", no_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "duration", required_argument, NULL, 'd' },
		{ "buffer-size", required_argument, NULL, 'b' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "fast", no_argument, NULL, 'F' },
		{ "no-batch", no_argument, NULL, 'N' },
		{ "max-memory", required_argument, NULL, 'M' },
		{ "max-size", required_argument, NULL, 'Z' },
		{ "max-backlog", required_argument, NULL, 'L' },
		{ "max-files", required_argument, NULL, 'K' },
		{ "stacks", optional_argument, NULL, 'S' },
		{ "categories", required_argument, NULL, 'C' },
		{ "usdt", required_argument, NULL, 'U' },
		{ "ring", required_argument, NULL, 'R' },
		{ "format", required_argument, NULL, 'T' },
		{ "otlp", required_argument, NULL, 'O' },
		{ "mode", required_argument, NULL, 'm' },
		{ "user", required_argument, NULL, 'u' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 },
	};
	int c, modes;
	const char *format = NULL; /* --format */

	memset(o, 0, sizeof(*o));
	o->max_memory = TRACE_MEMORY_DEFAULT;
	o->max_backlog = TRACE_BACKLOG_DEFAULT;
	o->output_mode = OUTPUT_MODE_DEFAULT;
	opterr = 0; /* one line of our own instead of getopt's and ours */
	/* "+": stop at the first non-option, the command of launch mode. */
	while ((c = getopt_long(argc, argv, "+p:e:fo:d:b:vqhV", longopts, NULL)) != -1) {
		switch (c) {
		case 'p':
			parse_pids(optarg, o);
			break;
		case 'e':
			o->exe = optarg;
			break;
		case 'f':
			o->follow = true;
			break;
		case 'o':
			o->output = optarg;
			break;
		case 'd':
			o->duration = parse_seconds(optarg);
			if (!o->duration) {
				fprintf(stderr, "ctrace-bpf: -d needs a duration in seconds, like 10 or 0.5, not '%s'\n", optarg);
				exit(2);
			}
			break;
		case 'b':
			o->buffer_size = parse_size(optarg);
			if (!o->buffer_size) {
				fprintf(stderr, "ctrace-bpf: -b needs a size from 64K to 1G, like 64K or 16M, not '%s'\n", optarg);
				exit(2);
			}
			break;
		case 'M':
			o->max_memory = parse_bytes(optarg, TRACE_MEMORY_MIN, MAX_MEMORY_LIMIT);
			if (!o->max_memory) {
				fprintf(stderr, "ctrace-bpf: --max-memory needs a size from %lluM to 1024G, like 64M or 1G, not '%s'\n",
					TRACE_MEMORY_MIN >> 20, optarg);
				exit(2);
			}
			break;
		case 'Z':
			o->max_size = parse_bytes(optarg, TRACE_MAX_SIZE_MIN, MAX_MEMORY_LIMIT);
			if (!o->max_size) {
				fprintf(stderr, "ctrace-bpf: --max-size needs a size from 1M to 1024G, like 100M or 1G, not '%s'\n",
					optarg);
				exit(2);
			}
			break;
		case 'L':
			o->max_backlog = parse_bytes(optarg, TRACE_BACKLOG_MIN, MAX_MEMORY_LIMIT);
			if (!o->max_backlog) {
				fprintf(stderr, "ctrace-bpf: --max-backlog needs a size from 32M to 1024G, like 256M or 4G, not '%s'\n",
					optarg);
				exit(2);
			}
			break;
		case 'K':
			/* A count, read as a size without a suffix: digits only. */
			o->max_files = strspn(optarg, "0123456789") == strlen(optarg) ?
					       parse_bytes(optarg, 1, 1000000) : 0;
			if (!o->max_files) {
				fprintf(stderr, "ctrace-bpf: --max-files needs a number of files from 1 to 1000000, not '%s'\n",
					optarg);
				exit(2);
			}
			break;
		case 'T':
			if (!strcmp(optarg, "perfetto") || !strcmp(optarg, "json")) {
				format = optarg;
				break;
			}
			fprintf(stderr, "ctrace-bpf: --format takes json or perfetto, not '%s'\n", optarg);
			exit(2);
		case 'm':
			o->output_mode = parse_mode(optarg);
			break;
		case 'u':
			parse_user(optarg, o);
			break;
		case 'R':
			o->ring_size = parse_bytes(optarg, TRACE_RING_MIN, TRACE_RING_MAX);
			if (!o->ring_size) {
				fprintf(stderr, "ctrace-bpf: --ring needs a size from 64K to 1G, like 1M or 64M, not '%s'\n", optarg);
				exit(2);
			}
			break;
		case 'O':
			if (strncmp(optarg, "http://", 7) && strncmp(optarg, "https://", 8)) {
				fprintf(stderr, "ctrace-bpf: --otlp needs the collector's OTLP/HTTP URL, like http://127.0.0.1:4318, not '%s'\n",
					optarg);
				exit(2);
			}
			o->otlp_url = optarg;
			break;
		case 'C': {
			char err[300];

			if (category_filter_parse(&o->categories, optarg, err, sizeof(err))) {
				fprintf(stderr, "ctrace-bpf: %s\n", err);
				exit(2);
			}
			break;
		}
		case 'U': {
			char err[400];

			o->usdt = &o->usdt_given;
			if (usdt_specs_add(o->usdt, optarg, err, sizeof(err))) {
				fprintf(stderr, "ctrace-bpf: %s\n", err);
				exit(2);
			}
			break;
		}
		case 'v':
			o->verbose = true;
			break;
		case 'q':
			o->quiet = true;
			break;
		case 'F':
			o->fast = true;
			break;
		case 'N':
			o->no_batch = true;
			break;
		case 'S':
			parse_stacks(optarg, o);
			break;
		case 'h':
			fputs(usage_text, stdout);
			exit(0);
		case 'V':
			printf("ctrace-bpf %s (libbpf %s)\n", CTRACE_BPF_VERSION, libbpf_version_string());
			exit(0);
		default:
			bad_option(argv[optind - 1], longopts);
		}
	}
	if (optind < argc) {
		/*
		 * A program to run comes after `--`, or is named by a path: a
		 * mistyped subcommand ("ctrace-bpf lsit") must not run a
		 * program of that name found in $PATH.
		 */
		bool after_dashes = optind > 1 && !strcmp(argv[optind - 1], "--") &&
				    argv[optind - 1] != o->output;

		if (!after_dashes && !strchr(argv[optind], '/')) {
			fprintf(stderr, "ctrace-bpf: '%s' is not a command (list, fix, report); to trace a program, run it as: ctrace-bpf [options] -- %s\n",
				argv[optind], argv[optind]);
			exit(2);
		}
		o->command = argv + optind;
	}
	modes = (o->n_pids > 0) + (o->exe != NULL) + (o->command != NULL);
	if (modes == 0) {
		fputs("ctrace-bpf: what to trace? give -p PID, --exe PATH or -- COMMAND (see ctrace-bpf --help)\n", stderr);
		exit(2);
	}
	if (modes > 1) {
		fputs("ctrace-bpf: give one of -p PID, --exe PATH or -- COMMAND, not several\n", stderr);
		exit(2);
	}
	if (o->user_set && o->command) {
		fputs("ctrace-bpf: --user picks whose processes -p and --exe trace; a launched command runs as you: drop --user\n",
		      stderr);
		exit(2);
	}
	check_fast(o);
	check_output_limits(o);
	check_format(o, format);
	if (o->ring_size && o->output && !strcmp(o->output, "-")) {
		fputs("ctrace-bpf: --ring writes a file per dump: give -o FILE.json, not -o -\n", stderr);
		exit(2);
	}
	if (o->ring_size && o->output && trace_sink_path_is_gzip(o->output)) {
		fputs("ctrace-bpf: --ring writes its dumps as plain JSON: give -o FILE.json (gzip them afterwards if you like)\n",
		      stderr);
		exit(2);
	}
	if (o->ring_size && (o->max_size || o->max_files)) {
		fputs("ctrace-bpf: --ring keeps its events in memory and writes a file per dump: it does not take --max-size or --max-files\n",
		      stderr);
		exit(2);
	}
	check_otlp(o);
	/* The whole integration suite runs per event with it (CI). */
	if (getenv("CTRACE_NO_BATCH") && !strcmp(getenv("CTRACE_NO_BATCH"), "1"))
		o->no_batch = true;
	/* A batched event is written into the thread's buffer with no probe hit: no stack to take. */
	if (o->stack_depth && !o->no_batch) {
		o->no_batch = true;
		o->event_path_why = "--stacks: a batched event has no probe hit to take its stack at";
	}
}
