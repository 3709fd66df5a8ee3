// SPDX-License-Identifier: MIT
/*
 * session.c - a session's start (the BPF programs loaded with their
 * fallbacks, the targets attached, what the trace says it traces) and its
 * end (everything freed, the exit code).
 */
#include "session/session.h"

#include "attach/stack_mode.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "ctrace.skel.h"
#include "capture/capture_journal.h"
#include "model/model_facts.h"
#include "session/ptrace_access.h"
#include "lib/term_safe.h"

volatile sig_atomic_t session_stop_signal;

volatile sig_atomic_t session_dump_signal;

static void on_signal(int sig)
{
	session_stop_signal = sig;
}

static void on_dump_signal(int sig)
{
	(void)sig;
	session_dump_signal = 1;
}

static bool verbose_libbpf;

/*
 * libbpf's messages name the files it reads (a traced program's, with
 * --usdt): made safe, their lines and the verifier log's tabs kept.
 */
static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char *text;
	int n;

	if (!verbose_libbpf || level == LIBBPF_DEBUG)
		return 0;
	n = vasprintf(&text, fmt, ap);
	if (n < 0)
		return n;
	for (const char *p = text; *p;) {
		size_t run = strcspn(p, "\n\t");

		term_safe_put(stderr, p, run);
		p += run;
		if (*p)
			fputc(*p++, stderr);
	}
	free(text);
	return n;
}

uint64_t session_now_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

void session_init(struct session *s, struct trace_options *o)
{
	/*
	 * From the start: a Ctrl-C while loading or attaching must still end
	 * cleanly, with a complete file (or none), not kill us halfway.
	 */
	struct sigaction sa = { 0 };

	memset(s, 0, sizeof(*s));
	s->o = o;
	s->status.fd = -1; /* no status line until session_start */
	record_strings_init(&s->strings, &s->stats);
	attachment_init(&s->att, false, false);
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN); /* a closed pipe is a write error we report */
	if (o->ring_size) { /* --ring: kill -USR1 asks for a dump */
		sa.sa_handler = on_dump_signal;
		sigaction(SIGUSR1, &sa, NULL);
	}
	verbose_libbpf = o->verbose;
	libbpf_set_print(libbpf_print);
}

/* The model the records go to, and what it knows before the first. */
static void begin_model(struct session *s)
{
	const struct trace_options *o = s->o;

	trace_model_init(&s->model, &s->out->fan, &s->stats);
	s->model_live = true;
	if (o->command) /* held before its first instruction: nothing began untraced */
		trace_model_traced_from_start(&s->model, (uint32_t)s->launched.pid);
	tsc_clock_init(&s->tsc);
	s->model.tsc = &s->tsc;
	if (s->cap)
		capture_note_tsc(&s->tsc, &s->cap_tsc_written);
	if (o->usdt) {
		usdt_model_init(&s->usdt, o->usdt);
		s->model.usdt = &s->usdt;
		s->stats.usdt = &s->usdt;
	}
	session_begin_batches(s);
	trace_model_limit_memory(&s->model, o->max_memory, &s->strings.literals, &s->strings.files,
				 &s->bpath.bound);
	/* Thread names now: a short-lived program may be gone before its events are read. */
	for (int i = 0; i < o->n_pids; i++)
		model_facts_threads(&s->model, (uint32_t)o->pids[i]);
}

/* --stacks: fp or dwarf (stack_mode.c) chosen before the programs are loaded, then its tables. */
static void begin_stacks(struct session *s)
{
	struct trace_options *o = s->o;
	static char why[160];
	char exe[64];

	if (!o->stack_depth)
		return;
	if (!o->stack_how) {
		if (!o->exe)
			snprintf(exe, sizeof(exe), "/proc/%d/exe", s->first_pid);
		o->stack_how = stack_mode_for(o->exe ? o->exe : exe, why, sizeof(why));
	} else {
		snprintf(why, sizeof(why), "asked for (--stacks=%s)",
			 o->stack_how == CTRACE_STACK_FP ? "fp" : "dwarf");
	}
	stack_trace_init(&s->stacks, o->stack_how, o->stack_depth, why);
	s->out->tf.frames = &s->stacks.frames;
	s->stats.stacks = &s->stacks.stats;
	if (o->verbose)
		fprintf(stderr, "ctrace-bpf: --stacks: %s, %u frames at most (%s); one probe hit per event (%s)\n",
			o->stack_how == CTRACE_STACK_FP ? "frame pointers" : "DWARF unwinding",
			o->stack_depth, why, o->event_path_why ? o->event_path_why : "--no-batch");
}

