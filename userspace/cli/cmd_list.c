// SPDX-License-Identifier: MIT
/*
 * cmd_list.c - `ctrace-bpf list (-p PID | PATH)`: the USDT probes of a
 * process (every ELF object it has mapped) or of one ELF file, one line each.
 *
 * The first field is bpftrace's own probe name (usdt:PATH:PROVIDER:NAME), so
 * a line can be pasted into `bpftrace -e`; the rest are KEY=VALUE fields in a
 * fixed order, args last because its value holds spaces. The notes come from
 * files the traced process controls, so every field is escaped: a hostile
 * note cannot break the one-line-per-probe format or reach the terminal with
 * control characters.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cli/commands.h"
#include "ctrace_record.h"
#include "ctrace_site.h"
#include "lib/path_list.h"
#include "lib/proc_info.h"
#include "attach/proc_maps.h"
#include "lib/term_safe.h"
#include "attach/usdt_notes.h"

static const char list_usage[] =
	"Usage: ctrace-bpf list -p PID\n"
	"       ctrace-bpf list PATH\n"
	"\n"
	"Lists the USDT probes, ctrace's and any other (<sys/sdt.h>), of a running\n"
	"process (every executable and library it has mapped) or of one ELF file.\n"
	"\n"
	"  -p, --pid PID      the process whose mapped objects to list\n"
	"  -h, --help         this text\n"
	"\n"
	"One line per probe site:\n"
	"\n"
	"  usdt:PATH:PROVIDER:NAME addr=0xADDR sema=0xADDR|- site=KIND attach=0xOFF cat=NAME|- args=SPEC\n"
	"\n"
	"  usdt:...   the probe as bpftrace names it; PATH as the process sees it\n"
	"  addr       the site's link-time address (the note's, as readelf -n shows)\n"
	"  sema       the link-time address of its semaphore, - if it has none\n"
	"  site       ctrace: a ctrace site (guarded 5-byte nop) that ctrace-bpf traces\n"
	"             usdt: a standard USDT probe (other tools: bpftrace, BCC, perf)\n"
	"             unknown: provider ctrace, but not a site this ctrace-bpf knows\n"
	"  attach     site=ctrace: the file offset of the 5-byte nop ctrace-bpf attaches\n"
	"             to; otherwise the file offset of the note's address (where\n"
	"             other tools attach)\n"
	"  cat        site=ctrace: its category (CTRACE_CATEGORY, CTRACE_IN; default\n"
	"             ctrace), what --categories selects; - for other probes\n"
	"  args       the note's argument specs (may be empty), to the end of the line\n"
	"\n"
	"Bytes that could break a line or drive the terminal (spaces in PATH,\n"
	"PROVIDER and NAME, control characters, bytes that are not UTF-8,\n"
	"backslashes) are written as \\xHH. Exit status: 0 if probes\n"
	"were listed, 1 if none or on an error (one line on stderr), 2 for bad usage.\n"
	"list -p needs only read access to /proc/PID (root, or the process's user).\n"
	"\n"
	"Examples:\n"
	"  ctrace-bpf list ./server\n"
	"  ctrace-bpf list -p $(pidof server) | grep ' site=ctrace '\n";

/* The probe names ctrace-bpf has a BPF program for (the kinds table). */
static bool known_ctrace_probe(const char *name)
{
	static const char *const names[] = {
#define PROBE_NAME(kind, num, probe, ...) #probe,
		CTRACE_PROBE_KINDS(PROBE_NAME)
#undef PROBE_NAME
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(name, names[i]))
			return true;
	return false;
}

/*
 * Writes s with the bytes that would split or forge a line, or drive the
 * terminal (term_safe.h), escaped. `space` and `colon` also escape those
 * (fields that end at a space; a colon would make usdt:PATH:PROVIDER:NAME
 * ambiguous). `high` escapes non-ASCII bytes: paths may be UTF-8, probe
 * names and specs are plain identifiers.
 */
static void put_escaped(const char *s, bool space, bool colon, bool high)
{
	size_t len = strlen(s);

	for (size_t i = 0; i < len;) {
		unsigned char c = (unsigned char)s[i];
		size_t n = term_safe_char_len(s + i, len - i);

		if (!n || (space && c == ' ') || (colon && c == ':') || (high && c >= 0x80)) {
			printf("\\x%02x", c);
			i++;
		} else {
			fwrite(s + i, 1, n, stdout);
			i += n;
		}
	}
}

/* The file offset ctrace-bpf (or another tool) puts the uprobe at. */
static const char *site_kind(int fd, const struct usdt_note *n, uint64_t *attach)
{
	*attach = n->site_offset;
	if (strcmp(n->provider, "ctrace"))
		return "usdt";
	if (!known_ctrace_probe(n->name) || !usdt_is_ctrace_site(fd, n->site_offset))
		return "unknown";
	*attach = n->site_offset + CTRACE_SITE_NOP5_OFFSET;
	return "ctrace";
}

static void print_probe(const char *path, int fd, const struct usdt_note *n)
{
	uint64_t attach;
	const char *kind = site_kind(fd, n, &attach);

	fputs("usdt:", stdout);
	put_escaped(path, true, false, false);
	putchar(':');
	put_escaped(n->provider, true, true, true);
	putchar(':');
	put_escaped(n->name, true, true, true);
	printf(" addr=0x%llx", (unsigned long long)n->site_vaddr);
	if (n->sema_vaddr)
		printf(" sema=0x%llx", (unsigned long long)n->sema_vaddr);
	else
		fputs(" sema=-", stdout);
	printf(" site=%s attach=0x%llx cat=", kind, (unsigned long long)attach);
	if (strcmp(kind, "ctrace") || !strcmp(n->name, "batch"))
		putchar('-');
	else
		put_escaped(n->category, true, false, true);
	fputs(" args=", stdout);
	put_escaped(n->args, false, false, true);
	putchar('\n');
}

