/* SPDX-License-Identifier: MIT */
/*
 * launch.h - start a command so that it can be traced from its first
 * instruction (`ctrace-bpf [options] -- CMD ARGS`).
 *
 * Attaching to a running process misses whatever it did before the tracer
 * got there. So the tracer forks the command itself and holds it (ptrace)
 * at its entry point: by then the dynamic loader has mapped every library it
 * was linked with (DT_NEEDED, LD_PRELOAD), so every probe site that exists at
 * start is in /proc/PID/maps and can be attached, and none of the program's
 * own code (its constructors, main) has run. The tracer attaches, then lets
 * it go with launch_resume().
 *
 * What runs before the stop: the dynamic loader, and the constructors of the
 * shared libraries (ld.so runs them before it jumps to the entry point). A
 * library that starts a thread in its constructor is not held either: only
 * the main thread is traced by ptrace. Libraries loaded later (dlopen) are
 * not mapped yet at the stop.
 *
 * A script (#!) is launched as its interpreter; the stop is at the
 * interpreter's entry. A static binary has no loader: it is stopped at once,
 * right after exec, which is its entry point.
 *
 * Signals: nothing is forwarded. The child stays in the caller's process
 * group and session, so Ctrl-C in a terminal reaches both; a signal sent to
 * the tracer's pid alone is the caller's to pass on (kill(l->pid, sig)).
 * Signals that arrive while the loader runs (before the stop) are delivered
 * to the child as usual. The child starts with SIGPIPE at its default and no
 * signal blocked, whatever the caller had set; other dispositions are
 * inherited as with any fork and exec (an ignored SIGHUP under nohup stays
 * ignored). Do not set SIGCHLD to SIG_IGN: the child's status would be lost.
 *
 * Under sudo (euid 0 and SUDO_UID, SUDO_GID set), the child runs as the
 * invoking user: its supplementary groups (that user's, from the group
 * database; just SUDO_GID if the uid has no passwd entry), gid and uid are
 * set before exec, so the command searches PATH and opens files with that
 * user's rights, as it would without ctrace-bpf. The environment is passed
 * on unchanged.
 */
#ifndef CTRACE_LAUNCH_H
#define CTRACE_LAUNCH_H

#include <stdbool.h>
#include <sys/types.h>

struct launch {
	pid_t pid;             /* the child; 0 when there is none */
	bool held;             /* stopped under ptrace until launch_resume() */
	bool reaped;           /* its exit status is in `status` */
	int status;            /* wait status, once reaped */
	unsigned long entry;   /* AT_ENTRY: where it is held (run-time address) */
};

/*
 * Forks and execs argv (argv[0] searched in PATH, as execvp does) and returns
 * with the child held at its entry point, libraries mapped (see above).
 * Returns 0, or -errno with one line printed on stderr, and then no child
 * is left: -ENOENT command not found, -EACCES not executable (or a
 * directory), -EPERM ptrace or the change of user refused, -ECHILD it exited
 * or was killed before its entry point (e.g. a library missing: the loader's
 * own message is on its stderr; launch_reap() still tells its exit code),
 * -EINVAL empty argv or bad SUDO_UID/GID, other -errno from fork, exec or
 * ptrace.
 */
int launch_start(struct launch *l, char *const argv[]);

/*
 * The same, with the command's standard output on `stdout_fd` (-1: ours).
 * With `-o -` the trace is our standard output, and what the command
 * prints must not land in the middle of its JSON.
 */
int launch_start_with_stdout(struct launch *l, char *const argv[], int stdout_fd);

/* Lets the held child run (detaches ptrace). 0, or -errno (-ESRCH: it died
 * while held; launch_reap() then reaps it). */
int launch_resume(struct launch *l);

/*
 * Without blocking: true once the child has exited (it is reaped now or was
 * before), with *exit_code set to its exit code, or 128+N if signal N killed
 * it (255 if the status was lost: SIGCHLD ignored); false while it still
 * runs (or is held).
 */
bool launch_reap(struct launch *l, int *exit_code);

/*
 * Blocks until the child exits: true with *exit_code as launch_reap()
 * gives it; false if a signal interrupted the wait (the child runs on).
 */
bool launch_wait(struct launch *l, int *exit_code);

/* Kills the child (SIGKILL), held or not, and reaps it: for error paths.
 * Does nothing once it is reaped. */
void launch_abort(struct launch *l);

#endif
