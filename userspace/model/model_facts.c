// SPDX-License-Identifier: MIT
#include "model/model_facts.h"

#include <stdio.h>
#include <string.h>
#include "capture/capture_journal.h"
#include "lib/key_map.h"
#include "lib/proc_info.h"

/*
 * In a conversion the names come from the capture (model_facts_replay):
 * {tgid, tid} -> the name /proc gave when the capture looked, NUL-ended.
 */
static struct key_map *replay_names;

void model_facts_replay(struct key_map *names)
{
	replay_names = names;
}

static bool thread_comm(uint32_t tgid, uint32_t tid, char *comm, size_t size)
{
	uint64_t key = (uint64_t)tgid << 32 | tid;
	const char *have;

	if (!replay_names) {
		if (!proc_thread_comm((int)tgid, (int)tid, comm, size))
			return false;
		capture_note_name(tgid, tid, comm, CAPTURE_NAMES_ONE);
		return true;
	}
	have = key_map_get(replay_names, &key, sizeof(key));
	if (!have)
		return false;
	snprintf(comm, size, "%s", have);
	return true;
}

struct threads_of {
	struct trace_model *m;
	uint32_t pid;
};

static void thread_named(void *ctx, int tid, const char *comm)
{
	struct threads_of *t = ctx;

	capture_note_name(t->pid, (uint32_t)tid, comm, CAPTURE_NAMES_PASS);
	trace_model_thread_name(t->m, t->pid, (uint32_t)tid, comm, strlen(comm));
}

void model_facts_threads(struct trace_model *m, uint32_t pid)
{
	struct threads_of t = { m, pid };

	if (replay_names)
		return; /* the capture's NAMES records of the pass come in its place */
	proc_each_thread((int)pid, thread_named, &t);
}

/* The name /proc gives a thread now, told to the model; nothing if it is gone. */
static void name_now(struct trace_model *m, uint32_t tgid, uint32_t tid)
{
	char comm[32];

	if (thread_comm(tgid, tid, comm, sizeof(comm)))
		trace_model_thread_name(m, tgid, tid, comm, strlen(comm));
}

void model_facts_process(struct trace_model *m, uint32_t pid)
{
	if (!trace_model_shows_process(m, pid) && !trace_model_knows_thread(m, pid, pid))
		name_now(m, pid, pid);
}

void model_facts_event_read(struct trace_model *m, const struct ctrace_event *ev)
{
	uint32_t tgid = ev->tgid;

	switch (ev->kind) {
	case CTRACE_KIND_LINK_MAP:
		return; /* nothing shown */
	case CTRACE_KIND_FORK:
	case CTRACE_KIND_EXEC:
		tgid = (uint32_t)ev->arg[0];
		break;
	default:
		break;
	}
	/*
	 * A thread shown for the first time is named as /proc says now (it
	 * may have been renamed since the last model_facts_threads()), and
	 * its process, if not shown yet either. A thread shown is the common
	 * case, and that of its process too: nothing to read.
	 */
	if (!trace_model_shows_thread(m, tgid, ev->tid)) {
		name_now(m, tgid, ev->tid);
		model_facts_process(m, tgid);
	}
	if (ev->kind == CTRACE_KIND_FORK && !ev->name_len)
		model_facts_process(m, (uint32_t)ev->arg[1]); /* no comm came with the fork */
	/* The kernel's comm, sent with the record: /proc's is gone with a program that exited at once. */
	if (ev->kind == CTRACE_KIND_EXEC && ev->args_len)
		trace_model_exec_name(m, tgid, ev->args, ev->args_len);
}
