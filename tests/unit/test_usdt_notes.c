/* SPDX-License-Identifier: MIT */
/*
 * test_usdt_notes.c - usdt_notes_read() on real files, built here from
 * tests/programs/probe_sites.c (PIE, non-PIE, shared library) and from small
 * <sys/sdt.h> programs, each cross-checked against tools that do not share
 * our code: `readelf -n` for the note contents, the section headers for file
 * offsets, the symbol table for semaphores and `objdump -d` for the
 * instructions at a site. Then broken and hostile files: errors, never a
 * crash (run it under ASan/UBSan).
 *
 * Runs from the repository root (as `make unit-test` does) and needs cc.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "attach/usdt_notes.h"
#include "ctrace_site.h"

static char dir[64]; /* mkdtemp: every file built by the tests */

static const char sdt_src[] =
	"#include <sys/sdt.h>\n"
	"int main(int argc, char **argv)\n"
	"{\n"
	"	long a = argc;\n"
	"	DTRACE_PROBE2(myprov, two, a, argv);\n"
	"	DTRACE_PROBE(myprov, none);\n"
	"	return 0;\n"
	"}\n";

/* With _SDT_HAS_SEMAPHORES every probe uses PROVIDER_NAME_semaphore. */
static const char sdt_sema_src[] =
	"#define _SDT_HAS_SEMAPHORES 1\n"
	"#include <sys/sdt.h>\n"
	"__extension__ unsigned short myprov_withsem_semaphore\n"
	"	__attribute__((unused, section(\".probes\")));\n"
	"int main(int argc, char **argv)\n"
	"{\n"
	"	(void)argv;\n"
	"	DTRACE_PROBE1(myprov, withsem, argc);\n"
	"	return 0;\n"
	"}\n";

/* A 70-character provider: longer than struct usdt_note can hold. */
static const char sdt_long_src[] =
	"#include <sys/sdt.h>\n"
	"int main(void)\n"
	"{\n"
	"	DTRACE_PROBE(p123456789012345678901234567890123456789012345678901"
	"234567890123456789, x);\n"
	"	return 0;\n"
	"}\n";

static void pathf(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", dir, name);
}

__attribute__((format(printf, 1, 2))) static int run(const char *fmt, ...)
{
	char cmd[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return system(cmd);
}

static int write_file(const char *path, const void *buf, size_t len)
{
	FILE *f = fopen(path, "wb");
	int ok;

	if (!f)
		return -1;
	ok = fwrite(buf, 1, len, f) == len;
	return fclose(f) == 0 && ok ? 0 : -1;
}

static void *read_whole(const char *path, size_t *len)
{
	struct stat st;
	void *buf;
	FILE *f = fopen(path, "rb");

	if (!f)
		return NULL;
	if (fstat(fileno(f), &st) || !(buf = malloc((size_t)st.st_size + 1))) {
		fclose(f);
		return NULL;
	}
	*len = fread(buf, 1, (size_t)st.st_size, f);
	fclose(f);
	return buf;
}

static int setup(void **state)
{
	static const struct {
		const char *name, *src, *flags;
	} builds[] = {
		{ "pie", "tests/programs/probe_sites.c", "-fPIE -pie" },
		{ "nopie", "tests/programs/probe_sites.c", "-fno-pie -no-pie" },
		{ "lib.so", "tests/programs/probe_sites.c", "-shared -fPIC" },
		{ "sdt", "sdt.c", "" },
		{ "sdt_sema", "sdt_sema.c", "" },
		{ "sdt_long", "sdt_long.c", "" },
	};
	char path[PATH_MAX];

	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/ctrace-usdt-XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	pathf(path, sizeof(path), "sdt.c");
	if (write_file(path, sdt_src, sizeof(sdt_src) - 1))
		return -1;
	pathf(path, sizeof(path), "sdt_sema.c");
	if (write_file(path, sdt_sema_src, sizeof(sdt_sema_src) - 1))
		return -1;
	pathf(path, sizeof(path), "sdt_long.c");
	if (write_file(path, sdt_long_src, sizeof(sdt_long_src) - 1))
		return -1;
	for (size_t i = 0; i < sizeof(builds) / sizeof(builds[0]); i++) {
		const char *src = builds[i].src;
		char srcpath[PATH_MAX];

		if (src[0] != 't') { /* written above, into dir */
			pathf(srcpath, sizeof(srcpath), src);
			src = srcpath;
		}
		if (run("cc -g -O2 -Wall -Wextra -Werror -std=gnu11 -Iinclude %s "
			"%s -o %s/%s", builds[i].flags, src, dir,
			builds[i].name)) {
			fprintf(stderr, "cannot build %s\n", builds[i].name);
			return -1;
		}
	}
	/* A relocatable object: notes with unrelocated addresses. */
	if (run("cc -O2 -Iinclude -c tests/programs/probe_sites.c -o %s/obj.o",
		dir))
		return -1;
	return elf_version(EV_CURRENT) == EV_NONE ? -1 : 0;
}

static int teardown(void **state)
{
	(void)state;
	if (dir[0] && strncmp(dir, "/tmp/ctrace-usdt-", 17) == 0)
		run("rm -rf '%s'", dir);
	return 0;
}

/* ---- Independent views of a file, through libelf and binutils ---- */

/* File offset of `vaddr` through the section headers (not the segments). */
static uint64_t section_offset(const char *path, uint64_t vaddr,
			       char *secname, size_t len)
{
	int fd = open(path, O_RDONLY);
	Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
	Elf_Scn *scn = NULL;
	uint64_t off = UINT64_MAX;
	size_t shstrndx;

	assert_non_null(elf);
	assert_int_equal(elf_getshdrstrndx(elf, &shstrndx), 0);
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		assert_non_null(gelf_getshdr(scn, &sh));
		if (!(sh.sh_flags & SHF_ALLOC) || sh.sh_type == SHT_NOBITS)
			continue;
		if (vaddr >= sh.sh_addr && vaddr < sh.sh_addr + sh.sh_size) {
			off = sh.sh_offset + (vaddr - sh.sh_addr);
			snprintf(secname, len, "%s",
				 elf_strptr(elf, shstrndx, sh.sh_name));
			break;
		}
	}
	elf_end(elf);
	close(fd);
	return off;
}

