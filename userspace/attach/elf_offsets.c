// SPDX-License-Identifier: MIT
#include "attach/elf_offsets.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdbool.h>
#include <libelf.h>
#include <string.h>
#include <unistd.h>
#include "ingest/target_file.h"

/* The file read with pread (ELF_C_READ: a file cut short under us cannot SIGBUS); NULL if unreadable. */
static Elf *open_elf(const char *path, int *fd)
{
	Elf *elf;

	*fd = -1;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return NULL;
	/* A name from a process's maps: never blocking, only a regular file. */
	*fd = target_file_open(path, true, NULL, NULL);
	if (*fd < 0) {
		*fd = -1;
		return NULL;
	}
	elf = elf_begin(*fd, ELF_C_READ, NULL);
	if (!elf) {
		close(*fd);
		*fd = -1;
	}
	return elf;
}

static void close_elf(Elf *elf, int fd)
{
	elf_end(elf);
	if (fd >= 0)
		close(fd);
}

uint64_t elf_init_offset(const char *path)
{
	uint64_t offset = 0;
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	int fd;
	Elf *elf = open_elf(path, &fd);

	if (elf && elf_getshdrstrndx(elf, &shstrndx) == 0) {
		while ((scn = elf_nextscn(elf, scn)) != NULL) {
			GElf_Shdr sh;
			const char *name;

			if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
			    !(sh.sh_flags & SHF_EXECINSTR) || !sh.sh_size)
				continue;
			name = elf_strptr(elf, shstrndx, sh.sh_name);
			if (name && !strcmp(name, ".init")) {
				offset = sh.sh_offset;
				break;
			}
		}
	}
	close_elf(elf, fd);
	return offset;
}

uint64_t elf_function_offset(const char *path, const char *name)
{
	uint64_t vaddr = 0, off = 0;
	size_t phnum = 0;
	Elf_Scn *scn = NULL;
	int fd;
	Elf *elf = open_elf(path, &fd);

	while (elf && !vaddr && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_DYNSYM && sh.sh_type != SHT_SYMTAB) ||
		    !sh.sh_entsize || !(data = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *s;

			if (!gelf_getsym(data, (int)i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
			    !sym.st_value || !(s = elf_strptr(elf, sh.sh_link, sym.st_name)) ||
			    strcmp(s, name))
				continue;
			vaddr = sym.st_value;
			break;
		}
	}
	/* A uprobe goes at a file offset: the loadable segment holding vaddr says which. */
	if (vaddr && !elf_getphdrnum(elf, &phnum)) {
		for (size_t i = 0; i < phnum; i++) {
			GElf_Phdr ph;

			if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD &&
			    vaddr >= ph.p_vaddr && vaddr < ph.p_vaddr + ph.p_filesz) {
				off = vaddr - ph.p_vaddr + ph.p_offset;
				break;
			}
		}
	}
	close_elf(elf, fd);
	return off;
}

/* Symbol `name` of a defined symbol in the table at scn; false if none. */
static bool table_symbol(Elf *elf, Elf_Scn *scn, const char *name, uint64_t *vaddr)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	GElf_Shdr sh;

	if (!gelf_getshdr(scn, &sh) || !sh.sh_entsize || !data)
		return false;
	for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
		GElf_Sym sym;
		const char *s;

		if (!gelf_getsym(data, (int)i, &sym) || sym.st_shndx == SHN_UNDEF ||
		    !(s = elf_strptr(elf, sh.sh_link, sym.st_name)) || strcmp(s, name))
			continue;
		*vaddr = sym.st_value;
		return true;
	}
	return false;
}

int elf_symbol_vaddr(const char *path, const char *name, uint64_t *vaddr)
{
	Elf_Scn *scn = NULL, *symtab = NULL, *dynsym = NULL;
	bool found = false;
	int fd;
	Elf *elf = open_elf(path, &fd);

	while (elf && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_SYMTAB)
			symtab = scn;
		else if (sh.sh_type == SHT_DYNSYM)
			dynsym = scn;
	}
	/* .symtab first: it also has the static variables .dynsym leaves out. */
	found = (symtab && table_symbol(elf, symtab, name, vaddr)) ||
		(dynsym && table_symbol(elf, dynsym, name, vaddr));
	close_elf(elf, fd);
	return found ? 0 : -ENOENT;
}
