// SPDX-License-Identifier: MIT
/*
 * launch.c - fork, exec and hold a command at its entry point (see launch.h).
 *
 * The child asks to be traced (PTRACE_TRACEME), stops itself (SIGSTOP) so that
 * the parent can set its ptrace options, and execs; with PTRACE_O_TRACEEXEC
 * the kernel stops it right after the exec, at the first instruction of the
 * dynamic loader (or of the program itself when it is static). The loader maps the
 * libraries and then jumps to the program's entry point, which the kernel
 * gives in the auxiliary vector (AT_ENTRY, already relocated for a PIE). A
 * temporary int3 there stops the child once the loader is done; the original
 * byte is put back and the instruction pointer rewound, so the program runs
 * as if nothing had happened when it is let go.
 *
 * Exec failure is sent over a close-on-exec pipe: the child writes its errno
 * and exits. The parent reads the pipe only once the child has exited, never
 * while it may be stopped: a signal arriving before the exec stops a traced
 * child until its tracer continues it, and a parent blocked in read() would
 * never do so.
 */
#include "session/launch.h"
#include "lib/fd_limit.h"
#include "session/tracer_priority.h"
#include "lib/sudo_user.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

/* What the child was doing when it failed, sent with its errno. */
enum child_step { STEP_PTRACE, STEP_GROUPS, STEP_GID, STEP_UID, STEP_EXEC };

struct child_report {
	int step; /* enum child_step */
	int err;
};

/* The user the child runs as under sudo. */
struct identity {
	bool drop;
	uid_t uid;
	gid_t gid;
	gid_t *groups;
	int ngroups;
};

/*
 * Everything the child needs to change user is looked up here, before the
 * fork: between fork and exec only async-signal-safe calls are allowed, and
 * getpwuid / getgrouplist (NSS) are not.
 */
static int sudo_identity(struct identity *id)
{
	struct sudo_user su;
	struct passwd *pw;
	int n = 16;

	memset(id, 0, sizeof(*id));
	if (sudo_user_get(&su) < 0)
		return -EINVAL;
	if (!su.set)
		return 0;
	id->drop = true;
	id->uid = su.uid;
	id->gid = su.gid;
	pw = getpwuid(id->uid);
	for (;;) {
		gid_t *g = realloc(id->groups, (size_t)n * sizeof(*g));

		if (!g) {
			free(id->groups);
			id->groups = NULL;
			return -ENOMEM;
		}
		id->groups = g;
		if (!pw) { /* no passwd entry: the one group sudo named */
			g[0] = id->gid;
			id->ngroups = 1;
			return 0;
		}
		id->ngroups = n;
		if (getgrouplist(pw->pw_name, id->gid, g, &id->ngroups) >= 0)
			return 0;
		/* Too small: ngroups now says how many there are. */
		n = id->ngroups > n ? id->ngroups : n * 2;
	}
}

/* In the child: reports why it cannot go on, and ends. */
static void child_fail(int fd, enum child_step step, int err)
{
	struct child_report r = { step, err };

	if (write(fd, &r, sizeof(r)) < 0) {
		/* Nothing more to do: the parent sees exit code 127. */
	}
	_exit(127);
}

static void child_run(int fd, const struct identity *id, char *const argv[], int stdout_fd)
{
	struct sigaction dfl = { 0 };
	sigset_t none;

	if (stdout_fd >= 0 && dup2(stdout_fd, STDOUT_FILENO) < 0)
		child_fail(fd, STEP_EXEC, errno);

	if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) < 0)
		child_fail(fd, STEP_PTRACE, errno);
	raise(SIGSTOP); /* the parent sets its options, then continues it */
	/* The tracer may ignore SIGPIPE or block signals; the command should not. */
	dfl.sa_handler = SIG_DFL;
	sigaction(SIGPIPE, &dfl, NULL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	/* Groups and gid first: after setuid there is no right to change them. */
	if (id->drop) {
		if (setgroups((size_t)id->ngroups, id->groups) < 0)
			child_fail(fd, STEP_GROUPS, errno);
		if (setgid(id->gid) < 0)
			child_fail(fd, STEP_GID, errno);
		if (setuid(id->uid) < 0)
			child_fail(fd, STEP_UID, errno);
	}
	fd_limit_restore(); /* the command's own limit and priority, not the tracer's raised ones */
	tracer_priority_for_child();
	execvp(argv[0], argv);
	child_fail(fd, STEP_EXEC, errno);
}

