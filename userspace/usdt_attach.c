// SPDX-License-Identifier: MIT
/*
 * usdt_attach.c - attaches the probes --usdt names (usdt_spec.h) in one
 * mapped object, with libbpf's USDT support: bpf_program__attach_usdt()
 * finds every note of a provider:name in the file, parses each note's
 * argument specs for bpf_usdt_arg(), raises the probe's semaphore (the
 * uprobe's reference counter) and attaches at the note's address, where
 * other tools do (the red zone is the program's: nothing is written there).
 * Written by hand around it: which objects to search (attach.c's walk of
 * the process's maps) and the cookie that names our probe.
 */
#include "usdt_attach.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <bpf/libbpf.h>
#include "attach.h"
#include "grow_array.h"
#include "proc_maps.h"
#include "usdt_notes.h"
#include "usdt_spec.h"

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

/* The first argument spec of pr's notes that is %rip-relative ("-4@NBuffers(%rip)"), or NULL. */
static const char *rip_relative(const struct usdt_note_list *notes, const struct usdt_probe *pr)
{
	static char spec[USDT_ARGS_MAX];

	for (size_t k = 0; k < notes->n; k++) {
		const char *p, *start;

		if (strcmp(notes->v[k].provider, pr->provider) || strcmp(notes->v[k].name, pr->name) ||
		    !(p = strstr(notes->v[k].args, "(%rip)")))
			continue;
		for (start = p; start > notes->v[k].args && start[-1] != ' '; start--)
			;
		snprintf(spec, sizeof(spec), "%.*s", (int)(p + 6 - start), start);
		return spec;
	}
	return NULL;
}

int usdt_attach_object(struct bpf_program *prog, int pid, const struct mapped_object *obj,
		       struct usdt_specs *specs, struct attachment *a)
{
	struct usdt_note_list notes = { 0 };
	unsigned attached = 0;
	char err[256];

	if (!specs || !specs->n_probes)
		return 0;
	if (usdt_notes_read(obj->host_path, &notes, err, sizeof(err)) < 0) {
		usdt_note_list_free(&notes);
		return 0; /* attach.c said why, with -v */
	}
	for (size_t i = 0; i < specs->n_probes; i++) {
		struct usdt_probe *pr = &specs->probe[i];
		LIBBPF_OPTS(bpf_usdt_opts, opts);
		struct bpf_link *link;
		const char *bad;
		unsigned count = 0;

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
		link = bpf_program__attach_usdt(prog, pid, libbpf_path(obj), pr->provider, pr->name, &opts);
		if (!link && errno == EINVAL && (bad = rip_relative(&notes, pr))) {
			/* libbpf 1.1 parses no sym(%rip) spec (1.3 does): this probe only is left out, and said. */
			fprintf(stderr, "ctrace-bpf: %s:%s in %s is not traced: its argument spec '%s' is read relative to %%rip, which libbpf %s cannot decode\n",
				pr->provider, pr->name, obj->path, bad, libbpf_version_string());
			a->usdt_refused++;
			continue;
		}
		if (!link && errno == E2BIG) {
			/* libbpf's table of argument specs is full (bpf/ctrace.bpf.c): this process goes without. */
			fprintf(stderr, "ctrace-bpf: %s:%s in %s (process %d) is not traced: libbpf's table of USDT argument specs is full\n",
				pr->provider, pr->name, obj->path, pid);
			a->usdt_refused++;
			continue;
		}
		if (!link) {
			int e = errno;

			fprintf(stderr, "ctrace-bpf: cannot attach to %s:%s in %s: %s\n", pr->provider,
				pr->name, obj->path, strerror(e));
			usdt_note_list_free(&notes);
			return e == EACCES || e == EPERM ? -ECANCELED : -e;
		}
		/* One of the object's links: detached with them (attach.c). */
		if (GROW_ARRAY(a->links, a->cap_links, a->n_links, 16)) {
			bpf_link__destroy(link);
			usdt_note_list_free(&notes);
			return -ENOMEM;
		}
		a->links[a->n_links++] = link;
		attached += count;
		if (a->verbose)
			fprintf(stderr, "ctrace-bpf: attached %s:%s at %u sites of %s\n", pr->provider,
				pr->name, count, obj->path);
	}
	usdt_note_list_free(&notes);
	a->sites += attached;
	a->usdt_sites += attached;
	return (int)attached;
}
