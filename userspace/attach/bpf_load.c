// SPDX-License-Identifier: MIT
#include "attach/bpf_load.h"
#include "attach/batch_watch.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "attach/attach.h"
#include "ctrace.skel.h"
#include "encode/json/chrome_trace.h"
#include "cli/trace_options.h"
#include "session/traced_set.h"
/*
 * The other sets' skeletons lend only their object's bytes: their own
 * open/destroy functions go unused (ctrace.skel.h drives every set).
 */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#include "ctrace_copy_user.skel.h"
#include "ctrace_probe_read.skel.h"
#pragma GCC diagnostic pop

static const char *const set_names[PROGRAM_SET_COUNT] = { "copy_str", "copy_user", "probe_read" };

/* How each set reads a probe's strings, for the -v line. */
static const char *const set_ways[PROGRAM_SET_COUNT] = {
	"sleepable, strings copied with bpf_copy_from_user_str",
	"sleepable, strings copied with bpf_probe_read_user_str, faulted in by bpf_copy_from_user",
	"not sleepable, strings copied with bpf_probe_read_user_str; those on pages not yet"
	" faulted in are read by the loader",
};

const char *program_set_name(enum program_set set)
{
	return set >= 0 && set < PROGRAM_SET_COUNT ? set_names[set] : "?";
}

/* A switch set to something other than "" or "0" (run-integration passes empty ones on). */
static bool env_on(const char *name)
{
	const char *v = getenv(name);

	return v && *v && strcmp(v, "0");
}

/* Load failed for this set (the kernel's verifier or feature): try the next. */
#define SET_REFUSED 1

static void add_why(struct bpf_choice *c, const char *fmt, ...)
{
	size_t len = strlen(c->why);
	va_list ap;

	if (len + 3 >= sizeof(c->why))
		return;
	if (len)
		len += (size_t)snprintf(c->why + len, sizeof(c->why) - len, "; ");
	va_start(ap, fmt);
	vsnprintf(c->why + len, sizeof(c->why) - len, fmt, ap);
	va_end(ap);
}

int program_set_forced(enum program_set *set)
{
	const char *v = getenv("CTRACE_PROGRAM_SET");

	if (!v || !*v)
		return 0;
	for (int i = 0; i < PROGRAM_SET_COUNT; i++)
		if (!strcmp(v, set_names[i])) {
			*set = (enum program_set)i;
			return 1;
		}
	fprintf(stderr, "ctrace-bpf: CTRACE_PROGRAM_SET=%s is not a program set: use copy_str, copy_user or probe_read\n",
		v);
	return -EINVAL;
}

/* Why the probes say the kernel cannot take `set` (NULL: it may). */
static const char *missing_for(enum program_set set, const struct kernel_features *f,
			       char *buf, size_t size)
{
	if (set == PROGRAM_SET_PROBE_READ)
		return NULL;
	if (!f->sleepable_uprobes) {
		snprintf(buf, size, "no sleepable uprobe programs with bpf_copy_from_user (the test load said: %s)",
			 strerror(f->sleepable_error));
		return buf;
	}
	if (!f->task_storage)
		return "no task storage maps";
	if (set == PROGRAM_SET_COPY_STR && !f->copy_from_user_str)
		return "no kfunc bpf_copy_from_user_str in the kernel's BTF";
	return NULL;
}

/* Opens one set's object through the one skeleton (the Makefile checked they agree). */
static struct ctrace_bpf *open_set(enum program_set set)
{
	struct ctrace_bpf *skel = calloc(1, sizeof(*skel));
	int err;

