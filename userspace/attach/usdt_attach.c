// SPDX-License-Identifier: MIT
/*
 * usdt_attach.c - attaches the probes --usdt names (usdt_spec.h) in one
 * mapped object, with libbpf's USDT support: bpf_program__attach_usdt()
 * finds every note of a provider:name in the file, parses each note's
 * argument specs for bpf_usdt_arg(), raises the probe's semaphore (the
 * uprobe's reference counter) and attaches at the note's address, where
 * other tools do (the red zone is the program's: nothing is written there).
 * Written by hand around it: which objects to search (attach.c's walk of
 * the process's maps) and the cookie that names our probe; and the attach
 * of a probe libbpf 1.1 refuses, one with an argument read relative to
 * %rip (PostgreSQL's checkpoint__done: "-4@NBuffers(%rip)"), done the same
 * way with our own table of argument specs (bpf/ctrace_record.h's
 * CTRACE_USDT_LOC_COOKIE).
 */
#include "attach/usdt_attach.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <bpf/libbpf.h>
#include "lib/grow_array.h"
#include "attach/proc_maps.h"
#include "lib/term_safe.h"
#include "attach/elf_offsets.h"
#include "attach/usdt_argloc.h"
#include "attach/usdt_interpreter.h"
#include "attach/usdt_notes.h"
#include "attach/usdt_spec.h"

/* Bit i set: the note's argument i is signed ("-4@..."); its specs are space-separated. */
static uint16_t signed_args(const char *args)
{
	uint16_t bits = 0;
	int i = 0;

	for (const char *p = args; *p && i < CTRACE_USDT_ARGS; i++) {
		while (*p == ' ')
			p++;
		if (!*p)
			break;
		if (*p == '-')
			bits |= (uint16_t)(1u << i);
		while (*p && *p != ' ')
			p++;
	}
	return bits;
}

/*
 * The path libbpf is given: with a pid, libbpf 1.1 finds the object's
 * mappings in /proc/PID/maps by the path it was given, so the path the
 * process sees, where the tracer sees the same file there; else (a
 * container's, a deleted one) the tracer's way to it.
 */
static const char *libbpf_path(const struct mapped_object *obj)
{
	struct stat st;

	if (!obj->deleted && stat(obj->path, &st) == 0 && st.st_ino == obj->inode &&
	    major(st.st_dev) == obj->dev_major && minor(st.st_dev) == obj->dev_minor)
		return obj->path;
	return obj->host_path;
}

/* True if a note of pr reads an argument relative to %rip: libbpf 1.1 refuses the whole probe for it. */
static bool rip_relative(const struct usdt_note_list *notes, const struct usdt_probe *pr)
{
	for (size_t k = 0; k < notes->n; k++)
		if (!strcmp(notes->v[k].provider, pr->provider) && !strcmp(notes->v[k].name, pr->name) &&
		    strstr(notes->v[k].args, "(%rip)"))
			return true;
	return false;
}

/*
 * The slot of usdt_locs that holds `spec`, written there if no slot does
 * yet; -1 when the table is full. The same probe in another process of the
 * same object has the same spec (its %rip offsets do not depend on where
 * the object is mapped): one slot serves them all.
 */
static int loc_slot(struct bpf_map *map, const struct ctrace_usdt_loc_spec *spec, struct usdt_attach_state *a)
{
	struct ctrace_usdt_loc_spec have;

	for (uint32_t slot = 0; slot < a->loc_slots; slot++)
		if (!bpf_map__lookup_elem(map, &slot, sizeof(slot), &have, sizeof(have), 0) &&
		    !memcmp(&have, spec, sizeof(have)))
			return (int)slot;
	if (a->loc_slots == CTRACE_USDT_LOC_SLOTS)
		return -1;
	if (bpf_map__update_elem(map, &a->loc_slots, sizeof(a->loc_slots), spec, sizeof(*spec), 0))
		return -1;
	return (int)a->loc_slots++;
}

/*
 * How note n's arguments are read, into *spec: 0, or -1 having said on
 * stderr why the probe is not traced. A %rip-relative argument's address is
 * the IP (the note's address, in a uprobe) + (symbol + offset - note).
 */