/* The programs loaded, the starting targets attached: 0, or -errno having said why. */
static int load_and_attach(struct session *s)
{
	const struct trace_options *o = s->o;
	int err;

	link_map_watch_init(&s->dl, o->follow || o->exe, o->verbose);
	err = bpf_load_and_attach(o, s->exe,
				  &(struct bpf_load_target){ &s->skel, &s->exec_link, &s->fork_link,
							     &s->att, session_attach_targets, s },
				  &s->programs);
	if (err == -ESRCH) {
		fprintf(stderr, "ctrace-bpf: the process exited before it could be traced\n");
		return err;
	}
	if (err == -EACCES || err == -EPERM) {
		char why[512];

		ptrace_access_explain(s->first_pid, why, sizeof(why));
		fprintf(stderr, "ctrace-bpf: cannot read the memory map of process %d: %s (%s)\n",
			s->first_pid, strerror(-err), why);
		return err;
	}
	return err; /* bpf_load said why */
}

/* Nothing attached, and nothing ever will be: one line, true. */
static bool nothing_to_trace(const struct session *s)
{
	if (!s->att.sites && s->first_pid && !s->att.looked_in[0] && proc_exited(s->first_pid)) {
		/* Gone while we loaded: its maps were empty, not without probes. */
		fprintf(stderr, "ctrace-bpf: process %d exited before it could be traced\n", s->first_pid);
		return true;
	}
	if (!s->att.sites && s->o->exe && s->o->usdt) {
		fprintf(stderr, "ctrace-bpf: %s has no ctrace probes nor probes --usdt names (see ctrace-bpf list %s)\n",
			s->o->exe, s->o->exe);
		return true;
	}
	if (!s->att.sites && s->o->exe) {
		fprintf(stderr, "ctrace-bpf: %s has no ctrace probes. Build it with include/ctrace.h and use its CTRACE_* macros.\n",
			s->o->exe);
		return true;
	}
	if (!s->att.sites && !s->att.looked_in[0]) {
		/* No file mapped at all (a kernel thread): it will never load one. */
		fprintf(stderr, "ctrace-bpf: process %d (%s) maps no program file (a kernel thread?): it has no ctrace probes and never will\n",
			s->first_pid, TERM_SAFE(s->target.comm));
		return true;
	}
	return false;
}

/* The targets named in the trace, their dynamic linkers hooked, their maps looked at once more. */
static void name_and_hook_targets(struct session *s)
{
	for (size_t i = 0; i < s->targets.n; i++) {
		/* Named first as it was when tracing began: it may have exec()d since it was armed. */
		uint32_t pid = (uint32_t)s->targets.v[i].pid;

		model_facts_process(&s->model, pid);
		if (s->cap)
			capture_put(s->cap, CAPTURE_TARGET, &pid, sizeof(pid));
		trace_model_add_process(&s->model, (uint32_t)s->targets.v[i].pid);
		model_facts_threads(&s->model, (uint32_t)s->targets.v[i].pid);
	}
	/*
	 * Each target's dynamic linker tells of its dlopen()s as they happen
	 * (session_add_target hooked those of -p and launch mode already,
	 * --exe's are hooked here); then its maps once more, for what was
	 * mapped before the hook was in. After the names: a target may exec
	 * meanwhile.
	 */
	for (size_t i = 0; i < s->targets.n; i++) {
		link_map_watch_process(&s->dl, s->skel->progs.ctrace_link_map, s->att.multi,
				       s->targets.v[i].pid);
		session_attach_process(s, s->targets.v[i].pid);
	}
}

