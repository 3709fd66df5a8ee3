/* SPDX-License-Identifier: MIT */
/*
 * exec_image.h - where an exec() mapped its program, from the kernel's word
 * (the EXEC record: mm->start_code) and the file's program headers: the
 * read-only ranges /proc/PID/maps would have shown for the program, for a
 * process gone before the loader looked at it (a short-lived one started
 * under --exe or -f, its batched literals read after its exit).
 */
#ifndef CTRACE_EXEC_IMAGE_H
#define CTRACE_EXEC_IMAGE_H

#include <stddef.h>
#include <stdint.h>

struct exec_image_range {
	uint64_t start, end, offset; /* as a maps line: [start, end) from file offset */
};

/*
 * The read-only loadable segments of the ELF file open at fd, mapped so
 * that its lowest executable segment begins at start_code (how
 * load_elf_binary sets mm->start_code, PIE or not): up to max of them into
 * v. Returns how many, or -1 when the file is no ELF program it could
 * have mapped that way.
 */
int exec_image_ranges(int fd, uint64_t start_code, struct exec_image_range *v, size_t max);

#endif
