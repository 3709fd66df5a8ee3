// SPDX-License-Identifier: MIT
/*
 * test_docs - the documentation agrees with the code, and installs:
 *   - every option each command accepts (the getopt string and the long
 *     options of its source file) is described by its --help and by the
 *     man page, and they describe no option the command does not accept;
 *   - `make install DESTDIR=... PREFIX=/usr` installs the tracer, the
 *     header, both man pages (which groff renders without a warning) and
 *     ctrace.pc, with which `pkg-config --cflags ctrace` builds a program
 *     whose probes `ctrace-bpf list` finds.
 * No BPF: these run without root.
 */
#include <ctype.h>
#include <libgen.h>
#include <regex.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <setjmp.h>
#include <cmocka.h>
#include "cli_check.h"
#include "trace_run.h"

static struct tr_cmd c;
static struct trace_run r;

static int free_all(void **state)
{
	(void)state;
	tr_cmd_free(&c);
	tr_free(&r);
	return 0;
}

/* A set of option names ("-p", "--pid"), and which short one each long one goes with. */
#define MAX_OPTS 64
struct opts {
	char name[MAX_OPTS][40];
	char pair[MAX_OPTS]; /* a long option's short letter, 0: none */
	size_t n;
};

static void add(struct opts *o, const char *name, char pair)
{
	for (size_t i = 0; i < o->n; i++)
		if (!strcmp(o->name[i], name))
			return;
	assert_true(o->n < MAX_OPTS && strlen(name) < sizeof(o->name[0]));
	strcpy(o->name[o->n], name);
	o->pair[o->n++] = pair;
}

static bool has(const struct opts *o, const char *name)
{
	for (size_t i = 0; i < o->n; i++)
		if (!strcmp(o->name[i], name))
			return true;
	return false;
}

/* What the code accepts: getopt_long's string and the longopts table of a source file. */
static struct opts code_options(const char *source)
{
	struct opts o = { 0 };
	char *text = tr_read_file(source, NULL), *p, *q;
	regex_t re;
	regmatch_t m[4];

	if (!text)
		fail_msg("cannot read %s (the tests run from the repository's root)", source);
	p = strstr(text, "getopt_long(argc, argv, \"");
	assert_non_null(p);
	p += strlen("getopt_long(argc, argv, \"");
	for (q = p; *q != '"'; q++) {
		char s[3] = { '-', *q, 0 };

		if (isalpha((unsigned char)*q))
			add(&o, s, 0);
	}
	/* { "name", no_argument, NULL, 'x' } */
	assert_int_equal(regcomp(&re, "\\{ \"([a-z][a-z-]*)\", [a-z_]+, NULL, '(.)' \\}", REG_EXTENDED), 0);
	for (p = strstr(text, "longopts[] = {"); p && !regexec(&re, p, 3, m, 0); p += m[0].rm_eo) {
		char name[40];
		char letter = p[m[2].rm_so];

		snprintf(name, sizeof(name), "--%.*s", (int)(m[1].rm_eo - m[1].rm_so), p + m[1].rm_so);
		add(&o, name, 0);
		/* Paired with a short option when its letter is in the getopt string. */
		o.pair[o.n - 1] = has(&o, (char[]){ '-', letter, 0 }) ? letter : 0;
	}
	regfree(&re);
	free(text);
	assert_true(o.n > 0);
	return o;
}

/*
 * The options a tag names ("-b, --buffer-size SIZE", "--stacks[=DEPTH]"):
 * its words that begin with '-' and a letter, up to '[', '=' or ','.
 * A short and a long option in one tag must be paired in the code too.
 */
static void tag_options(struct opts *o, const char *tag, const struct opts *code, const char *where)
{
	char shortopt = 0;

	for (const char *p = tag; *p; p++) {
		char name[40];
		size_t n = 0;

		if (*p != '-' || (p > tag && !isspace((unsigned char)p[-1]) && p[-1] != '"' && p[-1] != '(') ||
		    !(isalpha((unsigned char)p[1]) || (p[1] == '-' && isalpha((unsigned char)p[2]))))
			continue;
		while (p[n] && (isalnum((unsigned char)p[n]) || p[n] == '-') && n < sizeof(name) - 1)
			n++;
		memcpy(name, p, n);
		name[n] = 0;
		add(o, name, 0);
		if (name[1] != '-') {
			shortopt = name[1];
		} else if (shortopt) {
			for (size_t i = 0; i < code->n; i++)
				if (!strcmp(code->name[i], name) && code->pair[i] != shortopt)
					fail_msg("%s pairs -%c with %s; the code does not", where, shortopt, name);
		}
		p += n - 1;
	}
}

/* The option lines of a --help text: lines "  -x, --name ARG  what it does". */
static struct opts help_options(const char *command, const struct opts *code)
{
	struct opts o = { 0 };
	const char *const args[] = { "--help", NULL };
	char *text, *line, *save = NULL;

	cli_run_tracer(&c, NULL, command, args, 20000);
	assert_int_equal(c.exit, 0);
	text = strdup(c.out);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *gap;

