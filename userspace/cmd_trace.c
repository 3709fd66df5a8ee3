// SPDX-License-Identifier: MIT
/*
 * cmd_trace.c - `ctrace-bpf -p PID`: attach to the ctrace probes of a running
 * process and write what they report as a Chrome Trace Event JSON file
 * (Perfetto UI, chrome://tracing).
 *
 * The journey of one event: include/ctrace.h (the probe site) -> bpf/ctrace.bpf.c
 * (a ring-buffer record) -> record_decode.c -> trace_model.c -> trace_file.c
 * and json_writer.c (the output).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "attach.h"
#include "commands.h"
#include "ctrace.skel.h"
#include "json_writer.h"
#include "output_file.h"
#include "preflight.h"
#include "proc_info.h"
#include "record_decode.h"
#include "trace_file.h"
#include "trace_model.h"

static const char usage_text[] =
	"Usage: ctrace-bpf -p PID [-o FILE] [-d SECONDS] [-b SIZE] [-v]\n"
	"\n"
	"Attaches to the ctrace probes (include/ctrace.h) of a running process and\n"
	"writes a Chrome Trace Event JSON file, for Perfetto UI or chrome://tracing.\n"
	"Tracing stops on Ctrl-C, SIGTERM, after -d SECONDS, or when the process\n"
	"exits; every way of stopping leaves a complete file.\n"
	"\n"
	"  -p, --pid PID        the process to trace\n"
	"  -o, --output FILE    where to write the trace (default ctrace-PID.json;\n"
	"                       - for standard output)\n"
	"  -d, --duration SECS  stop after this many seconds (decimals allowed)\n"
	"  -b, --buffer-size SIZE  ring buffer between kernel and tracer, e.g. 64K,\n"
	"                       16M (default 8M; rounded up to a power of two)\n"
	"  -v, --verbose        say what is attached; show libbpf's messages\n"
	"  -h, --help           this text\n"
	"  -V, --version        the version\n"
	"\n"
	"Needs root (or CAP_BPF, CAP_PERFMON and CAP_SYS_PTRACE).\n"
	"\n"
	"Examples:\n"
	"  sudo ctrace-bpf -p 1234                  # until Ctrl-C or exit, to ctrace-1234.json\n"
	"  sudo ctrace-bpf -p $(pidof myserver) -d 10 -o server.json\n"
	"  sudo ctrace-bpf -p 1234 -o - | gzip > trace.json.gz\n"
	"Then open the file at https://ui.perfetto.dev (Open trace file).\n";

struct options {
	int pid;
	const char *output;
	double duration;
	unsigned long buffer_size;
	bool verbose;
};

/* "64K", "16M", "1G" or bytes -> bytes, rounded up to a power of two; 0 if invalid. */
static unsigned long parse_size(const char *s)
{
	unsigned long long v, p = 4096;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return 0;
	switch (*end) {
	case 'k': case 'K': v <<= 10; end++; break;
	case 'm': case 'M': v <<= 20; end++; break;
	case 'g': case 'G': v <<= 30; end++; break;
	}
	if (*end == 'i' || *end == 'b' || *end == 'B')
		end += (*end == 'i' && (end[1] == 'B' || end[1] == 'b')) ? 2 : 1;
	if (*end || v < 4096 || v > (1ull << 30))
		return 0;
	while (p < v)
		p <<= 1;
	return (unsigned long)p;
}

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

static bool verbose_libbpf;

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG || (!verbose_libbpf && level != LIBBPF_WARN))
		return 0;
	if (!verbose_libbpf)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static uint64_t now_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* Parses the command line; exits with a one-line message when it is wrong. */