static int note_spec(const struct mapped_object *obj, const struct usdt_probe *pr, const struct usdt_note *n,
		     uint64_t cookie, struct ctrace_usdt_loc_spec *spec)
{
	struct usdt_argloc locs[CTRACE_USDT_ARGS];
	char err[300];
	int cnt = usdt_argloc_parse(n->args, locs, err, sizeof(err));

	if (cnt < 0) {
		fprintf(stderr, "ctrace-bpf: %s:%s in %s is not traced: %s\n", pr->provider, pr->name, TERM_SAFE(obj->path), TERM_SAFE(err));
		return -1;
	}
	memset(spec, 0, sizeof(*spec));
	spec->cookie = cookie;
	spec->arg_cnt = (__u32)cnt;
	for (int i = 0; i < cnt; i++) {
		uint64_t sym;

		spec->arg[i] = locs[i].loc;
		if (!locs[i].sym[0])
			continue;
		if (elf_symbol_vaddr(obj->host_path, locs[i].sym, &sym) < 0) {
			fprintf(stderr, "ctrace-bpf: %s:%s in %s is not traced: its argument %d is read at symbol '%s', which the file's symbol tables do not have\n",
				pr->provider, pr->name, TERM_SAFE(obj->path), i, TERM_SAFE(locs[i].sym));
			return -1;
		}
		spec->arg[i].off = (__s64)(sym + (uint64_t)locs[i].loc.off - n->site_vaddr);
	}
	return 0;
}

/*
 * Probe pr by hand, as libbpf would: a uprobe at each of its notes'
 * addresses (where other tools attach; nothing written in the red zone),
 * its semaphore as the reference counter (raised by the kernel), the
 * cookie naming the slot of usdt_locs that says how its arguments are read
 * (bpf/ctrace_record.h). The sites attached, or -errno having said why.
 */
static int attach_by_hand(struct bpf_program *prog, struct bpf_map *locs, int pid,
			  const struct mapped_object *obj, const struct usdt_note_list *notes,
			  const struct usdt_probe *pr, uint64_t cookie, struct usdt_attach_state *a)
{
	struct ctrace_usdt_loc_spec spec;
	int slots[CTRACE_USDT_LOC_SLOTS];
	size_t n_specs = 0;
	int attached = 0;

	/* Every note's spec first: a probe is traced at all its sites or not at all. */
	for (size_t k = 0; k < notes->n; k++) {
		const struct usdt_note *n = &notes->v[k];

		if (strcmp(n->provider, pr->provider) || strcmp(n->name, pr->name))
			continue;
		if (note_spec(obj, pr, n, cookie, &spec) < 0) {
			a->refused++; /* said */
			return 0;
		}
		if (n_specs == CTRACE_USDT_LOC_SLOTS || (slots[n_specs] = loc_slot(locs, &spec, a)) < 0) {
			fprintf(stderr, "ctrace-bpf: %s:%s in %s is not traced: the table of argument specs of probes read relative to %%rip is full\n",
				pr->provider, pr->name, TERM_SAFE(obj->path));
			a->refused++;
			return 0;
		}
		n_specs++;
	}
	n_specs = 0;
	for (size_t k = 0; k < notes->n; k++) {
		const struct usdt_note *n = &notes->v[k];
		LIBBPF_OPTS(bpf_uprobe_opts, opts);
		struct bpf_link *link;

		if (strcmp(n->provider, pr->provider) || strcmp(n->name, pr->name))
			continue;
		opts.ref_ctr_offset = n->sema_offset;
		opts.bpf_cookie = CTRACE_USDT_LOC_COOKIE | (uint64_t)slots[n_specs++];
		link = bpf_program__attach_uprobe_opts(prog, pid, obj->host_path, n->site_offset, &opts);
		if (!link && errno == EOPNOTSUPP && !attached) {
			/* No BPF cookie on a uprobe before Linux 5.15 (libbpf's own path keys its specs by address). */
			fprintf(stderr, "ctrace-bpf: %s:%s in %s is not traced: its argument specs are read relative to %%rip, which needs BPF cookies on uprobes (Linux 5.15)\n",
				pr->provider, pr->name, TERM_SAFE(obj->path));
			a->refused++;
			return 0;
		}
		if (!link)
			return -errno;
		if (a->keep_link(a->ctx, link)) {
			bpf_link__destroy(link);
			return -ENOMEM;
		}
		attached++;
	}
	return attached;
}

static bool has_note(const struct usdt_note_list *notes, const struct usdt_probe *pr)
{
	for (size_t k = 0; k < notes->n; k++)
		if (!strcmp(notes->v[k].provider, pr->provider) && !strcmp(notes->v[k].name, pr->name))
			return true;
	return false;
}

/*
 * The spans whose begin probe this object fires for almost no call
 * (usdt_interpreter.h), said once at their first such object: a preset's
 * are left out here (bit s of the result), a given one is attached.
 */
static uint64_t spans_left_out(const struct mapped_object *obj, const struct usdt_note_list *notes,
			       struct usdt_specs *specs)
{
	uint64_t out = 0;

