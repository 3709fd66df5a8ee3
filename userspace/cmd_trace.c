// SPDX-License-Identifier: MIT
/*
 * cmd_trace.c - `ctrace-bpf -p PID`, `--exe PATH`, `-- CMD`: attach to the
 * ctrace probes of processes and write what they report as a Chrome Trace
 * Event JSON file (Perfetto UI, chrome://tracing).
 *
 * The journey of one event: include/ctrace.h (the probe site) -> bpf/ctrace.bpf.c
 * (a ring-buffer record) -> record_decode.c -> trace_model.c -> trace_file.c
 * and json_writer.c (the output).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <dirent.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include "attach.h"
#include "batch_path.h"
#include "batch_watch.h"
#include "bpf_load.h"
#include "commands.h"
#include "file_maps.h"
#include "ctrace.skel.h"
#include "json_writer.h"
#include "launch.h"
#include "link_map_watch.h"
#include "literal_cache.h"
#include "output_file.h"
#include "preflight.h"
#include "proc_info.h"
#include "ptrace_access.h"
#include "record_decode.h"
#include "targets.h"
#include "traced_set.h"
#include "trace_file.h"
#include "trace_model.h"
#include "trace_options.h"
#include "usdt_notes.h"

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

static bool verbose_libbpf;

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (!verbose_libbpf || level == LIBBPF_DEBUG)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static uint64_t now_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

struct session {
	struct trace_options *o;
	struct ctrace_bpf *skel;
	struct attachment att;
	struct target_set targets;
	struct trace_stats stats;
	struct trace_model model;
	struct tsc_clock tsc;
	struct literal_cache literals;
	struct file_maps files;  /* for strings of processes gone (late_read) */
	uint64_t drops_reported;
	struct bpf_link *exec_link, *fork_link; /* the sched_process tracepoints */
	struct link_map_watch dl; /* the dynamic linkers' hooks: dlopen, dlclose */
	const struct stat *exe;  /* --exe: the program's file */
	struct bpf_choice programs; /* which BPF programs were loaded, and why */
	unsigned batch;  /* records taken in this round (see round_over) */
	int *pending; /* processes the kernel told of (fork, exec), to attach: no cap */
	size_t n_pending, cap_pending;
	uint64_t untraced_reported; /* processes left out of the full table, said so far */
	uint64_t untraced_by_loader; /* of those, the ones the loader could not put in */
	uint64_t round_end_ns; /* when this round gives the loop back (see round_over) */
	/*
	 * Once the drain after the stop is out of time: records still in the
	 * ring buffer are counted, not decoded, and reported as dropped.
	 */
	bool counting_only;
	uint64_t unread_at_stop;
	/*
	 * Once the stop is decided: records stamped later are left out (and
	 * counted). They come from the detach, whose probes go one kind after
	 * the other, so they would pair wrongly (an END whose BEGIN's probe
	 * was already gone), and the user asked for nothing after the stop.
	 */
	uint64_t stop_ns;
	/*
	 * Which mappings a string read late belongs to. The BPF side's literal
	 * epoch of a process moves on at each change to its objects (dlopen,
	 * dlclose, exec); the records of those changes carry it, so
	 * known_epoch is the epoch at the point of the ring being read, and
	 * snapshot_epochs the epoch when file_maps last looked at a process
	 * (tgid -> epoch + 1).
	 */
	uint32_t known_epoch[4096];
	struct key_map snapshot_epochs;
	struct batch_path bpath; /* threads' buffers, and the merge by time (batch_path.h) */
};

/* The merge hands events on in time order: to the model. */
static void model_event(void *ctx, const struct ctrace_event *ev)
{
	struct session *s = ctx;

	trace_model_event(&s->model, ev);
}

static uint32_t epoch_slot(uint32_t tgid)
{
	return tgid % (sizeof(((struct session *)0)->known_epoch) / sizeof(uint32_t));
}

/* The epoch the BPF side is at now (ahead of known_epoch while records are on their way). */
static uint32_t live_epoch(const struct session *s, uint32_t tgid)
{
	return ((volatile uint32_t *)s->skel->bss->literal_epochs)[epoch_slot(tgid)];
}

/*
 * attach_process, after file_maps' snapshot of the process, noting the
 * epoch the snapshot belongs to if none moved on while it was taken. Only
 * the snapshot is bracketed: the attach after it is slow (perf uprobes: a
 * syscall a site), and a dlclose() during it leaves the snapshot as true
 * of the epoch it was taken in. A process whose objects changed since the
 * point of the ring being read (the records saying so still on their way)
 * keeps the snapshot it has: the events before those records belong to
 * it, and a new one would belong to none of them.
 */
static int attach_and_note(struct session *s, int pid)
{
	uint32_t before = live_epoch(s, (uint32_t)pid);
	uint64_t key = (uint32_t)pid;

	uintptr_t note = (uintptr_t)key_map_get(&s->snapshot_epochs, &key, sizeof(key));

	/* One snapshot an epoch: a second, if the epoch moved on while it was taken, would lose the first. */
	if (note != before + 1ull) {
		file_maps_snapshot(&s->files, pid);
		if (live_epoch(s, (uint32_t)pid) == before)
			key_map_put(&s->snapshot_epochs, &key, sizeof(key), (void *)(uintptr_t)(before + 1ull));
		else
			key_map_del(&s->snapshot_epochs, &key, sizeof(key));
	}
	return attach_process(s->skel, pid, &s->att);
}

