// SPDX-License-Identifier: MIT
/*
 * test_list - `ctrace-bpf list`: the probes of a file and of a running
 * process, cross-checked against `readelf -n` (addresses, semaphores,
 * argument specs) and against the file's bytes (the attach offset is the
 * 5-byte nop of a ctrace site); <sys/sdt.h> probes listed as plain USDT;
 * the line format (escaping); and each error: one line on stderr and a
 * non-zero exit.
 *
 * Needs cc and <sys/sdt.h> (systemtap-sdt-dev, scripts/install-deps test).
 * `list` needs no BPF: only the user checks need root (else skipped).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <setjmp.h>
#include <cmocka.h>
#include "ctrace_record.h"
#include "cli_check.h"
#include "readelf_notes.h"
#include "trace_run.h"

static char dir[64]; /* mkdtemp: the programs built here */
static struct trace_run r;
static struct tr_cmd c;

/* One plain <sys/sdt.h> probe, and one with a semaphore in another
 * translation unit (_SDT_HAS_SEMAPHORES applies to a whole one). */
static const char sdt_src[] =
	"#include <sys/sdt.h>\n"
	"void with_sem(int x);\n"
	"int main(int argc, char **argv)\n"
	"{\n"
	"	long a = argc;\n"
	"	DTRACE_PROBE2(myprov, two, a, argv);\n"
	"	with_sem(argc);\n"
	"	return 0;\n"
	"}\n";
static const char sdt_sem_src[] =
	"#define _SDT_HAS_SEMAPHORES 1\n"
	"#include <sys/sdt.h>\n"
	"__extension__ unsigned short myprov_withsem_semaphore\n"
	"	__attribute__((unused, section(\".probes\")));\n"
	"void with_sem(int x);\n"
	"void with_sem(int x) { DTRACE_PROBE1(myprov, withsem, x); }\n";

/*
 * A note made by hand, as a hostile file could: a colon in the provider, a
 * space, a newline, an escape sequence and a backslash in the name, a
 * newline in the args. None may split or forge a line.
 */
static const char evil_s[] =
	"\t.text\n"
	"\t.globl evil_site\n"
	"evil_site:\n"
	"\tnop\n"
	"\tret\n"
	"\t.pushsection .note.stapsdt,\"?\",\"note\"\n"
	"\t.balign 4\n"
	"\t.4byte 2f-1f, 4f-3f, 3\n"
	"1:\t.asciz \"stapsdt\"\n"
	"2:\t.balign 4\n"
	"3:\t.8byte evil_site\n"
	"\t.8byte 0\n"
	"\t.8byte 0\n"
	"\t.asciz \"evil:prov\"\n"
	"\t.asciz \"a b\\n\\033[31mx\\\\\"\n"
	"\t.asciz \"8@%rdi\\nforged line\"\n"
	"4:\t.balign 4\n"
	"\t.popsection\n"
	"\t.section .note.GNU-stack,\"\",@progbits\n";

/* A process with a <sys/sdt.h> probe of its own and the ctrace probes of a
 * shared library (tests/programs/probe_sites.c built as one). */
static const char proc_src[] =
	"#include <stdio.h>\n"
	"#include <unistd.h>\n"
	"#include <sys/sdt.h>\n"
	"int probe_sites_fire(int n);\n"
	"int main(int argc, char **argv)\n"
	"{\n"
	"	DTRACE_PROBE1(app, started, argc);\n"
	"	(void)argv;\n"
	"	printf(\"ready pid=%d\\n\", (int)getpid());\n"
	"	fflush(stdout);\n"
	"	sleep(30);\n"
	"	return probe_sites_fire(0);\n"
	"}\n";

static int write_file(const char *name, const char *text)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (!(f = fopen(path, "w")))
		return -1;
	fputs(text, f);
	return fclose(f);
}

