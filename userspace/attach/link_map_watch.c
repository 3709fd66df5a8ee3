// SPDX-License-Identifier: MIT
#include "attach/link_map_watch.h"
#include "attach/elf_offsets.h"
#include "attach/attach.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "attach/attach.h"
#include "lib/grow_array.h"
#include "attach/proc_maps.h"
#include "lib/term_safe.h"

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


/* One ld.so hooked: what its contents were, and where its link is. */
struct hooked {
	unsigned long long id; /* contents_id */
	size_t slot;           /* in links (perf) or fds (multi) */
};

/*
 * What tells contents apart under one inode (a file rewritten in place
 * keeps it): a hash of size, mtime and ctime. 0 or -1.
 */
static int contents_id(const char *path, unsigned long long *id)
{
	struct stat st;

	if (stat(path, &st) != 0)
		return -1;
	*id = (unsigned long long)st.st_size * 0x9e3779b97f4a7c15ull ^
	      ((unsigned long long)st.st_mtim.tv_sec * 1000000000ull + (unsigned long long)st.st_mtim.tv_nsec) * 0xc2b2ae3d27d4eb4full ^
	      ((unsigned long long)st.st_ctim.tv_sec * 1000000000ull + (unsigned long long)st.st_ctim.tv_nsec);
	return 0;
}

static void unhook(struct link_map_watch *w, const struct hooked *h)
{
	if (w->multi && h->slot < w->n_fds && w->fds[h->slot] >= 0) {
		close(w->fds[h->slot]);
		w->fds[h->slot] = -1;
	} else if (!w->multi && h->slot < w->n) {
		bpf_link__destroy(w->links[h->slot]);
		w->links[h->slot] = NULL;
	}
}

/* Puts the hook on `ld` (for `pid`, or every process when global). 0 or -errno. */
static int hook(struct link_map_watch *w, struct bpf_program *prog,
		const struct mapped_object *ld, int pid)
{
	int target = w->global ? -1 : pid;

	if (w->multi) {
		uint64_t off = elf_function_offset(ld->host_path, RENDEZVOUS_HOOK);
		int fd;

		if (!off)
			return -ENOENT;
		if (GROW_ARRAY(w->fds, w->cap_fds, w->n_fds, 8))
			return -ENOMEM;
		fd = attach_multi_one(prog, ld->host_path, off, target);
		if (fd < 0)
			return fd;
		w->fds[w->n_fds++] = fd;
	} else {
		LIBBPF_OPTS(bpf_uprobe_opts, opts, .func_name = RENDEZVOUS_HOOK);
		struct bpf_link *link;

		if (GROW_ARRAY(w->links, w->cap, w->n, 8))
			return -ENOMEM;
		link = bpf_program__attach_uprobe_opts(prog, target, ld->host_path, 0, &opts);
		if (!link)
			return -errno;
		w->links[w->n++] = link;
	}
	return 0;
}

int link_map_watch_process(struct link_map_watch *w, struct bpf_program *prog, bool multi,
			   int pid)
{
	struct mapped_object_list objs = { 0 };
	const struct mapped_object *ld = NULL;
	unsigned long base;
	unsigned long long key[3], id;
	struct hooked *old;
	int err;

	if (w->prog != prog || w->multi != multi) {
		link_map_watch_free(w);
		w->prog = prog;
		w->multi = multi;
	}
	base = interpreter_base(pid);
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
	if (contents_id(ld->host_path, &id) < 0) {
		mapped_object_list_free(&objs);
		return 0; /* replaced under its name: the next round */
	}
	old = key_map_get(&w->seen, key, sizeof(key));
	if (old && old->id == id) {
		mapped_object_list_free(&objs);
		return 0;
	}
	if (old) {
		/*
		 * The same inode with other contents (rewritten in place, then
		 * mapped again by an exec): the old hook's offset is not the
		 * hook in these. It goes before the new one is placed.
		 */
		unhook(w, old);
		free(key_map_del(&w->seen, key, sizeof(key)));
	}
	err = hook(w, prog, ld, pid);
	if (err) {
		if (w->verbose)
			fprintf(stderr, "ctrace-bpf: cannot watch %s:%s of process %d (%s): new libraries are found by polling\n",
				TERM_SAFE(ld->path), RENDEZVOUS_HOOK, pid, strerror(-err));
		mapped_object_list_free(&objs);
		return err;
	}
	{
		struct hooked *h = malloc(sizeof(*h));

		if (h) {
			*h = (struct hooked){ id, w->multi ? w->n_fds - 1 : w->n - 1 };
			key_map_put(&w->seen, key, sizeof(key), h);
		}
	}
	if (w->verbose)
		fprintf(stderr, "ctrace-bpf: watching %s:%s of process %d for dlopen/dlclose\n",
			TERM_SAFE(ld->path), RENDEZVOUS_HOOK, pid);
	mapped_object_list_free(&objs);
	return 1;
}

static void free_hooked(const void *key, size_t len, void *value, void *ctx)
{
	(void)key;
	(void)len;
	(void)ctx;
	free(value);
}

/* A forgotten process's hook goes too: it was bound to the task that is gone. */
static void drop_hooked(void *value, void *ctx)
{
	unhook(ctx, value);
	free(value);
}

void link_map_watch_forget(struct link_map_watch *w, int pid)
{
	if (!w->global)
		seen_forget_pid(&w->seen, pid, drop_hooked, w);
}

void link_map_watch_free(struct link_map_watch *w)
{
	const struct bpf_program *prog = w->prog;
	bool multi = w->multi;

	for (size_t i = 0; i < w->n; i++)
		bpf_link__destroy(w->links[i]);
	for (size_t i = 0; i < w->n_fds; i++)
		if (w->fds[i] >= 0) /* -1: unhooked already */
			close(w->fds[i]);
	free(w->links);
	free(w->fds);
	key_map_each(&w->seen, free_hooked, NULL);
	key_map_free(&w->seen);
	link_map_watch_init(w, w->global, w->verbose);
	w->prog = prog;
	w->multi = multi;
}
