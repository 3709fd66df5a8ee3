// SPDX-License-Identifier: MIT
#include "ingest/stack_unwind.h"

#include <dwarf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "attach/proc_maps.h"

/* An object reported to a process's Dwfl, by file and place. */
struct reported {
	unsigned long long inode;
	unsigned dev_major, dev_minor;
	unsigned long start;
};

struct stack_proc {
	uint32_t tgid;
	Dwfl *dwfl;
	bool attached;       /* dwfl_attach_state() done (once per Dwfl) */
	struct reported *objs;
	size_t n_objs;
	uint64_t missed_ns;  /* when a pc in no module last made us look again */
	uint64_t used;       /* stack_unwind.uses when last asked for */
	const struct stack_sample *cur; /* the sample being unwound */
	size_t frames;       /* ... and what it gave */
	size_t max;
	uint64_t *pcs;
	bool *activation;
	Dwfl_Callbacks callbacks; /* the Dwfl's: proc_begin_dwfl() */
	char *debuginfo_path;
};

/*
 * A process's Dwfl, with its own debuginfo path: separate debug files are
 * looked up by debuglink (beside the object, in its .debug) and by
 * build-id under the process's own root first, where a container's
 * -dbgsym packages are, then the host's (/usr/lib/debug/.build-id/...).
 * libdwfl reads the path through the callbacks at each lookup: both live
 * in struct stack_proc, as long as the Dwfl.
 */
static Dwfl *proc_begin_dwfl(struct stack_proc *p)
{
	if (!p->debuginfo_path &&
	    asprintf(&p->debuginfo_path, ":.debug:/proc/%u/root/usr/lib/debug:/usr/lib/debug", p->tgid) < 0) {
		p->debuginfo_path = NULL;
		return NULL;
	}
	p->callbacks = (Dwfl_Callbacks){
		.find_elf = dwfl_build_id_find_elf,
		.find_debuginfo = dwfl_standard_find_debuginfo,
		.section_address = dwfl_offline_section_address,
		.debuginfo_path = &p->debuginfo_path,
	};
	return p->dwfl = dwfl_begin(&p->callbacks);
}

void stack_unwind_init(struct stack_unwind *u)
{
	memset(u, 0, sizeof(*u));
	key_map_init(&u->procs);
}

static void proc_drop_dwfl(struct stack_proc *p)
{
	if (p->dwfl)
		dwfl_end(p->dwfl);
	p->dwfl = NULL;
	p->attached = false;
	free(p->objs);
	p->objs = NULL;
	p->n_objs = 0;
}

static void proc_free(struct stack_proc *p)
{
	proc_drop_dwfl(p);
	free(p->debuginfo_path);
	free(p);
}

static void free_proc(const void *key, size_t len, void *value, void *ctx)
{
	(void)key, (void)len, (void)ctx;
	proc_free(value);
}

void stack_unwind_free(struct stack_unwind *u)
{
	key_map_each(&u->procs, free_proc, NULL);
	key_map_free(&u->procs);
}

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static bool is_reported(const struct stack_proc *p, const struct mapped_object *o)
{
	for (size_t i = 0; i < p->n_objs; i++)
		if (p->objs[i].inode == o->inode && p->objs[i].dev_major == o->dev_major &&
		    p->objs[i].dev_minor == o->dev_minor && p->objs[i].start == o->map_start)
			return true;
	return false;
}

