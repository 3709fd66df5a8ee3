// SPDX-License-Identifier: MIT
#include "record_strings.h"

#include <string.h>
#include "proc_info.h"
#include "chrome_trace.h"

void record_strings_init(struct record_strings *rs, struct trace_stats *stats)
{
	memset(rs, 0, sizeof(*rs));
	literal_cache_init(&rs->literals);
	file_maps_init(&rs->files);
	key_map_init(&rs->snapshot_epochs);
	rs->stats = stats;
}

void record_strings_free(struct record_strings *rs)
{
	literal_cache_free(&rs->literals);
	key_map_free(&rs->snapshot_epochs);
	file_maps_free(&rs->files);
}

void record_strings_watch_epochs(struct record_strings *rs, const volatile uint32_t *epochs)
{
	rs->live_epochs = epochs;
}

static uint32_t epoch_slot(uint32_t tgid)
{
	return tgid % RECORD_STRINGS_EPOCH_SLOTS;
}

/* The epoch the BPF side is at now (ahead of known_epoch while records are on their way). */
static uint32_t live_epoch(const struct record_strings *rs, uint32_t tgid)
{
	return rs->live_epochs ? rs->live_epochs[epoch_slot(tgid)] : 0;
}

/*
 * Only the snapshot is bracketed: the attach after it is slow (perf
 * uprobes: a syscall a site), and a dlclose() during it leaves the
 * snapshot as true of the epoch it was taken in. A process whose objects
 * changed since the point of the ring being read (the records saying so
 * still on their way) keeps the snapshot it has: the events before those
 * records belong to it, and a new one would belong to none of them.
 */
void record_strings_snapshot(struct record_strings *rs, int pid)
{
	uint32_t before = live_epoch(rs, (uint32_t)pid);
	uint64_t key = (uint32_t)pid;
	uintptr_t note = (uintptr_t)key_map_get(&rs->snapshot_epochs, &key, sizeof(key));

	/* One snapshot an epoch: a second, if the epoch moved on while it was taken, would lose the first. */
	if (note == before + 1ull)
		return;
	file_maps_snapshot(&rs->files, pid);
	if (live_epoch(rs, (uint32_t)pid) == before)
		key_map_put(&rs->snapshot_epochs, &key, sizeof(key), (void *)(uintptr_t)(before + 1ull));
	else
		key_map_del(&rs->snapshot_epochs, &key, sizeof(key));
}

/* Strings the probe could not read (a page not yet faulted in) are read again from /proc. */
static void late_read(struct record_strings *rs, struct ctrace_event *ev, int arg,
		      const char **str, size_t *len, unsigned *flags,
		      char *buf, size_t max)
{
	bool truncated;
	ssize_t n;

	uint64_t key = ev->tgid;
	uint32_t epoch = rs->known_epoch[epoch_slot(ev->tgid)];
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
	unchanged = live_epoch(rs, ev->tgid) == epoch;
	n = unchanged ? proc_read_str((int)ev->tgid, ev->arg[arg], buf, max, &truncated) : -1;
	if (n >= 0) {
		rs->stats->late_string_reads++;
	} else {
		/*
		 * The process is gone, or has changed: a string of a read-only
		 * file mapping is the file's, if the snapshot is of the event's
		 * epoch; the program's own mappings are, whatever the epoch (a
		 * short-lived child's literals, read after its exit, are in
		 * them: its snapshot may be older than its last dlopen()).
		 */
		n = unchanged || (uintptr_t)key_map_get(&rs->snapshot_epochs, &key, sizeof(key)) == epoch + 1ull ?
			    file_maps_read_str(&rs->files, ev->tgid, ev->arg[arg], buf, max, &truncated) :
			    file_maps_read_program_str(&rs->files, ev->tgid, ev->arg[arg], buf, max, &truncated);
		if (n < 0) {
			rs->stats->unreadable_strings++;
			return;
		}
		rs->stats->file_string_reads++;
	}
	*str = buf;
	*len = (size_t)n;
	*flags = truncated ? CTRACE_STR_TRUNCATED : 0;
}