/* Value of symbol `name` in .symtab, or 0. */
static uint64_t symbol_value(const char *path, const char *name)
{
	int fd = open(path, O_RDONLY);
	Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
	Elf_Scn *scn = NULL;
	uint64_t value = 0;

	assert_non_null(elf);
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;

		assert_non_null(gelf_getshdr(scn, &sh));
		if (sh.sh_type != SHT_SYMTAB || !sh.sh_entsize)
			continue;
		data = elf_getdata(scn, NULL);
		assert_non_null(data);
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *s;

			assert_non_null(gelf_getsym(data, (int)i, &sym));
			s = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (s && strcmp(s, name) == 0)
				value = sym.st_value;
		}
	}
	elf_end(elf);
	close(fd);
	return value;
}

struct readelf_note {
	char provider[80], name[80];
	unsigned long long loc, base, sema;
};

/* The stapsdt notes as `readelf -n` prints them, in file order. */
static size_t readelf_notes(const char *path, struct readelf_note *v, size_t max)
{
	char cmd[PATH_MAX + 32], line[512];
	size_t n = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "readelf -nW '%s'", path);
	p = popen(cmd, "r");
	assert_non_null(p);
	memset(v, 0, max * sizeof(*v));
	/* With -W, "Provider:" shares a line with the note's owner. */
	while (fgets(line, sizeof(line), p)) {
		const char *s;

		if (n >= max)
			continue;
		if ((s = strstr(line, "Provider: ")))
			sscanf(s, "Provider: %79s", v[n].provider);
		else if ((s = strstr(line, "Name: ")))
			sscanf(s, "Name: %79s", v[n].name);
		else if ((s = strstr(line, "Location: ")) &&
			 sscanf(s, "Location: %llx, Base: %llx, Semaphore: %llx",
				&v[n].loc, &v[n].base, &v[n].sema) == 3)
			n++;
	}
	assert_int_equal(pclose(p), 0);
	return n;
}

/* True if `objdump -d` shows our site's instructions at `vaddr`. */
static bool objdump_shows_site(const char *path, uint64_t vaddr)
{
	char cmd[PATH_MAX + 128], line[512];
	int saw_nop = 0, saw_lea = 0, saw_nop5 = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd),
		 "objdump -d --start-address=0x%llx --stop-address=0x%llx '%s'",
		 (unsigned long long)vaddr,
		 (unsigned long long)vaddr + CTRACE_SITE_LEN, path);
	p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(line, sizeof(line), p)) {
		char addr[32];

		snprintf(addr, sizeof(addr), "%llx:\t90 ", (unsigned long long)vaddr);
		saw_nop |= strstr(line, addr) && strstr(line, "nop");
		saw_lea |= strstr(line, "lea") && strstr(line, "-0x80(%rsp),%rsp");
		saw_nop5 |= strstr(line, "0f 1f 44 00 00") && strstr(line, "nopl");
	}
	assert_int_equal(pclose(p), 0);
	return saw_nop && saw_lea && saw_nop5;
}

