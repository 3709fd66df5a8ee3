// SPDX-License-Identifier: MIT
/*
 * test_rewritten_library - a traced process dlopen()s a probed library,
 * dlclose()s it, the library is rewritten in place (same inode, as `cp`
 * over it does) with another build whose code is laid out differently, and
 * dlopen()ed again (tests/programs/lib_rewrite). The tracer must not leave
 * the old build's uprobes on the inode (the kernel would put them at the old
 * offsets into the new code: the target died of SIGSEGV), and must attach
 * the new build's sites: the process exits 0 and the trace holds both
 * builds' events.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <setjmp.h>
#include <cmocka.h>
#include "probelib_build.h"
#include "trace_run.h"


static char libdir[64];

/* probelib.c as DIR/lib{name}.so, built with OPT. */
static void build_lib(const char *name, const char *opt, char *path, size_t len)
{
	char why[4096];

	if (probelib_build(libdir, name, opt, path, len, why, sizeof(why)) < 0)
		fail_msg("%s", why);
}

/* The instant "lib-hit" with args {"lib":LIB,"n":N}. */
static bool has_hit(const struct trace_run *r, const char *lib, int n)
{
	cJSON *hits[16];
	size_t k = tr_find_all(r, "I", "lib-hit", hits, 16);

	for (size_t i = 0; i < k; i++) {
		const cJSON *l = tr_arg(hits[i], "lib");

		if (cJSON_IsString(l) && !strcmp(l->valuestring, lib) &&
		    tr_num(cJSON_GetObjectItem(hits[i], "args"), "n") == n)
			return true;
	}
	return false;
}

/* What the trace holds, for a failure's message: each event's ph, name and args, and how strings were read. */
static void describe(const struct trace_run *r, char *out, size_t len)
{
	const cJSON *ev;
	size_t at = 0;

	out[0] = 0;
	cJSON_ArrayForEach(ev, r->events) {
		char *args = cJSON_PrintUnformatted(cJSON_GetObjectItem(ev, "args"));
		const cJSON *ph = cJSON_GetObjectItem(ev, "ph"), *name = cJSON_GetObjectItem(ev, "name");

		if (at < len)
			at += (size_t)snprintf(out + at, len - at, "  %s %s %s\n",
					       cJSON_IsString(ph) ? ph->valuestring : "?",
					       cJSON_IsString(name) ? name->valuestring : "?", args ? args : "");
		free(args);
	}
	if (at < len)
		snprintf(out + at, len - at, "  strings: %g late, %g from files, %g unreadable, %g by reference",
			 tr_meta_num(r, "late_string_reads"), tr_meta_num(r, "file_string_reads"),
			 tr_meta_num(r, "unreadable_strings"), tr_meta_num(r, "literals_by_reference"));
}

static void test_rewritten_in_place(void **state)
{
	char a_so[128], b_so[128], lib[128];
	struct trace_run run;

	(void)state;
	tr_require_root();
	snprintf(libdir, sizeof(libdir), "/tmp/ctrace-rewrite-XXXXXX");
	if (!mkdtemp(libdir))
		fail_msg("mkdtemp: %s", strerror(errno));
	/* -O2 and -O1: the same functions, the sites at other offsets. */
	build_lib("a", "-O2", a_so, sizeof(a_so));
	build_lib("b", "-O1", b_so, sizeof(b_so));
	snprintf(lib, sizeof(lib), "%s/libprobe.so", libdir);
	{
		/*
		 * The rewrite 1 s after the dlclose(): the old uprobes go as the
		 * dynamic linker's hook reports it, but the kernel takes a grace
		 * period to drop each (tens of ms with uprobe_multi links, up to
		 * 0.4 s with perf uprobes under load); a rewrite and a dlopen()
		 * within that window are not covered.
		 */
		const char *const args[] = { lib, a_so, b_so, "1000", NULL };

		if (tr_run(&run, "lib_rewrite", args, NULL) < 0)
			fail_msg("%s", run.error);
	}
	print_message("      %s", run.prog_stdout);
	if (run.prog_exit != 0)
		fail_msg("lib_rewrite exited %d (139: SIGSEGV) under the tracer; stderr: %s", run.prog_exit,
			 run.tracer_stderr);
	assert_non_null(strstr(run.prog_stdout, "same_inode=1"));
	assert_int_equal(run.tracer_exit, 0);
	if (!has_hit(&run, "a", 1))
		fail_msg("the first build's lib-hit {\"lib\":\"a\",\"n\":1} is not in the trace");
	if (!has_hit(&run, "b", 2) || !tr_find(&run, "I", "hello from b")) {
		char what[4096];

		describe(&run, what, sizeof(what));
		fail_msg("the rewritten library's events (lib-hit b 2, \"hello from b\") are not in the trace:\n%s\nstderr: %s",
			 what, run.tracer_stderr);
	}
	tr_free(&run);
	unlink(a_so);
	unlink(b_so);
	unlink(lib);
	rmdir(libdir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rewritten_in_place),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