static int setup(void **state)
{
	char repo[PATH_MAX];

	(void)state;
	if (!getcwd(repo, sizeof(repo))) /* the repository root: tests run there */
		return -1;
	snprintf(dir, sizeof(dir), "/tmp/ctrace-list-XXXXXX");
	if (!mkdtemp(dir) || chmod(dir, 0755)) /* 0755: the user test runs as nobody */
		return -1;
	if (write_file("sdt.c", sdt_src) || write_file("sdt_sem.c", sdt_sem_src) || write_file("proc.c", proc_src) ||
	    write_file("text.txt", "not an ELF file\n") ||
	    write_file("evil.s", evil_s) || write_file("main.c", "int main(void) { return 0; }\n"))
		return -1;
	return tr_shell("cd '%s' && cc -O2 sdt.c sdt_sem.c -o sdt && cc -O2 main.c evil.s -o evil && "
		   "cc -O2 -I'%s/include' -shared -fPIC '%s/tests/programs/probe_sites.c' -o 'lib probes.so' && "
		   "cp 'lib probes.so' libprobes.so && "
		   "cc -O2 proc.c -o proc -L. -lprobes -Wl,-rpath,'%s' && "
		   "cc -O2 -I'%s/include' '%s/tests/header/all_macros.c' -o all_macros",
		   dir, repo, repo, dir, repo, repo) ? -1 : 0;
}

static int teardown(void **state)
{
	(void)state;
	if (strncmp(dir, "/tmp/ctrace-list-", 17) == 0)
		tr_shell("rm -rf '%s'", dir);
	return 0;
}

static int free_all(void **state)
{
	(void)state;
	tr_free(&r);
	tr_cmd_free(&c);
	return 0;
}

/* ---- running list and reading its lines ---- */

struct listed {
	char path[PATH_MAX], provider[64], name[64], site[16], cat[64], args[256];
	unsigned long long addr, sema, attach; /* sema 0: "-" */
};

/* Parses one output line; false if it does not follow the format. */
static bool parse_line(const char *line, struct listed *l)
{
	const char *sp = strchr(line, ' '), *name, *prov;
	char sema[32];
	int n = 0;

	memset(l, 0, sizeof(*l));
	if (!sp || strncmp(line, "usdt:", 5))
		return false;
	/* usdt:PATH:PROVIDER:NAME - provider and name never hold ':' */
	for (name = sp; name > line && name[-1] != ':'; name--)
		;
	for (prov = name - 1; prov > line && prov[-1] != ':'; prov--)
		;
	if (prov <= line + 5)
		return false;
	snprintf(l->path, sizeof(l->path), "%.*s", (int)(prov - 1 - (line + 5)), line + 5);
	snprintf(l->provider, sizeof(l->provider), "%.*s", (int)(name - 1 - prov), prov);
	snprintf(l->name, sizeof(l->name), "%.*s", (int)(sp - name), name);
	if (sscanf(sp, " addr=0x%llx sema=%31s site=%15s attach=0x%llx cat=%63s args=%n",
		   &l->addr, sema, l->site, &l->attach, l->cat, &n) != 5 || !n)
		return false;
	snprintf(l->args, sizeof(l->args), "%s", sp + n);
	l->args[strcspn(l->args, "\n")] = '\0';
	if (!strcmp(sema, "-"))
		return true;
	return sscanf(sema, "0x%llx", &l->sema) == 1;
}

/* Runs `ctrace-bpf list ARGS...` to completion, as `user` if not NULL. */
static void run_list(const char *user, ...)
{
	const char *const setpriv[] = { "setpriv", user, "--regid=65534", "--clear-groups", NULL };
	const char *args[16];
	size_t n = 0;
	va_list ap;

	va_start(ap, user);
	while (n < 15 && (args[n] = va_arg(ap, const char *)))
		n++;
	va_end(ap);
	args[n] = NULL;
	cli_run_tracer(&c, user ? setpriv : NULL, "list", args, 20000);
}