	if (!skel)
		return NULL;
	err = ctrace_bpf__create_skeleton(skel);
	if (err) {
		free(skel);
		errno = -err;
		return NULL;
	}
	if (set == PROGRAM_SET_COPY_USER)
		skel->skeleton->data = (void *)ctrace_bpf_copy_user__elf_bytes(&skel->skeleton->data_sz);
	else if (set == PROGRAM_SET_PROBE_READ)
		skel->skeleton->data = (void *)ctrace_bpf_probe_read__elf_bytes(&skel->skeleton->data_sz);
	err = bpf_object__open_skeleton(skel->skeleton, NULL);
	if (err) {
		ctrace_bpf__destroy(skel);
		errno = -err;
		return NULL;
	}
	/* Its kernels may not know the map type; its programs do not use it. */
	if (set == PROGRAM_SET_PROBE_READ) {
		bpf_map__set_autocreate(skel->maps.task_scratch, false);
		bpf_map__set_autocreate(skel->maps.task_scratch_stacks, false);
	}
	return skel;
}

/*
 * Opens and loads one set's programs: for uprobe_multi links when `multi`
 * (one link per probe kind and object: fast to attach and to detach, and
 * the program is bound before any uprobe is registered), else for one
 * perf-event uprobe per site. Returns NULL with *err set.
 */
static struct ctrace_bpf *load_programs(const struct trace_options *o, enum program_set set,
					bool multi, bool global, const struct stat *exe, bool cookies,
					int *err)
{
	struct ctrace_bpf *skel = open_set(set);

	if (!skel) {
		*err = -errno;
		fprintf(stderr, "ctrace-bpf: cannot open the BPF object: %s\n", strerror(errno));
		return NULL;
	}
	if (o->buffer_size &&
	    bpf_map__set_max_entries(skel->maps.events, (__u32)o->buffer_size)) {
		fprintf(stderr, "ctrace-bpf: cannot size the ring buffer to %lu bytes\n", o->buffer_size);
		*err = -EINVAL;
		goto fail;
	}
	/* Wake the loader when an eighth of the ring buffer is in use. */
	skel->rodata->wakeup_bytes = bpf_map__max_entries(skel->maps.events) / 8;
	skel->rodata->filter_by_map = global;
	skel->rodata->follow_forks = o->follow;
	skel->rodata->stack_how = o->stack_depth ? o->stack_how : 0;
	skel->rodata->stack_depth = o->stack_depth;
	/* Each site's cookie tells its category (categories.h). */
	skel->rodata->site_categories = cookies;
	{
		/* CTRACE_TRACED_MAX=N: a smaller table of traced processes (the tests fill it). */
		const char *max = getenv("CTRACE_TRACED_MAX");

		/* /proc's clock tick, in which traced_tgids keeps each process's start. */
		skel->rodata->ns_per_tick = traced_set_ns_per_tick();
		if (max && atoi(max) > 0)
			bpf_map__set_max_entries(skel->maps.traced_tgids, (__u32)atoi(max));
		/* CTRACE_BATCH_SLOTS_MAX=N: a smaller table of threads' buffers (the tests fill it). */
		max = getenv("CTRACE_BATCH_SLOTS_MAX");
		if (max && atoi(max) > 0)
			bpf_map__set_max_entries(skel->maps.batch_slots, (__u32)atoi(max));
	}
	if (exe) {
		/* The kernel's s_dev encoding: major << 20 | minor. */
		skel->rodata->exe_ino = exe->st_ino;
		skel->rodata->exe_dev = (__u32)((major(exe->st_dev) << 20) | minor(exe->st_dev));
	}
	skel->rodata->filter_user = o->user_set;
	skel->rodata->user_uid = o->user_uid;
	if (multi)
		attach_prepare_multi(skel);
	/* A kernel without the task_rename tracepoint still traces: renames are seen in /proc. */
	if (libbpf_find_vmlinux_btf_id("task_rename", BPF_TRACE_RAW_TP) < 0)
		bpf_program__set_autoload(skel->progs.ctrace_rename, false);
	/* Before 6.10 exec() is watched by its syscalls (batch_watch.c). */
	if (libbpf_find_vmlinux_btf_id("sched_prepare_exec", BPF_TRACE_RAW_TP) < 0)
		bpf_program__set_autoload(skel->progs.ctrace_batch_prepare_exec, false);
	/* --usdt's program only when asked for: the verifier takes ~0.6 s over its strings' loop. */
	if (!o->usdt)
		bpf_program__set_autoload(skel->progs.ctrace_usdt, false);
	*err = ctrace_bpf__load(skel);
	if (*err)
		goto fail;
	return skel;
fail:
	ctrace_bpf__destroy(skel);
	return NULL;
}