/*
 * --exe: whose processes are traced, for the start's line: "of nobody
 * (uid 65534) alone (1 now)", or "of every user (2 now: uid 0, 1000)".
 * Run via sudo, every user's is the default: said, with the way to one's own.
 */
static void exe_users(const struct session *s, char *buf, size_t len)
{
	const struct trace_options *o = s->o;
	unsigned uids[8];
	size_t n_uids = 0, used;
	bool more = false;
	char user[96];

	if (o->user_set) {
		snprintf(buf, len, " of %s alone (%zu now)", trace_options_user(o, user, sizeof(user)),
			 s->targets.n);
		return;
	}
	for (size_t i = 0; i < s->targets.n; i++) {
		unsigned uid;
		size_t k = 0;

		if (!proc_real_uid(s->targets.v[i].pid, &uid))
			continue;
		while (k < n_uids && uids[k] != uid)
			k++;
		if (k < n_uids)
			continue;
		if (n_uids == sizeof(uids) / sizeof(uids[0]))
			more = true;
		else
			uids[n_uids++] = uid;
	}
	used = (size_t)snprintf(buf, len, ", of every user (%zu now%s", s->targets.n, n_uids ? ": uid " : "");
	for (size_t k = 0; k < n_uids && used < len; k++)
		used += (size_t)snprintf(buf + used, len - used, "%s%u", k ? ", " : "", uids[k]);
	if (used < len)
		snprintf(buf + used, len - used, "%s%s)", more ? ", ..." : "",
			 getenv("SUDO_UID") ? "; --user USER for one user's" : "");
}

static void say_what_is_traced(const struct session *s)
{
	const struct trace_options *o = s->o;
	const char *where = strcmp(o->output, "-") ? o->output : "standard output";
	char ring[4300];

	if (o->quiet)
		return;
	if (s->out->ring) {
		snprintf(ring, sizeof(ring), "--ring %lluK in memory, dumped to %s, -2, ... on SIGUSR1 (kill -USR1 %d), CTRACE_TRIGGER and at the end",
			 o->ring_size >> 10, s->out->dump_path, (int)getpid());
		where = ring;
	}
	if (o->exe) {
		char users[256];

		exe_users(s, users, sizeof(users));
		fprintf(stderr, "ctrace-bpf: tracing every process running %s%s: %u probes; writing %s; Ctrl-C to stop\n",
			o->exe, users, s->att.sites, where);
	} else if (!s->att.sites && s->att.filtered_sites)
		/* A misspelt --categories must not look like a process without probes. */
		fprintf(stderr, "ctrace-bpf: process %d (%s) has %u ctrace probes, none of the categories --categories names (see ctrace-bpf list -p %d): waiting for a library with some; writing %s; Ctrl-C to stop\n",
			s->first_pid, TERM_SAFE(s->target.comm), s->att.filtered_sites, s->first_pid, where);
	else if (!s->att.sites)
		/* A plugin host, an interpreter, a JVM (libjvm.so): its probes may come with a library it loads later. */
		fprintf(stderr, "ctrace-bpf: process %d (%s) has no ctrace probes%s yet (looked in: %s): waiting for it to load a library with probes; writing %s; Ctrl-C to stop\n",
			s->first_pid, TERM_SAFE(s->target.comm), o->usdt ? " nor probes --usdt names" : "",
			s->att.looked_in[0] ? TERM_SAFE(s->att.looked_in) : "no mapped files", where);
	else
		fprintf(stderr, "ctrace-bpf: tracing process %d (%s)%s: %u probes in %u objects; writing %s; Ctrl-C to stop\n",
			s->first_pid, TERM_SAFE(s->target.comm), s->targets.n > 1 ? " and others" : "",
			s->att.sites, s->att.objects_with_probes, where);
}

