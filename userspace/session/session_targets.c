// SPDX-License-Identifier: MIT
/*
 * session_targets.c - the processes a session traces: those -p names, the
 * command it launches, the ones running --exe's program (a scan of /proc),
 * and those the kernel tells of later (a followed child, an exec, a
 * dlopen()), each attached as it comes.
 */
#include "lib/grow_array.h"
#include "session/session.h"

#include <dirent.h>
#include <linux/kcmp.h>
#include <sys/syscall.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "ctrace.skel.h"
#include "attach/batch_discover.h"
#include "attach/proc_maps.h"
#include "session/preflight.h"
#include "lib/term_safe.h"
#include "session/traced_set.h"
#include "attach/usdt_notes.h"

/* --exe names a program: an ELF executable or shared object (else one line, false). */
static bool exe_is_program(const char *path)
{
	struct usdt_note_list notes = { 0 };
	char err[256];
	int rc = usdt_notes_read(path, &notes, err, sizeof(err));

	usdt_note_list_free(&notes);
	if (rc == -ENOEXEC || rc == -EINVAL) {
		fprintf(stderr, "ctrace-bpf: --exe %s: %s (not an ELF program); give the path of an executable built with include/ctrace.h\n",
			TERM_SAFE(path), TERM_SAFE(err));
		return false;
	}
	if (rc < 0) {
		fprintf(stderr, "ctrace-bpf: --exe %s: %s\n", TERM_SAFE(path), TERM_SAFE(err));
		return false;
	}
	return true;
}

int session_check(struct session *s)
{
	struct trace_options *o = s->o;
	int err;

	if (o->n_pids) {
		s->first_pid = o->pids[0];
		for (int i = 0; i < o->n_pids; i++) {
			unsigned uid;

			if (kill(o->pids[i], 0) != 0 && errno == ESRCH) {
				fprintf(stderr, "ctrace-bpf: no process with pid %d (is it still running? try: pgrep -a NAME)\n",
					o->pids[i]);
				return -ESRCH;
			}
			if (o->user_set && proc_real_uid(o->pids[i], &uid) && uid != o->user_uid) {
				char user[96];

				fprintf(stderr, "ctrace-bpf: process %d runs as uid %u, not as %s that --user names; leave it out of -p or drop --user\n",
					o->pids[i], uid, trace_options_user(o, user, sizeof(user)));
				return -EPERM;
			}
		}
	}
	if (o->exe && stat(o->exe, &s->exe_st) != 0) {
		err = -errno;
		fprintf(stderr, "ctrace-bpf: --exe %s: %s\n", o->exe, strerror(-err));
		return err;
	}
	if (o->exe && !exe_is_program(o->exe))
		return -ENOEXEC;
	s->exe = o->exe ? &s->exe_st : NULL;
	if (!preflight_privileges() || !preflight_kernel())
		return -EPERM;
	return 0;
}

/* The facts of the first target (or --exe's path) for the trace's metadata. */
static void read_target_facts(struct session *s)
{
	if (s->first_pid)
		proc_facts_read(s->first_pid, &s->target);
	else
		snprintf(s->target.exe, sizeof(s->target.exe), "%s", s->o->exe);
}

int session_launch(struct session *s)
{
	struct trace_options *o = s->o;

	if (o->command) {
		/* Held before its first instruction, its libraries mapped. */
		/* With -o -, standard output is the trace's alone: the command prints to our stderr. */
		bool trace_on_stdout = o->output && !strcmp(o->output, "-");
		int err = launch_start_with_stdout(&s->launched, o->command,
						   trace_on_stdout ? STDERR_FILENO : -1);

		if (err < 0)
			return err;
		s->first_pid = s->launched.pid;
		o->pids[o->n_pids++] = s->launched.pid;
	}
	read_target_facts(s);
	return 0;
}

/*
 * Notes a process to look at again in this round; once, however often told.
 * Never a fixed cap: a child left out would never become a target (the maps
 * are polled for the targets only), and the trace would stop while it runs.
 */
void session_add_pending(struct session *s, int pid)
{
	for (size_t i = 0; i < s->n_pending; i++)
		if (s->pending[i] == pid)
			return;
	if (GROW_ARRAY(s->pending, s->cap_pending, s->n_pending, 64) < 0)
		return; /* its exit is still waited for: traced_set_any_alive() */
	s->pending[s->n_pending++] = pid;
}

/*
 * The snapshot of the process's file mappings comes right before its
 * attach (record_strings_snapshot says why), so that strings it reads late
 * can trust what it saw.
 */
int session_attach_process(struct session *s, int pid)
{
	int n;

	record_strings_snapshot(&s->strings, pid);
	n = attach_process(s->skel, pid, &s->att);
	/*
	 * Sites attached in an object the look before did not see (a
	 * dlopen() mapped it meanwhile, between ld.so's two hooks, in the
	 * same epoch): looked at again. Else a process that uses the object
	 * at once and exits before the next look leaves its batched literals
	 * in no snapshot ("(unreadable)": test_rewritten_library under ASan).
	 */
	if (n > 0)
		record_strings_snapshot_again(&s->strings, pid);
	return n;
}

