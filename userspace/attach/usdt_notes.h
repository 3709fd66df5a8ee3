/* SPDX-License-Identifier: MIT */
/*
 * usdt_notes.h - read the SystemTap SDT (USDT) notes of an ELF file.
 *
 * Every USDT probe, ours (provider "ctrace", see usdt/ctrace_site.h) or one
 * made with <sys/sdt.h>, leaves a note in .note.stapsdt giving its link-time
 * address, its semaphore and its argument specs. The kernel attaches uprobes
 * by FILE offset (and counts semaphores by file offset, ref_ctr_offset), so
 * the addresses are translated through the program headers here.
 *
 * The file is untrusted (it may belong to any traced process): a malformed
 * file gives an error and a one-line reason, never a crash.
 */
#ifndef USDT_NOTES_H
#define USDT_NOTES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Longest strings accepted (including the NUL); a longer one is an error. */
#define USDT_PROVIDER_MAX 64
#define USDT_NAME_MAX 64
#define USDT_ARGS_MAX 256
/* A category's name (include/ctrace.h's CTRACE_CATEGORY): an identifier. */
#define USDT_CATEGORY_MAX 64 /* categories.h: CATEGORY_NAME_MAX */
#define USDT_DEFAULT_CATEGORY "ctrace"

struct usdt_note {
	char provider[USDT_PROVIDER_MAX]; /* e.g. "ctrace" */
	char name[USDT_NAME_MAX];         /* e.g. "span_begin" */
	char args[USDT_ARGS_MAX];         /* e.g. "8@%rdi 8@%rsi"; may be "" */
	uint64_t site_vaddr;  /* link-time address, .stapsdt.base applied */
	uint64_t site_offset; /* file offset: the uprobe offset */
	uint64_t sema_vaddr;  /* 0: no semaphore */
	uint64_t sema_offset; /* file offset: the uprobe ref_ctr_offset; 0: none */
	/*
	 * The category of its semaphore, from the file's .note.ctrace notes
	 * (usdt/ctrace_site.h); "ctrace" for a semaphore none describes (the
	 * default, and programs built with headers before categories).
	 */
	char category[USDT_CATEGORY_MAX];
};

struct usdt_note_list {
	struct usdt_note *v;
	size_t n;
	int elf_type; /* ET_EXEC or ET_DYN (PIE executables and libraries) */
};

/*
 * Reads every stapsdt note of the file at `path` into *out (which it
 * overwrites; free it with usdt_note_list_free, also after an error). A file
 * without notes gives 0 and an empty list.
 * Returns 0, or a negative errno with a one-line reason in err (if err is not
 * NULL): -ENOENT etc. when the file cannot be opened, -ENOEXEC when it is not
 * a 64-bit ELF executable or shared object, -EINVAL when it is malformed,
 * -ENOMEM.
 */
int usdt_notes_read(const char *path, struct usdt_note_list *out, char *err,
		    size_t errlen);
/* The same on an open file (read with pread; the fd is neither moved nor closed). */
int usdt_notes_read_fd(int fd, struct usdt_note_list *out, char *err,
		       size_t errlen);
void usdt_note_list_free(struct usdt_note_list *l);

/*
 * True if the bytes at file offset `site_offset` of the file open as `fd` are
 * exactly CTRACE_SITE_BYTES. Our loader then attaches at site_offset +
 * CTRACE_SITE_NOP5_OFFSET (the 5-byte nop); otherwise (a <sys/sdt.h> probe,
 * or anything unexpected) it must attach at site_offset itself.
 */
bool usdt_is_ctrace_site(int fd, uint64_t site_offset);

#endif /* USDT_NOTES_H */