/*
 * Lists the probes of the file at open_path, naming it `path`. Returns how
 * many, or -errno with the reason in err.
 */
static int list_file(const char *path, const char *open_path, char *err,
		     size_t errlen)
{
	struct usdt_note_list notes;
	struct stat st;
	int fd, rc;

	/* O_NONBLOCK: a FIFO must not hang the open (the reader rejects it). */
	fd = open(open_path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		rc = -errno;
		snprintf(err, errlen, "%s", rc == -ENOENT ? "no such file" : strerror(-rc));
		return rc;
	}
	rc = usdt_notes_read_fd(fd, &notes, err, errlen);
	if (rc == -ENOEXEC && fstat(fd, &st) == 0 && S_ISDIR(st.st_mode))
		snprintf(err, errlen, "is a directory, not an ELF file");
	if (rc == 0) {
		for (size_t i = 0; i < notes.n; i++)
			print_probe(path, fd, &notes.v[i]);
		rc = (int)notes.n;
	} else if (rc == -EINVAL) {
		char why[200];

		snprintf(why, sizeof(why), "%s", err);
		snprintf(err, errlen, "malformed ELF file: %s", why);
	}
	usdt_note_list_free(&notes);
	close(fd);
	return rc;
}

static int list_path(const char *path)
{
	char err[256];
	int n = list_file(path, path, err, sizeof(err));

	if (n < 0) {
		fprintf(stderr, "ctrace-bpf: %s: %s\n", TERM_SAFE(path), TERM_SAFE(err));
		return 1;
	}
	if (n == 0) {
		fprintf(stderr, "ctrace-bpf: no USDT probes in %s\n", TERM_SAFE(path));
		return 1;
	}
	return fflush(stdout) ? 1 : 0;
}

static int list_process(int pid)
{
	struct mapped_object_list objs;
	char looked_in[1024] = "", comm[32], dir[32];
	size_t total = 0;
	bool full = false;
	int rc;

	rc = proc_maps_objects(pid, &objs);
	if (rc == -ESRCH) {
		snprintf(dir, sizeof(dir), "/proc/%d", pid);
		if (access(dir, F_OK) == 0)
			fprintf(stderr, "ctrace-bpf: process %d has exited (it maps no files)\n", pid);
		else
			fprintf(stderr, "ctrace-bpf: no process with pid %d (is it still running? try: pgrep -a NAME)\n", pid);
		return 1;
	}
	if (rc == -EACCES || rc == -EPERM) {
		fprintf(stderr, "ctrace-bpf: cannot read /proc/%d/maps: %s (list -p needs root or the process's own user)\n",
			pid, strerror(-rc));
		return 1;
	}
	if (rc < 0) {
		fprintf(stderr, "ctrace-bpf: cannot read /proc/%d/maps: %s\n", pid, strerror(-rc));
		return 1;
	}
	if (!proc_thread_comm(pid, pid, comm, sizeof(comm)))
		snprintf(comm, sizeof(comm), "?");
	for (size_t i = 0; i < objs.n; i++) {
		const struct mapped_object *o = &objs.v[i];
		char err[256];
		int n = list_file(o->path, o->host_path, err, sizeof(err));

		path_list_add(looked_in, sizeof(looked_in), &full, o->path);
		/* A mapped file that is not a 64-bit ELF object cannot hold our probes. */
		if (n < 0 && n != -ENOEXEC)
			fprintf(stderr, "ctrace-bpf: skipping %s: %s\n", TERM_SAFE(o->path), TERM_SAFE(err));
		if (n > 0)
			total += (size_t)n;
	}
	mapped_object_list_free(&objs);
	if (total == 0) {
		fprintf(stderr, "ctrace-bpf: no USDT probes in process %d (%s); looked in: %s\n",
			pid, TERM_SAFE(comm), looked_in[0] ? TERM_SAFE(looked_in) : "(no mapped files)");
		return 1;
	}
	return fflush(stdout) ? 1 : 0;
}

int cmd_list(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	long pid = 0;
	char *end;
	int c;

	while ((c = getopt_long(argc, argv, "p:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'p':
			errno = 0;
			pid = strtol(optarg, &end, 10);
			if (errno || *end || end == optarg || pid <= 0 || pid > 0x7fffffff) {
				fprintf(stderr, "ctrace-bpf: -p needs a process id (a positive number), not '%s'\n", optarg);
				return 2;
			}
			break;
		case 'h':
			fputs(list_usage, stdout);
			return 0;
		default:
			fputs("ctrace-bpf: see ctrace-bpf list --help\n", stderr);
			return 2;
		}
	}
	if (pid && optind == argc)
		return list_process((int)pid);
	if (!pid && optind == argc - 1)
		return list_path(argv[optind]);
	fputs(pid || optind < argc ?
		      "ctrace-bpf: list takes -p PID or one PATH, not both or more; see ctrace-bpf list --help\n" :
		      "ctrace-bpf: list what? give -p PID or a PATH; see ctrace-bpf list --help\n",
	      stderr);
	return 2;
}