/* Another object's module already where o is mapped: the process's modules start over. */
static bool overlaps(const struct stack_proc *p, const struct mapped_object *o)
{
	return p->dwfl && (dwfl_addrmodule(p->dwfl, o->map_start) ||
			   dwfl_addrmodule(p->dwfl, o->map_end - 1));
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/*
 * Each object's separate debug file is looked up as soon as it is
 * reported, while the process lives: its /proc/PID/root (a container's
 * /usr/lib/debug) goes with it, and a stack decoded after the exit would
 * find the host's debug files only (seen under ASan, whose loader decodes
 * later). libdwfl keeps what it found, or that there is none; a module
 * looked at before returns at once.
 */
static int find_debuginfo_now(Dwfl_Module *m, void **userdata, const char *name, Dwarf_Addr start, void *arg)
{
	Dwarf_Addr bias;

	(void)userdata, (void)name, (void)start, (void)arg;
	dwfl_module_getdwarf(m, &bias);
	return DWARF_CB_OK;
}

static void report(struct stack_unwind *u, struct stack_proc *p, const struct mapped_object_list *l)
{
	size_t added = 0;

	for (size_t i = 0; i < l->n; i++) {
		const struct mapped_object *o = &l->v[i];
		struct reported *grown;
		int fd;

		if (is_reported(p, o))
			continue;
		if (overlaps(p, o)) {
			proc_drop_dwfl(p);
			u->rebuilds++;
			report(u, p, l);
			return;
		}
		if (!p->dwfl && !proc_begin_dwfl(p))
			return;
		if (!added++)
			dwfl_report_begin_add(p->dwfl);
		grown = realloc(p->objs, (p->n_objs + 1) * sizeof(*p->objs));
		if (!grown)
			break;
		p->objs = grown;
		/* Recorded even if it fails to open: not tried again at every miss. */
		p->objs[p->n_objs++] = (struct reported){ o->inode, o->dev_major, o->dev_minor, o->map_start };
		fd = mapped_object_open(o);
		if (fd < 0) {
			u->objects_failed++;
			continue;
		}
		/* The first mapping of the file is where its first PT_LOAD goes. */
		if (dwfl_report_elf(p->dwfl, base_name(o->path), o->host_path, fd, o->map_start, false)) {
			u->objects_reported++;
		} else {
			close(fd);
			u->objects_failed++;
		}
	}
	if (added) {
		dwfl_report_end(p->dwfl, NULL, NULL);
		dwfl_getmodules(p->dwfl, find_debuginfo_now, NULL, 0);
	}
}

/* The process whose Dwfl was used longest ago. */
static void find_oldest(const void *key, size_t len, void *value, void *ctx)
{
	struct stack_proc *p = value, **oldest = ctx;

	(void)key, (void)len;
	if (!*oldest || p->used < (*oldest)->used)
		*oldest = p;
}

static struct stack_proc *proc_get(struct stack_unwind *u, uint32_t tgid)
{
	struct stack_proc *p = key_map_get(&u->procs, &tgid, sizeof(tgid));

	if (p) {
		p->used = ++u->uses;
		return p;
	}
	/*
	 * Each Dwfl holds its objects open: a bounded number of them (-f with
	 * many children). The one used longest ago goes (counted); its later
	 * stacks find its objects again in /proc if it still runs.
	 */
	if (u->procs.count >= STACK_UNWIND_PROCS_MAX) {
		struct stack_proc *oldest = NULL;

		key_map_each(&u->procs, find_oldest, &oldest);
		key_map_del(&u->procs, &oldest->tgid, sizeof(oldest->tgid));
		proc_free(oldest);
		u->evicted++;
	}
	p = calloc(1, sizeof(*p));
	if (!p) {
		fputs("ctrace-bpf: out of memory\n", stderr);
		abort();
	}
	p->tgid = tgid;
	p->used = ++u->uses;
	key_map_put(&u->procs, &tgid, sizeof(tgid), p);
	return p;
}

static void look_again(struct stack_unwind *u, struct stack_proc *p)
{
	struct mapped_object_list l = { 0 };

	if (proc_maps_objects((int)p->tgid, &l) == 0)
		report(u, p, &l);
	mapped_object_list_free(&l);
}

void stack_unwind_objects(struct stack_unwind *u, uint32_t tgid, const struct mapped_object_list *l)
{
	report(u, proc_get(u, tgid), l);
}

Dwfl_Module *stack_unwind_module(struct stack_unwind *u, uint32_t tgid, uint64_t pc)
{
	struct stack_proc *p = proc_get(u, tgid);
	Dwfl_Module *m = p->dwfl ? dwfl_addrmodule(p->dwfl, pc) : NULL;
	uint64_t now;

	if (m)
		return m;
	/*
	 * Perhaps an object mapped since we looked; at most every 10 ms, so
	 * that a stack of garbage addresses does not read the maps per frame.
	 */
	now = now_ns();
	if (p->missed_ns && now - p->missed_ns < 10000000)
		return NULL;
	p->missed_ns = now;
	look_again(u, p);
	return p->dwfl ? dwfl_addrmodule(p->dwfl, pc) : NULL;
}

/* libdwfl's view of the one thread of a sample. */
static pid_t next_thread(Dwfl *dwfl, void *dwfl_arg, void **thread_argp)
{
	struct stack_proc *p = dwfl_arg;

	(void)dwfl;
	if (*thread_argp || !p->cur)
		return 0;
	*thread_argp = p;
	return (pid_t)p->cur->tid;
}

/* Reads the sample's copy of the stack; anything else is not there to read. */
static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *dwfl_arg)
{
	struct stack_proc *p = dwfl_arg;
	const struct stack_sample *s = p->cur;
	uint64_t sp = s->regs[7];

	(void)dwfl;
	if (addr < sp || addr - sp > s->stack_len || s->stack_len - (addr - sp) < sizeof(*result))
		return false;
	memcpy(result, s->stack + (addr - sp), sizeof(*result));
	return true;
}