/* Every stdout line parsed (at most max); fails on a malformed one. */
static size_t parse_output(const char *out, struct listed *v, size_t max)
{
	size_t n = 0;

	for (const char *p = out; *p; p = strchr(p, '\n') + 1) {
		if (!strchr(p, '\n'))
			fail_msg("unterminated last line: %s", p);
		if (n == max)
			fail_msg("more than %zu lines", max);
		if (!parse_line(p, &v[n]))
			fail_msg("line does not follow the format: %.*s",
				 (int)strcspn(p, "\n"), p);
		n++;
	}
	return n;
}

/* ---- what readelf says ---- */

static int read_byte(const char *path, unsigned long long off)
{
	unsigned char b;
	int fd = open(path, O_RDONLY);
	ssize_t n;

	assert_true(fd >= 0);
	n = pread(fd, &b, 1, (off_t)off);
	close(fd);
	return n == 1 ? b : -1;
}

/* True if the file has the 5-byte nop (0f 1f 44 00 00) at `off`. */
static bool nop5_at(const char *path, unsigned long long off)
{
	static const unsigned char nop5[] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };

	for (size_t i = 0; i < sizeof(nop5); i++)
		if (read_byte(path, off + i) != nop5[i])
			return false;
	return true;
}

/*
 * The listed probes of `file` (lines whose path is `shown`) are exactly its
 * notes: same provider, name, address, semaphore, args, in the same order.
 * ctrace ones are site=ctrace with the attach offset on their nop5 (and the
 * note's nop 6 bytes before); others site=usdt, attach at the note's nop.
 */
static size_t check_against_readelf(const struct listed *v, size_t n,
				    const char *file, const char *shown)
{
	struct readelf_note re[64];
	size_t nre = readelf_notes(file, re, 64), k = 0;

	for (size_t i = 0; i < n; i++) {
		const struct listed *l = &v[i];

		if (strcmp(l->path, shown))
			continue;
		assert_true(k < nre);
		assert_string_equal(l->provider, re[k].provider);
		assert_string_equal(l->name, re[k].name);
		assert_int_equal(l->addr, re[k].loc);
		assert_int_equal(l->sema, re[k].sema);
		assert_string_equal(l->args, re[k].args);
		if (!strcmp(l->provider, "ctrace")) {
			assert_string_equal(l->site, "ctrace");
			/* Programs without CTRACE_CATEGORY: every site of the default; the batch probe is none's. */
			assert_string_equal(l->cat, strcmp(l->name, "batch") ? "ctrace" : "-");
			assert_true(nop5_at(file, l->attach));
			assert_int_equal(read_byte(file, l->attach - 6), 0x90);
		} else {
			assert_string_equal(l->site, "usdt");
			assert_string_equal(l->cat, "-");
			assert_int_equal(read_byte(file, l->attach), 0x90);
		}
		k++;
	}
	assert_int_equal(k, nre);
	return k;
}

/* The 7 macros' probes, and the batch probe their batched path fires (header 0.3). */
static const char *const ctrace_names[] = {
	"span_begin", "span_end", "instant", "counter_set",
	"counter_add", "new_pid", "discard", "batch",
};

/* Each of the 8 ctrace probe names is listed (for `shown`) exactly `times`. */
static void check_all_names(const struct listed *v, size_t n, const char *shown,
			    size_t times)
{
	for (size_t j = 0; j < 8; j++) {
		size_t seen = 0;

		for (size_t i = 0; i < n; i++)
			seen += !strcmp(v[i].path, shown) &&
				!strcmp(v[i].provider, "ctrace") &&
				!strcmp(v[i].name, ctrace_names[j]);
		if (seen != times)
			fail_msg("ctrace:%s listed %zu times for %s, not %zu",
				 ctrace_names[j], seen, shown, times);
	}
}

/* ---- the tests ---- */