/*
 * Notes a process to look at again in this round; once, however often told.
 * Never a fixed cap: a child left out would never become a target (the maps
 * are polled for the targets only), and the trace would stop while it runs.
 */
static void add_pending(struct session *s, int pid)
{
	for (size_t i = 0; i < s->n_pending; i++)
		if (s->pending[i] == pid)
			return;
	if (s->n_pending == s->cap_pending) {
		size_t cap = s->cap_pending ? s->cap_pending * 2 : 64;
		int *v = realloc(s->pending, cap * sizeof(*v));

		if (!v)
			return; /* its exit is still waited for: traced_set_any_alive() */
		s->pending = v;
		s->cap_pending = cap;
	}
	s->pending[s->n_pending++] = pid;
}

/* Strings the probe could not read (a page not yet faulted in) are read again from /proc. */
static void late_read(struct session *s, struct ctrace_event *ev, int arg,
		      const char **str, size_t *len, unsigned *flags,
		      char *buf, size_t max)
{
	bool truncated;
	ssize_t n;

	uint64_t key = ev->tgid;
	uint32_t epoch = s->known_epoch[epoch_slot(ev->tgid)];
	bool unchanged;

	if (arg < 0 || !(*flags & CTRACE_STR_FAULT))
		return;
	/*
	 * The process's memory now is what the probe saw only if no object
	 * was mapped or unmapped since (a library dlclose()d, another mapped
	 * at its address). Else the file it was mapped from says, if
	 * file_maps looked at the process in the event's epoch; else nothing
	 * does: unreadable, rather than another object's string.
	 */
	unchanged = live_epoch(s, ev->tgid) == epoch;
	n = unchanged ? proc_read_str((int)ev->tgid, ev->arg[arg], buf, max, &truncated) : -1;
	if (n >= 0) {
		s->stats.late_string_reads++;
	} else {
		/* The process is gone, or has changed: a string of a read-only file mapping is the file's. */
		n = unchanged || (uintptr_t)key_map_get(&s->snapshot_epochs, &key, sizeof(key)) == epoch + 1ull ?
			    file_maps_read_str(&s->files, ev->tgid, ev->arg[arg], buf, max, &truncated) : -1;
		if (n < 0) {
			s->stats.unreadable_strings++;
			return;
		}
		s->stats.file_string_reads++;
	}
	*str = buf;
	*len = (size_t)n;
	*flags = truncated ? CTRACE_STR_TRUNCATED : 0;
}

/* A batched event's literal (batch_path.c), read as a late string is. */
static bool batch_read_str(void *ctx, const struct ctrace_event *ev, int arg, const char **str,
			   size_t *len, bool *truncated, char *buf, size_t max)
{
	struct ctrace_event e = *ev;
	unsigned flags = CTRACE_STR_FAULT;

	struct session *s = ctx;

	late_read(ctx, &e, arg, str, len, &flags, buf, max);
	*truncated = flags & CTRACE_STR_TRUNCATED;
	if (!(flags & CTRACE_STR_FAULT))
		return true;
	/*
	 * A forked child gone before its snapshot: while its objects are as
	 * the batch saw them, its parent's image is its own (literal_cache.c).
	 */
	if (live_epoch(s, ev->tgid) != s->known_epoch[epoch_slot(ev->tgid)])
		return false;
	if (literal_cache_get(&s->literals, ev->tgid, ev->arg[arg], max, str, len, truncated)) {
		s->stats.unreadable_strings--; /* late_read counted it */
		return true;
	}
	/* Gone: the last look at its mappings, its objects unchanged since the batch. */
	{
		ssize_t n = file_maps_read_str(&s->files, ev->tgid, ev->arg[arg], buf, max, truncated);

		if (n < 0)
			return false;
		s->stats.unreadable_strings--;
		s->stats.file_string_reads++;
		*str = buf;
		*len = (size_t)n;
		return true;
	}
}

/* Strings the site passed as literals: the probe sent their address only. */
static void literal_read(struct session *s, struct ctrace_event *ev, int arg,
			 const char **str, size_t *len, unsigned *flags, size_t max)
{
	bool truncated;

	if (arg < 0)
		return;
	if (*flags & CTRACE_STR_LITERAL) { /* its first use: remember it */
		literal_cache_put(&s->literals, ev->tgid, ev->arg[arg], *str, *len,
				  *flags & CTRACE_STR_TRUNCATED);
		*flags &= ~(unsigned)CTRACE_STR_LITERAL;
		return;
	}
	if (!(*flags & CTRACE_STR_BYREF))
		return;
	s->stats.literals_by_reference++;
	if (!literal_cache_get(&s->literals, ev->tgid, ev->arg[arg], max, str, len, &truncated)) {
		s->stats.unreadable_strings++;
		*flags = CTRACE_STR_FAULT;
		return;
	}
	*flags = truncated ? CTRACE_STR_TRUNCATED : 0;
}