static bool set_initial_registers(Dwfl_Thread *thread, void *thread_arg)
{
	struct stack_proc *p = thread_arg;
	Dwarf_Word regs[CTRACE_STACK_REGS];

	for (int i = 0; i < CTRACE_STACK_REGS; i++)
		regs[i] = p->cur->regs[i];
	return dwfl_thread_state_registers(thread, 0, CTRACE_STACK_REGS, regs);
}

static const Dwfl_Thread_Callbacks thread_callbacks = {
	.next_thread = next_thread,
	.memory_read = memory_read,
	.set_initial_registers = set_initial_registers,
};

static int take_frame(Dwfl_Frame *state, void *arg)
{
	struct stack_proc *p = arg;
	Dwarf_Addr pc;
	bool activation;

	if (!dwfl_frame_pc(state, &pc, &activation))
		return DWARF_CB_ABORT;
	/* pc 0: the outermost frame's return address (_start's, or a thread's start). */
	if (!pc)
		return DWARF_CB_ABORT;
	p->pcs[p->frames] = pc;
	p->activation[p->frames] = activation;
	return ++p->frames < p->max ? DWARF_CB_OK : DWARF_CB_ABORT;
}

size_t stack_unwind_dwarf(struct stack_unwind *u, uint32_t tgid, const struct stack_sample *s,
			  uint64_t *pcs, bool *activation, size_t max, bool *complete)
{
	struct stack_proc *p = proc_get(u, tgid);
	int rc;

	*complete = false;
	/* The module of the pc: one must exist before libdwfl can know the machine. */
	if (!max || !stack_unwind_module(u, tgid, s->regs[16]))
		return 0;
	if (!p->attached) {
		if (!dwfl_attach_state(p->dwfl, NULL, (pid_t)tgid, &thread_callbacks, p))
			return 0;
		p->attached = true;
	}
	p->cur = s;
	p->frames = 0;
	p->max = max;
	p->pcs = pcs;
	p->activation = activation;
	rc = dwfl_getthread_frames(p->dwfl, (pid_t)s->tid, take_frame, p);
	/*
	 * 0: the unwind ran to the end; 1 (DWARF_CB_ABORT from take_frame): we
	 * stopped it at max or at pc 0; -1: libdwfl could go no further.
	 */
	*complete = rc >= 0 || p->frames == max;
	p->cur = NULL;
	return p->frames;
}
