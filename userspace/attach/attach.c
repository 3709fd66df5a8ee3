// SPDX-License-Identifier: MIT
#include "attach/attach.h"
#include "attach/site_set.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include <linux/perf_event.h>
#include "lib/categories.h"
#include "ctrace.skel.h"
#include "ctrace_record.h"
#include "ctrace_site.h"
#include "attach/elf_offsets.h"
#include "lib/fd_limit.h"
#include "lib/grow_array.h"
#include "lib/path_list.h"
#include "lib/proc_info.h"
#include "attach/proc_maps.h"
#include "lib/term_safe.h"
#include "attach/uprobe_multi_abi.h"
#include "attach/usdt_attach.h"
#include "attach/usdt_notes.h"

/* The BPF program for each probe name of provider "ctrace" (the kinds table), by index. */
static const struct {
	const char *probe;
	size_t off; /* offset of the program pointer in the skeleton */
} programs[] = {
#define P(kind, num, probe, ...) { #probe, offsetof(struct ctrace_bpf, progs.ctrace_##probe) },
	CTRACE_PROBE_KINDS(P)
#undef P
};

_Static_assert(KIND_COUNT == sizeof(programs) / sizeof(programs[0]), "one program a kind");

static struct bpf_program *program_at(struct ctrace_bpf *skel, int i)
{
	return *(struct bpf_program **)((char *)skel + programs[i].off);
}

int attach_kind_of(const char *probe)
{
	for (int i = 0; i < KIND_COUNT; i++)
		if (!strcmp(programs[i].probe, probe))
			return i;
	return -1;
}

void attach_prepare_multi(struct ctrace_bpf *skel)
{
	for (int i = 0; i < KIND_COUNT; i++)
		bpf_program__set_expected_attach_type(program_at(skel, i),
						      CTRACE_TRACE_UPROBE_MULTI);
	/* The dynamic linker's hook too (link_map_watch.c). */
	bpf_program__set_expected_attach_type(skel->progs.ctrace_link_map, CTRACE_TRACE_UPROBE_MULTI);
}

/*
 * Whether process pid has exited or is exiting: an attach that failed then
 * failed for that (the objects' paths are under /proc/PID, whose root goes
 * early in the exit, before the process is a zombie).
 */
static bool process_leaving(int pid)
{
	char root[64];
	struct stat st;

	if (proc_exited(pid))
		return true;
	snprintf(root, sizeof(root), "/proc/%d/root/", pid);
	return stat(root, &st) != 0 && (errno == ENOENT || errno == ESRCH);
}

/* A --usdt probe's link, with the object's (usdt_attach.h). */
static int keep_usdt_link(void *ctx, struct bpf_link *link)
{
	struct attachment *a = ctx;

	if (GROW_ARRAY(a->links, a->cap_links, a->n_links, 16))
		return -ENOMEM;
	a->links[a->n_links++] = link;
	return 0;
}

void attachment_init(struct attachment *a, bool multi, bool verbose)
{
	memset(a, 0, sizeof(*a));
	a->multi = multi;
	a->verbose = verbose;
	key_map_init(&a->seen);
	key_map_init(&a->batch_semas);
}

static void batch_sema_key(const struct mapped_object *o, uint64_t key[2])
{
	key[0] = (uint64_t)o->dev_major << 32 | o->dev_minor;
	key[1] = o->inode;
}

/*
 * Every process is pid -1 for perf_event_open but 0 for a uprobe_multi
 * link, which refuses -1 with EINVAL: a refusal that used to send every
 * -f/--exe trace to one perf uprobe per site, and so per-event probes.
 */
static __u32 multi_link_pid(int pid)
{
	return pid < 0 ? 0 : (__u32)pid;
}

static int link_multi(struct ctrace_bpf *skel, int kind, const char *path,
		      const uint64_t *offsets, const uint64_t *ref_ctrs,
		      const uint64_t *cookies, size_t cnt, int pid)
{
	struct uprobe_multi_link_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.prog_fd = (__u32)bpf_program__fd(program_at(skel, kind));
	attr.attach_type = CTRACE_TRACE_UPROBE_MULTI;
	attr.path = (uintptr_t)path;
	attr.offsets = (uintptr_t)offsets;
	attr.ref_ctr_offsets = (uintptr_t)ref_ctrs;
	attr.cookies = (uintptr_t)cookies;
	attr.cnt = (__u32)cnt;
	attr.pid = multi_link_pid(pid);
	return (int)syscall(__NR_bpf, BPF_LINK_CREATE, &attr, sizeof(attr));
}

