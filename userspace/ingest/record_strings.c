// SPDX-License-Identifier: MIT
#include "ingest/record_strings.h"

#include <string.h>
#include "lib/proc_info.h"
#include "encode/json/chrome_trace.h"

void record_strings_init(struct record_strings *rs, struct trace_stats *stats)
{
	memset(rs, 0, sizeof(*rs));
	literal_cache_init(&rs->literals);
	file_maps_init(&rs->files);
	rs->stats = stats;
}

void record_strings_free(struct record_strings *rs)
{
	literal_cache_free(&rs->literals);
	file_maps_free(&rs->files);
}

void record_strings_watch_epochs(struct record_strings *rs, const struct process_epochs *pe)
{
	rs->epochs = *pe;
}

/*
 * Only the snapshot is bracketed (file_maps_snapshot reads the epoch
 * before and after): the attach after it is slow (perf uprobes: a syscall
 * a site), and a dlclose() during it leaves the snapshot as true of the
 * epoch it was taken in.
 */
void record_strings_snapshot_again(struct record_strings *rs, int pid)
{
	file_maps_snapshot(&rs->files, pid, &rs->epochs);
}

void record_strings_snapshot(struct record_strings *rs, int pid)
{
	/* One snapshot an epoch: its objects are the same. */
	if (!file_maps_has_exact(&rs->files, (uint32_t)pid, process_epoch_now(&rs->epochs, (uint32_t)pid)))
		record_strings_snapshot_again(rs, pid);
}

void record_strings_keep_late(struct record_strings *rs, uint32_t tgid, uint64_t addr, const char *s, size_t len,
			      bool truncated)
{
	struct kept_late *k = &rs->kept[rs->kept[0].set];

	if (rs->kept[0].set && rs->kept[1].set)
		return; /* a forged capture's third: no record has more than two strings */
	if (len > sizeof(k->s))
		len = sizeof(k->s);
	*k = (struct kept_late){ .set = true, .truncated = truncated, .tgid = tgid, .addr = addr, .len = len };
	memcpy(k->s, s, len);
}

void record_strings_forget_kept(struct record_strings *rs)
{
	rs->kept[0].set = rs->kept[1].set = false;
}

/* A conversion: what the capture read late at the event's address, if it did. */
static const struct kept_late *kept_for(const struct record_strings *rs, const struct ctrace_event *ev, int arg)
{
	for (int i = 0; i < 2; i++)
		if (rs->kept[i].set && rs->kept[i].tgid == ev->tgid && rs->kept[i].addr == ev->arg[arg])
			return &rs->kept[i];
	return NULL;
}

/*
 * The string at the event's address, read from the process while it is
 * as the probe saw it: -1 otherwise, *unchanged saying whether it was.
 */
static ssize_t from_process(struct record_strings *rs, const struct ctrace_event *ev, int arg, char *buf,
			    size_t max, bool *truncated, bool *unchanged)
{
	uint32_t epoch = rs->known_epoch[process_epoch_slot(ev->tgid)];
	struct process_look look;
	ssize_t n;

	/*
	 * The process's memory now is what the probe saw only if no object
	 * was mapped or unmapped since (a library dlclose()d, another mapped
	 * at its address) and no exec is under way (its new image is mapped
	 * before the epoch moves on): asked again once the read is done.
	 */
	look = process_look_begin(&rs->epochs, ev->tgid);
	*unchanged = !rs->offline && look.epoch == epoch && process_look_exact(&rs->epochs, ev->tgid, &look);
	n = *unchanged ? proc_read_str((int)ev->tgid, ev->arg[arg], buf, max, truncated) : -1;
	if (n >= 0 && !process_look_exact(&rs->epochs, ev->tgid, &look))
		n = -1, *unchanged = false;
	return n;
}

ssize_t record_strings_read_process(struct record_strings *rs, const struct ctrace_event *ev, int arg, char *buf,
				    size_t max, bool *truncated)
{
	bool unchanged;

	return from_process(rs, ev, arg, buf, max, truncated, &unchanged);
}