static int read_byte(int fd, uint64_t off)
{
	unsigned char b;

	return pread(fd, &b, 1, (off_t)off) == 1 ? b : -1;
}

/* ---- ctrace binaries ---- */

static const struct {
	const char *name, *args;
} ctrace_probes[] = {
	/* The last: which strings are literals (usdt/ctrace_site.h). */
	{ "span_begin", "8@%rdi 8@%rsi 8@%rdx 8@%rcx 8@%rax" },
	{ "span_end", "8@%rdi 8@%rsi 8@%rdx" },
	{ "instant", "8@%rdi 8@%rsi 8@%rdx 8@%rcx 8@%rax" },
	{ "counter_set", "8@%rdi 8@%rsi 8@%rdx 8@%rcx" },
	{ "counter_add", "8@%rdi 8@%rsi 8@%rdx 8@%rcx" },
	{ "new_pid", "8@%rdi 8@%rsi 8@%rdx" },
	{ "discard", "8@%rdi" },
	/* The batched path's flush (usdt/ctrace_batch.h): its own semaphore. */
	{ "batch", "8@%rdi 8@%rsi 8@%rdx 8@%rcx 8@%rax" },
};
#define N_PROBES (sizeof(ctrace_probes) / sizeof(ctrace_probes[0]))

static void check_ctrace_file(const char *file, int elf_type)
{
	struct readelf_note re[64];
	struct usdt_note_list l;
	char path[PATH_MAX], err[256], sec[64];
	size_t seen[N_PROBES] = { 0 }, nre;
	uint64_t sema_sym, sema_off;
	int fd;

	pathf(path, sizeof(path), file);
	assert_int_equal(usdt_notes_read(path, &l, err, sizeof(err)), 0);
	assert_string_equal(err, "");
	assert_int_equal(l.elf_type, elf_type);
	assert_true(l.n >= N_PROBES);

	/* readelf agrees on every note, in order. */
	nre = readelf_notes(path, re, 64);
	assert_int_equal(nre, l.n);

	sema_sym = symbol_value(path, "ctrace_semaphore");
	assert_true(sema_sym != 0);
	sema_off = section_offset(path, sema_sym, sec, sizeof(sec));
	assert_string_equal(sec, ".probes");

	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	for (size_t i = 0; i < l.n; i++) {
		const struct usdt_note *n = &l.v[i];
		size_t k;

		assert_string_equal(n->provider, "ctrace");
		for (k = 0; k < N_PROBES; k++)
			if (strcmp(n->name, ctrace_probes[k].name) == 0)
				break;
		assert_true(k < N_PROBES);
		seen[k]++;
		assert_string_equal(n->args, ctrace_probes[k].args);

		assert_string_equal(re[i].provider, n->provider);
		assert_string_equal(re[i].name, n->name);
		assert_int_equal(re[i].loc, n->site_vaddr);
		assert_int_equal(re[i].sema, n->sema_vaddr);

		/* Offsets by the section headers equal those by the segments. */
		assert_int_equal(section_offset(path, n->site_vaddr, sec,
						sizeof(sec)),
				 n->site_offset);
		assert_string_equal(sec, ".text");
		assert_int_equal(read_byte(fd, n->site_offset), 0x90);
		assert_true(usdt_is_ctrace_site(fd, n->site_offset));
		assert_false(usdt_is_ctrace_site(fd, n->site_offset + 1));

		/* The semaphore is ctrace_semaphore (the batch probe's: ctrace_batch_semaphore), at its file offset. */
		if (!strcmp(n->name, "batch")) {
			uint64_t batch_sym = symbol_value(path, "ctrace_batch_semaphore");

			assert_int_equal(n->sema_vaddr, batch_sym);
			assert_int_equal(n->sema_offset, section_offset(path, batch_sym, sec, sizeof(sec)));
			assert_string_equal(sec, ".probes");
		} else {
			assert_int_equal(n->sema_vaddr, sema_sym);
			assert_int_equal(n->sema_offset, sema_off);
		}
	}
	for (size_t k = 0; k < N_PROBES; k++)
		assert_true(seen[k] >= 1);
	/* The instructions at one site, as binutils decodes them. */
	assert_true(objdump_shows_site(path, l.v[0].site_vaddr));
	assert_true(objdump_shows_site(path, l.v[l.n - 1].site_vaddr));
	/* The semaphore is 0 in the file: the kernel counts it at run time. */
	assert_int_equal(read_byte(fd, sema_off), 0);
	assert_int_equal(read_byte(fd, sema_off + 1), 0);
	close(fd);
	usdt_note_list_free(&l);
	assert_null(l.v);
	assert_int_equal(l.n, 0);
}