void bpf_unload(const struct bpf_load_target *t)
{
	attachment_free(t->att);
	bpf_link__destroy(*t->exec_link);
	bpf_link__destroy(*t->fork_link);
	*t->exec_link = *t->fork_link = NULL;
	ctrace_bpf__destroy(*t->skel);
	*t->skel = NULL;
}

/* Loads one set and attaches: 0, SET_REFUSED (the kernel would not load it, *load_err), or -errno. */
static int load_set(const struct trace_options *o, const struct stat *exe,
		    const struct bpf_load_target *t, struct bpf_choice *c,
		    enum program_set set, int *load_err)
{
	bool global = o->follow || o->exe;
	/* CTRACE_NO_MULTI=1 forces one perf-event uprobe per site. */
	int first = env_on("CTRACE_NO_MULTI") || !c->feat.uprobe_multi ? 0 : 1;

	for (int multi = first; multi >= 0; multi--) {
		int err;

		*t->skel = load_programs(o, set, multi, global, exe, c->cookies, load_err);
		if (!*t->skel) {
			if (multi) {
				/* Perhaps only the uprobe_multi attach type is unknown. */
				add_why(c, "%s for uprobe_multi links: refused (%s)", set_names[set],
					strerror(-*load_err));
				continue;
			}
			if (*load_err == -EPERM) {
				fprintf(stderr, "ctrace-bpf: the kernel does not let this process load BPF programs (%s):"
					" CAP_BPF and CAP_PERFMON count only in the initial user namespace; in a container, run ctrace-bpf on the host\n",
					strerror(EPERM));
				return -EPERM;
			}
			return SET_REFUSED;
		}
		/*
		 * Forks and execs are watched before any probe is attached: a
		 * target may fork or exec the moment CTRACE_ENABLED() turns true.
		 */
		*t->exec_link = bpf_program__attach((*t->skel)->progs.ctrace_exec);
		/* The skeleton keeps this one: ctrace_bpf__destroy() detaches it. */
		(*t->skel)->links.ctrace_exit = bpf_program__attach((*t->skel)->progs.ctrace_exit);
		if (o->follow)
			*t->fork_link = bpf_program__attach((*t->skel)->progs.ctrace_fork);
		/* Thread renames; without them, the loader's looks at /proc still rename (later). */
		if (bpf_program__autoload((*t->skel)->progs.ctrace_rename))
			(*t->skel)->links.ctrace_rename = bpf_program__attach((*t->skel)->progs.ctrace_rename);
		else
			errno = ENOENT;
		c->renames_told = (*t->skel)->links.ctrace_rename != NULL;
		if (!c->renames_told && o->verbose)
			fprintf(stderr, "ctrace-bpf: cannot watch task_rename (%s): thread renames are seen at the next look at /proc\n",
				strerror(errno));
		if (!*t->exec_link || (o->follow && !*t->fork_link) || !(*t->skel)->links.ctrace_exit) {
			err = -errno;
			fprintf(stderr, "ctrace-bpf: cannot watch the sched_process tracepoints: %s\n",
				strerror(-err));
			return err;
		}
		/*
		 * The watches come before any probe: a thread may crash or exec
		 * with events in its buffer at once.
		 */
		if (!o->no_batch)
			batch_watch_deaths(*t->skel, o->verbose);
		else
			batch_watch_execs(*t->skel, o->verbose);
		attachment_init(t->att, multi, o->verbose);
		t->att->global = global;
		t->att->fast = c->fast;
		t->att->cookies = c->cookies;
		t->att->no_batch = o->no_batch;
		t->att->categories = &o->categories;
		t->att->usdt = o->usdt;
		err = t->attach_targets(t->ctx);
		if (err == -EOPNOTSUPP && multi) {
			add_why(c, "uprobe_multi links refused at the first attach");
			bpf_unload(t);
			continue;
		}
		c->multi = multi;
		c->cookies = t->att->cookies; /* attach may have found them refused */
		return err < 0 ? err : 0;
	}
	return SET_REFUSED;
}