/* probe_sites has one site of each macro. */
static void test_file_ctrace(void **state)
{
	static struct listed v[64];
	char path[PATH_MAX];
	size_t n;

	(void)state;
	tr_program_path("probe_sites", path, sizeof(path));
	run_list(NULL, path, NULL);
	assert_int_equal(c.exit, 0);
	assert_string_equal(c.err, "");
	n = parse_output(c.out, v, 64);
	assert_int_equal(n, 8);
	check_all_names(v, n, path, 1);
	assert_int_equal(check_against_readelf(v, n, path, path), 8);
}

/* every_macro has many sites of each: all listed, all ctrace. */
static void test_file_every_macro(void **state)
{
	static struct listed v[256];
	char path[PATH_MAX];
	size_t n;

	(void)state;
	tr_program_path("every_macro", path, sizeof(path));
	run_list(NULL, path, NULL);
	assert_int_equal(c.exit, 0);
	n = parse_output(c.out, v, 256);
	assert_true(n >= 7);
	check_against_readelf(v, n, path, path);
}

/*
 * CTRACE_SCOPE sites are ctrace sites like the others: every probe kind the
 * tracer attaches to is listed site=ctrace, with the attach offset on its
 * nop5 (check_against_readelf), and scope is among them.
 */
/* CTRACE_SCOPE sites are ctrace sites: today's (scope_tsc) and the 0.1 header's (scope). */
static void test_file_scope(void **state)
{
	static const struct { const char *program, *probe; } forms[] = {
		{ "scopes", "scope_tsc" }, { "old_scope", "scope" },
	};
	static struct listed v[64];
	char path[PATH_MAX];

	(void)state;
	for (size_t f = 0; f < sizeof(forms) / sizeof(forms[0]); f++) {
		size_t n, scopes = 0;

		tr_program_path(forms[f].program, path, sizeof(path));
		run_list(NULL, path, NULL);
		assert_int_equal(c.exit, 0);
		n = parse_output(c.out, v, 64);
		check_against_readelf(v, n, path, path);
		for (size_t i = 0; i < n; i++)
			scopes += !strcmp(v[i].provider, "ctrace") && !strcmp(v[i].name, forms[f].probe);
		if (scopes == 0)
			fail_msg("no ctrace:%s site listed in %s", forms[f].probe, forms[f].program);
	}
}

/*
 * Every kind the tracer attaches (the kinds table, bpf/ctrace_record.h) is
 * listed: a program using every macro of today's header (tests/header/
 * all_macros.c) and one with the 0.1 header's CTRACE_SCOPE (old_scope)
 * between them have a site of each, every one of their ctrace notes is
 * site=ctrace (none unknown), and no kind of the table is missing.
 */
static void test_every_kind_listed(void **state)
{
	static const char *const kinds[] = {
#define KIND_PROBE(kind, num, probe, ...) #probe,
		CTRACE_PROBE_KINDS(KIND_PROBE)
#undef KIND_PROBE
	};
	enum { N_KINDS = sizeof(kinds) / sizeof(kinds[0]) };
	static struct listed v[64];
	size_t seen[N_KINDS] = { 0 };
	char path[PATH_MAX];

	(void)state;
	for (int prog = 0; prog < 2; prog++) {
		size_t n;

		if (prog == 0)
			snprintf(path, sizeof(path), "%s/all_macros", dir);
		else
			tr_program_path("old_scope", path, sizeof(path));
		run_list(NULL, path, NULL);
		assert_int_equal(c.exit, 0);
		n = parse_output(c.out, v, 64);
		for (size_t i = 0; i < n; i++) {
			if (strcmp(v[i].provider, "ctrace"))
				continue;
			if (strcmp(v[i].site, "ctrace"))
				fail_msg("%s: ctrace:%s listed site=%s, not site=ctrace", path, v[i].name, v[i].site);
			for (size_t k = 0; k < N_KINDS; k++)
				seen[k] += !strcmp(v[i].name, kinds[k]);
		}
		check_against_readelf(v, n, path, path);
	}
	for (size_t k = 0; k < N_KINDS; k++)
		if (!seen[k])
			fail_msg("no ctrace:%s site listed: the kinds table has a kind that no macro makes", kinds[k]);
}