/*
 * libbpf's consume goes on while records keep coming: under a flood it
 * would never return, and Ctrl-C, -d, the drop reports and the 50 ms
 * flushes would wait. So a round ends after ROUND_NS of work (or at the
 * deadline), then the loop does its chores and comes back. A count of
 * records would not do: with the CPUs saturated by the target the tracer
 * gets a small share of one, and 65536 records took seconds (-d 2 lasted
 * 6 s). The clock is read every CLOCK_EVERY records (a vDSO call, ~25 ns,
 * against ~1 us a record).
 */
#define ROUND_NS (10 * 1000000ull)
#define CLOCK_EVERY 16
#define END_OF_ROUND (-ECANCELED)

static bool round_over(struct session *s)
{
	return ++s->batch % CLOCK_EVERY == 0 && now_ns(CLOCK_MONOTONIC) >= s->round_end_ns;
}

static void round_begin(struct session *s, uint64_t deadline)
{
	uint64_t now = now_ns(CLOCK_MONOTONIC);

	s->batch = 0;
	s->round_end_ns = now + ROUND_NS;
	if (deadline && deadline < s->round_end_ns)
		s->round_end_ns = deadline > now ? deadline : now;
}

static int on_record(void *ctx, void *data, size_t size)
{
	static char name_buf[CTRACE_NAME_MAX], args_buf[CTRACE_ARGS_MAX];
	struct session *s = ctx;
	struct ctrace_event ev;

	if (s->counting_only) {
		/* A batch's events are counted lost by their numbers (batch_path_finish). */
		if (!s->bpath.on || !batch_path_record_kind(data, size))
			s->unread_at_stop++;
		return 0;
	}
	s->stats.records++;
	if (s->bpath.on && batch_path_record(&s->bpath, data, size))
		return round_over(s) ? END_OF_ROUND : 0;
	if (record_decode(data, size, &ev) < 0) {
		s->stats.bad_records++;
		return round_over(s) ? END_OF_ROUND : 0;
	}
	if (s->stop_ns && ev.ts_ns > s->stop_ns) {
		s->stats.records_after_stop++;
		return round_over(s) ? END_OF_ROUND : 0;
	}
	if (ev.kind == CTRACE_KIND_FORK || ev.kind == CTRACE_KIND_EXEC || ev.kind == CTRACE_KIND_LINK_MAP)
		s->known_epoch[epoch_slot((uint32_t)(ev.kind == CTRACE_KIND_FORK ? ev.arg[1] : ev.arg[0]))] =
			(uint32_t)ev.arg[2];
	if (ev.kind == CTRACE_KIND_FORK || ev.kind == CTRACE_KIND_EXEC)
		add_pending(s, (int)(ev.kind == CTRACE_KIND_FORK ? ev.arg[1] : ev.arg[0]));
	if (ev.kind == CTRACE_KIND_LINK_MAP) {
		/*
		 * A dlopen() under way: its library may be used the moment it
		 * returns, so its probes are attached now, not after the rest of
		 * this round's records. Nothing to show in the trace.
		 */
		if (!s->stop_ns && targets_has(&s->targets, (int)ev.arg[0]))
			attach_and_note(s, (int)ev.arg[0]);
		if (s->bpath.on)
			batch_path_push(&s->bpath, &ev); /* its batched literals are forgotten */
		return round_over(s) ? END_OF_ROUND : 0;
	}
	if (ev.kind == CTRACE_KIND_EXEC) {
		if (ev.arg[1] && ev.arg[1] != ev.arg[0]) {
			/* exec() from a thread: the links bound to the old main thread are dead. */
			attach_forget_process(&s->att, (int)ev.arg[0]);
			link_map_watch_forget(&s->dl, (int)ev.arg[0]);
		}
		literal_cache_exec(&s->literals, (uint32_t)ev.arg[0]);
		file_maps_exec(&s->files, (uint32_t)ev.arg[0]);
	} else if (ev.kind == CTRACE_KIND_FORK) {
		literal_cache_fork(&s->literals, (uint32_t)ev.arg[0], (uint32_t)ev.arg[1]);
		file_maps_fork(&s->files, (uint32_t)ev.arg[0], (uint32_t)ev.arg[1]);
	}
	literal_read(s, &ev, record_name_arg(ev.kind), &ev.name, &ev.name_len,
		     &ev.name_flags, CTRACE_NAME_MAX - 1);
	literal_read(s, &ev, record_args_arg(ev.kind), &ev.args, &ev.args_len,
		     &ev.args_flags, CTRACE_ARGS_MAX);
	late_read(s, &ev, record_name_arg(ev.kind), &ev.name, &ev.name_len,
		  &ev.name_flags, name_buf, sizeof(name_buf));
	late_read(s, &ev, record_args_arg(ev.kind), &ev.args, &ev.args_len,
		  &ev.args_flags, args_buf, sizeof(args_buf));
	if (s->bpath.on)
		batch_path_push(&s->bpath, &ev); /* to the model in time order */
	else
		trace_model_event(&s->model, &ev);
	/* This record is taken (libbpf moved past it before calling us). */
	return round_over(s) ? END_OF_ROUND : 0;
}

