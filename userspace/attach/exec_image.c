// SPDX-License-Identifier: MIT
#include "attach/exec_image.h"

#include <gelf.h>
#include <libelf.h>

/* The kernel maps segments in pages (x86-64: 4 KiB), whatever their p_align. */
#define IMAGE_PAGE 4096ull

int exec_image_ranges(int fd, uint64_t start_code, struct exec_image_range *v, size_t max)
{
	uint64_t lowest_x = UINT64_MAX, bias;
	size_t nph, n = 0;
	GElf_Ehdr eh;
	Elf *elf;
	int ret = -1;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -1;
	/* ELF_C_READ: read with pread, so a file cut short under us cannot SIGBUS. */
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf)
		return -1;
	if (!gelf_getehdr(elf, &eh) || (eh.e_type != ET_EXEC && eh.e_type != ET_DYN) ||
	    elf_getphdrnum(elf, &nph) != 0)
		goto out;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD && (ph.p_flags & PF_X) &&
		    ph.p_vaddr < lowest_x)
			lowest_x = ph.p_vaddr;
	}
	if (lowest_x == UINT64_MAX || start_code < lowest_x)
		goto out;
	bias = start_code - lowest_x;
	for (size_t i = 0; i < nph && n < max; i++) {
		GElf_Phdr ph;
		uint64_t at, in_page;

		/* Writable segments are the process's own bytes after relocation, never the file's. */
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD || !(ph.p_flags & PF_R) ||
		    (ph.p_flags & PF_W) || !ph.p_filesz)
			continue;
		at = bias + ph.p_vaddr;
		in_page = ph.p_vaddr % IMAGE_PAGE;
		if (ph.p_offset < in_page || at + ph.p_filesz < at)
			continue; /* not mappable as the kernel maps segments */
		v[n].start = at - in_page;
		v[n].end = (at + ph.p_filesz + IMAGE_PAGE - 1) & ~(IMAGE_PAGE - 1);
		v[n].offset = ph.p_offset - in_page;
		n++;
	}
	ret = (int)n;
out:
	elf_end(elf);
	return ret;
}
