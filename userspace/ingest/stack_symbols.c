// SPDX-License-Identifier: MIT
#include "ingest/stack_symbols.h"

#include <dwarf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <elfutils/libdw.h>

/* libstdc++'s demangler (the loader is C: declared here, as <cxxabi.h> does). */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

static char *dup_or_die(const char *s)
{
	char *d = strdup(s);

	if (!d) {
		fputs("ctrace-bpf: out of memory\n", stderr);
		abort();
	}
	return d;
}

/* A malloc()ed readable name: demangled if it is a C++ one. */
static char *readable(const char *name)
{
	int status = -1;
	char *d;

	if (name[0] == '_' && name[1] == 'Z') {
		d = __cxa_demangle(name, NULL, NULL, &status);
		if (d && !status)
			return d;
		free(d);
	}
	return dup_or_die(name);
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* "fn (file:line)", or "fn" without a file. */
static char *frame_name(const char *fn, const char *file, int line)
{
	char *s = NULL, *r = readable(fn);

	if (!file || line <= 0)
		return r;
	if (asprintf(&s, "%s (%s:%d)", r, base_name(file), line) < 0) {
		fputs("ctrace-bpf: out of memory\n", stderr);
		abort();
	}
	free(r);
	return s;
}

/* A function scope's name: its linkage name (for C++), else its name, through abstract origins. */
static const char *scope_name(Dwarf_Die *die)
{
	Dwarf_Attribute a;
	const char *n = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &a));

	if (!n)
		n = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a));
	if (!n)
		n = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &a));
	return n;
}

static void add(struct stack_symbols *out, char *name)
{
	if (out->n < STACK_SYMBOLS_MAX_INLINE)
		out->names[out->n++] = name;
	else
		free(name);
}

/* The innermost function (subprogram or inlined instance) of scopes[0..n), into *out. */
static bool first_function(const Dwarf_Die *scopes, int n, Dwarf_Die *out)
{
	for (int i = 0; i < n; i++) {
		int tag = dwarf_tag((Dwarf_Die *)&scopes[i]);

		if (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine) {
			*out = scopes[i];
			return true;
		}
	}
	return false;
}

/*
 * From DWARF: the innermost function at the pc gets the line table's
 * file:line; each inlined instance's caller, the call site
 * (DW_AT_call_file, DW_AT_call_line) of the instance inside it. The
 * caller is the function around the instance's own DIE
 * (dwarf_getscopes_die): dwarf_getscopes() continues past an inlined
 * instance with the scopes of its abstract definition instead. False
 * without DWARF for the pc.
 */
static bool from_dwarf(Dwfl_Module *mod, Dwarf_Addr pc, struct stack_symbols *out)
{
	Dwarf_Addr bias = 0;
	Dwarf_Die *cu = dwfl_module_addrdie(mod, pc, &bias), *scopes = NULL, fn_die;
	Dwfl_Line *line = dwfl_module_getsrc(mod, pc);
	const char *file = NULL;
	int lineno = 0, n;
	Dwarf_Files *files = NULL;
	size_t nfiles = 0;
	bool found;

	if (!cu)
		return false;
	if (line)
		file = dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL);
	n = dwarf_getscopes(cu, pc - bias, &scopes);
	if (n <= 0)
		return false;
	found = first_function(scopes, n, &fn_die);
	free(scopes);
	dwarf_getsrcfiles(cu, &files, &nfiles);
	for (int depth = 0; found && depth < STACK_SYMBOLS_MAX_INLINE; depth++) {
		const char *fn = scope_name(&fn_die);
		Dwarf_Attribute a;
		Dwarf_Word cf = 0, cl = 0;

		add(out, frame_name(fn ? fn : "??", file, lineno));
		if (dwarf_tag(&fn_die) != DW_TAG_inlined_subroutine)
			break;
		/* The next function out runs at this instance's call site. */
		file = NULL;
		lineno = 0;
		if (dwarf_formudata(dwarf_attr(&fn_die, DW_AT_call_file, &a), &cf) == 0 && files)
			file = dwarf_filesrc(files, cf, NULL, NULL);
		if (dwarf_formudata(dwarf_attr(&fn_die, DW_AT_call_line, &a), &cl) == 0)
			lineno = (int)cl;
		n = dwarf_getscopes_die(&fn_die, &scopes);
		/* scopes[0] is the instance itself. */
		found = n > 1 && first_function(scopes + 1, n - 1, &fn_die);
		free(scopes);
	}
	return out->n > 0;
}

void stack_symbols_of(Dwfl_Module *mod, Dwarf_Addr pc, bool return_address,
		      struct stack_symbols *out)
{
	Dwarf_Addr at = return_address ? pc - 1 : pc, bias = 0, start = 0;
	const char *obj = dwfl_module_info(mod, NULL, &start, NULL, NULL, NULL, NULL, NULL);
	GElf_Off off = 0;
	GElf_Sym sym;
	const char *name;
	char *s = NULL;

	memset(out, 0, sizeof(*out));
	if (from_dwarf(mod, at, out)) {
		out->symbolized = true;
		return;
	}
	name = dwfl_module_addrinfo(mod, at, &off, &sym, NULL, NULL, NULL);
	if (name) {
		Dwfl_Line *line = dwfl_module_getsrc(mod, at);
		int lineno = 0;
		const char *file = line ? dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL) : NULL;

		add(out, frame_name(name, file, lineno));
		out->symbolized = true;
		return;
	}
	/* The address in the file, as addr2line and objdump take it. */
	if (!dwfl_module_getelf(mod, &bias))
		bias = start;
	if (asprintf(&s, "%s+0x%" PRIx64, obj ? obj : "?", (uint64_t)(pc - bias)) < 0) {
		fputs("ctrace-bpf: out of memory\n", stderr);
		abort();
	}
	add(out, s);
}

void stack_symbols_free(struct stack_symbols *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->names[i]);
	s->n = 0;
}