static void test_pie(void **state)
{
	(void)state;
	check_ctrace_file("pie", ET_DYN);
}

static void test_no_pie(void **state)
{
	struct usdt_note_list l;

	(void)state;
	check_ctrace_file("nopie", ET_EXEC);
	/* Non-PIE: link-time addresses are absolute, offsets are not. */
	{
		char path[PATH_MAX];

		pathf(path, sizeof(path), "nopie");
		assert_int_equal(usdt_notes_read(path, &l, NULL, 0), 0);
		assert_true(l.v[0].site_vaddr >= 0x400000);
		assert_true(l.v[0].site_offset < 0x400000);
		usdt_note_list_free(&l);
	}
}

static void test_shared_library(void **state)
{
	(void)state;
	check_ctrace_file("lib.so", ET_DYN);
}

/* The build of the Makefile (make unit-test makes it first; run by hand, without it: skipped). */
static void test_built_probe_sites(void **state)
{
	static const char built[] = "build/tests/programs/probe_sites";
	struct usdt_note_list l;
	char err[256];
	int fd;

	(void)state;
	if (access(built, R_OK)) {
		skip();
		return;
	}
	assert_int_equal(usdt_notes_read(built, &l, err, sizeof(err)), 0);
	assert_true(l.n >= N_PROBES);
	fd = open(built, O_RDONLY);
	for (size_t i = 0; i < l.n; i++)
		assert_true(usdt_is_ctrace_site(fd, l.v[i].site_offset));
	close(fd);
	usdt_note_list_free(&l);
}

/* ---- <sys/sdt.h> binaries: read, but not ctrace sites ---- */

static void test_sys_sdt(void **state)
{
	struct readelf_note re[8];
	struct usdt_note_list l;
	char path[PATH_MAX], err[256], sec[64];
	int fd;

	(void)state;
	pathf(path, sizeof(path), "sdt");
	assert_int_equal(usdt_notes_read(path, &l, err, sizeof(err)), 0);
	assert_int_equal(l.n, 2);
	assert_int_equal(readelf_notes(path, re, 8), 2);
	fd = open(path, O_RDONLY);
	for (size_t i = 0; i < l.n; i++) {
		const struct usdt_note *n = &l.v[i];

		assert_string_equal(n->provider, "myprov");
		assert_string_equal(n->name, re[i].name);
		assert_int_equal(n->site_vaddr, re[i].loc);
		assert_int_equal(n->sema_vaddr, 0);
		assert_int_equal(n->sema_offset, 0);
		assert_int_equal(section_offset(path, n->site_vaddr, sec,
						sizeof(sec)),
				 n->site_offset);
		assert_int_equal(read_byte(fd, n->site_offset), 0x90);
		assert_false(usdt_is_ctrace_site(fd, n->site_offset));
		if (strcmp(n->name, "two") == 0)
			/* Two specs "SIZE@OPERAND" separated by a space. */
			assert_non_null(strchr(strchr(n->args, '@') + 1, '@'));
		else
			assert_string_equal(n->args, "");
	}
	close(fd);
	usdt_note_list_free(&l);
}

static void test_sys_sdt_semaphore(void **state)
{
	struct usdt_note_list l;
	char path[PATH_MAX], err[256], sec[64];
	uint64_t sym;

	(void)state;
	pathf(path, sizeof(path), "sdt_sema");
	assert_int_equal(usdt_notes_read(path, &l, err, sizeof(err)), 0);
	assert_int_equal(l.n, 1);
	assert_string_equal(l.v[0].name, "withsem");
	sym = symbol_value(path, "myprov_withsem_semaphore");
	assert_true(sym != 0);
	assert_int_equal(l.v[0].sema_vaddr, sym);
	assert_int_equal(l.v[0].sema_offset,
			 section_offset(path, sym, sec, sizeof(sec)));
	assert_string_equal(sec, ".probes");
	usdt_note_list_free(&l);
}

/* ---- categories: .note.ctrace names each semaphore's category ---- */

static const char cats_src[] =
	"#define CTRACE_CATEGORY net\n"
	"#include <ctrace.h>\n"
	"int main(int argc, char **argv)\n"
	"{\n"
	"	(void)argv;\n"
	"	CTRACE_INSTANT(NULL, \"n\", CTRACE_SCOPE_THREAD, NULL);\n"
	"	CTRACE_IN(verbose, INSTANT, NULL, \"v\", CTRACE_SCOPE_THREAD, NULL);\n"
	"	CTRACE_IN(ctrace, COUNTER_SET, NULL, \"c\", argc);\n"
	"	return 0;\n"
	"}\n";