/* <sys/sdt.h> probes: site=usdt, with and without a semaphore. */
static void test_file_sdt(void **state)
{
	static struct listed v[16];
	char path[PATH_MAX];
	size_t n;

	(void)state;
	snprintf(path, sizeof(path), "%s/sdt", dir);
	run_list(NULL, path, NULL);
	assert_int_equal(c.exit, 0);
	n = parse_output(c.out, v, 16);
	assert_int_equal(n, 2);
	assert_int_equal(check_against_readelf(v, n, path, path), 2);
	for (size_t i = 0; i < n; i++) {
		assert_string_equal(v[i].provider, "myprov");
		assert_string_equal(v[i].site, "usdt");
		if (!strcmp(v[i].name, "withsem"))
			assert_int_not_equal(v[i].sema, 0);
	}
}

/* A space in the path is written \x20: one field, one line per probe. */
static void test_path_escaped(void **state)
{
	char path[PATH_MAX], shown[PATH_MAX];

	(void)state;
	snprintf(path, sizeof(path), "%s/lib probes.so", dir);
	snprintf(shown, sizeof(shown), "usdt:%s/lib\\x20probes.so:ctrace:", dir);
	run_list(NULL, path, NULL);
	assert_int_equal(c.exit, 0);
	assert_non_null(strstr(c.out, shown));
	assert_null(strstr(c.out, "lib probes"));
}

/* What a hostile note holds is escaped: still one well-formed line. */
static void test_hostile_note(void **state)
{
	static struct listed v[4];
	char path[PATH_MAX];

	(void)state;
	snprintf(path, sizeof(path), "%s/evil", dir);
	run_list(NULL, path, NULL);
	assert_int_equal(c.exit, 0);
	assert_int_equal(parse_output(c.out, v, 4), 1);
	assert_string_equal(v[0].path, path);
	assert_string_equal(v[0].provider, "evil\\x3aprov");
	assert_string_equal(v[0].name, "a\\x20b\\x0a\\x1b[31mx\\x5c");
	assert_string_equal(v[0].args, "8@%rdi\\x0aforged line");
	assert_string_equal(v[0].site, "usdt");
	assert_int_equal(v[0].sema, 0);
	assert_int_equal(read_byte(path, v[0].attach), 0x90);
}

/* A running process: its executable's sdt probe and its library's ctrace
 * probes, each under the path the process sees. */
static void test_process(void **state)
{
	static struct listed v[64];
	char prog[PATH_MAX], lib[PATH_MAX], pid[24];
	size_t n;

	(void)state;
	snprintf(prog, sizeof(prog), "%s/proc", dir);
	snprintf(lib, sizeof(lib), "%s/libprobes.so", dir);
	if (tr_init(&r) < 0 || tr_start_program(&r, prog, NULL) < 0 ||
	    tr_wait_line(&r, "ready", 10000) < 0)
		fail_msg("%s", r.error);
	snprintf(pid, sizeof(pid), "%ld", r.pid);
	run_list(NULL, "-p", pid, NULL);
	assert_int_equal(c.exit, 0);
	n = parse_output(c.out, v, 64);
	assert_int_equal(n, 9);
	assert_int_equal(check_against_readelf(v, n, prog, prog), 1);
	assert_int_equal(check_against_readelf(v, n, lib, lib), 8);
	check_all_names(v, n, lib, 1);
	assert_non_null(strstr(c.out, ":app:started "));
}

