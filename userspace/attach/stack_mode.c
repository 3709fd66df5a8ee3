// SPDX-License-Identifier: MIT
#include "attach/stack_mode.h"

#include <fcntl.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "ctrace_record.h"

/*
 * The code of a function sets up a frame pointer: mov %rsp,%rbp somewhere
 * in it (not always at the entry: gcc schedules other instructions before
 * it, and shrink-wraps a function's early exit ahead of its prologue).
 * Code built without frame pointers makes that move only for a frame it
 * must address from a fixed point (alloca, an over-aligned stack), rarely.
 */
#define PROLOGUE_BYTES 4096
static bool keeps_frame_pointer(const unsigned char *p, size_t n)
{
	static const unsigned char mov_rsp_rbp[] = { 0x48, 0x89, 0xe5 };

	return n >= 3 && memmem(p, n, mov_rsp_rbp, 3);
}

static size_t min_size(size_t a, size_t b)
{
	return a < b ? a : b;
}

/* Counts the functions of one symbol table, and those with the prologue. */
static void count_functions(Elf *elf, Elf_Scn *symtab, size_t *funcs, size_t *with_fp)
{
	GElf_Shdr sh;
	Elf_Data *d = elf_getdata(symtab, NULL);

	if (!d || !gelf_getshdr(symtab, &sh) || !sh.sh_entsize)
		return;
	for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
		GElf_Sym sym;
		Elf_Scn *text;
		GElf_Shdr tsh;
		Elf_Data *code;
		size_t at;

		const char *name;

		if (!gelf_getsym(d, (int)i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
		    sym.st_shndx == SHN_UNDEF || sym.st_shndx >= SHN_LORESERVE || sym.st_size < 16)
			continue;
		/* The C runtime's own (crt*.o), built however the toolchain was, tell nothing. */
		name = elf_strptr(elf, sh.sh_link, sym.st_name);
		if (!name || name[0] == '_' || !strcmp(name, "deregister_tm_clones") ||
		    !strcmp(name, "register_tm_clones") || !strcmp(name, "frame_dummy"))
			continue;
		text = elf_getscn(elf, sym.st_shndx);
		if (!text || !gelf_getshdr(text, &tsh) || tsh.sh_type != SHT_PROGBITS ||
		    sym.st_value < tsh.sh_addr || sym.st_value - tsh.sh_addr + sym.st_size > tsh.sh_size)
			continue;
		code = elf_getdata(text, NULL);
		at = sym.st_value - tsh.sh_addr;
		if (!code || !code->d_buf || at + sym.st_size > code->d_size)
			continue;
		(*funcs)++;
		if (keeps_frame_pointer((const unsigned char *)code->d_buf + at,
					min_size(sym.st_size, PROLOGUE_BYTES)))
			(*with_fp)++;
	}
}

unsigned stack_mode_for(const char *path, char *why, size_t why_len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t funcs = 0, with_fp = 0;
	Elf *elf = NULL;
	Elf_Scn *scn = NULL, *dynsym = NULL;
	bool had_symtab = false;

	elf_version(EV_CURRENT);
	if (fd >= 0)
		elf = elf_begin(fd, ELF_C_READ, NULL);
	while (elf && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_SYMTAB) {
			count_functions(elf, scn, &funcs, &with_fp);
			had_symtab = true;
		} else if (sh.sh_type == SHT_DYNSYM) {
			dynsym = scn;
		}
	}
	/* A stripped program: its exported functions are all there is to look at. */
	if (elf && !had_symtab && dynsym)
		count_functions(elf, dynsym, &funcs, &with_fp);
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
	/* Most, not all: a few leaf functions have no frame of their own even so. */
	if (funcs && with_fp * 10 >= funcs * 6) {
		snprintf(why, why_len, "chosen: the program keeps frame pointers (%zu of %zu functions)",
			 with_fp, funcs);
		return CTRACE_STACK_FP;
	}
	snprintf(why, why_len, "chosen: the program has no frame pointers (%zu of %zu functions keep one)",
		 with_fp, funcs);
	return CTRACE_STACK_DWARF;
}