	for (size_t s = 0; s < specs->n; s++) {
		struct usdt_spec *sp = &specs->spec[s];
		const struct usdt_probe *b = &specs->probe[sp->begin], *e = &specs->probe[sp->end[0]];
		const char *why;

		if (!sp->span || !has_note(notes, b) || !(why = usdt_begin_fires_rarely(obj->host_path, b)))
			continue;
		if (sp->preset)
			out |= 1ull << s;
		if (sp->begin_fires_rarely)
			continue;
		sp->begin_fires_rarely = why;
		if (sp->preset)
			fprintf(stderr, "ctrace-bpf: --usdt %s: %s:%s~%s:%s is not traced: %s, and %s alone would slow every call for nothing\n",
				sp->preset, b->provider, b->name, e->provider, e->name, why, e->name);
		else
			fprintf(stderr, "ctrace-bpf: --usdt %s:%s~%s:%s: %s; %s fires at every call all the same (slower), and those without %s are not spans\n",
				b->provider, b->name, e->provider, e->name, why, e->name, b->name);
	}
	return out;
}

int usdt_attach_object(struct bpf_program *prog, struct bpf_map *locs, int pid, const struct mapped_object *obj,
		       struct usdt_specs *specs, struct usdt_attach_state *a)
{
	struct usdt_note_list notes = { 0 };
	unsigned attached = 0;
	uint64_t left_out;
	char err[256];
	int fd;

	if (!specs || !specs->n_probes)
		return 0;
	fd = mapped_object_open(obj);
	if (fd < 0 || usdt_notes_read_fd(fd, &notes, err, sizeof(err)) < 0) {
		if (fd >= 0)
			close(fd);
		usdt_note_list_free(&notes);
		return 0; /* attach.c said why, with -v */
	}
	close(fd);
	left_out = spans_left_out(obj, &notes, specs);
	for (size_t i = 0; i < specs->n_probes; i++) {
		struct usdt_probe *pr = &specs->probe[i];
		LIBBPF_OPTS(bpf_usdt_opts, opts);
		struct bpf_link *link;
		unsigned count = 0;

		if (left_out >> pr->spec & 1)
			continue;
		for (size_t k = 0; k < notes.n; k++) {
			if (strcmp(notes.v[k].provider, pr->provider) || strcmp(notes.v[k].name, pr->name))
				continue;
			if (!pr->signs_known) {
				pr->signed_args = signed_args(notes.v[k].args);
				pr->signs_known = true;
			}
			count++;
		}
		if (!count)
			continue;
		opts.usdt_cookie = usdt_probe_cookie(specs, i);
		if (rip_relative(&notes, pr)) {
			/* libbpf 1.1 parses no sym(%rip) spec and refuses the probe: attached by hand. */
			int n = attach_by_hand(prog, locs, pid, obj, &notes, pr, opts.usdt_cookie, a);

			if (n < 0) {
				fprintf(stderr, "ctrace-bpf: cannot attach to %s:%s in %s: %s\n", pr->provider,
					pr->name, TERM_SAFE(obj->path), strerror(-n));
				usdt_note_list_free(&notes);
				return n == -EACCES || n == -EPERM ? -ECANCELED : n;
			}
			attached += (unsigned)n;
			if (n && a->verbose)
				fprintf(stderr, "ctrace-bpf: attached %s:%s at %d sites of %s (its %%rip-relative specs read by ctrace-bpf)\n",
					pr->provider, pr->name, n, TERM_SAFE(obj->path));
			continue;
		}
		link = bpf_program__attach_usdt(prog, pid, libbpf_path(obj), pr->provider, pr->name, &opts);
		if (!link && errno == E2BIG) {
			/* libbpf's table of argument specs is full (bpf/ctrace.bpf.c): this process goes without. */
			fprintf(stderr, "ctrace-bpf: %s:%s in %s (process %d) is not traced: libbpf's table of USDT argument specs is full\n",
				pr->provider, pr->name, TERM_SAFE(obj->path), pid);
			a->refused++;
			continue;
		}
		if (!link) {
			int e = errno;

			fprintf(stderr, "ctrace-bpf: cannot attach to %s:%s in %s: %s\n", pr->provider,
				pr->name, TERM_SAFE(obj->path), strerror(e));
			usdt_note_list_free(&notes);
			return e == EACCES || e == EPERM ? -ECANCELED : -e;
		}
		/* One of the object's links: detached with them (attach.c). */
		if (a->keep_link(a->ctx, link)) {
			bpf_link__destroy(link);
			usdt_note_list_free(&notes);
			return -ENOMEM;
		}
		attached += count;
		if (a->verbose)
			fprintf(stderr, "ctrace-bpf: attached %s:%s at %u sites of %s\n", pr->provider,
				pr->name, count, TERM_SAFE(obj->path));
	}
	usdt_note_list_free(&notes);
	return (int)attached;
}