static void parse_args(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "output", required_argument, NULL, 'o' },
		{ "duration", required_argument, NULL, 'd' },
		{ "buffer-size", required_argument, NULL, 'b' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 },
	};
	int c;
	char *end;

	memset(o, 0, sizeof(*o));
	while ((c = getopt_long(argc, argv, "p:o:d:b:vhV", longopts, NULL)) != -1) {
		switch (c) {
		case 'p': {
			long v;

			errno = 0;
			v = strtol(optarg, &end, 10);
			if (errno || *end || end == optarg || v <= 0 || v > 0x7fffffff) {
				fprintf(stderr, "ctrace-bpf: -p needs a process id (a positive number), not '%s'\n", optarg);
				exit(2);
			}
			o->pid = (int)v;
			break;
		}
		case 'o':
			o->output = optarg;
			break;
		case 'd':
			o->duration = strtod(optarg, &end);
			if (*end || end == optarg || !(o->duration > 0) || o->duration > 1e9) {
				fprintf(stderr, "ctrace-bpf: -d needs a duration in seconds, like 10 or 0.5, not '%s'\n", optarg);
				exit(2);
			}
			break;
		case 'b':
			o->buffer_size = parse_size(optarg);
			if (!o->buffer_size) {
				fprintf(stderr, "ctrace-bpf: -b needs a size from 4K to 1G, like 64K or 16M, not '%s'\n", optarg);
				exit(2);
			}
			break;
		case 'v':
			o->verbose = true;
			break;
		case 'h':
			fputs(usage_text, stdout);
			fputs(commands_usage, stdout);
			exit(0);
		case 'V':
			printf("ctrace-bpf %s (libbpf %s)\n", CTRACE_BPF_VERSION, libbpf_version_string());
			exit(0);
		default:
			fputs("ctrace-bpf: see ctrace-bpf --help\n", stderr);
			exit(2);
		}
	}
	if (optind < argc) {
		fprintf(stderr, "ctrace-bpf: unexpected argument '%s'; see ctrace-bpf --help\n", argv[optind]);
		exit(2);
	}
	if (!o->pid) {
		fputs("ctrace-bpf: which process? give its pid with -p PID (see ctrace-bpf --help)\n", stderr);
		exit(2);
	}
}

struct session {
	int pid;
	struct tsc_clock tsc;
	uint64_t drops_reported;
	struct trace_stats stats;
	struct trace_model model;
	bool verbose;
};

/* Strings the probe could not read (a page not yet faulted in) are read again from /proc. */
static void late_read(struct session *s, struct ctrace_event *ev, int arg,
		      const char **str, size_t *len, unsigned *flags,
		      char *buf, size_t max)
{
	bool truncated;
	ssize_t n;

	if (arg < 0 || !(*flags & CTRACE_STR_FAULT))
		return;
	n = proc_read_str((int)ev->tgid, ev->arg[arg], buf, max, &truncated);
	if (n < 0) {
		s->stats.unreadable_strings++;
		return;
	}
	s->stats.late_string_reads++;
	*str = buf;
	*len = (size_t)n;
	*flags = truncated ? CTRACE_STR_TRUNCATED : 0;
}

static int on_record(void *ctx, void *data, size_t size)
{
	static char name_buf[CTRACE_NAME_MAX], args_buf[CTRACE_ARGS_MAX];
	struct session *s = ctx;
	struct ctrace_event ev;

	s->stats.records++;
	if (record_decode(data, size, &ev) < 0) {
		s->stats.bad_records++;
		return 0;
	}
	late_read(s, &ev, record_name_arg(ev.kind), &ev.name, &ev.name_len,
		  &ev.name_flags, name_buf, sizeof(name_buf));
	late_read(s, &ev, record_args_arg(ev.kind), &ev.args, &ev.args_len,
		  &ev.args_flags, args_buf, sizeof(args_buf));
	trace_model_event(&s->model, &ev);
	return 0;
}

/* Says in the trace, at about the time it happened, that records were lost. */
static void report_drops(struct session *s, const struct ctrace_bpf *skel, int pid)
{
	uint64_t total = skel->bss->dropped;

	if (total == s->drops_reported)
		return;
	trace_model_drops(&s->model, (uint32_t)pid, now_ns(CLOCK_MONOTONIC),
			  total - s->drops_reported, total);
	s->drops_reported = total;
}

/* True once the target has exited (a pidfd turns readable, zombie or not). */
static bool target_gone(int pidfd, int pid)
{
	struct pollfd p = { pidfd, POLLIN, 0 };

	if (pidfd >= 0)
		return poll(&p, 1, 0) > 0;
	return kill(pid, 0) != 0 && errno == ESRCH;
}

/*
 * Opens and loads the BPF programs: for uprobe_multi links when `multi`
 * (one link per probe kind and object: fast to attach and to detach, and
 * the program is bound before any uprobe is registered), else for one
 * perf-event uprobe per site.
 */
static struct ctrace_bpf *load_programs(const struct options *o, bool multi)
{
	struct ctrace_bpf *skel = ctrace_bpf__open();
	int err;