/*
 * What the ring buffer still holds at the stop, taken for at most a share
 * of the run (-d S: S/80, so that -d stays within 10% with the detach and
 * the file's end; otherwise 2 s), however little CPU the target leaves us.
 * What is left then is counted as dropped without being decoded (~20 ns a
 * record), so the file ends on time and says what it lost.
 */
static void drain(struct session *s, struct ring_buffer *rb, double duration)
{
	uint64_t budget = duration > 0 ? (uint64_t)(duration * 1e9 / 80) : 2000000000ull;
	uint64_t end;
	int err;

	if (budget < 20000000ull)
		budget = 20000000ull;
	end = now_ns(CLOCK_MONOTONIC) + budget;
	do {
		round_begin(s, end);
		err = ring_buffer__consume(rb);
	} while (err == END_OF_ROUND && now_ns(CLOCK_MONOTONIC) < end);
	if (err == END_OF_ROUND) {
		s->counting_only = true;
		ring_buffer__consume(rb);
		s->counting_only = false;
	}
}

/*
 * The stop is short and bounded (the detach, the drain, the file's end),
 * and a target that keeps every CPU busy would stretch it many times, and
 * the deadline's round too: from BOOST_BEFORE_NS before the deadline (or
 * the stop, whatever its cause), the tracer runs at a high priority (root
 * may), so that -d is kept. While it traces it competes on equal terms.
 */
#define BOOST_BEFORE_NS (50 * 1000000ull)

static void stop_at_high_priority(bool *boosted)
{
	if (!*boosted)
		setpriority(PRIO_PROCESS, 0, -20); /* this thread; the detachers inherit it */
	*boosted = true;
}

/*
 * The stop: every probe goes, and the linkers' hooks, in threads of their
 * own (see the stop). Each close waits for an RCU grace period; one after
 * the other, the hooks' and the probes' grace periods would add up.
 */
static void *detach_hooks(void *arg)
{
	link_map_watch_free(arg);
	return NULL;
}

static void *detach_probes(void *arg)
{
	attachment_free(arg);
	return NULL;
}

/* Says in the trace, at about the time it happened, that records were lost. */
static void report_drops(struct session *s, int pid)
{
	/* Records left unread at the end of the drain are lost too, and said so. */
	uint64_t total = s->skel->bss->dropped + s->unread_at_stop + s->bpath.lost;
	uint64_t now = now_ns(CLOCK_MONOTONIC);

	if (total == s->drops_reported)
		return;
	/* Found after the stop, they happened before it: nothing is stamped later. */
	if (s->stop_ns && now > s->stop_ns)
		now = s->stop_ns;
	trace_model_drops(&s->model, (uint32_t)pid, now, total - s->drops_reported, total);
	s->drops_reported = total;
}

/* Says once in the trace, and on stderr, that processes were left out of the full table. */
static void report_untraced(struct session *s, int pid)
{
	uint64_t total = s->skel->bss->traced_full + s->untraced_by_loader;
	uint64_t now = now_ns(CLOCK_MONOTONIC);

	if (total == s->untraced_reported)
		return;
	if (!s->untraced_reported)
		fprintf(stderr, "ctrace-bpf: the table of traced processes is full: new processes are not traced (counted in metadata.untraced_processes)\n");
	if (s->stop_ns && now > s->stop_ns)
		now = s->stop_ns;
	traced_set_report_full(s->model.tf, (uint32_t)pid, now, total - s->untraced_reported, total);
	s->untraced_reported = total;
	s->stats.untraced_processes = total;
}

/* Marks a process as traced for the BPF side and the loop; attaches its objects. */
static void mark_traced(struct session *s, int pid);

static int add_target(struct session *s, int pid)
{
	int err = targets_add(&s->targets, pid);

	if (err < 0)
		return err;
	mark_traced(s, pid);
	/* Before its probes rise: it may dlopen() the moment they do. */
	link_map_watch_process(&s->dl, s->skel->progs.ctrace_link_map, s->att.multi, pid);
	err = attach_and_note(s, pid);
	return err == -ESRCH ? 0 : err; /* gone already: its exit ends it */
}

/* The starting targets, attached once the programs are loaded (bpf_load.c). */
static int trace_exe(struct session *s, const char *exe_path, const struct stat *exe);

static int attach_targets(void *ctx)
{
	struct session *s = ctx;
	const struct trace_options *o = s->o;
	int err = 0;

	targets_free(&s->targets);
	if (o->exe)
		err = trace_exe(s, o->exe, s->exe);
	for (int i = 0; i < o->n_pids && err >= 0; i++) {
		err = add_target(s, o->pids[i]);
		if (err == 0 && !targets_has(&s->targets, o->pids[i]))
			err = -ESRCH;
	}
	return err;
}

/* Puts a process in the BPF side's set of traced processes. */
static void mark_traced(struct session *s, int pid)
{
	if (traced_set_add(bpf_map__fd(s->skel->maps.traced_tgids), pid) == -E2BIG)
		s->untraced_by_loader++;
}