/* True if some directory of PATH has an entry named cmd (as execvp searches). */
static bool in_path(const char *cmd)
{
	const char *path = getenv("PATH");
	char buf[PATH_MAX];
	struct stat st;

	for (path = path ? path : "/bin:/usr/bin"; *path;) {
		size_t len = strcspn(path, ":");

		/* An empty entry is the current directory, as for execvp. */
		snprintf(buf, sizeof(buf), "%.*s%s%s", (int)len, path, len ? "/" : "", cmd);
		if (stat(buf, &st) == 0)
			return true;
		path += len + (path[len] == ':');
	}
	return false;
}

/*
 * execvp says EACCES when a directory of PATH could not be searched, even if
 * the command is nowhere: that is "not found" to a person.
 */
static void fix_not_found(const char *cmd, struct child_report *r)
{
	if (r->step == STEP_EXEC && r->err == EACCES && !strchr(cmd, '/') && !in_path(cmd))
		r->err = ENOENT;
}

static void report_child_failure(const char *cmd, const struct identity *id,
				 const struct child_report *r)
{
	switch (r->step) {
	case STEP_PTRACE:
		fprintf(stderr, "ctrace-bpf: cannot hold %s at its start: ptrace: %s (is kernel.yama.ptrace_scope 3?)\n",
			cmd, strerror(r->err));
		return;
	case STEP_GROUPS:
	case STEP_GID:
	case STEP_UID:
		fprintf(stderr, "ctrace-bpf: cannot run %s as uid %u gid %u (SUDO_UID, SUDO_GID): %s\n",
			cmd, (unsigned)id->uid, (unsigned)id->gid, strerror(r->err));
		return;
	}
	if (r->err == ENOENT && !strchr(cmd, '/'))
		fprintf(stderr, "ctrace-bpf: %s: command not found\n", cmd);
	else if (r->err == ENOENT && access(cmd, F_OK) == 0)
		fprintf(stderr, "ctrace-bpf: %s: its interpreter (#! line or ELF loader) does not exist\n", cmd);
	else if (r->err == ENOENT)
		fprintf(stderr, "ctrace-bpf: %s: no such file\n", cmd);
	else if (r->err == EACCES)
		fprintf(stderr, "ctrace-bpf: %s: permission denied (not executable%s)\n",
			cmd, id->drop ? " by the sudo user, or a directory" : ", or a directory");
	else if (r->err == ENOEXEC)
		fprintf(stderr, "ctrace-bpf: %s: not an executable format\n", cmd);
	else
		fprintf(stderr, "ctrace-bpf: cannot run %s: %s\n", cmd, strerror(r->err));
}

/* The errno launch_start returns for a failure the child reported. */
static int child_errno(const struct child_report *r)
{
	return r->step == STEP_EXEC ? r->err : r->err == EPERM || r->err == EACCES ? EPERM : r->err;
}

/* waitpid, again after EINTR. */
static pid_t wait_child(pid_t pid, int *status)
{
	pid_t r;

	do
		r = waitpid(pid, status, 0);
	while (r < 0 && errno == EINTR);
	return r;
}

/*
 * AT_ENTRY of the child, from /proc/PID/auxv: pairs of (type, value) words in
 * the process's own word size, so a 32-bit program has 4-byte words (its
 * class is read from the executable it runs, /proc/PID/exe).
 */
