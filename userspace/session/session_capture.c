// SPDX-License-Identifier: MIT
/*
 * session_capture.c - a session writing a capture (-o FILE.ctrace): its
 * ring callback moves each record's bytes into the capture undecoded, and
 * what the session itself learns (the facts, the batched path's copies of
 * buffers, new threads' names, the stop) is written beside them in the
 * order the live path reads it (docs/capture-format.md). The inputs read
 * elsewhere (names, maps, categories, the TSC) go through capture_journal.h.
 */
#include "session/session.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <bpf/bpf.h>
#include "ingest/batch_split.h"
#include "capture/capture_journal.h"
#include "ctrace_record.h"
#include "lib/proc_info.h"
#include "ingest/tsc_clock.h"

void capture_write_facts(struct session *s)
{
	const struct trace_facts *f = &s->out->facts;
	const struct proc_facts *t = &s->target;
	struct capture_tlv tlv = { 0 };

	capture_tlv_u64(&tlv, CK_START_WALL, f->start_wall_ns);
	capture_tlv_u64(&tlv, CK_START_MONO, f->start_mono_ns);
	capture_tlv_u64(&tlv, CK_TARGET_START_WALL, f->target_start_wall_ns);
	capture_tlv_u64(&tlv, CK_TARGET_START_MONO, f->target_start_mono_ns);
	capture_tlv_u64(&tlv, CK_TARGET_PID, (uint64_t)t->pid);
	capture_tlv_u64(&tlv, CK_TARGET_NS_PID, (uint64_t)t->ns_pid);
	capture_tlv_str(&tlv, CK_TARGET_COMM, t->comm);
	capture_tlv_str(&tlv, CK_TARGET_EXE, t->exe);
	capture_tlv_str(&tlv, CK_TARGET_CWD, t->cwd);
	if (t->cmdline)
		capture_tlv_bytes(&tlv, CK_TARGET_CMDLINE, t->cmdline, t->cmdline_len);
	capture_tlv_u64(&tlv, CK_TARGET_START_BOOT, t->start_boottime_ns);
	if (s->o->command)
		capture_tlv_u64(&tlv, CK_TRACED_FROM_START, (uint64_t)s->launched.pid);
	capture_tlv_u64(&tlv, CK_NO_BATCH, s->o->no_batch);
	capture_tlv_u64(&tlv, CK_MAX_MEMORY, s->o->max_memory);
	capture_tlv_u64(&tlv, CK_FIRST_PID, (uint64_t)s->first_pid);
	capture_tlv_put(s->cap, CAPTURE_FACTS, &tlv);
}

void capture_write_attached(struct session *s)
{
	struct capture_tlv tlv = { 0 };

	capture_tlv_u64(&tlv, CK_RENAMES_TOLD, s->out->facts.renames_told);
	capture_tlv_put(s->cap, CAPTURE_ATTACHED, &tlv);
}