static int link_perf(struct ctrace_bpf *skel, int kind, const char *path,
		     uint64_t offset, uint64_t ref_ctr, uint64_t cookie, int pid,
		     struct attachment *a)
{
	struct bpf_link *link;
	LIBBPF_OPTS(bpf_uprobe_opts, opts);

	opts.ref_ctr_offset = ref_ctr;
	opts.bpf_cookie = a->cookies ? cookie : 0;
	link = bpf_program__attach_uprobe_opts(program_at(skel, kind), pid, path,
					       offset, &opts);
	if (!link && errno == EOPNOTSUPP && opts.bpf_cookie) {
		/* The kernel has no perf links after all: no cookies from now on. */
		a->cookies = false;
		opts.bpf_cookie = 0;
		link = bpf_program__attach_uprobe_opts(program_at(skel, kind), pid, path,
						       offset, &opts);
	}
	if (!link)
		return -errno;
	if (GROW_ARRAY(a->links, a->cap_links, a->n_links, 16)) {
		bpf_link__destroy(link);
		return -ENOMEM;
	}
	a->links[a->n_links++] = link;
	return 0;
}

/* The kernel's uprobe PMU (perf_event_attr.type), or -1. */
static int uprobe_pmu_type(void)
{
	static int type = -2;

	if (type == -2) {
		FILE *f = fopen("/sys/bus/event_source/devices/uprobe/type", "re");

		if (!f || fscanf(f, "%d", &type) != 1)
			type = -1;
		if (f)
			fclose(f);
	}
	return type;
}

/*
 * Perf-uprobe mode: the semaphore is raised by a uprobe of its own, with no
 * program, at `offset`. A perf uprobe is registered (the semaphore up) one
 * syscall before its program is bound, so a site that carried the semaphore
 * would lose what it fires in between (in a loop from CTRACE_ENABLED() on:
 * thousands of events); here every site already has its program.
 */
