/* SPDX-License-Identifier: MIT */
/*
 * session.h - one run of the trace command, after its options are parsed
 * and its output opened: the processes it traces (targets), the BPF
 * programs loaded for them and their probes attached, the loop that takes
 * the ring buffer's records and keeps up with the targets, and the stop.
 *
 *   session.c          start: the checks, the load (bpf_load.c) and attach,
 *                      what the trace says at its start; signals; the end
 *   session_targets.c  the targets: -p, the launched command, --exe's scan
 *                      of /proc, the processes the kernel tells of (-f,
 *                      exec, dlopen)
 *   session_loop.c     the loop and its chores, one function each; the stop
 *                      (detach threads, drain, at a high priority)
 *   session_output.c   the trace file over the session
 *
 * Errors, the convention of the trace command's files: a function returns
 * 0 (or a count, an fd) or -errno (a check: true or false), and one
 * "ctrace-bpf: ..." line is printed at the place that knows what the user
 * should do. Its comment says "having said why" when it printed that line;
 * otherwise its caller says it. cmd_trace() alone turns errors into the
 * exit code.
 */
#ifndef CTRACE_SESSION_H
#define CTRACE_SESSION_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include "attach/attach.h"
#include "ingest/batch_path.h"
#include "attach/bpf_load.h"
#include "session/launch.h"
#include "attach/link_map_watch.h"
#include "lib/proc_info.h"
#include "ingest/record_strings.h"
#include "session/session_output.h"
#include "ingest/stack_trace.h"
#include "cli/status_line.h"
#include "session/targets.h"
#include "model/trace_model.h"
#include "cli/trace_options.h"
#include "ingest/tsc_clock.h"
#include "ingest/usdt_strings.h"

struct ring_buffer;

struct session {
	struct trace_options *o;
	struct trace_output *out;
	struct ctrace_bpf *skel;
	struct bpf_link *exec_link, *fork_link; /* the sched_process tracepoints */
	struct bpf_choice programs; /* which BPF programs were loaded, and why */
	struct attachment att;
	struct link_map_watch dl; /* the dynamic linkers' hooks: dlopen, dlclose */
	struct ring_buffer *rb;

	/* The targets (session_targets.c). */
	struct target_set targets;
	struct launch launched;  /* -- CMD */
	int first_pid;           /* named in messages and the default output's name; 0 with --exe alone */
	struct proc_facts target; /* first_pid's (or --exe's path), for the trace's metadata */
	struct stat exe_st;      /* --exe: the program's file */
	const struct stat *exe;  /* &exe_st with --exe, else NULL */
	int *pending; /* processes the kernel told of (fork, exec), to attach: no cap */
	size_t n_pending, cap_pending;
	uint64_t untraced_reported; /* processes left out of the full table, said so far */
	uint64_t untraced_by_loader; /* of those, the ones the loader could not put in */

	/* An event's way: record_decode -> strings -> (batch_path: time order) -> model. */
	struct record_strings strings;
	struct batch_path bpath; /* threads' buffers, and the merge by time (batch_path.h) */
	struct trace_model model;
	bool model_live;  /* begun, not yet finished */
	struct tsc_clock tsc;
	struct trace_stats stats;
	uint64_t drops_reported;
	struct stack_trace stacks; /* --stacks (o->stack_depth) */
	struct usdt_model usdt;    /* --usdt's hits (o->usdt) */
	char usdt_strings[USDT_STRINGS_BYTES + 16]; /* + room for a NUL after the last */ /* a hit's strings, read again (usdt_strings.c) */

	/* The loop (session_loop.c). */
	bool started;     /* every check passed: the file is kept whatever follows */
	uint64_t deadline_ns, next_scan_ns;
	unsigned batch;   /* records taken in this round (see round_over) */
	uint64_t round_end_ns; /* when this round gives the loop back (see round_over) */
	bool ring_behind;      /* the last round ended with records still waiting */
	bool boosted;     /* at a high priority for the stop */
	/*
	 * Once the drain after the stop is out of time: records still in the
	 * ring buffer are counted, not decoded, and reported as dropped.
	 */
	bool counting_only;
	uint64_t unread_at_stop;
	uint64_t captured_events;     /* a capture: per-event records of probe hits (the status line's) */
	/*
	 * Converted behind the capture: its bytes not yet converted at most
	 * (--max-backlog; 0: a capture kept whole, -o FILE.ctrace). Past it
	 * the probes' records are shed, counted, until half of it is left.
	 */
	uint64_t backlog_limit, backlog_peak;
	bool shedding, shed_said;
	uint64_t shed_events;         /* per-event records shed (a batch's are counted by its numbers) */
	/*
	 * Once the stop is decided: records stamped later are left out (and
	 * counted). They come from the detach, whose probes go one kind after
	 * the other, so they would pair wrongly (an END whose BEGIN's probe
	 * was already gone), and the user asked for nothing after the stop.
	 */
	uint64_t stop_ns;
	struct status_line status; /* on the terminal while tracing (status_line.h) */