int session_start(struct session *s, struct trace_output *out)
{
	const struct trace_options *o = s->o;
	struct trace_facts *facts = &out->facts;
	int err;

	s->out = out;
	begin_model(s);
	begin_stacks(s);
	if (session_stop_signal)
		return -EINTR; /* stopped before anything was attached: no file left */
	/*
	 * Here, not at session_init: session_end frees it (a command line
	 * refused before the start returns without it).
	 */
	if (o->exe) /* an exec of it, gone before it is looked at: its literals from this file */
		file_maps_hold_program(&s->strings.files, o->exe);
	err = load_and_attach(s);
	if (err < 0)
		return err;
	/*
	 * -d counts from when the probes rose: the first semaphore up (the
	 * rest of the attach and the load's end come after it), else now (in
	 * launch mode, from the command's start).
	 */
	if (o->duration > 0)
		s->deadline_ns = (s->att.first_armed_ns ? s->att.first_armed_ns : session_now_ns(CLOCK_MONOTONIC)) +
				 (uint64_t)(o->duration * 1e9);
	if (nothing_to_trace(s))
		return -ENOENT;
	s->started = true;
	name_and_hook_targets(s);
	facts->probes_attached = s->att.sites;
	facts->categories = o->categories.list;
	bpf_choice_facts(&s->programs, facts);
	s->model.renames_told = facts->renames_told;
	if (s->cap)
		capture_write_attached(s);
	facts->objects_with_probes = s->att.objects_with_probes;

	s->rb = ring_buffer__new(bpf_map__fd(s->skel->maps.events), session_take_record, s, NULL);
	if (!s->rb) {
		err = -errno;
		fprintf(stderr, "ctrace-bpf: cannot read the ring buffer: %s\n", strerror(-err));
		return err;
	}
	say_what_is_traced(s);
	status_line_start(&s->status, !o->quiet, session_now_ns(CLOCK_MONOTONIC));
	if (o->command && launch_resume(&s->launched) < 0)
		fprintf(stderr, "ctrace-bpf: the command died before it started\n");
	if (o->command && o->duration > 0)
		s->deadline_ns = session_now_ns(CLOCK_MONOTONIC) + (uint64_t)(o->duration * 1e9);
	return 0;
}

/*
 * Launch mode, the tracer failed (its output) once the command ran: the
 * command is the user's, and runs on, untraced, to its own end. Then the
 * exit status is the command's if it failed, else `code`: never 0, the
 * trace is cut. A signal to the tracer while it waits ends the wait.
 */
static int outlived_by_command(struct session *s, int code)
{
	int command_code;

	if (!s->out || !s->out->failure_said)
		fprintf(stderr, "ctrace-bpf: tracing stopped; %s (pid %d) goes on untraced to its end\n",
			s->o->command[0], s->launched.pid);
	session_stop_signal = 0;
	for (;;) {
		if (launch_wait(&s->launched, &command_code))
			return command_code ? command_code : code;
		if (session_stop_signal) {
			fprintf(stderr, "ctrace-bpf: stopped waiting; %s (pid %d) goes on running\n",
				s->o->command[0], s->launched.pid);
			return code;
		}
	}
}

int session_end(struct session *s, int code)
{
	const struct trace_options *o = s->o;
	int command_code;

	status_line_end(&s->status);
	bpf_link__destroy(s->exec_link);
	bpf_link__destroy(s->fork_link);
	link_map_watch_free(&s->dl);
	attachment_free(&s->att);
	ring_buffer__free(s->rb);
	ctrace_bpf__destroy(s->skel);
	if (s->model_live)
		trace_model_finish(&s->model, 0); /* frees */
	targets_free(&s->targets);
	free(s->pending);
	batch_path_free(&s->bpath);
	record_strings_free(&s->strings);
	if (o->stack_depth)
		stack_trace_free(&s->stacks);
	tsc_clock_free(&s->tsc);
	proc_facts_free(&s->target);
	if (!o->command)
		return code;
	if (code && s->launched.held) {
		/* Still at its entry point: not a line of its own has run, none is cut short. */
		launch_abort(&s->launched);
		return code;
	}
	if (code)
		return outlived_by_command(s, code);
	/* Launch mode ends with the command's own exit code. */
	if (!launch_reap(&s->launched, &command_code)) {
		fprintf(stderr, "ctrace-bpf: stopped tracing; %s (pid %d) goes on running\n",
			o->command[0], s->launched.pid);
		return 0;
	}
	return command_code;
}