	if (!skel) {
		fprintf(stderr, "ctrace-bpf: cannot open the BPF object: %s\n", strerror(errno));
		return NULL;
	}
	if (o->buffer_size &&
	    bpf_map__set_max_entries(skel->maps.events, (__u32)o->buffer_size)) {
		fprintf(stderr, "ctrace-bpf: cannot size the ring buffer to %lu bytes\n", o->buffer_size);
		goto fail;
	}
	/* Wake the loader when an eighth of the ring buffer is in use. */
	skel->rodata->wakeup_bytes = bpf_map__max_entries(skel->maps.events) / 8;
	if (multi)
		attach_prepare_multi(skel);
	err = ctrace_bpf__load(skel);
	if (err) {
		if (multi)
			goto fail; /* quietly: the caller tries without */
		fprintf(stderr, "ctrace-bpf: the kernel refused the BPF program: %s (run with -v for the verifier's log)\n",
			strerror(-err));
		goto fail;
	}
	return skel;
fail:
	ctrace_bpf__destroy(skel);
	return NULL;
}

/* Loads the programs and attaches to every ctrace site of the process. */
static int load_and_attach(const struct options *o, struct ctrace_bpf **skel_out,
			   struct attachment *att)
{
	/* CTRACE_NO_MULTI=1 forces one perf-event uprobe per site (to compare). */
	int first = getenv("CTRACE_NO_MULTI") ? 0 : 1;

	for (int multi = first; multi >= 0; multi--) {
		struct ctrace_bpf *skel = load_programs(o, multi);
		int err;

		if (!skel) {
			if (multi)
				continue;
			return -EINVAL;
		}
		attachment_init(att, multi, o->verbose);
		err = attach_process(skel, o->pid, att);
		if (err == -EOPNOTSUPP && multi) {
			if (o->verbose)
				fputs("ctrace-bpf: no uprobe_multi links on this kernel: one uprobe per site\n", stderr);
			attachment_free(att);
			ctrace_bpf__destroy(skel);
			continue;
		}
		*skel_out = skel;
		return err < 0 ? err : 0;
	}
	return -EINVAL;
}