/* Builds cats_src plus `extra` (top-level asm: hand-made notes) as dir/name; stripped if `strip`. */
static void build_cats(const char *name, const char *extra, bool strip)
{
	char src[PATH_MAX], out[PATH_MAX];
	char text[2048];

	pathf(src, sizeof(src), "cats.c");
	pathf(out, sizeof(out), name);
	snprintf(text, sizeof(text), "%s%s", cats_src, extra);
	assert_int_equal(write_file(src, text, strlen(text)), 0);
	assert_int_equal(run("cc -O2 -Wall -Wextra -Werror -std=gnu11 -Iinclude %s -o %s%s%s", src, out,
			     strip ? " && strip -s " : "", strip ? out : ""), 0);
}

static void test_categories_named(void **state)
{
	(void)state;
	for (int strip = 0; strip < 2; strip++) {
		struct usdt_note_list l;
		char path[PATH_MAX], err[256];
		uint64_t net = 0, verbose = 0, dflt = 0;
		unsigned seen = 0;

		build_cats(strip ? "cats_stripped" : "cats", "", strip);
		if (!strip) {
			pathf(path, sizeof(path), "cats");
			net = symbol_value(path, "ctrace_semaphore_net");
			verbose = symbol_value(path, "ctrace_semaphore_verbose");
			dflt = symbol_value(path, "ctrace_semaphore");
			assert_true(net && verbose && dflt);
		}
		pathf(path, sizeof(path), strip ? "cats_stripped" : "cats");
		assert_int_equal(usdt_notes_read(path, &l, err, sizeof(err)), 0);
		for (size_t i = 0; i < l.n; i++) {
			const struct usdt_note *n = &l.v[i];
			const char *want = !strcmp(n->name, "counter_set") ? "ctrace" :
					   !strcmp(n->name, "batch") ? "ctrace" : NULL;

			if (!want && !strcmp(n->name, "instant"))
				continue; /* two instants: told apart by their semaphores below */
			assert_non_null(want);
			assert_string_equal(n->category, want);
			seen++;
		}
		for (size_t i = 0; i < l.n; i++)
			if (!strcmp(l.v[i].name, "instant")) {
				const char *cat = l.v[i].category;

				assert_true(!strcmp(cat, "net") || !strcmp(cat, "verbose"));
				if (!strip)
					assert_int_equal(l.v[i].sema_vaddr, !strcmp(cat, "net") ? net : verbose);
				seen++;
			}
		assert_int_equal(seen, 4); /* batch, counter_set, two instants */
		usdt_note_list_free(&l);
	}
}

/* A hostile .note.ctrace: a name that is not an identifier, or one semaphore of two names. */
static void test_categories_malformed(void **state)
{
#define CAT_NOTE(addr, name, len)                                                                 \
	"__asm__(\".pushsection .note.ctrace,\\\"\\\",@note\\n.balign 4\\n.4byte 7, " #len ", 1\\n"   \
	".asciz \\\"ctrace\\\"\\n.balign 4\\n.8byte " addr "\\n.asciz \\\"" name "\\\"\\n"           \
	".balign 4\\n.popsection\");\n"
	static const struct {
		const char *extra, *why;
	} bad[] = {
		{ CAT_NOTE("0x1234", "a-b", 12), "valid name" },
		{ CAT_NOTE("0x1234", "", 9), "valid name" },
		{ CAT_NOTE("ctrace_semaphore_net", "db", 11), "two categories" },
	};
	struct usdt_note_list l;
	char path[PATH_MAX], err[256];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		build_cats("cats_bad", bad[i].extra, false);
		pathf(path, sizeof(path), "cats_bad");
		assert_int_equal(usdt_notes_read(path, &l, err, sizeof(err)), -EINVAL);
		if (!strstr(err, bad[i].why))
			fail_msg("note %zu: '%s'", i, err);
		assert_int_equal(l.n, 0);
	}
#undef CAT_NOTE
}

/* ---- .stapsdt.base: the prelink correction ---- */

/* Copies "pie" to `name`, moving .stapsdt.base's sh_addr by `delta` and
 * renaming the section (same length) if `rename`. */