void capture_write_end(struct session *s)
{
	const struct trace_facts *f = &s->out->facts;
	struct capture_tlv tlv = { 0 };

	capture_tlv_u64(&tlv, CK_STOP_MONO, s->stats.stop_mono_ns);
	capture_tlv_str(&tlv, CK_STOP_REASON, s->stats.stop_reason);
	capture_tlv_u64(&tlv, CK_PROBES, f->probes_attached);
	capture_tlv_u64(&tlv, CK_OBJECTS, f->objects_with_probes);
	capture_tlv_str(&tlv, CK_CATEGORIES, f->categories);
	capture_tlv_str(&tlv, CK_PROGRAM_SET, f->program_set);
	capture_tlv_str(&tlv, CK_PROGRAM_SET_WHY, f->program_set_why);
	capture_tlv_u64(&tlv, CK_PROGRAM_SET_FORCED, f->program_set_forced);
	capture_tlv_str(&tlv, CK_PROBE_LINKS, f->probe_links);
	capture_tlv_u64(&tlv, CK_BPF_COOKIES, f->bpf_cookies);
	capture_tlv_u64(&tlv, CK_FAST_NOP5, f->fast_nop5);
	capture_tlv_str(&tlv, CK_EVENT_PATH, f->event_path);
	capture_tlv_str(&tlv, CK_EVENT_PATH_WHY, f->event_path_why);
	capture_tlv_str(&tlv, CK_DEATH_WATCH, f->death_watch);
	for (int i = 0; i < KERNEL_FEATURE_COUNT; i++) {
		char b[80];
		size_t n;

		if (!f->kernel_features[i].name)
			continue;
		n = strnlen(f->kernel_features[i].name, sizeof(b) - 1);
		b[0] = f->kernel_features[i].present;
		memcpy(b + 1, f->kernel_features[i].name, n);
		capture_tlv_bytes(&tlv, CK_KERNEL_FEATURE, b, n + 1);
	}
	capture_tlv_u64(&tlv, CK_REMOTE_READS, s->stats.remote_reads);
	capture_tlv_u64(&tlv, CK_REMOTE_ABANDONED, s->stats.remote_reads_abandoned);
	capture_tlv_u64(&tlv, CK_REMOTE_REFUSED, s->stats.remote_reads_refused);
	capture_tlv_u64(&tlv, CK_BATCH_UNWATCHED, s->stats.batch_unwatched);
	capture_tlv_u64(&tlv, CK_BATCH_UNREAD, s->stats.batch_unread_at_stop);
	capture_tlv_u64(&tlv, CK_UNTRACED, s->stats.untraced_processes);
	capture_tlv_put(s->cap, CAPTURE_END, &tlv);
}

static void name_now(uint32_t tgid, uint32_t tid)
{
	char comm[32];

	if (proc_thread_comm((int)tgid, (int)tid, comm, sizeof(comm)))
		capture_note_name(tgid, tid, comm, CAPTURE_NAMES_ONE);
	else
		capture_note_name(tgid, tid, "", CAPTURE_NAMES_GONE);
}

/*
 * A thread seen for the first time: named at the end of the round
 * (capture_name_new_threads), when the live path's model, handed the
 * round's events by the merge, would read its name in /proc.
 */
static void note_new_thread(struct session *s, uint32_t tgid, uint32_t tid)
{
	uint64_t key = (uint64_t)tgid << 32 | tid;

	if (key == s->cap_last_thread)
		return;
	s->cap_last_thread = key;
	if (key_map_get(&s->cap_threads, &key, sizeof(key)))
		return;
	key_map_put(&s->cap_threads, &key, sizeof(key), (void *)1);
	if (!s->bpath.on) { /* --no-batch: the live model shows it at once, no merge between */
		name_now(tgid, tid);
		if (tid != tgid)
			name_now(tgid, tgid);
		return;
	}
	if (s->cap_n_new == s->cap_cap_new) {
		size_t cap = s->cap_cap_new ? s->cap_cap_new * 2 : 64;
		uint64_t *g = realloc(s->cap_new, cap * sizeof(*g));

		if (!g)
			return;
		s->cap_new = g;
		s->cap_cap_new = cap;
	}
	s->cap_new[s->cap_n_new++] = key;
}

void capture_name_new_threads(struct session *s)
{
	for (size_t i = 0; i < s->cap_n_new; i++) {
		uint32_t tgid = (uint32_t)(s->cap_new[i] >> 32), tid = (uint32_t)s->cap_new[i];

		name_now(tgid, tid);
		if (tid != tgid)
			name_now(tgid, tgid); /* its process, if not named yet */
	}
	s->cap_n_new = 0;
}

/*
 * A string of a per-event record the probe could not read (a page not yet
 * faulted in, one that faults for good past a string's end), read from the
 * process now, as the live path reads it, and kept right before the
 * record: the conversion has no process to read. LATE: u32 tgid, u32
 * flags (1: truncated), u64 address, then the bytes.
 */