/*
 * --exe: the processes already running the program join the trace. They
 * are all marked traced before the program's sites are attached: attaching
 * raises the semaphore in every one of them at once, and an event of a
 * process not yet marked would be filtered out.
 */
static int trace_exe(struct session *s, const char *exe_path, const struct stat *exe)
{
	DIR *proc = opendir("/proc");
	struct dirent *d;
	char path[300];
	struct stat st;
	int err;

	while (proc && (d = readdir(proc))) {
		int pid = atoi(d->d_name);

		if (pid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/exe", pid);
		if (stat(path, &st) == 0 && st.st_ino == exe->st_ino && st.st_dev == exe->st_dev &&
		    targets_add(&s->targets, pid) > 0) {
			mark_traced(s, pid);
			/* Before it is armed: its batched literals may come after its exit. */
			file_maps_snapshot(&s->files, pid);
		}
	}
	if (proc)
		closedir(proc);
	err = attach_file(s->skel, exe_path, &s->att);
	/* Their libraries too. */
	for (size_t i = 0; i < s->targets.n && err >= 0; i++)
		if (attach_and_note(s, s->targets.v[i].pid) == -EOPNOTSUPP)
			err = -EOPNOTSUPP;
	return err;
}

/* --exe names a program: an ELF executable or shared object (else one line, false). */
static bool exe_is_program(const char *path)
{
	struct usdt_note_list notes = { 0 };
	char err[256];
	int rc = usdt_notes_read(path, &notes, err, sizeof(err));

	usdt_note_list_free(&notes);
	if (rc == -ENOEXEC || rc == -EINVAL) {
		fprintf(stderr, "ctrace-bpf: --exe %s: %s (not an ELF program); give the path of an executable built with include/ctrace.h\n",
			path, err);
		return false;
	}
	if (rc < 0) {
		fprintf(stderr, "ctrace-bpf: --exe %s: %s\n", path, err);
		return false;
	}
	return true;
}

static void consume_ring(void *rb)
{
	ring_buffer__consume(rb);
}

static const char *signal_reason(int sig)
{
	return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "SIGHUP";
}

int cmd_trace(int argc, char **argv)
{
	struct trace_options o;
	struct proc_facts target;
	struct trace_facts facts = { 0 };
	struct session s;
	struct ring_buffer *rb = NULL;
	struct json_writer w = { 0 };
	struct trace_file tf = { 0 };
	struct launch launched = { 0 };
	struct stat exe_st;
	char default_out[300];
	bool created = false, started = false;
	int out_fd = -1, err, exit_code = 1, first_pid = 0;
	uint64_t deadline = 0, next_scan = 0, next_flush = 0;
	bool boosted = false;
	pthread_t detacher[3];
	bool detaching[3];

	memset(&s, 0, sizeof(s));
	memset(&target, 0, sizeof(target));
	literal_cache_init(&s.literals);
	key_map_init(&s.snapshot_epochs);
	file_maps_init(&s.files);
	attachment_init(&s.att, false, false);
	trace_options_parse(argc, argv, &o);
	s.o = &o;
	{
		/*
		 * From the start: a Ctrl-C while loading or attaching must still
		 * end cleanly, with a complete file (or none), not kill us halfway.
		 */
		struct sigaction sa = { 0 };

		sa.sa_handler = on_signal;
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
		sigaction(SIGHUP, &sa, NULL);
		signal(SIGPIPE, SIG_IGN); /* a closed pipe is a write error we report */
	}
	verbose_libbpf = o.verbose;
	libbpf_set_print(libbpf_print);

	if (o.n_pids) {
		first_pid = o.pids[0];
		for (int i = 0; i < o.n_pids; i++)
			if (kill(o.pids[i], 0) != 0 && errno == ESRCH) {
				fprintf(stderr, "ctrace-bpf: no process with pid %d (is it still running? try: pgrep -a NAME)\n",
					o.pids[i]);
				return 1;
			}
	}
	if (o.exe && stat(o.exe, &exe_st) != 0) {
		fprintf(stderr, "ctrace-bpf: --exe %s: %s\n", o.exe, strerror(errno));
		return 1;
	}
	if (o.exe && !exe_is_program(o.exe))
		return 1;
	if (!preflight_privileges() || !preflight_kernel())
		return 1;
	if (o.command) {
		/* Held before its first instruction, its libraries mapped. */
		/* With -o -, standard output is the trace's alone: the command prints to our stderr. */
		bool trace_on_stdout = o.output && !strcmp(o.output, "-");

		if (launch_start_with_stdout(&launched, o.command,
					     trace_on_stdout ? STDERR_FILENO : -1) < 0)
			return 127;
		first_pid = launched.pid;
		o.pids[o.n_pids++] = launched.pid;
	}
	if (!o.output) {
		if (first_pid)
			snprintf(default_out, sizeof(default_out), "ctrace-%d.json", first_pid);
		else
			snprintf(default_out, sizeof(default_out), "ctrace-%s.json",
				 strrchr(o.exe, '/') ? strrchr(o.exe, '/') + 1 : o.exe);
		o.output = default_out;
	}
	if (first_pid)
		proc_facts_read(first_pid, &target);
	else
		snprintf(target.exe, sizeof(target.exe), "%s", o.exe);
	/* Before attaching: a bad output path must not touch the target at all. */
	out_fd = output_open(o.output, &created);
	if (out_fd < 0)
		goto out;

	/* The trace starts before the first probe can fire. */
	facts.start_wall_ns = now_ns(CLOCK_REALTIME);
	facts.start_mono_ns = now_ns(CLOCK_MONOTONIC);
	if (target.start_boottime_ns) {
		/* /proc gives the target's start on CLOCK_BOOTTIME; say it on the other two clocks. */
		uint64_t since_start = now_ns(CLOCK_BOOTTIME) - target.start_boottime_ns;

		facts.target_start_wall_ns = facts.start_wall_ns - since_start;
		facts.target_start_mono_ns = facts.start_mono_ns > since_start ?
						     facts.start_mono_ns - since_start : 0;
	}
	if (jw_init(&w, out_fd, 1 << 20) < 0) {
		fputs("ctrace-bpf: out of memory\n", stderr);
		goto out;
	}
	facts.tracer_version = CTRACE_BPF_VERSION;
	facts.target = &target;
	trace_file_begin(&tf, &w, &facts);
	trace_model_init(&s.model, &tf, &s.stats);
	trace_model_limit_memory(&s.model, o.max_memory, &s.literals, &s.files);
	if (o.command) /* held before its first instruction: nothing began untraced */
		trace_model_traced_from_start(&s.model, (uint32_t)launched.pid);
	tsc_clock_init(&s.tsc);
	s.model.tsc = &s.tsc;
	batch_path_init(&s.bpath, !o.no_batch, &s.tsc, &s.stats, &s.stop_ns,
			facts.start_mono_ns, model_event, &s);
	facts.event_path = o.no_batch ? "per_event" : "batched";
	s.bpath.read_str = batch_read_str;
	s.bpath.read_ctx = &s;
	/* Thread names now: a short-lived program may be gone before its events are read. */
	for (int i = 0; i < o.n_pids; i++)
		trace_model_learn_threads(&s.model, (uint32_t)o.pids[i]);

	if (stop_signal)
		goto out; /* stopped before anything was attached: no file left */
	link_map_watch_init(&s.dl, o.follow || o.exe, o.verbose);
	s.exe = o.exe ? &exe_st : NULL;
	err = bpf_load_and_attach(&o, s.exe,
				  &(struct bpf_load_target){ &s.skel, &s.exec_link, &s.fork_link,
							     &s.att, attach_targets, &s },
				  &s.programs);
	if (err == -ESRCH) {
		fprintf(stderr, "ctrace-bpf: the process exited before it could be traced\n");
		goto out;
	}
	if (err == -EACCES || err == -EPERM) {
		char why[512];

		ptrace_access_explain(first_pid, why, sizeof(why));
		fprintf(stderr, "ctrace-bpf: cannot read the memory map of process %d: %s (%s)\n",
			first_pid, strerror(-err), why);
		goto out;
	}
	if (err)
		goto out; /* said why */
	/*
	 * -d counts from when the probes rose: the first semaphore up (the
	 * rest of the attach and the load's end come after it), else now (in
	 * launch mode, from the command's start).
	 */
	if (o.duration > 0)
		deadline = (s.att.first_armed_ns ? s.att.first_armed_ns : now_ns(CLOCK_MONOTONIC)) +
			   (uint64_t)(o.duration * 1e9);
	if (!s.att.sites && first_pid && !s.att.looked_in[0] && proc_exited(first_pid)) {
		/* Gone while we loaded: its maps were empty, not without probes. */
		fprintf(stderr, "ctrace-bpf: process %d exited before it could be traced\n", first_pid);
		goto out;
	}
	if (!s.att.sites && o.exe) {
		fprintf(stderr, "ctrace-bpf: %s has no ctrace probes. Build it with include/ctrace.h and use its CTRACE_* macros.\n",
			o.exe);
		goto out;
	}
	if (!s.att.sites && !s.att.looked_in[0]) {
		/* No file mapped at all (a kernel thread): it will never load one. */
		fprintf(stderr, "ctrace-bpf: process %d (%s) maps no program file (a kernel thread?): it has no ctrace probes and never will\n",
			first_pid, target.comm);
		goto out;
	}
	started = true;
	for (size_t i = 0; i < s.targets.n; i++) {
		/* Named first as it was when tracing began: it may have exec()d since it was armed. */
		trace_model_add_process(&s.model, (uint32_t)s.targets.v[i].pid);
		trace_model_learn_threads(&s.model, (uint32_t)s.targets.v[i].pid);
	}
	/*
	 * Each target's dynamic linker tells of its dlopen()s as they happen
	 * (add_target hooked those of -p and launch mode already, --exe's are
	 * hooked here); then its maps once more, for what was mapped before
	 * the hook was in. After the names: a target may exec meanwhile.
	 */
	for (size_t i = 0; i < s.targets.n; i++) {
		link_map_watch_process(&s.dl, s.skel->progs.ctrace_link_map, s.att.multi,
				       s.targets.v[i].pid);
		attach_and_note(&s, s.targets.v[i].pid);
	}
	facts.probes_attached = s.att.sites;
	bpf_choice_facts(&s.programs, &facts);
	facts.objects_with_probes = s.att.objects_with_probes;

	rb = ring_buffer__new(bpf_map__fd(s.skel->maps.events), on_record, &s, NULL);
	if (!rb) {
		fprintf(stderr, "ctrace-bpf: cannot read the ring buffer: %s\n", strerror(errno));
		goto out;
	}
	if (o.exe)
		fprintf(stderr, "ctrace-bpf: tracing every process running %s (%zu now): %u probes; writing %s; Ctrl-C to stop\n",
			o.exe, s.targets.n, s.att.sites, strcmp(o.output, "-") ? o.output : "standard output");
	else if (!s.att.sites)
		/* A plugin host, an interpreter: its probes may come with a library it loads later. */
		fprintf(stderr, "ctrace-bpf: process %d (%s) has no ctrace probes yet (looked in: %s): waiting for it to load a library with probes; writing %s; Ctrl-C to stop\n",
			first_pid, target.comm, s.att.looked_in[0] ? s.att.looked_in : "no mapped files",
			strcmp(o.output, "-") ? o.output : "standard output");
	else
		fprintf(stderr, "ctrace-bpf: tracing process %d (%s)%s: %u probes in %u objects; writing %s; Ctrl-C to stop\n",
			first_pid, target.comm, s.targets.n > 1 ? " and others" : "",
			s.att.sites, s.att.objects_with_probes,
			strcmp(o.output, "-") ? o.output : "standard output");
	if (o.command && launch_resume(&launched) < 0)
		fprintf(stderr, "ctrace-bpf: the command died before it started\n");
	if (o.command && o.duration > 0)
		deadline = now_ns(CLOCK_MONOTONIC) + (uint64_t)(o.duration * 1e9);

	s.stats.stop_reason = "interrupted";
	for (;;) {
		uint64_t now, round_start = now_ns(CLOCK_MONOTONIC);

		round_begin(&s, deadline);
		err = ring_buffer__poll(rb, 10);
		/*
		 * The BPF side wakes us only once a batch is waiting: take what
		 * is there on every round anyway, so events arrive within ~10 ms.
		 */
		if (err >= 0 || err == -EINTR)
			err = ring_buffer__consume(rb);
		batch_path_tick(&s.bpath, now_ns(CLOCK_MONOTONIC), err == END_OF_ROUND ? 0 : round_start);
		if (err == END_OF_ROUND)
			err = 0; /* more may be waiting: the next round takes it */
		if (err < 0 && err != -EINTR) {
			fprintf(stderr, "ctrace-bpf: reading events failed: %s\n", strerror(-err));
			s.stats.stop_reason = "error reading events";
			break;
		}
		report_drops(&s, first_pid);
		report_untraced(&s, first_pid);
		now = now_ns(CLOCK_MONOTONIC);
		/*
		 * Out every 50 ms: if the tracer is killed (or the disk fills), the
		 * file holds all but the last ~50 ms, and `ctrace-bpf fix` closes it.
		 */
		if (now >= next_flush) {
			jw_flush(&w);
			/*
			 * And on to the disk, without waiting: the fsync at the
			 * end then has ~50 ms of output to write, not the whole
			 * file (0.15 s for 100 MB, which -d would overrun).
			 */
			sync_file_range(out_fd, 0, 0, SYNC_FILE_RANGE_WRITE);
			next_flush = now + 50 * 1000000ull;
		}
		/* Processes the kernel told of: a followed child, an exec, a dlopen. */
		for (size_t i = 0; i < s.n_pending; i++) {
			int pid = s.pending[i];

			if (targets_has(&s.targets, pid))
				attach_and_note(&s, pid); /* exec: the new image */
			else
				add_target(&s, pid);
			/* A new image has its own dynamic linker. */
			link_map_watch_process(&s.dl, s.skel->progs.ctrace_link_map, s.att.multi, pid);
			trace_model_learn_threads(&s.model, (uint32_t)pid);
		}
		s.n_pending = 0;
		if (now >= next_scan) {
			/* Libraries loaded since (dlopen), and the names of new threads. */
			for (size_t i = 0; i < s.targets.n; i++) {
				if (s.targets.v[i].gone)
					continue;
				attach_and_note(&s, s.targets.v[i].pid);
				trace_model_learn_threads(&s.model, (uint32_t)s.targets.v[i].pid);
			}
			tsc_clock_update(&s.tsc);
			next_scan = now + 100 * 1000000ull;
		}
		if (!facts.probes_attached && s.att.sites) {
			/* It was waiting: the first probes have come. */
			facts.probes_attached = s.att.sites;
			fprintf(stderr, "ctrace-bpf: tracing process %d (%s): %u probes in %u objects\n",
				first_pid, target.comm, s.att.sites, s.att.objects_with_probes);
		}
		if (stop_signal) {
			s.stats.stop_reason = signal_reason(stop_signal);
			break;
		}
		if (deadline && now + BOOST_BEFORE_NS >= deadline)
			stop_at_high_priority(&boosted);
		if (deadline && now >= deadline) {
			s.stats.stop_reason = "duration elapsed";
			break;
		}
		/*
		 * The kernel's table, not only the targets the loader heard of: a
		 * child whose fork notice is still in the ring keeps the trace on.
		 */
		if (!o.exe && targets_all_gone(&s.targets) &&
		    !traced_set_any_alive(bpf_map__fd(s.skel->maps.traced_tgids))) {
			s.stats.stop_reason = s.targets.n > 1 ? "every traced process exited" : "target exited";
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
	s.stop_ns = s.stats.stop_mono_ns;
	s.skel->bss->stopping = true;
	stop_at_high_priority(&boosted);
	batch_path_stop(&s.bpath, consume_ring, rb); /* every buffer up to the stop, before the detach */
	/* Every probe attached in the course of the trace (libraries loaded later too). */
	facts.probes_attached = s.att.sites;
	facts.objects_with_probes = s.att.objects_with_probes;
	/*
	 * The detach (one RCU grace period a link, 0.2 s with every CPU busy)
	 * and the drain of what the ring holds overlap: nothing new is recorded
	 * once `stopping` is seen. A record whose program was under way then
	 * (a sleepable one, in a page fault) is in the ring once the detach
	 * is done: the last consume takes it.
	 */
	detaching[0] = pthread_create(&detacher[0], NULL, detach_hooks, &s.dl) == 0;
	if (!detaching[0])
		detach_hooks(&s.dl);
	detaching[1] = pthread_create(&detacher[1], NULL, detach_probes, &s.att) == 0;
	if (!detaching[1])
		detach_probes(&s.att);
	/* The batch buffers' death watches too (five links): their grace periods overlap the others'. */
	detaching[2] = pthread_create(&detacher[2], NULL, batch_watch_stop, s.skel) == 0;
	if (!detaching[2])
		batch_watch_stop(s.skel);
	drain(&s, rb, o.duration);
	/* What is written goes to the disk while the detach waits: the last fsync has only the end. */
	jw_flush(&w);
	if (strcmp(o.output, "-"))
		fdatasync(out_fd);
	for (int i = 0; i < 3; i++)
		if (detaching[i])
			pthread_join(detacher[i], NULL);
	s.counting_only = s.unread_at_stop > 0;
	round_begin(&s, 0);
	while (ring_buffer__consume(rb) == END_OF_ROUND)
		round_begin(&s, 0);
	s.counting_only = false;
	batch_path_finish(&s.bpath, bpf_map__fd(s.skel->maps.batch_threads));
	s.stats.batch_lost = s.bpath.lost;
	report_drops(&s, first_pid);
	report_untraced(&s, first_pid);
	s.stats.records_unread_at_stop = s.unread_at_stop;
	s.stats.dropped = s.skel->bss->dropped + s.unread_at_stop + s.bpath.lost;
	trace_model_finish(&s.model, s.stats.stop_mono_ns);
	trace_file_end(&tf, &facts, &s.stats);
	s.stats.events_written = tf.events;
	if (jw_flush(&w) < 0 || w.err) {
		fprintf(stderr, "ctrace-bpf: writing %s failed: %s\n", o.output, strerror(w.err));
		goto out;
	}
	if (strcmp(o.output, "-") && fsync(out_fd) != 0 && errno != EINVAL) {
		fprintf(stderr, "ctrace-bpf: writing %s failed: %s\n", o.output, strerror(errno));
		goto out;
	}
	fprintf(stderr, "ctrace-bpf: %s: %llu events written, %llu dropped%s. Open it in Perfetto UI (https://ui.perfetto.dev) or chrome://tracing\n",
		s.stats.stop_reason, (unsigned long long)tf.events,
		(unsigned long long)s.stats.dropped,
		s.stats.dropped ? " (the ring buffer was full)" : "");
	exit_code = 0;
out:
	bpf_link__destroy(s.exec_link);
	bpf_link__destroy(s.fork_link);
	link_map_watch_free(&s.dl);
	attachment_free(&s.att);
	ring_buffer__free(rb);
	ctrace_bpf__destroy(s.skel);
	jw_free(&w);
	if (out_fd >= 0)
		close(out_fd);
	/* Tracing never started: leave no file behind. */
	if (exit_code && created && !started)
		unlink(o.output);
	if (tf.w && exit_code)
		trace_model_finish(&s.model, 0); /* frees */
	targets_free(&s.targets);
	free(s.pending);
	batch_path_free(&s.bpath);
	literal_cache_free(&s.literals);
	key_map_free(&s.snapshot_epochs);
	tsc_clock_free(&s.tsc);
	file_maps_free(&s.files);
	proc_facts_free(&target);
	if (o.command) {
		int code;

		if (exit_code) {
			launch_abort(&launched);
			return exit_code;
		}
		/* Launch mode ends with the command's own exit code. */
		if (!launch_reap(&launched, &code)) {
			fprintf(stderr, "ctrace-bpf: stopped tracing; %s (pid %d) goes on running\n",
				o.command[0], launched.pid);
			return 0;
		}
		return code;
	}
	return exit_code;
}