/* Puts a process in the BPF side's set of traced processes. */
static void mark_traced(struct session *s, int pid)
{
	if (traced_set_add(bpf_map__fd(s->skel->maps.traced_tgids), pid) == -E2BIG)
		s->untraced_by_loader++;
}

int session_add_target(struct session *s, int pid)
{
	int err = targets_add(&s->targets, pid);

	if (err < 0)
		return err;
	/* Before its probes rise: it may dlopen() the moment they do. */
	link_map_watch_process(&s->dl, s->skel->progs.ctrace_link_map, s->att.multi, pid);
	err = session_attach_process(s, pid);
	return err == -ESRCH ? 0 : err; /* gone already: its exit ends it */
}

/* --user: a process of that real uid (one gone meanwhile: not wanted). */
static bool user_wanted(const struct trace_options *o, int pid)
{
	unsigned uid;

	return !o->user_set || (proc_real_uid(pid, &uid) && uid == o->user_uid);
}

/*
 * --exe: the processes already running the program join the trace. They
 * are all marked traced before the program's sites are attached: attaching
 * raises the semaphore in every one of them at once, and an event of a
 * process not yet marked would be filtered out.
 */
static int trace_exe(struct session *s, const char *exe_path, const struct stat *exe)
{
	DIR *proc = opendir("/proc");
	struct dirent *d;
	char path[300];
	struct stat st;
	int err;

	while (proc && (d = readdir(proc))) {
		int pid = atoi(d->d_name);

		if (pid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/exe", pid);
		if (stat(path, &st) == 0 && st.st_ino == exe->st_ino && st.st_dev == exe->st_dev &&
		    user_wanted(s->o, pid) && targets_add(&s->targets, pid) > 0) {
			mark_traced(s, pid);
			/* Before it is armed: its batched literals may come after its exit. */
			record_strings_snapshot(&s->strings, pid);
		}
	}
	if (proc)
		closedir(proc);
	err = attach_file(s->skel, exe_path, &s->att);
	/* Their libraries too. */
	for (size_t i = 0; i < s->targets.n && err >= 0; i++)
		if (session_attach_process(s, s->targets.v[i].pid) == -EOPNOTSUPP)
			err = -EOPNOTSUPP;
	return err;
}

/* --stacks: a process's objects, as the attach found them, before their probes rise. */
static void stack_objects_seen(void *session, int pid, const struct mapped_object_list *objs)
{
	struct session *s = session;

	stack_unwind_objects(&s->stacks.unwind, (uint32_t)pid, objs);
}

/*
 * A child of vfork() or clone(CLONE_VM) runs on its parent's memory: the
 * buffers there are its parent's (the kernel side gives its flushes to
 * the parent too), read as the parent's streams, not a second time.
 */
static bool shares_parents_memory(int pid)
{
	unsigned ppid;

	return proc_parent_pid(pid, &ppid) && ppid > 0 && syscall(SYS_kcmp, pid, (pid_t)ppid, KCMP_VM, 0, 0) == 0;
}

/*
 * An object whose batch probe is attached (its semaphore raised): the
 * buffers its threads took before, in an earlier trace or before this one
 * attached, are read from now on like the ones announced later.
 */
static void batch_object_attached(void *session, int pid, const struct mapped_object *obj, uint64_t sema_offset)
{
	struct session *s = session;
	uint64_t dev = (uint64_t)obj->dev_major << 32 | obj->dev_minor, anchor;

	if (!batch_path_has_anchor(&s->bpath, (uint32_t)pid, dev, obj->inode) && !shares_parents_memory(pid) &&
	    batch_anchor_address(pid, obj->dev_major, obj->dev_minor, obj->inode, sema_offset, &anchor) == 0)
		batch_path_add_anchor(&s->bpath, (uint32_t)pid, dev, obj->inode, anchor,
				      session_now_ns(CLOCK_MONOTONIC));
}

/* Called again after a fallback to other programs: the targets start over. */
int session_attach_targets(void *session)
{
	struct session *s = session;
	const struct trace_options *o = s->o;
	int err = 0;

	if (o->stack_depth) {
		s->att.objects_seen = stack_objects_seen;
		s->att.objects_ctx = s;
	}
	s->att.batch_object = batch_object_attached;
	s->att.batch_ctx = s;
	targets_free(&s->targets);
	record_strings_watch_epochs(&s->strings, &(struct process_epochs){ s->skel->bss->literal_epochs,
								      (const volatile uint64_t *)s->skel->bss->exec_began });
	s->att.epochs = s->strings.epochs;
	if (o->exe)
		err = trace_exe(s, o->exe, s->exe);
	for (int i = 0; i < o->n_pids && err >= 0; i++) {
		/*
		 * The kernel puts in the table the processes that came later (a
		 * followed fork, an exec of --exe's program) and takes each out
		 * at its exit: only the loader's own targets are its to put in.
		 * Put in again when the loader read a child's fork notice, a
		 * child already exiting stayed in the table for good.
		 */
		mark_traced(s, o->pids[i]);
		err = session_add_target(s, o->pids[i]);
		if (err == 0 && !targets_has(&s->targets, o->pids[i]))
			err = -ESRCH;
	}
	return err;
}