bool record_strings_read_late(struct record_strings *rs, const struct ctrace_event *ev, int arg,
			      const char **str, size_t *len, bool *truncated, char *buf, size_t max)
{
	struct ctrace_event e = *ev;
	unsigned flags = CTRACE_STR_FAULT;

	late_read(rs, &e, arg, str, len, &flags, buf, max);
	*truncated = flags & CTRACE_STR_TRUNCATED;
	return !(flags & CTRACE_STR_FAULT);
}

/* Strings the site passed as literals: the probe sent their address only. */
static void literal_read(struct record_strings *rs, struct ctrace_event *ev, int arg,
			 const char **str, size_t *len, unsigned *flags, size_t max)
{
	bool truncated;

	if (arg < 0)
		return;
	if (*flags & CTRACE_STR_LITERAL) { /* its first use: remember it */
		literal_cache_put(&rs->literals, ev->tgid, ev->arg[arg], *str, *len,
				  *flags & CTRACE_STR_TRUNCATED);
		*flags &= ~(unsigned)CTRACE_STR_LITERAL;
		return;
	}
	if (!(*flags & CTRACE_STR_BYREF))
		return;
	rs->stats->literals_by_reference++;
	if (!literal_cache_get(&rs->literals, ev->tgid, ev->arg[arg], max, str, len, &truncated)) {
		rs->stats->unreadable_strings++;
		*flags = CTRACE_STR_FAULT;
		return;
	}
	*flags = truncated ? CTRACE_STR_TRUNCATED : 0;
}

void record_strings_resolve(struct record_strings *rs, struct ctrace_event *ev)
{
	if (ev->kind == CTRACE_KIND_FORK || ev->kind == CTRACE_KIND_EXEC || ev->kind == CTRACE_KIND_LINK_MAP)
		rs->known_epoch[epoch_slot((uint32_t)(ev->kind == CTRACE_KIND_FORK ? ev->arg[1] : ev->arg[0]))] =
			(uint32_t)ev->arg[2];
	if (ev->kind == CTRACE_KIND_LINK_MAP)
		return; /* a dlopen() under way: no strings */
	if (ev->kind == CTRACE_KIND_EXEC) {
		uint64_t key = (uint32_t)ev->arg[0];
		uintptr_t note = (uintptr_t)key_map_get(&rs->snapshot_epochs, &key, sizeof(key));

		/* A new image: the old one's literals and mappings are no longer its. */
		literal_cache_exec(&rs->literals, (uint32_t)ev->arg[0]);
		/*
		 * Unless the snapshot is of the new image: taken in the exec's
		 * epoch or later (a child attached from its fork record after
		 * it had exec()d). Forgotten, it could not be taken again once
		 * the process is gone, and its batched literals, which come at
		 * its exit, would be unreadable.
		 */
		if (!note || note - 1 < (uint32_t)ev->arg[2]) {
			file_maps_exec(&rs->files, (uint32_t)ev->arg[0]);
			key_map_del(&rs->snapshot_epochs, &key, sizeof(key));
		}
	} else if (ev->kind == CTRACE_KIND_FORK) {
		literal_cache_fork(&rs->literals, (uint32_t)ev->arg[0], (uint32_t)ev->arg[1]);
		file_maps_fork(&rs->files, (uint32_t)ev->arg[0], (uint32_t)ev->arg[1]);
	}
	literal_read(rs, ev, record_name_arg(ev->kind), &ev->name, &ev->name_len,
		     &ev->name_flags, CTRACE_NAME_MAX - 1);
	literal_read(rs, ev, record_args_arg(ev->kind), &ev->args, &ev->args_len,
		     &ev->args_flags, CTRACE_ARGS_MAX);
	late_read(rs, ev, record_name_arg(ev->kind), &ev->name, &ev->name_len,
		  &ev->name_flags, rs->name_buf, sizeof(rs->name_buf));
	late_read(rs, ev, record_args_arg(ev->kind), &ev->args, &ev->args_len,
		  &ev->args_flags, rs->args_buf, sizeof(rs->args_buf));
}