static void say_choice(const struct bpf_choice *c)
{
	fprintf(stderr, "ctrace-bpf: program set %s (%s)%s; %s; %s%s%s\n",
		set_names[c->set], set_ways[c->set],
		c->forced ? ", forced by CTRACE_PROGRAM_SET" : "",
		c->multi ? "uprobe_multi links" : "one perf uprobe per site",
		c->cookies ? "BPF cookies" : "no BPF cookies",
		c->why[0] ? "; because: " : "", c->why);
}

int bpf_load_and_attach(const struct trace_options *o, const struct stat *exe,
			const struct bpf_load_target *t, struct bpf_choice *c)
{
	enum program_set first = PROGRAM_SET_COPY_STR, last = PROGRAM_SET_PROBE_READ;
	int forced = program_set_forced(&first), load_err = 0;

	memset(c, 0, sizeof(*c));
	if (forced < 0)
		return -EINVAL;
	if (forced)
		last = first;
	c->forced = forced;
	kernel_features_probe(&c->feat);
	c->cookies = c->feat.perf_link && !env_on("CTRACE_NO_COOKIES");
	if (!c->feat.perf_link)
		add_why(c, "no BPF links for perf events, so no BPF cookies");
	if (env_on("CTRACE_NO_MULTI"))
		add_why(c, "uprobe_multi links off (CTRACE_NO_MULTI)");
	else if (!c->feat.uprobe_multi)
		add_why(c, "no uprobe_multi links (Linux 6.6)");
	if (env_on("CTRACE_NO_COOKIES"))
		add_why(c, "BPF cookies off (CTRACE_NO_COOKIES)");
	c->fast = o->fast && c->feat.optimized_nop5;
	if (o->fast && !c->fast)
		fputs("ctrace-bpf: --fast: this kernel does not optimize uprobes on a 5-byte nop"
		      " (no uprobe syscall), so it would not be faster: attaching at the 1-byte nop\n", stderr);
	for (enum program_set set = first; set <= last; set++) {
		char buf[160];
		const char *missing = forced ? NULL : missing_for(set, &c->feat, buf, sizeof(buf));
		int err;

		if (missing) {
			add_why(c, "%s: %s", set_names[set], missing);
			continue;
		}
		err = load_set(o, exe, t, c, set, &load_err);
		if (err == SET_REFUSED) {
			add_why(c, "%s: the kernel refused it (%s)", set_names[set], strerror(-load_err));
			continue;
		}
		if (err == 0) {
			c->set = set;
			if (o->verbose)
				say_choice(c);
		}
		return err;
	}
	if (forced)
		fprintf(stderr, "ctrace-bpf: the kernel refused the BPF program set %s (CTRACE_PROGRAM_SET): %s (run with -v for the verifier's log)\n",
			set_names[first], strerror(-load_err));
	else
		fprintf(stderr, "ctrace-bpf: the kernel refused the BPF programs: %s (run with -v for the verifier's log)\n",
			c->why);
	return -EINVAL;
}

void bpf_choice_facts(const struct bpf_choice *c, struct trace_facts *f)
{
	f->program_set = set_names[c->set];
	f->program_set_why = c->why;
	f->program_set_forced = c->forced;
	f->probe_links = c->multi ? "uprobe_multi" : "perf_uprobe";
	f->bpf_cookies = c->cookies;
	f->fast_nop5 = c->fast;
	f->renames_told = c->renames_told;
	kernel_features_list(&c->feat, f->kernel_features);
}