static void make_moved_base(const char *name, int64_t delta, bool rename)
{
	char src[PATH_MAX], dst[PATH_MAX];
	unsigned char *buf;
	size_t len, shstrndx;
	Elf_Scn *scn = NULL;
	GElf_Ehdr eh;
	Elf *elf;
	int fd;

	pathf(src, sizeof(src), "pie");
	pathf(dst, sizeof(dst), name);
	buf = read_whole(src, &len);
	assert_non_null(buf);
	fd = open(src, O_RDONLY);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	assert_non_null(gelf_getehdr(elf, &eh));
	assert_int_equal(elf_getshdrstrndx(elf, &shstrndx), 0);
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		size_t at;
		uint64_t addr;

		gelf_getshdr(scn, &sh);
		if (strcmp(elf_strptr(elf, shstrndx, sh.sh_name),
			   ".stapsdt.base"))
			continue;
		at = eh.e_shoff + elf_ndxscn(scn) * eh.e_shentsize;
		addr = sh.sh_addr + (uint64_t)delta;
		memcpy(buf + at + offsetof(Elf64_Shdr, sh_addr), &addr, 8);
		if (rename) {
			Elf_Scn *strs = elf_getscn(elf, shstrndx);
			GElf_Shdr ssh;

			gelf_getshdr(strs, &ssh);
			buf[ssh.sh_offset + sh.sh_name + 12] = '_';
		}
	}
	elf_end(elf);
	close(fd);
	assert_int_equal(write_file(dst, buf, len), 0);
	free(buf);
}

static void test_stapsdt_base_adjust(void **state)
{
	struct usdt_note_list orig, moved, renamed;
	char path[PATH_MAX], err[256];

	(void)state;
	pathf(path, sizeof(path), "pie");
	assert_int_equal(usdt_notes_read(path, &orig, err, sizeof(err)), 0);

	/* .stapsdt.base 8 bytes lower: every address and offset follows. */
	make_moved_base("moved", -8, false);
	pathf(path, sizeof(path), "moved");
	assert_int_equal(usdt_notes_read(path, &moved, err, sizeof(err)), 0);
	assert_int_equal(moved.n, orig.n);
	for (size_t i = 0; i < orig.n; i++) {
		assert_int_equal(moved.v[i].site_vaddr, orig.v[i].site_vaddr - 8);
		assert_int_equal(moved.v[i].site_offset, orig.v[i].site_offset - 8);
		assert_int_equal(moved.v[i].sema_vaddr, orig.v[i].sema_vaddr - 8);
		assert_int_equal(moved.v[i].sema_offset, orig.v[i].sema_offset - 8);
	}

	/* Without a .stapsdt.base section, the note's addresses stand. */
	make_moved_base("renamed", -8, true);
	pathf(path, sizeof(path), "renamed");
	assert_int_equal(usdt_notes_read(path, &renamed, err, sizeof(err)), 0);
	assert_int_equal(renamed.n, orig.n);
	for (size_t i = 0; i < orig.n; i++) {
		assert_int_equal(renamed.v[i].site_vaddr, orig.v[i].site_vaddr);
		assert_int_equal(renamed.v[i].site_offset, orig.v[i].site_offset);
	}

	usdt_note_list_free(&moved);

	/* Moved so far that the site leaves the file's code: an error. */
	make_moved_base("far", 0x100000, false);
	pathf(path, sizeof(path), "far");
	assert_int_equal(usdt_notes_read(path, &moved, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "segment"));
	assert_int_equal(moved.n, 0);

	usdt_note_list_free(&orig);
	usdt_note_list_free(&renamed);
}

/* ---- errors ---- */

static void expect_error(const char *path, int rc, const char *msg)
{
	struct usdt_note_list l = { .n = 99 };
	char err[256];

	assert_int_equal(usdt_notes_read(path, &l, err, sizeof(err)), rc);
	assert_null(l.v);
	assert_int_equal(l.n, 0);
	assert_true(err[0] != '\0');
	assert_null(strchr(err, '\n')); /* one line */
	if (msg)
		assert_string_equal(err, msg);
	usdt_note_list_free(&l);
}

static void test_not_found_and_not_elf(void **state)
{
	static const char text[] = "#!/bin/sh\necho not an ELF\n";
	char path[PATH_MAX];

	(void)state;
	pathf(path, sizeof(path), "does-not-exist");
	expect_error(path, -ENOENT, "no such file");
	pathf(path, sizeof(path), "script");
	assert_int_equal(write_file(path, text, sizeof(text) - 1), 0);
	expect_error(path, -ENOEXEC, "not an ELF file");
	pathf(path, sizeof(path), "empty");
	assert_int_equal(write_file(path, "", 0), 0);
	expect_error(path, -ENOEXEC, NULL);
	expect_error(dir, -ENOEXEC, "not a regular file");
	expect_error("/dev/null", -ENOEXEC, "not a regular file");
	pathf(path, sizeof(path), "obj.o");
	expect_error(path, -ENOEXEC, NULL);
	/* err may be NULL. */
	{
		struct usdt_note_list l;

		assert_int_equal(usdt_notes_read(dir, &l, NULL, 0), -ENOEXEC);
	}
}