static void keep_late(struct session *s, const struct ctrace_event *ev, int arg, unsigned flags, size_t max)
{
	char buf[CTRACE_ARGS_MAX];
	unsigned char *p;
	bool truncated = false;
	ssize_t n;

	if (arg < 0 || !(flags & CTRACE_STR_FAULT))
		return;
	n = record_strings_read_process(&s->strings, ev, arg, buf, max, &truncated);
	if (n < 0 || !(p = capture_reserve(s->cap, CAPTURE_LATE, 16 + (size_t)n)))
		return; /* the conversion reads the file it was mapped from, if any */
	memcpy(p, &ev->tgid, 4);
	memcpy(p + 4, &(uint32_t){ truncated }, 4);
	memcpy(p + 8, &ev->arg[arg], 8);
	memcpy(p + 16, buf, (size_t)n);
}

static void keep_late_strings(struct session *s, const void *data, size_t size)
{
	struct ctrace_event ev;

	if (record_decode(data, size, &ev) != 0)
		return;
	keep_late(s, &ev, record_name_arg(ev.kind), ev.name_flags, CTRACE_NAME_MAX - 1);
	keep_late(s, &ev, record_args_arg(ev.kind), ev.args_flags, CTRACE_ARGS_MAX);
}

/*
 * Converted behind the capture: the conversion punches out what it has
 * read (capture_read.c), so the file's blocks are what it has yet to
 * convert. Past the bound the probes' records are shed until half of it
 * is left; said once on stderr, and counted where every loss is.
 */
void capture_check_backlog(struct session *s)
{
	struct stat st;
	uint64_t backlog;

	if (!s->backlog_limit || fstat(s->cap->fd, &st) != 0)
		return;
	backlog = (uint64_t)st.st_blocks * 512;
	if (backlog > s->backlog_peak)
		s->backlog_peak = backlog;
	if (!s->shedding && backlog > s->backlog_limit) {
		if (!s->shed_said && !s->o->quiet)
			fprintf(stderr, "ctrace-bpf: the conversion is %llu MB behind (--max-backlog): events are dropped, and counted, until it catches up\n",
				(unsigned long long)(backlog >> 20));
		s->shed_said = true;
		s->shedding = true;
	} else if (s->shedding && backlog <= s->backlog_limit / 2) {
		s->shedding = false;
	}
}

/*
 * A probe's record shed: a per-event one counted here (said with the
 * kernel side's drops). A batch is not written at all: the conversion
 * counts its events lost by their numbers, at the thread's next copy or
 * from the kernel side's count at the stop; only a thread's last copy
 * (its death, its exec) leaves its header, as a record left unread.
 */
static void shed(struct session *s, const struct ctrace_record *r, const void *data, size_t size)
{
	unsigned char head[sizeof(*r) + BATCH_HEADER_BYTES];
	struct ctrace_record cut = *r;
	bool last = r->arg[2] == CTRACE_BATCH_WHY_SIGNAL || r->arg[2] == CTRACE_BATCH_WHY_EXITING ||
		    r->arg[2] == CTRACE_BATCH_WHY_EXEC;

	if (r->kind != CTRACE_KIND_BATCH) {
		s->shed_events++;
		return;
	}
	if (last && (r->arg[1] < BATCH_HEADER_BYTES || size < sizeof(head))) {
		capture_put(s->cap, CAPTURE_UNREAD, data, size); /* unreadable: the conversion counts it so */
	} else if (last) {
		cut.arg[1] = BATCH_HEADER_BYTES;
		memcpy(head, &cut, sizeof(cut));
		memcpy(head + sizeof(cut), (const char *)data + sizeof(cut), BATCH_HEADER_BYTES);
		capture_put(s->cap, CAPTURE_UNREAD, head, sizeof(head));
	}
	if (s->bpath.on) /* the loader's own reads of buffers go on from its numbers */
		batch_path_record(&s->bpath, data, size);
}

