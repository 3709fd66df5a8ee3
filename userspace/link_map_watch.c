// SPDX-License-Identifier: MIT
#include "link_map_watch.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "proc_maps.h"

/* glibc's and musl's name for the r_brk function. */
#define RENDEZVOUS_HOOK "_dl_debug_state"

void link_map_watch_init(struct link_map_watch *w, bool global, bool verbose)
{
	memset(w, 0, sizeof(*w));
	w->global = global;
	w->verbose = verbose;
	key_map_init(&w->seen);
}

/*
 * Where the kernel loaded the program's interpreter (AT_BASE in the aux
 * vector): the dynamic linker, whatever its path or name. 0 if none.
 */
static unsigned long interpreter_base(int pid)
{
	char path[48];
	Elf64_auxv_t aux[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/auxv", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, aux, sizeof(aux));
	close(fd);
	for (ssize_t i = 0; n > 0 && i < n / (ssize_t)sizeof(aux[0]); i++) {
		if (aux[i].a_type == AT_NULL)
			break;
		if (aux[i].a_type == AT_BASE)
			return aux[i].a_un.a_val;
	}
	return 0;
}

int link_map_watch_process(struct link_map_watch *w, struct bpf_program *prog, int pid)
{
	LIBBPF_OPTS(bpf_uprobe_opts, opts, .func_name = RENDEZVOUS_HOOK);
	struct mapped_object_list objs = { 0 };
	const struct mapped_object *ld = NULL;
	unsigned long base = interpreter_base(pid);
	unsigned long long key[3];
	struct bpf_link *link;
	int err;

	if (w->prog != prog) {
		link_map_watch_free(w);
		w->prog = prog;
	}
	if (!base)
		return 0;
	err = proc_maps_objects(pid, &objs);
	if (err < 0)
		return err;
	for (size_t i = 0; i < objs.n && !ld; i++)
		if (objs.v[i].map_start == base)
			ld = &objs.v[i];
	if (!ld) {
		mapped_object_list_free(&objs);
		return 0;
	}
	key[0] = w->global ? 0 : (unsigned long long)pid;
	key[1] = ld->inode;
	key[2] = ((unsigned long long)ld->dev_major << 32) | ld->dev_minor;
	if (key_map_get(&w->seen, key, sizeof(key))) {
		mapped_object_list_free(&objs);
		return 0;
	}
	link = bpf_program__attach_uprobe_opts(prog, w->global ? -1 : pid, ld->host_path, 0, &opts);
	err = link ? 0 : -errno;
	if (!err && w->n == w->cap) {
		size_t cap = w->cap ? w->cap * 2 : 8;
		struct bpf_link **v = realloc(w->links, cap * sizeof(*v));

		if (!v) {
			bpf_link__destroy(link);
			err = -ENOMEM;
		} else {
			w->links = v;
			w->cap = cap;
		}
	}
	if (err) {
		if (w->verbose)
			fprintf(stderr, "ctrace-bpf: cannot watch %s:%s of process %d (%s): new libraries are found by polling\n",
				ld->path, RENDEZVOUS_HOOK, pid, strerror(-err));
		mapped_object_list_free(&objs);
		return err;
	}
	w->links[w->n++] = link;
	key_map_put(&w->seen, key, sizeof(key), (void *)1);
	if (w->verbose)
		fprintf(stderr, "ctrace-bpf: watching %s:%s of process %d for dlopen/dlclose\n",
			ld->path, RENDEZVOUS_HOOK, pid);
	mapped_object_list_free(&objs);
	return 1;
}

void link_map_watch_free(struct link_map_watch *w)
{
	for (size_t i = 0; i < w->n; i++)
		bpf_link__destroy(w->links[i]);
	free(w->links);
	key_map_free(&w->seen);
	link_map_watch_init(w, w->global, w->verbose);
}