	/* -o FILE.ctrace (session_capture.c): the capture; NULL when the records are decoded here. */
	struct capture_writer *cap;
	size_t cap_tsc_written;        /* the TSC's pieces in the capture */
	struct key_map cap_threads;    /* {tgid, tid} named in the capture */
	uint64_t cap_last_thread;
	uint64_t *cap_new;             /* {tgid, tid} first seen this round, to name at its end */
	size_t cap_n_new, cap_cap_new;
	uint64_t kernel_dropped;       /* a conversion: the kernel's drops as the last DROPS said */
	/* convert (capture_replay.c): the records come from a capture, the live world is not asked. */
	bool replay;
};

/* The signal that asked for the stop (SIGINT, SIGTERM, SIGHUP), 0 until one came. */
extern volatile sig_atomic_t session_stop_signal;

/* --ring: SIGUSR1 came, a dump is asked for (session_loop.c writes it and clears this). */
extern volatile sig_atomic_t session_dump_signal;

uint64_t session_now_ns(clockid_t clock);

/* Before anything else: the signals caught, libbpf's messages (-v) routed. */
void session_init(struct session *s, struct trace_options *o);

/* session_targets.c */
/*
 * The targets the options name checked (-p running, --exe a program), and
 * the machine (privileges, kernel): 0, or -errno having said why.
 */
int session_check(struct session *s);
/* -- CMD started, held before its first instruction: 0, or -errno having said why (launch.c). */
int session_launch(struct session *s);
/* Adds a process the kernel told of to this round's list, once. */
void session_add_pending(struct session *s, int pid);
/* Attaches the starting targets (bpf_load.c calls it once the programs are loaded). */
int session_attach_targets(void *session);
/* Attaches a target's objects not attached yet, its mappings looked at first (record_strings.c). */
int session_attach_process(struct session *s, int pid);
/* Makes a process in the kernel's table of traced processes a target: its linker hooked, its objects attached. */
int session_add_target(struct session *s, int pid);

/* session.c */
/*
 * Begins the model, loads the programs, attaches the targets, says what
 * is traced, lets the launched command run: 0, or -errno having said why
 * (-EINTR, stopped by a signal before anything was attached: nothing said).
 */
int session_start(struct session *s, struct trace_output *out);
/* Frees all; the exit code: `code`, or in launch mode (code 0) the command's own. */
int session_end(struct session *s, int code);

/* session_loop.c */
/* The ring buffer's callback: one record, decoded, its strings resolved, modelled. */
void session_begin_batches(struct session *s);
int session_take_record(void *session, void *data, size_t size);
/* A decoded record's way on (strings, the batches' merge, the model): live and in a conversion. */
void session_decoded_record(struct session *s, const void *data, size_t size);
/* What a record tells the session itself (a process to attach): false when it has nothing for the trace. */
bool session_note_process_change(struct session *s, const struct ctrace_event *ev);
/* The drops said in the trace: kernel's count (the ring had no room) at `now`. */
void session_report_drops(struct session *s, uint64_t kernel_dropped, uint64_t now);
/* The BPF side's count of records lost, and its table of untraced processes (0 in a conversion). */
uint64_t session_kernel_dropped(const struct session *s);
/* Traces until a stop: a signal, -d, every target gone, an error. */
void session_run(struct session *s);
/* The stop: probes detached, the ring buffer drained, the model finished. */
void session_stop(struct session *s);

/* session_capture.c: a session writing a capture (-o FILE.ctrace, capture_journal.h for the rest) */
/* FACTS: what the trace's head says, and what the conversion must know of the options. */
void capture_write_facts(struct session *s);
/* What the attached programs watch, which the conversion's model needs from the start. */
void capture_write_attached(struct session *s);
/* END: what the stop found. */
void capture_write_end(struct session *s);
/* UNSEEN: the BPF side's table of threads' buffers (fd), at the end. */
void capture_write_unseen(struct session *s, int fd);
/* The batched path's copies of buffers and its adopted buffers into the capture (batch_path.h: copy_out). */
void capture_watch_batches(struct session *s);
/* The threads first seen this round, named as /proc says now (the round's end). */
void capture_name_new_threads(struct session *s);
/* The ring callback's body in a capture. */
int capture_take_record(struct session *s, void *data, size_t size);
/* Converted behind the capture: whether the conversion is past --max-backlog (sheds records). */
void capture_check_backlog(struct session *s);

#endif