int capture_take_record(struct session *s, void *data, size_t size)
{
	struct ctrace_record r;

	if (size < sizeof(r)) {
		capture_put(s->cap, CAPTURE_RING, data, size); /* the conversion counts it bad */
		return 0;
	}
	memcpy(&r, data, sizeof(r));
	if (s->counting_only) {
		capture_put(s->cap, CAPTURE_UNREAD, data, size);
		/* The streams' numbers move on here as in the conversion. */
		if (!s->bpath.on || !batch_path_count_unread(&s->bpath, data, size))
			s->unread_at_stop++;
		return 0;
	}
	s->stats.records++;
	if (s->shedding && (r.kind == CTRACE_KIND_BATCH || ctrace_kind_is_event(r.kind))) {
		shed(s, &r, data, size);
		return 0;
	}
	/* One hit of a probe (a batch's are counted by its numbers, batch_path.c). */
	if (ctrace_kind_is_event(r.kind))
		s->captured_events++;
	if (r.kind == CTRACE_KIND_FORK || r.kind == CTRACE_KIND_EXEC || r.kind == CTRACE_KIND_LINK_MAP) {
		/* What the session itself must act on now: a process to attach, a dlopen() under way. */
		struct ctrace_event ev;

		if (record_decode(data, size, &ev) == 0 && !(s->stop_ns && ev.ts_ns > s->stop_ns)) {
			record_strings_resolve(&s->strings, &ev);
			session_note_process_change(s, &ev);
		}
	}
	if (r.kind != CTRACE_KIND_LINK_MAP)
		note_new_thread(s, r.tgid, r.tid);
	if (CTRACE_NAME_FLAGS(r.flags) & CTRACE_STR_FAULT || CTRACE_ARGS_FLAGS(r.flags) & CTRACE_STR_FAULT)
		keep_late_strings(s, data, size);
	capture_put(s->cap, CAPTURE_RING, data, size);
	/* A batch: its stream's numbers, from its header (the idle reads follow them). */
	if (r.kind == CTRACE_KIND_BATCH && s->bpath.on)
		batch_path_record(&s->bpath, data, size);
	return 0;
}

/* BUFFER: {u32 tgid, u32 tid, u64 buf, u64 read_ns, u8 final, u8 stopping, 6 bytes 0}, then the copy. */
static void copy_out(void *ctx, uint32_t tgid, uint32_t tid, uint64_t buf, const void *bytes, size_t n,
		     uint64_t read_ns, bool final, bool stopping)
{
	struct session *s = ctx;
	unsigned char *p = capture_reserve(s->cap, CAPTURE_BUFFER, 32 + n);

	if (!p)
		return;
	memset(p, 0, 32);
	memcpy(p, &tgid, 4);
	memcpy(p + 4, &tid, 4);
	memcpy(p + 8, &buf, 8);
	memcpy(p + 16, &read_ns, 8);
	p[24] = final;
	p[25] = stopping;
	memcpy(p + 32, bytes, n);
}

/* ADOPT: {u32 tgid, u32 0, u64 buf, u64 now}, then the buffer's 64-byte header. */
static void adopt_out(void *ctx, uint32_t tgid, uint64_t buf, const void *header, uint64_t now)
{
	struct session *s = ctx;
	unsigned char *p = capture_reserve(s->cap, CAPTURE_ADOPT, 24 + BATCH_HEADER_BYTES);

	if (!p)
		return;
	memset(p, 0, 24);
	memcpy(p, &tgid, 4);
	memcpy(p + 8, &buf, 8);
	memcpy(p + 16, &now, 8);
	memcpy(p + 24, header, BATCH_HEADER_BYTES);
}

void capture_watch_batches(struct session *s)
{
	s->bpath.copy_out = copy_out;
	s->bpath.adopt_out = adopt_out;
	s->bpath.copy_ctx = s;
}

/* UNSEEN: {u64 pid_tgid, u64 buf, u64 seq_end, u64 inherited} an entry (batch_path.c: count_unseen). */
void capture_write_unseen(struct session *s, int fd)
{
	struct batch_unseen *v;
	size_t n = batch_path_read_unseen(fd, &v);

	capture_put(s->cap, CAPTURE_UNSEEN, v, n * sizeof(*v));
	free(v);
}