static int read_entry(pid_t pid, unsigned long *entry)
{
	unsigned char ident[EI_NIDENT], buf[8192];
	char path[64];
	size_t len = 0, word;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = pread(fd, ident, sizeof(ident), 0);
	close(fd);
	if (n != (ssize_t)sizeof(ident) || memcmp(ident, ELFMAG, SELFMAG))
		return -ENOEXEC;
	word = ident[EI_CLASS] == ELFCLASS32 ? 4 : 8;

	snprintf(path, sizeof(path), "/proc/%d/auxv", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (len < sizeof(buf) && (n = read(fd, buf + len, sizeof(buf) - len)) > 0)
		len += (size_t)n;
	close(fd);
	for (size_t off = 0; off + 2 * word <= len; off += 2 * word) {
		uint64_t type = 0, val = 0;

		memcpy(&type, buf + off, word); /* little-endian: the low bytes */
		memcpy(&val, buf + off + word, word);
		if (type == AT_NULL)
			break;
		if (type == AT_ENTRY) {
			*entry = (unsigned long)val;
			return 0;
		}
	}
	return -ENOEXEC;
}

/*
 * True if a stop for signal `sig` is a group-stop (the child was told to stop,
 * SIGSTOP and the like, and already is): PTRACE_GETSIGINFO fails only then.
 */
static bool group_stop(pid_t pid, int sig)
{
	siginfo_t si;

	if (sig != SIGSTOP && sig != SIGTSTP && sig != SIGTTIN && sig != SIGTTOU)
		return false;
	return ptrace(PTRACE_GETSIGINFO, pid, NULL, &si) < 0 && errno == EINVAL;
}

/*
 * Continues the child with signal `sig` and waits for its next stop. A signal
 * that arrives for the child on the way (a terminal's SIGWINCH, SIGINT) is
 * delivered to it; a stop request is dropped (the launch goes on). 0 with
 * the child stopped and *status its wait status; -ECHILD if it ended
 * (*status says how); -errno if ptrace failed.
 */
static int cont_until_stop(pid_t pid, int sig, int *status)
{
	if (ptrace(PTRACE_CONT, pid, NULL, (void *)(long)sig) < 0)
		return -errno;
	if (wait_child(pid, status) < 0)
		return -errno;
	return WIFSTOPPED(*status) ? 0 : -ECHILD;
}

/* The signal a stop should pass on to the child when it is continued. */
static int pass_on(pid_t pid, int status)
{
	int sig = WSTOPSIG(status);

	if (status >> 16 || group_stop(pid, sig))
		return 0; /* a ptrace event or a group-stop: no signal pending */
	return sig;
}

/*
 * Runs the child from the exec stop to its entry point. 0 with the child
 * stopped at `entry`; -ECHILD if it ended on the way (*status says how);
 * other -errno if ptrace failed.
 */
static int run_to_entry(pid_t pid, unsigned long entry, int *status)
{
	/* An aligned word: never crosses into a page that might not be mapped. */
	unsigned long word_addr = entry & ~7UL, shift = (entry & 7) * 8;
	struct user_regs_struct regs;
	long orig, patched;
	int rc, sig = 0;

	if (ptrace(PTRACE_GETREGS, pid, NULL, &regs) < 0)
		return -errno;
	if (regs.rip == entry)
		return 0; /* no interpreter: the exec stop is at the entry already */
	errno = 0;
	orig = ptrace(PTRACE_PEEKTEXT, pid, (void *)word_addr, NULL);
	if (errno)
		return -errno;
	patched = (long)(((unsigned long)orig & ~(0xffUL << shift)) | (0xccUL << shift));
	if (ptrace(PTRACE_POKETEXT, pid, (void *)word_addr, (void *)patched) < 0)
		return -errno;
	for (;;) {
		if ((rc = cont_until_stop(pid, sig, status)) < 0)
			return rc;
		if (WSTOPSIG(*status) == SIGTRAP && !(*status >> 16)) {
			if (ptrace(PTRACE_GETREGS, pid, NULL, &regs) < 0)
				return -errno;
			if (regs.rip == entry + 1)
				break; /* our int3: its SIGTRAP is never delivered */
		}
		sig = pass_on(pid, *status);
	}
	if (ptrace(PTRACE_POKETEXT, pid, (void *)word_addr, (void *)orig) < 0)
		return -errno;
	regs.rip = entry;
	if (ptrace(PTRACE_SETREGS, pid, NULL, &regs) < 0)
		return -errno;
	return 0;
}

/*
 * From the fork to the exec: waits for the child's own SIGSTOP, sets the
 * options, and lets it exec. 0 at the exec stop; -ECHILD if it ended before
 * (exec failed: its report is in the pipe); -errno if ptrace failed.
 */
static int run_to_exec(pid_t pid, int *status)
{
	int rc;

	if (wait_child(pid, status) < 0)
		return -errno;
	while (WIFSTOPPED(*status) && WSTOPSIG(*status) != SIGSTOP)
		if ((rc = cont_until_stop(pid, WSTOPSIG(*status), status)) < 0)
			return rc;
	if (!WIFSTOPPED(*status))
		return -ECHILD;
	/* EXITKILL: should the tracer die while the child is held, the child
	 * dies too rather than stay stopped forever. */
	if (ptrace(PTRACE_SETOPTIONS, pid, NULL,
		   (void *)(long)(PTRACE_O_EXITKILL | PTRACE_O_TRACEEXEC)) < 0)
		return -errno;
	for (int sig = 0;;) {
		if ((rc = cont_until_stop(pid, sig, status)) < 0)
			return rc;
		if (*status >> 8 == (SIGTRAP | (PTRACE_EVENT_EXEC << 8)))
			return 0;
		sig = pass_on(pid, *status);
	}
}

/* How a child that ended early ended, for the message. */
static void describe_status(int status, char *buf, size_t len)
{
	if (WIFEXITED(status))
		snprintf(buf, len, "exited with code %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(buf, len, "was killed by signal %d (%s)", WTERMSIG(status),
			 strsignal(WTERMSIG(status)));
	else
		snprintf(buf, len, "stopped");
}

/*
 * The child ended before its exec: its report, if it wrote one, says why.
 * Returns the -errno for launch_start.
 */
static int failed_before_exec(int fd, const char *cmd, const struct identity *id,
			      int status)
{
	struct child_report report;
	char how[96];
	ssize_t n;

	do
		n = read(fd, &report, sizeof(report));
	while (n < 0 && errno == EINTR);
	if (n == (ssize_t)sizeof(report)) {
		fix_not_found(cmd, &report);
		report_child_failure(cmd, id, &report);
		return -child_errno(&report);
	}
	describe_status(status, how, sizeof(how));
	fprintf(stderr, "ctrace-bpf: %s %s before it started\n", cmd, how);
	return -ECHILD;
}

/* Forked: run the child to its entry. 0 or -errno (message printed). */
static int hold_at_entry(struct launch *l, int fd, const char *cmd,
			 const struct identity *id)
{
	char how[96];
	int status, rc;

	rc = run_to_exec(l->pid, &status);
	if (rc == -ECHILD) {
		l->reaped = true;
		l->status = status;
		return failed_before_exec(fd, cmd, id, status);
	}
	if (rc == 0 && (rc = read_entry(l->pid, &l->entry)) == 0)
		rc = run_to_entry(l->pid, l->entry, &status);
	if (rc == -ECHILD) {
		l->reaped = true;
		l->status = status;
		describe_status(status, how, sizeof(how));
		fprintf(stderr, "ctrace-bpf: %s %s before its program started (the loader's message, if any, is above)\n",
			cmd, how);
	} else if (rc < 0) {
		fprintf(stderr, "ctrace-bpf: cannot hold %s at its entry point: %s\n", cmd, strerror(-rc));
	}
	return rc;
}

int launch_start(struct launch *l, char *const argv[])
{
	return launch_start_with_stdout(l, argv, -1);
}

int launch_start_with_stdout(struct launch *l, char *const argv[], int stdout_fd)
{
	struct identity id;
	int pipefd[2], rc;

	memset(l, 0, sizeof(*l));
	if (!argv || !argv[0] || !argv[0][0]) {
		fputs("ctrace-bpf: no command to run\n", stderr);
		return -EINVAL;
	}
	if ((rc = sudo_identity(&id)) < 0) {
		if (rc == -ENOMEM)
			fputs("ctrace-bpf: out of memory\n", stderr);
		return rc;
	}
	if (pipe2(pipefd, O_CLOEXEC) < 0) {
		rc = -errno;
		fprintf(stderr, "ctrace-bpf: cannot run %s: pipe: %s\n", argv[0], strerror(-rc));
		free(id.groups);
		return rc;
	}
	fflush(NULL); /* or both processes would write what stdio holds */
	l->pid = fork();
	if (l->pid == 0) {
		close(pipefd[0]);
		child_run(pipefd[1], &id, argv, stdout_fd);
	}
	if (l->pid < 0) {
		rc = -errno;
		l->pid = 0;
		fprintf(stderr, "ctrace-bpf: cannot run %s: fork: %s\n", argv[0], strerror(-rc));
	} else {
		close(pipefd[1]);
		pipefd[1] = -1;
		l->held = true;
		rc = hold_at_entry(l, pipefd[0], argv[0], &id);
		if (rc < 0) {
			launch_abort(l);
			l->pid = 0;
			l->held = false;
		}
	}
	close(pipefd[0]);
	if (pipefd[1] >= 0)
		close(pipefd[1]);
	free(id.groups);
	return rc;
}

int launch_resume(struct launch *l)
{
	if (!l->pid || !l->held)
		return 0;
	l->held = false;
	/* Signal 0: the SIGTRAP of our breakpoint (or of the exec) is not delivered. */
	if (ptrace(PTRACE_DETACH, l->pid, NULL, NULL) < 0)
		return -errno;
	return 0;
}

static int exit_code_of(int status)
{
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

bool launch_reap(struct launch *l, int *exit_code)
{
	int status;
	pid_t r;

	if (!l->pid && !l->reaped)
		return false;
	while (!l->reaped) {
		r = waitpid(l->pid, &status, WNOHANG);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			/* Reaped by someone else (SIGCHLD ignored): status lost. */
			l->reaped = true;
			l->status = W_EXITCODE(255, 0);
			break;
		}
		if (r == 0 || WIFSTOPPED(status) || WIFCONTINUED(status))
			return false;
		l->reaped = true;
		l->status = status;
	}
	if (exit_code)
		*exit_code = exit_code_of(l->status);
	return true;
}

bool launch_wait(struct launch *l, int *exit_code)
{
	int status;
	pid_t r;

	if (!l->pid || l->reaped)
		return launch_reap(l, exit_code);
	r = waitpid(l->pid, &status, 0);
	if (r < 0 && errno == EINTR)
		return false;
	l->reaped = true;
	/* Reaped by someone else (SIGCHLD ignored): status lost. */
	l->status = r < 0 ? W_EXITCODE(255, 0) : status;
	return launch_reap(l, exit_code);
}

void launch_abort(struct launch *l)
{
	int status;

	if (!l->pid || l->reaped)
		return;
	kill(l->pid, SIGKILL);
	/* A traced child may report stops before its death: wait for the end. */
	while (wait_child(l->pid, &status) == l->pid) {
		if (WIFEXITED(status) || WIFSIGNALED(status)) {
			l->status = status;
			break;
		}
	}
	l->reaped = true;
	l->held = false;
}
