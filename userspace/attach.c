// SPDX-License-Identifier: MIT
#include "attach.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "ctrace.skel.h"
#include "ctrace_site.h"
#include "proc_maps.h"
#include "usdt_notes.h"

/* The BPF program for each probe name of provider "ctrace". */
static struct bpf_program *program_for(struct ctrace_bpf *skel, const char *name)
{
	static const struct {
		const char *probe;
		size_t off; /* offset of the program pointer in skel->progs */
	} table[] = {
#define P(n) { #n, offsetof(struct ctrace_bpf, progs.ctrace_##n) }
		P(span_begin), P(span_end), P(instant), P(counter_set),
		P(counter_add), P(new_pid), P(discard),
#undef P
	};

	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		if (!strcmp(table[i].probe, name))
			return *(struct bpf_program **)((char *)skel + table[i].off);
	return NULL;
}

static int add_link(struct attachment *a, struct bpf_link *l)
{
	if (a->n == a->cap) {
		size_t cap = a->cap ? a->cap * 2 : 16;
		struct bpf_link **v = realloc(a->links, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		a->links = v;
		a->cap = cap;
	}
	a->links[a->n++] = l;
	return 0;
}

static void note_looked_in(struct attachment *a, const char *path)
{
	size_t len = strlen(a->looked_in);

	if (len + strlen(path) + 3 >= sizeof(a->looked_in))
		return;
	snprintf(a->looked_in + len, sizeof(a->looked_in) - len, "%s%s",
		 len ? ", " : "", path);
}

static bool site_attachable(struct ctrace_bpf *skel, int fd,
			    const struct usdt_note *n)
{
	return !strcmp(n->provider, "ctrace") && program_for(skel, n->name) &&
	       usdt_is_ctrace_site(fd, n->site_offset);
}

static int attach_site(struct ctrace_bpf *skel, int pid,
		       const struct mapped_object *obj, const struct usdt_note *n,
		       bool with_semaphore, struct attachment *a, bool verbose)
{
	uint64_t offset = n->site_offset + CTRACE_SITE_NOP5_OFFSET;
	struct bpf_link *link;
	LIBBPF_OPTS(bpf_uprobe_opts, opts);

	opts.ref_ctr_offset = with_semaphore ? n->sema_offset : 0;
	opts.bpf_cookie = n->site_vaddr;
	link = bpf_program__attach_uprobe_opts(program_for(skel, n->name), pid,
					       obj->host_path, offset, &opts);
	if (!link) {
		int err = -errno;

		fprintf(stderr, "ctrace-bpf: cannot attach to ctrace:%s in %s: %s\n",
			n->name, obj->path, strerror(-err));
		return err;
	}
	if (add_link(a, link)) {
		bpf_link__destroy(link);
		return -ENOMEM;
	}
	if (verbose)
		fprintf(stderr, "ctrace-bpf: attached ctrace:%s at %s+0x%llx%s\n",
			n->name, obj->path, (unsigned long long)offset,
			with_semaphore ? " (with the semaphore)" : "");
	return 0;
}

/*
 * Attaches every ctrace site of one mapped object. Returns sites attached
 * or -errno.
 *
 * The semaphore must not turn on before every site is attached, or the
 * program would run probe sites nobody listens to yet and their events
 * would be lost (an event fired right after CTRACE_ENABLED() turned true
 * must be in the trace). So every site is attached without the reference
 * counter, and one site (the same for every tracer: the highest offset, so
 * that two ctrace-bpf on one process agree and the kernel sees one
 * ref_ctr_offset per uprobe) is attached last, with it.
 */
static int attach_object(struct ctrace_bpf *skel, int pid,
			 const struct mapped_object *obj, struct attachment *a,
			 bool verbose)
{
	struct usdt_note_list notes = { 0 };
	const struct usdt_note *armer = NULL;
	char err[256];
	int fd, attached = 0, ret = 0;

	if (usdt_notes_read(obj->host_path, &notes, err, sizeof(err)) < 0) {
		if (verbose)
			fprintf(stderr, "ctrace-bpf: %s: %s\n", obj->path, err);
		return 0;
	}
	fd = open(obj->host_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		usdt_note_list_free(&notes);
		return 0;
	}
	for (size_t i = 0; i < notes.n; i++) {
		const struct usdt_note *n = &notes.v[i];

		if (strcmp(n->provider, "ctrace"))
			continue;
		if (!site_attachable(skel, fd, n)) {
			/* A newer header's probe, or a site not built by our header:
			 * its arguments are not where our programs read them. */
			a->skipped_sites++;
			if (verbose)
				fprintf(stderr, "ctrace-bpf: %s: skipping ctrace:%s at 0x%llx (not a site this version knows)\n",
					obj->path, n->name, (unsigned long long)n->site_vaddr);
			continue;
		}
		if (n->sema_offset && (!armer || n->site_offset > armer->site_offset))
			armer = n;
	}
	for (size_t i = 0; i < notes.n && !ret; i++) {
		const struct usdt_note *n = &notes.v[i];

		if (n == armer || !site_attachable(skel, fd, n))
			continue;
		ret = attach_site(skel, pid, obj, n, false, a, verbose);
		attached += !ret;
	}
	if (!ret && armer) {
		ret = attach_site(skel, pid, obj, armer, true, a, verbose);
		attached += !ret;
	}
	close(fd);
	usdt_note_list_free(&notes);
	return ret < 0 ? ret : attached;
}

int attach_process(struct ctrace_bpf *skel, int pid, struct attachment *a,
		   bool verbose)
{
	struct mapped_object_list objs = { 0 };
	int ret;

	memset(a, 0, sizeof(*a));
	ret = proc_maps_objects(pid, &objs);
	if (ret < 0)
		return ret;
	for (size_t i = 0; i < objs.n; i++) {
		int n;

		note_looked_in(a, objs.v[i].path);
		n = attach_object(skel, pid, &objs.v[i], a, verbose);
		if (n < 0) {
			mapped_object_list_free(&objs);
			return n;
		}
		if (n > 0)
			a->objects_with_probes++;
	}
	mapped_object_list_free(&objs);
	return a->n ? 0 : -ENOENT;
}

void attachment_free(struct attachment *a)
{
	/* Detaching decrements the semaphores: CTRACE_ENABLED() turns false. */
	for (size_t i = 0; i < a->n; i++)
		bpf_link__destroy(a->links[i]);
	free(a->links);
	a->links = NULL;
	a->n = a->cap = 0;
}
