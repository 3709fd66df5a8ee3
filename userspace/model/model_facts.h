/* SPDX-License-Identifier: MIT */
/*
 * model_facts.h - the facts of processes the model needs (thread and
 * process names), read from /proc through proc_info.c and pushed into the
 * model before the events that need them: the model itself reads nothing.
 */
#ifndef CTRACE_MODEL_FACTS_H
#define CTRACE_MODEL_FACTS_H

#include <stdint.h>
#include "ingest/record_decode.h"
#include "model/trace_model.h"

/* The names of every thread `pid` has now (see trace_model_thread_name()). */
void model_facts_threads(struct trace_model *m, uint32_t pid);
/* The name of process `pid`, if the model has none yet and has not shown it. */
void model_facts_process(struct trace_model *m, uint32_t pid);
/*
 * What the model will need for this event: the names of its thread and
 * process when not shown yet, a forked child's, an exec'd process's new
 * one. Called right before trace_model_event(ev).
 */
void model_facts_event_read(struct trace_model *m, const struct ctrace_event *ev);
/* Inline: on every event's path, where most often there is nothing to read. */
static inline void model_facts_event(struct trace_model *m, const struct ctrace_event *ev)
{
	if (ev->kind != CTRACE_KIND_FORK && ev->kind != CTRACE_KIND_EXEC &&
	    trace_model_shows_thread(m, ev->tgid, ev->tid))
		return;
	model_facts_event_read(m, ev);
}

struct key_map;
/* A conversion: names from this table ({tgid, tid} -> NUL-ended name), never from /proc. */
void model_facts_replay(struct key_map *names);

#endif