/* ticker: the test program a tracer attaches to, listed by pid. */
static void test_process_ticker(void **state)
{
	static struct listed v[64];
	const char *const args[] = { "20", NULL };
	char pid[24], exe[PATH_MAX];
	size_t n;

	(void)state;
	if (tr_init(&r) < 0 || tr_start_program(&r, "ticker", args) < 0 ||
	    tr_wait_line(&r, "ready", 10000) < 0)
		fail_msg("%s", r.error);
	snprintf(pid, sizeof(pid), "%ld", r.pid);
	assert_non_null(realpath(r.program, exe));
	run_list(NULL, "-p", pid, NULL);
	assert_int_equal(c.exit, 0);
	n = parse_output(c.out, v, 64);
	assert_true(n >= 2);
	check_against_readelf(v, n, exe, exe);
}

/* list -p needs the process's user, not root; another user is refused. */
static void test_process_users(void **state)
{
	const char *const ticker_args[] = { "20", NULL };
	char pid[24];

	(void)state;
	if (geteuid() != 0) {
		print_message("SKIP: changing users needs root\n");
		skip();
	}
	/* root's process, listed by nobody: refused, in one line */
	if (tr_init(&r) < 0 || tr_start_program(&r, "ticker", ticker_args) < 0 ||
	    tr_wait_line(&r, "ready", 10000) < 0)
		fail_msg("%s", r.error);
	snprintf(pid, sizeof(pid), "%ld", r.pid);
	run_list("--reuid=65534", "-p", pid, NULL);
	assert_int_equal(c.exit, 1);
	cli_assert_one_line(c.err, "Permission denied");
	tr_free(&r);

	/* nobody's process, listed by nobody */
	{
		char ticker[PATH_MAX];
		const char *const argv[] = { "setpriv", "--reuid=65534", "--regid=65534",
					     "--clear-groups", ticker, "20", NULL };

		if (tr_init(&r) < 0)
			fail_msg("%s", r.error);
		tr_program_abspath("ticker", ticker, sizeof(ticker));
		if (tr_spawn(&r.prog, r.dir, "program", argv) < 0 ||
		    tr_wait_line(&r, "ready", 10000) < 0)
			fail_msg("%s", r.error);
		snprintf(pid, sizeof(pid), "%ld", r.pid);
		run_list("--reuid=65534", "-p", pid, NULL);
		if (c.exit != 0)
			fail_msg("list -p as the process's user: exit %d: %s", c.exit, c.err);
		assert_non_null(strstr(c.out, ":ctrace:instant "));
	}
}

static void test_no_such_file(void **state)
{
	char path[PATH_MAX];

	(void)state;
	snprintf(path, sizeof(path), "%s/nothing-here", dir);
	run_list(NULL, path, NULL);
	assert_int_equal(c.exit, 1);
	assert_string_equal(c.out, "");
	cli_assert_one_line(c.err, "no such file");
	assert_non_null(strstr(c.err, path));
}

static void test_not_elf(void **state)
{
	char path[PATH_MAX];

	(void)state;
	snprintf(path, sizeof(path), "%s/text.txt", dir);
	run_list(NULL, path, NULL);
	assert_int_equal(c.exit, 1);
	cli_assert_one_line(c.err, "not an ELF file");
	run_list(NULL, dir, NULL);
	assert_int_equal(c.exit, 1);
	cli_assert_one_line(c.err, "is a directory");
}

/* An ELF file without probes: exit 1, and it says so. */
static void test_no_probes(void **state)
{
	char path[PATH_MAX];

	(void)state;
	assert_int_equal(tr_shell("cp /bin/true '%s/true'", dir), 0);
	snprintf(path, sizeof(path), "%s/true", dir);
	run_list(NULL, path, NULL);
	assert_int_equal(c.exit, 1);
	assert_string_equal(c.out, "");
	cli_assert_one_line(c.err, "no USDT probes in ");
	assert_non_null(strstr(c.err, path));
}