static int perf_arm(const char *path, uint64_t offset, uint64_t sema, int pid,
		    struct attachment *a)
{
	struct perf_event_attr attr;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = (__u32)uprobe_pmu_type();
	attr.config = sema << 32; /* format/ref_ctr_offset: config:32-63 */
	attr.config1 = (uintptr_t)path;
	attr.config2 = offset;
	if (uprobe_pmu_type() < 0)
		return -ENOENT;
	/* Every process (pid -1) is one event per CPU for perf; CPU 0 is enough to arm. */
	fd = (int)syscall(__NR_perf_event_open, &attr, pid < 0 ? -1 : pid, pid < 0 ? 0 : -1, -1,
			  PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (GROW_ARRAY(a->link_fds, a->cap_fds, a->n_fds, 16)) {
		close(fd);
		return -ENOMEM;
	}
	a->link_fds[a->n_fds++] = fd;
	if (a->verbose)
		fprintf(stderr, "ctrace-bpf: raised the semaphore of %s with a uprobe at +0x%llx\n",
			TERM_SAFE(path), (unsigned long long)offset);
	return 0;
}

/*
 * Where to arm: the object's .init code (ran once, at load), else the
 * armer site's other nop (that site then traps twice a hit). A uprobe has
 * one reference counter: .init carries the first category's semaphore,
 * the others are raised at their armer's other nop.
 */
static int perf_arm_object(const struct mapped_object *obj, const struct armer *ar,
			   int pid, struct attachment *a)
{
	uint64_t init = elf_init_offset(obj->host_path);
	uint64_t other = a->fast ? ar->offset - CTRACE_SITE_NOP5_OFFSET :
				   ar->offset + CTRACE_SITE_NOP5_OFFSET;
	int err = init ? perf_arm(obj->host_path, init, ar->sema, pid, a) : -ENOENT;

	if (err)
		err = perf_arm(obj->host_path, other, ar->sema, pid, a);
	if (err)
		fprintf(stderr, "ctrace-bpf: cannot raise the semaphore of %s: %s\n", TERM_SAFE(obj->path),
			strerror(-err));
	return err;
}

/* Attaches `cnt` sites of one kind (one link in multi mode). */
static int attach_sites(struct ctrace_bpf *skel, int pid,
			const struct mapped_object *obj, int kind,
			const uint64_t *offsets, const uint64_t *cookies,
			size_t cnt, uint64_t sema, struct attachment *a)
{
	int err = 0;

	if (!cnt)
		return 0;
	if (a->multi) {
		uint64_t *refs = calloc(cnt, sizeof(*refs));
		int fd;

		if (!refs)
			return -ENOMEM;
		refs[cnt - 1] = sema;
		fd = link_multi(skel, kind, obj->host_path, offsets, refs,
				a->cookies ? cookies : NULL, cnt, pid);
		err = fd < 0 ? -errno : 0;
		free(refs);
		if (fd >= 0 && GROW_ARRAY(a->link_fds, a->cap_fds, a->n_fds, 16)) {
			close(fd);
			return -ENOMEM;
		}
		if (fd >= 0)
			a->link_fds[a->n_fds++] = fd;
		/* The kernel does not know uprobe_multi links (or this program type for them). */
		if (err == -EINVAL || err == -EOPNOTSUPP || err == -524 /* ENOTSUPP */)
			if (a->sites == 0)
				return -EOPNOTSUPP;
	} else {
		for (size_t i = 0; i < cnt && !err; i++)
			err = link_perf(skel, kind, obj->host_path, offsets[i],
					i == cnt - 1 ? sema : 0, cookies[i], pid, a);
	}
	if (err == -EACCES && !a->multi) {
		/* The uprobe PMU wants more than CAP_PERFMON (uprobe_multi links do not). */
		fprintf(stderr, "ctrace-bpf: cannot attach to ctrace:%s in %s: %s: without uprobe_multi links"
			" (Linux 6.6) perf uprobes need CAP_SYS_ADMIN too; run it as root\n",
			programs[kind].probe, TERM_SAFE(obj->path), strerror(-err));
		return -ECANCELED;
	}
	if (err && pid > 0 && process_leaving(pid))
		return -ESRCH; /* its files went with it (host_path is under /proc/PID): not an error */
	if (err) {
		if (err != -EMFILE && err != -ENFILE) /* attach_process says it, once */
			fprintf(stderr, "ctrace-bpf: cannot attach to ctrace:%s in %s: %s\n",
				programs[kind].probe, TERM_SAFE(obj->path), strerror(-err));
		return err;
	}
	a->sites += (unsigned)cnt;
	if (a->verbose)
		for (size_t i = 0; i < cnt; i++)
			fprintf(stderr, "ctrace-bpf: attached ctrace:%s at %s+0x%llx%s\n",
				programs[kind].probe, TERM_SAFE(obj->path),
				(unsigned long long)offsets[i],
				sema && i == cnt - 1 ? " (with the semaphore)" : "");
	return 0;
}

/* Attaches every ctrace site of one mapped object. Returns sites attached or -errno. */
static int attach_object(struct ctrace_bpf *skel, int pid,
			 const struct mapped_object *obj, struct attachment *a)
{
	struct site_options opt = { a->verbose, a->fast, a->no_batch, a->categories };
	struct site_counts counts = { 0 };
	struct site_set set;
	unsigned before = a->sites;
	bool usdt_armed = false;
	int err;

	err = collect_sites(obj, &opt, &counts, &set);
	a->skipped_sites += counts.skipped;
	a->filtered_sites += counts.filtered;
	a->other_categories |= counts.other_categories;
	/*
	 * The buffers the process has are found before its batch probe rises:
	 * no flush of this trace can come before the look, so every event
	 * numbered after it is this trace's, read or counted lost.
	 */
	if (!err && pid >= 0 && set.n[attach_kind_of("batch")] && a->batch_object)
		a->batch_object(a->batch_ctx, pid, obj, set.batch_sema);
	for (int k = 0; k < KIND_COUNT && !err; k++) {
		bool batch = k == attach_kind_of("batch");

		/* Perf uprobes: the semaphore apart, once the programs are bound (see perf_arm). */
		err = attach_sites(skel, pid, obj, k, set.offsets[k], set.cookies[k],
				   set.n[k], batch && a->multi ? set.batch_sema : 0, a);
		if (!err && batch && set.n[k] && !a->multi) {
			/* At a batch site's other nop: .init is ctrace_semaphore's (one ref_ctr a uprobe). */
			uint64_t other = set.offsets[k][0] + (a->fast ? -(uint64_t)CTRACE_SITE_NOP5_OFFSET :
							       CTRACE_SITE_NOP5_OFFSET);

			err = perf_arm(obj->host_path, other, set.batch_sema, pid, a);
		}
		if (!err && batch) { /* not a probe the user placed */
			a->sites -= (unsigned)set.n[k];
			a->batch_sites += (unsigned)set.n[k];
		}
		if (!err && batch && set.n[k]) {
			uint64_t key[2];

			batch_sema_key(obj, key);
			key_map_put(&a->batch_semas, key, sizeof(key), (void *)(uintptr_t)set.batch_sema);
		}
	}
	/*
	 * The default category's semaphore last: once CTRACE_ENABLED() of the
	 * default is true, every category of the object that is traced is.
	 */
	for (size_t i = 0; i + 1 < set.n_armers; i++)
		if (set.armers[i].is_default) {
			struct armer t = set.armers[i];

			set.armers[i] = set.armers[set.n_armers - 1];
			set.armers[set.n_armers - 1] = t;
			break;
		}
	for (size_t i = 0; i < set.n_armers && !err; i++) {
		struct armer *ar = &set.armers[i];

		if (a->multi) {
			err = attach_sites(skel, pid, obj, ar->kind, &ar->offset, &ar->cookie, 1,
					   ar->sema, a);
		} else {
			/* Perf uprobes: the armer site like any other, then the semaphore apart. */
			err = attach_sites(skel, pid, obj, ar->kind, &ar->offset, &ar->cookie, 1, 0, a);
			if (!err)
				err = perf_arm_object(obj, ar, pid, a);
		}
	}
	site_set_free(&set);
	/* --usdt's probes of other programs: their semaphores rise as they attach. */
	if (!err && a->usdt) {
		int n;

		a->usdt_state.keep_link = keep_usdt_link;
		a->usdt_state.ctx = a;
		a->usdt_state.verbose = a->verbose;
		n = usdt_attach_object(skel->progs.ctrace_usdt, skel->maps.usdt_locs, pid, obj, a->usdt, &a->usdt_state);
		err = n < 0 ? n : 0;
		if (n > 0)
			a->sites += (unsigned)n;
		usdt_armed = n > 0;
	}
	if (!err && (set.n_armers || usdt_armed) && !a->first_armed_ns) {
		struct timespec now;

		clock_gettime(CLOCK_MONOTONIC, &now);
		a->first_armed_ns = (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec;
	}
	return err ? err : (int)(a->sites - before);
}

/*
 * An object's identity: the kernel keys uprobes by inode and offset, but a
 * file rewritten in place (cp over it) keeps its inode and gets other code,
 * so what identifies the contents goes with it: size, mtime and ctime (which
 * no one can set back). {pid (0: every process), dev, inode, size, mtime,
 * ctime}.
 */
enum { KEY_WORDS = 6 };

static int object_key(int pid, const struct mapped_object *o, unsigned long long key[KEY_WORDS])
{
	struct stat st;

	if (stat(o->host_path, &st) != 0 || st.st_ino != o->inode)
		return -1;
	key[0] = (unsigned long long)pid;
	key[1] = ((unsigned long long)o->dev_major << 32) | o->dev_minor;
	key[2] = o->inode;
	key[3] = (unsigned long long)st.st_size;
	key[4] = (unsigned long long)st.st_mtim.tv_sec * 1000000000ull + (unsigned long long)st.st_mtim.tv_nsec;
	key[5] = (unsigned long long)st.st_ctim.tv_sec * 1000000000ull + (unsigned long long)st.st_ctim.tv_nsec;
	return 0;
}

/* What was attached for one object: its links and fds, [from, to) in the attachment's arrays. */
struct attached_object {
	size_t link_from, link_to, fd_from, fd_to;
};

/* Detaches one object's uprobes (the arrays keep their slots, emptied). */
static void detach_range(struct attachment *a, size_t link_from, size_t link_to,
			 size_t fd_from, size_t fd_to);

/*
 * Detaches one object's uprobes (the arrays keep their slots, emptied), all
 * at once: each waits for a grace period, and while they last the next
 * mapping of the inode would still get them.
 */
static void detach_object(struct attachment *a, const struct attached_object *ao)
{
	detach_range(a, ao->link_from, ao->link_to, ao->fd_from, ao->fd_to);
	for (size_t i = ao->link_from; i < ao->link_to; i++)
		a->links[i] = NULL;
	for (size_t i = ao->fd_from; i < ao->fd_to; i++)
		a->link_fds[i] = -1;
}

/* Attaches one object unless done before (for this pid, or for all in global mode). */
static int attach_once(struct ctrace_bpf *skel, int pid, const struct mapped_object *o,
		       struct attachment *a)
{
	unsigned long long key[KEY_WORDS], after[KEY_WORDS];
	struct attached_object *ao;
	int n;

	if (object_key(a->global ? 0 : pid, o, key) < 0)
		return 0; /* gone, or replaced under this name: the next round sees it */
	if (key_map_get(&a->seen, key, sizeof(key)))
		return 0;
	ao = calloc(1, sizeof(*ao));
	if (!ao)
		return -ENOMEM;
	ao->link_from = a->n_links;
	ao->fd_from = a->n_fds;
	path_list_add(a->looked_in, sizeof(a->looked_in), &a->looked_in_full, o->path);
	n = attach_object(skel, a->global ? -1 : pid, o, a);
	ao->link_to = a->n_links;
	ao->fd_to = a->n_fds;
	/*
	 * Rewritten while we read its notes and attached: the uprobes may sit
	 * at offsets that are not our sites in what is there now. Off with
	 * them at once; the next round reads the new contents.
	 */
	if (n > 0 && (object_key(a->global ? 0 : pid, o, after) < 0 ||
		      memcmp(key, after, sizeof(key)))) {
		detach_object(a, ao);
		a->sites -= (unsigned)n;
		free(ao);
		return 0;
	}
	if (n < 0) { /* not remembered, so that a retry (e.g. without multi) searches it again */
		detach_object(a, ao);
		free(ao);
		return n;
	}
	key_map_put(&a->seen, key, sizeof(key), ao);
	if (n > 0)
		a->objects_with_probes++;
	return n;
}

/* The objects of `pid` attached before that it no longer maps (or whose contents changed). */
struct stale_search {
	int pid;
	const struct mapped_object_list *objs;
	const unsigned long long (*keys)[KEY_WORDS];
	unsigned long long (*stale)[KEY_WORDS];
	size_t n, cap;
};

static void find_stale(const void *key, size_t len, void *value, void *ctx)
{
	struct stale_search *ss = ctx;
	const unsigned long long *k = key;

	(void)value;
	if (len != KEY_WORDS * sizeof(*k) || k[0] != (unsigned long long)ss->pid)
		return;
	for (size_t i = 0; i < ss->objs->n; i++)
		if (!memcmp(ss->keys[i], k, len))
			return;
	if (ss->n < ss->cap)
		memcpy(ss->stale[ss->n++], k, len);
}

/*
 * A library dlclose()d: its uprobes go now, not at the stop. The kernel
 * keeps a uprobe on the inode, and would put it at the same offset into
 * whatever is mapped from that inode next: after a rewrite in place, the
 * middle of another build's instructions (the target died of SIGSEGV).
 */
static void detach_unmapped(int pid, const struct mapped_object_list *objs,
			    struct attachment *a)
{
	struct stale_search ss = { pid, objs, NULL, NULL, 0, a->seen.count };
	unsigned long long (*keys)[KEY_WORDS] = calloc(objs->n + 1, sizeof(*keys));

	ss.stale = calloc(ss.cap + 1, sizeof(*ss.stale));
	if (!keys || !ss.stale) {
		free(keys);
		free(ss.stale);
		return;
	}
	for (size_t i = 0; i < objs->n; i++)
		if (object_key(pid, &objs->v[i], keys[i]) < 0)
			keys[i][0] = ~0ull; /* matches nothing: its old entry goes */
	ss.keys = (const unsigned long long (*)[KEY_WORDS])keys;
	key_map_each(&a->seen, find_stale, &ss);
	for (size_t i = 0; i < ss.n; i++) {
		struct attached_object *ao = key_map_del(&a->seen, ss.stale[i], sizeof(ss.stale[i]));

		if (!ao)
			continue;
		detach_object(a, ao);
		if (a->verbose)
			fprintf(stderr, "ctrace-bpf: detached the probes of an object process %d no longer maps (inode %llu)\n",
				pid, ss.stale[i][2]);
		free(ao);
	}
	free(keys);
	free(ss.stale);
}

int attach_process(struct ctrace_bpf *skel, int pid, struct attachment *a)
{
	struct mapped_object_list objs = { 0 };
	unsigned before = a->sites;
	struct process_look look = process_look_begin(&a->epochs, (uint32_t)pid);
	int ret;

	if (fd_limit_reached())
		return 0;
	ret = proc_maps_objects(pid, &objs);
	if (ret < 0)
		return fd_limit_hit(ret) ? 0 : ret;
	if (a->objects_seen)
		a->objects_seen(a->objects_ctx, pid, &objs);
	/*
	 * What the look did not see is unmapped only if nothing changed
	 * meanwhile: inside an exec it sees the new image half mapped (not
	 * yet the program, or not yet its libraries), and detaching those
	 * would lower their semaphores in the image that is starting, its
	 * events gone uncounted until the next look. The next look decides.
	 */
	if (!a->global && process_look_exact(&a->epochs, (uint32_t)pid, &look))
		detach_unmapped(pid, &objs, a);
	for (size_t i = 0; i < objs.n; i++) {
		int n = attach_once(skel, pid, &objs.v[i], a);

		if (n < 0 && fd_limit_hit(n))
			break; /* the trace goes on with what is attached */
		if (n < 0 && n != -ESRCH && process_leaving(pid))
			n = -ESRCH; /* it exited meanwhile: its end, which the session sees */
		if (n < 0) {
			mapped_object_list_free(&objs);
			return n;
		}
	}
	for (size_t i = 0; i < objs.n && a->batch_object; i++) {
		uint64_t key[2];
		void *sema;

		batch_sema_key(&objs.v[i], key);
		if ((sema = key_map_get(&a->batch_semas, key, sizeof(key))))
			a->batch_object(a->batch_ctx, pid, &objs.v[i], (uint64_t)(uintptr_t)sema);
	}
	mapped_object_list_free(&objs);
	return (int)(a->sites - before);
}

struct forget_pid {
	unsigned long long pid;
	void (*drop)(void *value, void *ctx);
	void *ctx;
};

static bool take_of_pid(const void *key, size_t len, void *value, void *ctx)
{
	const unsigned long long *k = key;
	const struct forget_pid *f = ctx;

	if (len < sizeof(*k) || k[0] != f->pid)
		return false;
	if (f->drop)
		f->drop(value, f->ctx);
	return true;
}

void seen_forget_pid(struct key_map *seen, int pid, void (*drop)(void *value, void *ctx), void *ctx)
{
	struct forget_pid f = { (unsigned long long)pid, drop, ctx };

	key_map_remove_if(seen, take_of_pid, &f);
}

static void drop_attached(void *value, void *ctx)
{
	detach_object(ctx, value);
	free(value);
}

void attach_forget_process(struct attachment *a, int pid)
{
	if (a->global || pid <= 0)
		return; /* the links are for every process: the new task matches them */
	seen_forget_pid(&a->seen, pid, drop_attached, a);
}

int attach_file(struct ctrace_bpf *skel, const char *path, struct attachment *a)
{
	struct mapped_object o;
	struct stat st;
	unsigned before = a->sites;
	int n;

	memset(&o, 0, sizeof(o));
	if (stat(path, &st) != 0)
		return -errno;
	snprintf(o.path, sizeof(o.path), "%s", path);
	snprintf(o.host_path, sizeof(o.host_path), "%s", path);
	o.inode = st.st_ino;
	o.dev_major = major(st.st_dev);
	o.dev_minor = minor(st.st_dev);
	n = attach_once(skel, -1, &o, a);
	return n < 0 ? n : (int)(a->sites - before);
}

/* One detaching thread's share: links [from, to) and fds [from, to). */
struct detach_job {
	struct attachment *a;
	size_t link_from, link_to, fd_from, fd_to;
};

static void *detach_some(void *arg)
{
	struct detach_job *j = arg;

	for (size_t i = j->link_from; i < j->link_to; i++)
		bpf_link__destroy(j->a->links[i]); /* NULL: detached already */
	for (size_t i = j->fd_from; i < j->fd_to; i++)
		if (j->a->link_fds[i] >= 0) /* -1: detached already (detach_object) */
			close(j->a->link_fds[i]);
	return NULL;
}

/*
 * Each link waits for an RCU grace period when it goes (tens of ms for
 * sleepable programs): one after the other, 160 links took 10 s. Closed
 * from several threads at once, the grace periods overlap.
 */
static void detach_range(struct attachment *a, size_t link_from, size_t link_to,
			 size_t fd_from, size_t fd_to)
{
	enum { MAX_THREADS = 32 };
	size_t links = link_to - link_from, fds = fd_to - fd_from;
	size_t total = links + fds;
	size_t threads = total < MAX_THREADS ? total : MAX_THREADS;
	struct detach_job jobs[MAX_THREADS];
	pthread_t tids[MAX_THREADS];
	bool started[MAX_THREADS] = { false };

	for (size_t t = 0; t < threads; t++) {
		jobs[t] = (struct detach_job){
			a,
			link_from + links * t / threads, link_from + links * (t + 1) / threads,
			fd_from + fds * t / threads, fd_from + fds * (t + 1) / threads,
		};
		started[t] = threads > 1 && pthread_create(&tids[t], NULL, detach_some, &jobs[t]) == 0;
		if (!started[t])
			detach_some(&jobs[t]); /* no thread: do it here */
	}
	for (size_t t = 0; t < threads; t++)
		if (started[t])
			pthread_join(tids[t], NULL);
}

static void detach_all(struct attachment *a)
{
	detach_range(a, 0, a->n_links, 0, a->n_fds);
}


void attachment_free(struct attachment *a)
{
	detach_all(a);
	free(a->links);
	free(a->link_fds);
	key_map_free_with_values(&a->seen);
	key_map_free(&a->batch_semas);
	{
		bool global = a->global, fast = a->fast, cookies = a->cookies, no_batch = a->no_batch;
		void (*batch_object)(void *, int, const struct mapped_object *, uint64_t) = a->batch_object;
		void *batch_ctx = a->batch_ctx;
		bool looked_in_full = a->looked_in_full;
		const struct category_filter *categories = a->categories;
		struct usdt_specs *usdt = a->usdt;
		char looked_in[sizeof(a->looked_in)];

		memcpy(looked_in, a->looked_in, sizeof(looked_in)); /* said at the end of a trace that found none */
		attachment_init(a, a->multi, a->verbose);
		a->categories = categories;
		a->global = global;
		a->fast = fast;
		a->cookies = cookies;
		a->no_batch = no_batch;
		a->usdt = usdt;
		a->batch_object = batch_object;
		a->batch_ctx = batch_ctx;
		memcpy(a->looked_in, looked_in, sizeof(looked_in));
		a->looked_in_full = looked_in_full;
	}
}

int attach_multi_one(const struct bpf_program *prog, const char *path, uint64_t offset, int pid)
{
	struct uprobe_multi_link_attr attr;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.prog_fd = (__u32)bpf_program__fd(prog);
	attr.attach_type = CTRACE_TRACE_UPROBE_MULTI;
	attr.path = (uintptr_t)path;
	attr.offsets = (uintptr_t)&offset;
	attr.cnt = 1;
	attr.pid = multi_link_pid(pid);
	fd = (int)syscall(__NR_bpf, BPF_LINK_CREATE, &attr, sizeof(attr));
	return fd < 0 ? -errno : fd;
}