/* Strings the probe could not read (a page not yet faulted in) are read again from /proc. */
static void late_read(struct record_strings *rs, struct ctrace_event *ev, int arg,
		      const char **str, size_t *len, unsigned *flags,
		      char *buf, size_t max)
{
	bool truncated, unchanged;
	ssize_t n;
	uint32_t epoch = rs->known_epoch[process_epoch_slot(ev->tgid)];

	if (arg < 0 || !(*flags & CTRACE_STR_FAULT))
		return;
	/*
	 * The process, as the probe saw it (from_process); else the file it
	 * was mapped from says, if file_maps looked at the process in the
	 * event's epoch; else nothing does: unreadable, rather than another
	 * object's string.
	 */
	if (rs->offline) {
		const struct kept_late *k = kept_for(rs, ev, arg);

		if (k) { /* read from the process when captured, as it is read live */
			size_t n = k->len < max ? k->len : max;

			memcpy(buf, k->s, n);
			rs->stats->late_string_reads++;
			*str = buf;
			*len = n;
			*flags = k->truncated || n < k->len ? CTRACE_STR_TRUNCATED : 0;
			return;
		}
	}
	n = from_process(rs, ev, arg, buf, max, &truncated, &unchanged);
	if (n >= 0) {
		rs->stats->late_string_reads++;
	} else {
		/*
		 * The process is gone, or has changed: a string of a read-only
		 * file mapping is the file's, as the snapshot of the event's
		 * epoch saw it; the program's own mappings are, whatever the
		 * epoch (a short-lived child's literals, read after its exit,
		 * are in them: its snapshot may be older than its last dlopen()).
		 */
		n = file_maps_read_str(&rs->files, ev->tgid, epoch, unchanged, ev->arg[arg], buf, max,
				       &truncated);
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

/*
 * Where the exec put the program (bpf/ctrace_record.h: EXEC): the file's
 * read-only ranges stand for the process's mappings until the session
 * looks at it, so the literals of a process that exits first (its batched
 * events come at its exit) are read from the file.
 */
static void exec_image(struct record_strings *rs, const struct ctrace_event *ev, uint32_t tgid,
		       uint32_t epoch)
{
	char path[CTRACE_NAME_MAX];
	size_t n = ev->name_len < sizeof(path) - 1 ? ev->name_len : sizeof(path) - 1;

	if (!ev->arg[3] || !ev->tsc)
		return; /* not told */
	memcpy(path, ev->name, n);
	path[n] = '\0';
	file_maps_exec_image(&rs->files, tgid, epoch, path, ev->tsc, (uint32_t)(ev->arg[2] >> 32),
			     ev->arg[3]);
}

void record_strings_resolve(struct record_strings *rs, struct ctrace_event *ev)
{
	if (ev->kind == CTRACE_KIND_FORK || ev->kind == CTRACE_KIND_EXEC || ev->kind == CTRACE_KIND_LINK_MAP) {
		uint32_t tgid = (uint32_t)(ev->kind == CTRACE_KIND_FORK ? ev->arg[1] : ev->arg[0]);
		uint32_t epoch = (uint32_t)ev->arg[2];

		rs->known_epoch[process_epoch_slot(tgid)] = epoch;
		if (ev->kind == CTRACE_KIND_EXEC) { /* a new image: the old one's mappings are no longer its */
			file_maps_exec(&rs->files, tgid, epoch);
			exec_image(rs, ev, tgid, epoch);
		} else
			file_maps_read_up_to(&rs->files, tgid, epoch);
	}
	if (ev->kind == CTRACE_KIND_LINK_MAP)
		return; /* a dlopen() under way: no strings */
	if (ev->kind == CTRACE_KIND_EXEC) {
		literal_cache_exec(&rs->literals, (uint32_t)ev->arg[0]);
	} else if (ev->kind == CTRACE_KIND_FORK) {
		uint32_t parent = (uint32_t)ev->arg[0];

		literal_cache_fork(&rs->literals, parent, (uint32_t)ev->arg[1]);
		file_maps_fork(&rs->files, parent, rs->known_epoch[process_epoch_slot(parent)], (uint32_t)ev->arg[1],
			       (uint32_t)ev->arg[2]);
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