static void test_truncated(void **state)
{
	char src[PATH_MAX], path[PATH_MAX];
	unsigned char *buf;
	size_t len;

	(void)state;
	pathf(src, sizeof(src), "pie");
	buf = read_whole(src, &len);
	assert_non_null(buf);
	pathf(path, sizeof(path), "truncated");
	/* Every cut loses the section headers at the end: always an error. */
	for (size_t cut = 1; cut < len; cut += cut < 256 ? 7 : 997) {
		struct usdt_note_list l;
		char err[256];

		assert_int_equal(write_file(path, buf, cut), 0);
		assert_true(usdt_notes_read(path, &l, err, sizeof(err)) < 0);
		assert_true(err[0] != '\0');
		usdt_note_list_free(&l);
	}
	assert_int_equal(write_file(path, buf, len - 1), 0);
	expect_error(path, -EINVAL, NULL);
	free(buf);
}

/* Finds the file offset and size of .note.stapsdt in buf. */
static void note_section(const char *path, size_t *off, size_t *size)
{
	int fd = open(path, O_RDONLY);
	Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	*off = *size = 0;
	assert_int_equal(elf_getshdrstrndx(elf, &shstrndx), 0);
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		gelf_getshdr(scn, &sh);
		if (!strcmp(elf_strptr(elf, shstrndx, sh.sh_name), ".note.stapsdt")) {
			*off = sh.sh_offset;
			*size = sh.sh_size;
		}
	}
	elf_end(elf);
	close(fd);
	assert_true(*size > 0);
}

/* Writes a copy of "pie" with `patch` applied to its first note. */
static void corrupt_first_note(const char *name, void (*patch)(unsigned char *note))
{
	char src[PATH_MAX], dst[PATH_MAX];
	unsigned char *buf;
	size_t len, off, size;

	pathf(src, sizeof(src), "pie");
	pathf(dst, sizeof(dst), name);
	buf = read_whole(src, &len);
	assert_non_null(buf);
	note_section(src, &off, &size);
	patch(buf + off);
	assert_int_equal(write_file(dst, buf, len), 0);
	free(buf);
}

/* Note layout: namesz, descsz, type (4 bytes each), "stapsdt\0", desc. */
#define NOTE_DESC 20

static void patch_unterminated(unsigned char *note)
{
	uint32_t descsz;

	memcpy(&descsz, note + 4, 4);
	memset(note + NOTE_DESC + 24, 'A', descsz - 24);
}

static void patch_huge_descsz(unsigned char *note)
{
	uint32_t descsz = 0xfffffff0;

	memcpy(note + 4, &descsz, 4);
}

static void patch_short_desc(unsigned char *note)
{
	uint32_t descsz = 12;

	memcpy(note + 4, &descsz, 4);
}

static void patch_site_outside(unsigned char *note)
{
	uint64_t base, addr;

	/* Past every segment once the .stapsdt.base correction is applied. */
	memcpy(&base, note + NOTE_DESC + 8, 8);
	addr = base + 0x7000000000000000ULL;
	memcpy(note + NOTE_DESC, &addr, 8);
}

static void patch_empty_provider(unsigned char *note)
{
	note[NOTE_DESC + 24] = '\0';
}

static void patch_other_owner(unsigned char *note)
{
	note[12] = 'X'; /* "Xtapsdt": not ours, skipped */
}

