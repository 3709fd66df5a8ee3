/* SPDX-License-Identifier: MIT */
/*
 * test_exec_image.c - exec_image_ranges() on real processes: where it says
 * the kernel mapped a program's read-only segments, from the file and the
 * process's start_code (/proc/PID/stat, as the EXEC record has it), is
 * where /proc/PID/maps shows them, and a string literal of the program
 * read from the file at that place is the string. For this test (PIE) and
 * for a child built -no-pie (ET_EXEC: no load bias).
 *
 * Runs from the repository root (as `make unit-test` does) and needs cc.
 */
#include <fcntl.h>
#include <setjmp.h>
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

#include <cmocka.h>

#include "attach/exec_image.h"
#include "attach/proc_maps.h"

static const char probe_literal[] = "exec_image: a literal of the program";

/* Field 26 of /proc/PID/stat: startcode. */
static uint64_t start_code_of(pid_t pid)
{
	char path[64], buf[4096], *p;
	unsigned long long v = 0;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	assert_true(n > 0);
	buf[n] = '\0';
	p = strrchr(buf, ')');
	assert_non_null(p);
	p += 2; /* field 3 */
	for (int field = 3; field < 26; field++) {
		p = strchr(p, ' ');
		assert_non_null(p);
		p++;
	}
	assert_int_equal(sscanf(p, "%llu", &v), 1);
	return v;
}

/* Each range lies in one read-only mapping of the program, at the file offset it says. */
static int check_against_maps(pid_t pid, const struct exec_image_range *v, int n)
{
	char path[64], *line = NULL;
	size_t cap = 0;
	struct stat exe;
	int found = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	assert_int_equal(stat(path, &exe), 0);
	for (int i = 0; i < n; i++) {
		bool in = false;

		snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
		f = fopen(path, "r");
		assert_non_null(f);
		while (getline(&line, &cap, f) > 0 && !in) {
			struct proc_maps_entry e;

			if (proc_maps_parse_line(line, &e) < 0 || e.inode != exe.st_ino || e.perms[1] == 'w')
				continue;
			in = e.start <= v[i].start && v[i].end <= e.end &&
			     e.offset + (v[i].start - e.start) == v[i].offset;
		}
		fclose(f);
		if (!in)
			fail_msg("range %d %#llx-%#llx (offset %#llx) is in no read-only mapping of the program",
				 i, (unsigned long long)v[i].start, (unsigned long long)v[i].end,
				 (unsigned long long)v[i].offset);
		found++;
	}
	free(line);
	return found;
}

/* The literal at addr, read from the file where the ranges put it. */
static void assert_reads_literal(int fd, const struct exec_image_range *v, int n, uint64_t addr,
				 const char *want)
{
	char got[128] = { 0 };

	for (int i = 0; i < n; i++)
		if (addr >= v[i].start && addr < v[i].end) {
			assert_true(pread(fd, got, strlen(want), (off_t)(v[i].offset + addr - v[i].start)) ==
				    (ssize_t)strlen(want));
			assert_string_equal(got, want);
			return;
		}
	fail_msg("the literal at %#llx is in no range", (unsigned long long)addr);
}

static void test_this_program(void **state)
{
	struct exec_image_range v[16];
	int fd = open("/proc/self/exe", O_RDONLY), n;

	(void)state;
	assert_true(fd >= 0);
	n = exec_image_ranges(fd, start_code_of(getpid()), v, 16);
	assert_true(n >= 1);
	assert_int_equal(check_against_maps(getpid(), v, n), n);
	assert_reads_literal(fd, v, n, (uint64_t)(uintptr_t)probe_literal, probe_literal);
	/* A start_code below the lowest executable segment: no mapping the kernel makes. */
	assert_int_equal(exec_image_ranges(fd, 0, v, 16), -1);
	close(fd);
}

/* A -no-pie child prints its literal's address, then waits to be looked at. */
static void test_a_program_without_pie(void **state)
{
	char dir[] = "/tmp/exec-image-XXXXXX", src[64], bin[64], cmd[256], line[64] = { 0 };
	struct exec_image_range v[16];
	unsigned long long addr;
	int pipefd[2], fd, n;
	pid_t pid;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(src, sizeof(src), "%s/nopie.c", dir);
	snprintf(bin, sizeof(bin), "%s/nopie", dir);
	f = fopen(src, "w");
	assert_non_null(f);
	fputs("#include <stdio.h>\n#include <unistd.h>\n"
	      "static const char s[] = \"a literal without pie\";\n"
	      "int main(void) { printf(\"%p\\n\", (void *)s); fflush(stdout); pause(); return 0; }\n", f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "cc -O1 -no-pie -o '%s' '%s'", bin, src);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(pipe(pipefd), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		dup2(pipefd[1], 1);
		execl(bin, bin, (char *)NULL);
		_exit(127);
	}
	close(pipefd[1]);
	assert_true(read(pipefd[0], line, sizeof(line) - 1) > 0);
	close(pipefd[0]);
	assert_int_equal(sscanf(line, "%llx", &addr), 1);
	fd = open(bin, O_RDONLY);
	assert_true(fd >= 0);
	n = exec_image_ranges(fd, start_code_of(pid), v, 16);
	assert_true(n >= 1);
	assert_int_equal(check_against_maps(pid, v, n), n);
	assert_reads_literal(fd, v, n, addr, "a literal without pie");
	close(fd);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	unlink(bin);
	unlink(src);
	rmdir(dir);
}

/* Not an ELF program: no ranges. */
static void test_not_a_program(void **state)
{
	struct exec_image_range v[4];
	int fd = open("Makefile", O_RDONLY);

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(exec_image_ranges(fd, 0x401000, v, 4), -1);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_this_program),
		cmocka_unit_test(test_a_program_without_pie),
		cmocka_unit_test(test_not_a_program),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