int cmd_trace(int argc, char **argv)
{
	struct options o;
	struct proc_facts target;
	struct trace_facts facts = { 0 };
	struct session s = { 0 };
	struct attachment att;
	struct ctrace_bpf *skel = NULL;
	struct ring_buffer *rb = NULL;
	struct json_writer w = { 0 };
	struct trace_file tf = { 0 };
	char default_out[64];
	bool created = false;
	int out_fd = -1, pidfd = -1, err, exit_code = 1;
	uint64_t deadline = 0, next_scan = 0;

	attachment_init(&att, false, false);
	parse_args(argc, argv, &o);
	verbose_libbpf = o.verbose;
	libbpf_set_print(libbpf_print);
	if (!o.output) {
		snprintf(default_out, sizeof(default_out), "ctrace-%d.json", o.pid);
		o.output = default_out;
	}
	if (proc_facts_read(o.pid, &target) < 0) {
		fprintf(stderr, "ctrace-bpf: no process with pid %d (is it still running? try: pgrep -a NAME)\n", o.pid);
		return 1;
	}
	if (!preflight_privileges() || !preflight_kernel())
		goto out;
	/* Before attaching: a bad output path must not touch the target at all. */
	out_fd = output_open(o.output, &created);
	if (out_fd < 0)
		goto out;

	/* The trace starts before the first probe can fire. */
	facts.start_wall_ns = now_ns(CLOCK_REALTIME);
	facts.start_mono_ns = now_ns(CLOCK_MONOTONIC);
	{
		/* /proc gives the target's start on CLOCK_BOOTTIME; say it on the other two clocks. */
		uint64_t since_start = now_ns(CLOCK_BOOTTIME) - target.start_boottime_ns;

		facts.target_start_wall_ns = facts.start_wall_ns - since_start;
		facts.target_start_mono_ns = facts.start_mono_ns > since_start ?
						     facts.start_mono_ns - since_start : 0;
	}
	err = load_and_attach(&o, &skel, &att);
	if (err == -ESRCH) {
		fprintf(stderr, "ctrace-bpf: process %d exited before it could be traced\n", o.pid);
		goto out;
	}
	if (err)
		goto out; /* said why */
	if (!att.sites) {
		fprintf(stderr, "ctrace-bpf: process %d (%s) has no ctrace probes; looked in: %s."
			" Build it with include/ctrace.h and use its CTRACE_* macros.\n",
			o.pid, target.comm, att.looked_in[0] ? att.looked_in : "(no mapped files)");
		goto out;
	}
	if (jw_init(&w, out_fd, 1 << 20) < 0) {
		fputs("ctrace-bpf: out of memory\n", stderr);
		goto out;
	}

	facts.tracer_version = CTRACE_BPF_VERSION;
	facts.target = &target;
	facts.probes_attached = att.sites;
	facts.objects_with_probes = att.objects_with_probes;
	trace_file_begin(&tf, &w, &facts);
	s.pid = o.pid;
	s.verbose = o.verbose;
	trace_model_init(&s.model, &tf, &s.stats);
	tsc_clock_init(&s.tsc);
	s.model.tsc = &s.tsc;
	trace_model_learn_threads(&s.model, (uint32_t)o.pid);
	trace_model_add_process(&s.model, (uint32_t)o.pid);

	rb = ring_buffer__new(bpf_map__fd(skel->maps.events), on_record, &s, NULL);
	if (!rb) {
		fprintf(stderr, "ctrace-bpf: cannot read the ring buffer: %s\n", strerror(errno));
		goto out;
	}
	{
		struct sigaction sa = { 0 };

		sa.sa_handler = on_signal;
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
		sigaction(SIGHUP, &sa, NULL);
		signal(SIGPIPE, SIG_IGN); /* a closed pipe is a write error we report */
	}
	pidfd = (int)syscall(SYS_pidfd_open, o.pid, 0);
	if (o.duration > 0)
		deadline = facts.start_mono_ns + (uint64_t)(o.duration * 1e9);
	fprintf(stderr, "ctrace-bpf: tracing process %d (%s): %u probes in %u objects; writing %s; Ctrl-C to stop\n",
		o.pid, target.comm, att.sites, att.objects_with_probes,
		strcmp(o.output, "-") ? o.output : "standard output");

	s.stats.stop_reason = "interrupted";
	for (;;) {
		uint64_t now;

		err = ring_buffer__poll(rb, 50);
		/*
		 * The BPF side wakes us only once a batch is waiting: take what
		 * is there on every round anyway, so events arrive within ~50 ms.
		 */
		if (err >= 0 || err == -EINTR)
			err = ring_buffer__consume(rb);
		if (err < 0 && err != -EINTR) {
			fprintf(stderr, "ctrace-bpf: reading events failed: %s\n", strerror(-err));
			s.stats.stop_reason = "error reading events";
			break;
		}
		report_drops(&s, skel, o.pid);
		now = now_ns(CLOCK_MONOTONIC);
		if (now >= next_scan) {
			/* Libraries loaded since (dlopen), and the names of new threads. */
			attach_process(skel, o.pid, &att);
			trace_model_learn_threads(&s.model, (uint32_t)o.pid);
			tsc_clock_update(&s.tsc);
			next_scan = now + 100 * 1000000ull;
		}
		if (stop_signal) {
			s.stats.stop_reason = stop_signal == SIGINT ? "SIGINT" :
					      stop_signal == SIGTERM ? "SIGTERM" : "SIGHUP";
			break;
		}
		if (deadline && now >= deadline) {
			s.stats.stop_reason = "duration elapsed";
			break;
		}
		if (target_gone(pidfd, o.pid)) {
			s.stats.stop_reason = "target exited";
			break;
		}
		if (w.err) {
			s.stats.stop_reason = "write error";
			break;
		}
	}

	/*
	 * The stop is now: spans still open end here. Then detach, so that
	 * nothing new arrives, and take what is left.
	 */
	s.stats.stop_mono_ns = now_ns(CLOCK_MONOTONIC);
	attachment_free(&att);
	ring_buffer__consume(rb);
	report_drops(&s, skel, o.pid);
	s.stats.dropped = skel->bss->dropped;
	trace_model_finish(&s.model, s.stats.stop_mono_ns);
	trace_file_end(&tf, &facts, &s.stats);
	s.stats.events_written = tf.events;
	if (jw_flush(&w) < 0 || w.err) {
		fprintf(stderr, "ctrace-bpf: writing %s failed: %s\n", o.output, strerror(w.err));
		goto out;
	}
	if (out_fd >= 0 && strcmp(o.output, "-") && fsync(out_fd) != 0 && errno != EINVAL) {
		fprintf(stderr, "ctrace-bpf: writing %s failed: %s\n", o.output, strerror(errno));
		goto out;
	}
	fprintf(stderr, "ctrace-bpf: %s: %llu events written, %llu dropped%s. Open it in Perfetto UI (https://ui.perfetto.dev) or chrome://tracing\n",
		s.stats.stop_reason, (unsigned long long)tf.events,
		(unsigned long long)s.stats.dropped,
		s.stats.dropped ? " (the ring buffer was full)" : "");
	exit_code = 0;
out:
	attachment_free(&att);
	ring_buffer__free(rb);
	ctrace_bpf__destroy(skel);
	jw_free(&w);
	if (out_fd >= 0)
		close(out_fd);
	/* Tracing never started: leave no empty file behind. */
	if (exit_code && created && !tf.events)
		unlink(o.output);
	if (pidfd >= 0)
		close(pidfd);
	proc_facts_free(&target);
	return exit_code;
}