		if (strncmp(line, "  -", 3))
			continue;
		/* The tag ends where two spaces begin the description. */
		if ((gap = strstr(line + 2, "  ")))
			*gap = 0;
		tag_options(&o, line + 2, code, "--help");
	}
	free(text);
	return o;
}

/* The man page as text: roff's "\-" a '-', its font escapes gone. */
static char *man_text(void)
{
	char *text = tr_read_file("man/ctrace-bpf.8", NULL), *o = text;

	assert_non_null(text);
	for (const char *p = text; *p;) {
		if (p[0] == '\\' && p[1] == '-') {
			*o++ = '-';
			p += 2;
		} else if (p[0] == '\\' && p[1] == 'f' && p[2]) {
			p += 3;
		} else {
			*o++ = *p++;
		}
	}
	*o = 0;
	return text;
}

/* The tags (the line after each ".TP") of the man page's OPTIONS section. */
static struct opts man_trace_options(const struct opts *code)
{
	struct opts o = { 0 };
	char *text = man_text(), *p = strstr(text, "\n.SH OPTIONS\n"), *end;

	assert_non_null(p);
	end = strstr(p + 1, "\n.SH ");
	*end = 0;
	while ((p = strstr(p, "\n.TP\n"))) {
		char *tag = p + 5, *nl = strchr(tag, '\n');

		*nl = 0;
		tag_options(&o, tag, code, "man ctrace-bpf, OPTIONS");
		p = nl + 1;
	}
	free(text);
	return o;
}

/* Every option named in the man page's paragraph on `command` (COMMANDS: from its ".TP" to the next). */
static struct opts man_command_options(const char *command, const struct opts *code)
{
	struct opts o = { 0 };
	char *text = man_text(), *sec = strstr(text, "\n.SH COMMANDS\n"), *p, *end;
	char head[40];

	assert_non_null(sec);
	snprintf(head, sizeof(head), "\n.TP\n.BR \"%s", command);
	p = strstr(sec, head);
	if (!p)
		fail_msg("no paragraph on %s in man ctrace-bpf's COMMANDS", command);
	end = strstr(p + 1, "\n.TP\n");
	if (!end || end > strstr(p + 1, "\n.SH "))
		end = strstr(p + 1, "\n.SH ");
	*end = 0;
	for (char *line = p + 1; *line; line += strcspn(line, "\n") + (line[strcspn(line, "\n")] != 0)) {
		char buf[512];

		snprintf(buf, sizeof(buf), "%.*s", (int)strcspn(line, "\n"), line);
		/* A request's quotes stand between words: "-o ", " OUT" */
		for (char *q = buf; *q; q++)
			if (*q == '"' || *q == ',')
				*q = ' ';
		tag_options(&o, buf, code, "man ctrace-bpf, COMMANDS");
	}
	free(text);
	return o;
}

/* a and b name the same options; else which are missing where. */
static void assert_same(const struct opts *code, const struct opts *doc, const char *what, const char *doc_name)
{
	for (size_t i = 0; i < code->n; i++)
		if (!has(doc, code->name[i]))
			fail_msg("%s accepts %s, which %s does not describe", what, code->name[i], doc_name);
	for (size_t i = 0; i < doc->n; i++)
		if (!has(code, doc->name[i]))
			fail_msg("%s describes %s, which %s does not accept", doc_name, doc->name[i], what);
}

static void test_trace_options_in_help_and_man(void **state)
{
	struct opts code = code_options("userspace/cli/trace_options.c"), help, man;

	(void)state;
	assert_true(has(&code, "--quiet") && has(&code, "-q") && has(&code, "--max-memory"));
	help = help_options(NULL, &code);
	assert_same(&code, &help, "ctrace-bpf", "ctrace-bpf --help");
	man = man_trace_options(&code);
	assert_same(&code, &man, "ctrace-bpf", "man ctrace-bpf (OPTIONS)");
}

