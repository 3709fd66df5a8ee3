// SPDX-License-Identifier: MIT
#include "attach/usdt_interpreter.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <string.h>
#include <unistd.h>

#define PY_3_11 0x030b0000u
#define PY_3_12 0x030c0000u

/* The 4 bytes at link-time address vaddr of the ELF file (little endian); false if not in the file. */
static bool read_u32_at(int fd, Elf *elf, uint64_t vaddr, uint32_t *v)
{
	size_t phnum;

	if (elf_getphdrnum(elf, &phnum))
		return false;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD || vaddr < ph.p_vaddr ||
		    vaddr - ph.p_vaddr + 4 > ph.p_filesz)
			continue;
		return pread(fd, v, 4, (off_t)(ph.p_offset + vaddr - ph.p_vaddr)) == 4;
	}
	return false;
}

/* The file's Py_Version (PY_VERSION_HEX, exported since 3.11); 0 if it has none. */
static uint32_t py_version(const char *path)
{
	GElf_Sym sym;
	uint32_t v = 0;
	Elf_Scn *scn = NULL;
	bool found = false;
	Elf *elf;
	int fd;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return 0;
	/* O_NONBLOCK: a FIFO put where the map named the file must not stall the loader. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return 0;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	while (elf && !found && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_DYNSYM && sh.sh_type != SHT_SYMTAB) ||
		    !sh.sh_entsize || !(data = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize && !found; i++) {
			const char *s;

			found = gelf_getsym(data, (int)i, &sym) && sym.st_shndx != SHN_UNDEF &&
				GELF_ST_TYPE(sym.st_info) == STT_OBJECT && sym.st_size >= 4 &&
				(s = elf_strptr(elf, sh.sh_link, sym.st_name)) && !strcmp(s, "Py_Version");
		}
	}
	if (found && !read_u32_at(fd, elf, sym.st_value, &v))
		v = 0;
	elf_end(elf);
	close(fd);
	return v;
}

const char *usdt_begin_fires_rarely(const char *path, const struct usdt_probe *begin)
{
	uint32_t v;

	if (strcmp(begin->provider, "python") || strcmp(begin->name, "function__entry"))
		return NULL;
	v = py_version(path);
	if (v >= PY_3_11 && v < PY_3_12)
		return "CPython 3.11 fires python:function__entry only while sys.settrace or sys.setprofile is set (CPython gh-98894)";
	return NULL;
}