/* A process without probes: exit 1; the message names where it looked. */
static void test_process_no_probes(void **state)
{
	const char *const args[] = { "30", NULL };
	char pid[24], link[64], exe[PATH_MAX];
	ssize_t len = 0;

	(void)state;
	if (tr_init(&r) < 0 || tr_start_program(&r, "/bin/sleep", args) < 0)
		fail_msg("%s", r.error);
	snprintf(link, sizeof(link), "/proc/%d/exe", (int)r.prog.pid);
	for (int i = 0; i < 2000; i++) { /* until the exec */
		len = readlink(link, exe, sizeof(exe) - 1);
		exe[len > 0 ? len : 0] = '\0';
		if (strstr(exe, "sleep"))
			break;
		usleep(1000);
	}
	snprintf(pid, sizeof(pid), "%d", (int)r.prog.pid);
	run_list(NULL, "-p", pid, NULL);
	assert_int_equal(c.exit, 1);
	cli_assert_one_line(c.err, "no USDT probes in process ");
	assert_non_null(strstr(c.err, exe));
}

static void test_process_gone(void **state)
{
	const char *const args[] = { "0", NULL };
	char pid[24];

	(void)state;
	snprintf(pid, sizeof(pid), "%d", cli_free_pid());
	run_list(NULL, "-p", pid, NULL);
	assert_int_equal(c.exit, 1);
	cli_assert_one_line(c.err, "no process with pid");

	/* exited, not yet reaped (a zombie): nothing mapped any more */
	if (tr_init(&r) < 0 || tr_start_program(&r, "/bin/sleep", args) < 0)
		fail_msg("%s", r.error);
	for (int i = 0; i < 5000; i++) {
		char fname[64], st[512] = "";
		FILE *f;

		snprintf(fname, sizeof(fname), "/proc/%d/stat", (int)r.prog.pid);
		if ((f = fopen(fname, "r"))) {
			if (!fgets(st, sizeof(st), f))
				st[0] = '\0';
			fclose(f);
		}
		if (strstr(st, ") Z "))
			break;
		usleep(1000);
	}
	snprintf(pid, sizeof(pid), "%d", (int)r.prog.pid);
	run_list(NULL, "-p", pid, NULL);
	assert_int_equal(c.exit, 1);
	cli_assert_one_line(c.err, "has exited");
}

static void test_usage(void **state)
{
	(void)state;
	run_list(NULL, NULL);
	assert_int_equal(c.exit, 2);
	cli_assert_one_line(c.err, "list");
	run_list(NULL, "-p", "1", "/bin/true", NULL);
	assert_int_equal(c.exit, 2);
	cli_assert_one_line(c.err, "not both");
	run_list(NULL, "-p", "12x", NULL);
	assert_int_equal(c.exit, 2);
	cli_assert_one_line(c.err, "12x");
	run_list(NULL, "--help", NULL);
	assert_int_equal(c.exit, 0);
	assert_non_null(strstr(c.out, "usdt:PATH:PROVIDER:NAME addr="));
	assert_non_null(strstr(c.out, "site"));
	assert_non_null(strstr(c.out, "Examples"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_file_ctrace, free_all),
		cmocka_unit_test_teardown(test_file_every_macro, free_all),
		cmocka_unit_test_teardown(test_file_scope, free_all),
		cmocka_unit_test_teardown(test_every_kind_listed, free_all),
		cmocka_unit_test_teardown(test_file_sdt, free_all),
		cmocka_unit_test_teardown(test_path_escaped, free_all),
		cmocka_unit_test_teardown(test_hostile_note, free_all),
		cmocka_unit_test_teardown(test_process, free_all),
		cmocka_unit_test_teardown(test_process_ticker, free_all),
		cmocka_unit_test_teardown(test_process_users, free_all),
		cmocka_unit_test_teardown(test_no_such_file, free_all),
		cmocka_unit_test_teardown(test_not_elf, free_all),
		cmocka_unit_test_teardown(test_no_probes, free_all),
		cmocka_unit_test_teardown(test_process_no_probes, free_all),
		cmocka_unit_test_teardown(test_process_gone, free_all),
		cmocka_unit_test_teardown(test_usage, free_all),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