static void test_corrupt_notes(void **state)
{
	struct usdt_note_list l, orig;
	char path[PATH_MAX], err[256];

	(void)state;
	corrupt_first_note("c1", patch_unterminated);
	pathf(path, sizeof(path), "c1");
	expect_error(path, -EINVAL, "stapsdt note with a unterminated string");
	corrupt_first_note("c2", patch_huge_descsz);
	pathf(path, sizeof(path), "c2");
	expect_error(path, -EINVAL, NULL);
	corrupt_first_note("c3", patch_short_desc);
	pathf(path, sizeof(path), "c3");
	expect_error(path, -EINVAL, NULL);
	corrupt_first_note("c4", patch_site_outside);
	pathf(path, sizeof(path), "c4");
	expect_error(path, -EINVAL, NULL);
	assert_int_equal(usdt_notes_read(path, &l, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "not in an executable segment"));
	corrupt_first_note("c5", patch_empty_provider);
	pathf(path, sizeof(path), "c5");
	expect_error(path, -EINVAL, NULL);

	/* A note of another owner is not a probe: one fewer, no error. */
	corrupt_first_note("c6", patch_other_owner);
	pathf(path, sizeof(path), "c6");
	assert_int_equal(usdt_notes_read(path, &l, err, sizeof(err)), 0);
	pathf(path, sizeof(path), "pie");
	assert_int_equal(usdt_notes_read(path, &orig, err, sizeof(err)), 0);
	assert_int_equal(l.n + 1, orig.n);
	usdt_note_list_free(&l);
	usdt_note_list_free(&orig);

	/* A provider name longer than struct usdt_note holds. */
	pathf(path, sizeof(path), "sdt_long");
	expect_error(path, -EINVAL, "stapsdt note with a too long string");
}

/*
 * Random damage to the ELF header, program headers, section headers and the
 * notes: whatever comes back, no crash, and a success holds sane notes.
 */
static void test_fuzz(void **state)
{
	char src[PATH_MAX], path[PATH_MAX];
	unsigned char *orig, *buf;
	size_t len, note_off, note_size;
	uint64_t seed = 0x9e3779b97f4a7c15ULL;
	Elf64_Ehdr eh;
	int ok = 0, failed = 0;

	(void)state;
	pathf(src, sizeof(src), "pie");
	orig = read_whole(src, &len);
	assert_non_null(orig);
	buf = malloc(len);
	assert_non_null(buf);
	note_section(src, &note_off, &note_size);
	memcpy(&eh, orig, sizeof(eh));
	pathf(path, sizeof(path), "fuzzed");

	for (int iter = 0; iter < 400; iter++) {
		struct usdt_note_list l;
		char err[256];
		int flips = 1 + iter % 4;

		memcpy(buf, orig, len);
		for (int k = 0; k < flips; k++) {
			size_t region, at;

			seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
			region = (seed >> 8) % 4;
			if (region == 0)
				at = (seed >> 16) % sizeof(eh);
			else if (region == 1)
				at = eh.e_phoff + (seed >> 16) % ((size_t)eh.e_phnum * eh.e_phentsize);
			else if (region == 2)
				at = eh.e_shoff + (seed >> 16) % ((size_t)eh.e_shnum * eh.e_shentsize);
			else
				at = note_off + (seed >> 16) % note_size;
			if (at < len)
				buf[at] = (unsigned char)(seed >> 40);
		}
		assert_int_equal(write_file(path, buf, len), 0);
		if (usdt_notes_read(path, &l, err, sizeof(err)) == 0) {
			ok++;
			for (size_t i = 0; i < l.n; i++) {
				assert_true(strlen(l.v[i].provider) < USDT_PROVIDER_MAX);
				assert_true(strlen(l.v[i].name) < USDT_NAME_MAX);
				assert_true(strlen(l.v[i].args) < USDT_ARGS_MAX);
				assert_true(l.v[i].site_offset < len);
			}
		} else {
			failed++;
			assert_true(err[0] != '\0');
		}
		usdt_note_list_free(&l);
	}
	/* Both outcomes happen, or the fuzzing hit nothing that matters. */
	assert_true(ok > 0 && failed > 0);
	free(buf);
	free(orig);
}

static void test_is_ctrace_site_bounds(void **state)
{
	char path[PATH_MAX];
	int fd;

	(void)state;
	pathf(path, sizeof(path), "pie");
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	assert_false(usdt_is_ctrace_site(fd, 0));
	assert_false(usdt_is_ctrace_site(fd, UINT64_MAX));
	assert_false(usdt_is_ctrace_site(fd, (uint64_t)INT64_MAX));
	assert_false(usdt_is_ctrace_site(fd, 1ULL << 40)); /* past the end */
	close(fd);
	assert_false(usdt_is_ctrace_site(-1, 0));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pie),
		cmocka_unit_test(test_no_pie),
		cmocka_unit_test(test_shared_library),
		cmocka_unit_test(test_built_probe_sites),
		cmocka_unit_test(test_sys_sdt),
		cmocka_unit_test(test_sys_sdt_semaphore),
		cmocka_unit_test(test_categories_named),
		cmocka_unit_test(test_categories_malformed),
		cmocka_unit_test(test_stapsdt_base_adjust),
		cmocka_unit_test(test_not_found_and_not_elf),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_corrupt_notes),
		cmocka_unit_test(test_fuzz),
		cmocka_unit_test(test_is_ctrace_site_bounds),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