static void test_command_options_in_help_and_man(void **state)
{
	static const struct {
		const char *command, *source;
	} commands[] = {
		{ "list", "userspace/cli/cmd_list.c" },
		{ "fix", "userspace/cli/cmd_fix.c" },
		{ "report", "userspace/cli/cmd_report.c" },
		{ "convert", "userspace/cli/cmd_convert.c" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		struct opts code = code_options(commands[i].source);
		struct opts help = help_options(commands[i].command, &code);
		struct opts man = man_command_options(commands[i].command, &code);
		char what[64], help_name[64], man_name[64];

		snprintf(what, sizeof(what), "ctrace-bpf %s", commands[i].command);
		snprintf(help_name, sizeof(help_name), "ctrace-bpf %s --help", commands[i].command);
		snprintf(man_name, sizeof(man_name), "man ctrace-bpf (COMMANDS: %s)", commands[i].command);
		assert_same(&code, &help, what, help_name);
		assert_same(&code, &man, what, man_name);
	}
}

/* The checker itself: an option left out of a --help is found. */
static void test_a_missing_option_is_found(void **state)
{
	struct opts code = code_options("userspace/cli/trace_options.c"), doc = { 0 };

	(void)state;
	tag_options(&doc, "-p, --pid PID  and nothing else", &code, "a test");
	assert_true(has(&doc, "-p") && has(&doc, "--pid") && !has(&doc, "--quiet"));
	assert_false(has(&doc, "PID"));
	tag_options(&doc, "--stacks[=DEPTH|fp]", &code, "a test");
	assert_true(has(&doc, "--stacks"));
}

/* make install into a temporary root; the man pages, ctrace.pc, a program built with pkg-config. */
static void test_install_man_and_pkg_config(void **state)
{
	char build[300], root[300], prog[320], man[320];
	const char *tracer = tr_tracer();
	char *tracer_copy = strdup(tracer);

	(void)state;
	if (tr_init(&r) < 0)
		fail_msg("%s", r.error);
	snprintf(build, sizeof(build), "%s", dirname(tracer_copy));
	free(tracer_copy);
	snprintf(root, sizeof(root), "%s/root", r.dir);
	/* BUILD: the tracer under test's directory (build-asan too); installed as it is. */
	if (tr_shell("make -s install -o '%s/ctrace-bpf' BUILD='%s' DESTDIR='%s' PREFIX=/usr > '%s/install.log' 2>&1", build, build, root, r.dir))
		fail_msg("make install failed: %s", tr_read_file((snprintf(man, sizeof(man), "%s/install.log", r.dir), man), NULL));
	static const char *const files[] = {
		"usr/bin/ctrace-bpf", "usr/include/ctrace.h", "usr/share/man/man8/ctrace-bpf.8",
		"usr/share/man/man3/ctrace.h.3", "usr/share/pkgconfig/ctrace.pc",
	};
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(man, sizeof(man), "%s/%s", root, files[i]);
		if (access(man, R_OK))
			fail_msg("make install did not install %s", files[i]);
	}
	/* Both pages render, and groff has nothing to warn of (-ww: all warnings). */
	for (int i = 0; i < 2; i++) {
		if (tr_shell("groff -man -Tutf8 -ww -z '%s/usr/share/man/%s' 2> '%s/groff.err' && test ! -s '%s/groff.err'",
			     root, i ? "man3/ctrace.h.3" : "man8/ctrace-bpf.8", r.dir, r.dir))
			fail_msg("groff warns of %s: %s", i ? "ctrace.h.3" : "ctrace-bpf.8",
				 tr_read_file((snprintf(man, sizeof(man), "%s/groff.err", r.dir), man), NULL));
	}
	if (tr_shell("man --manpath='%s/usr/share/man' -w 3 ctrace.h > /dev/null && man --manpath='%s/usr/share/man' -w 8 ctrace-bpf > /dev/null",
		     root, root))
		fail_msg("man -w does not find ctrace.h(3) and ctrace-bpf(8) under %s/usr/share/man", root);
	/* pkg-config, as for a sysroot: the flags point into it. */
	if (tr_shell("cd '%s' && PKG_CONFIG_PATH= PKG_CONFIG_LIBDIR='%s/usr/share/pkgconfig' PKG_CONFIG_SYSROOT_DIR='%s' pkg-config --cflags ctrace > cflags && grep -q -- '-I%s/usr/include' cflags",
		     r.dir, root, root, root))
		fail_msg("pkg-config --cflags ctrace does not point into %s/usr/include", root);
	/* A program that includes <ctrace.h> with those flags alone, away from the repository. */
	snprintf(prog, sizeof(prog), "%s/prog", r.dir);
	if (tr_shell("cd '%s' && printf '%%s\\n' '#include <ctrace.h>' 'int main(void) {' "
		     "'struct ctrace_span s; CTRACE_SPAN_BEGIN(NULL, &s, \"a\", NULL); CTRACE_SPAN_END(&s, NULL);' "
		     "'CTRACE_COUNTER_SET(NULL, \"n\", 1); return 0; }' > prog.c && "
		     "cc -Wall -Wextra -Werror $(cat cflags) prog.c -o prog 2> cc.err", r.dir))
		fail_msg("a program built with pkg-config --cflags ctrace does not compile: %s",
			 tr_read_file((snprintf(man, sizeof(man), "%s/cc.err", r.dir), man), NULL));
	const char *const args[] = { prog, NULL };

	cli_run_tracer(&c, NULL, "list", args, 20000);
	assert_int_equal(c.exit, 0);
	assert_non_null(strstr(c.out, ":ctrace:span_begin "));
	assert_non_null(strstr(c.out, ":ctrace:counter_set ") ? "" : strstr(c.out, ":ctrace:counter"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_trace_options_in_help_and_man, free_all),
		cmocka_unit_test_teardown(test_command_options_in_help_and_man, free_all),
		cmocka_unit_test_teardown(test_a_missing_option_is_found, free_all),
		cmocka_unit_test_teardown(test_install_man_and_pkg_config, free_all),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
