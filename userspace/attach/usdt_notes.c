/* SPDX-License-Identifier: MIT */
/*
 * usdt_notes.c - read the stapsdt notes of an ELF file (see usdt_notes.h).
 *
 * A stapsdt note (owner "stapsdt", type 3) describes one probe site:
 *
 *     desc: u64 site address        link-time address of the probe's nop
 *           u64 .stapsdt.base addr  where the linker put .stapsdt.base
 *           u64 semaphore address   0: no semaphore
 *           provider\0 name\0 args\0
 *
 * The note section is not allocated, so a tool that moves the loaded sections
 * after linking (prelink) cannot fix the addresses in it; it does move
 * .stapsdt.base, and the difference between that section's address now and
 * the one recorded in the note is the correction to apply (as libbpf, BCC and
 * bpftrace do).
 *
 * All parsing goes through libelf (gelf_getnote checks every note's sizes
 * against its section); what is left to check here is the note's own content
 * and that the addresses land inside the file.
 */
#include "attach/usdt_notes.h"

/* For CTRACE_SITE_BYTES, the one definition of our site layout. */
#include "../usdt/ctrace_site.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "lib/categories.h"
#include "lib/grow_array.h"

#define STAPSDT_NOTE_TYPE 3
#define STAPSDT_OWNER "stapsdt" /* with its NUL: namesz 8 */
#define STAPSDT_NOTE_SECTION ".note.stapsdt"
#define STAPSDT_BASE_SECTION ".stapsdt.base"
/* The category notes of usdt/ctrace_site.h: owner "ctrace", type 1, desc u64 semaphore, name\0. */
#define CATEGORY_NOTE_SECTION ".note.ctrace"
#define CATEGORY_OWNER "ctrace"
#define CATEGORY_NOTE_TYPE 1
_Static_assert(USDT_CATEGORY_MAX == CATEGORY_NAME_MAX, "one limit for category names");
/* More categories than this in one file is a hostile file. */
#define CATEGORIES_MAX 1000
/* Three 64-bit addresses, then three strings of at least their NUL. */
#define STAPSDT_DESC_MIN (3 * 8 + 3)
/* A hostile file could describe millions of notes; no real one comes close. */
#define USDT_NOTES_MAX 100000

/* The kernel reads and writes a semaphore as a 16-bit counter. */
#define SEMAPHORE_SIZE 2

__attribute__((format(printf, 3, 4))) static void
set_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* The fixed-size fields of a note's desc are in the file's byte order. */
static uint64_t get_u64(const unsigned char *p, bool msb)
{
	uint64_t v = 0;

	for (int i = 0; i < 8; i++)
		v |= (uint64_t)p[msb ? 7 - i : i] << (8 * i);
	return v;
}

/*
 * Copies the NUL-terminated string at desc[*pos] into dst (cap bytes) and
 * moves *pos past its NUL. The string must end inside the desc and fit.
 */
static int take_string(const unsigned char *desc, size_t desc_len, size_t *pos,
		       char *dst, size_t cap)
{
	const unsigned char *s = desc + *pos;
	const unsigned char *nul = memchr(s, '\0', desc_len - *pos);
	size_t len;

	if (!nul)
		return -EINVAL;
	len = (size_t)(nul - s);
	if (len >= cap)
		return -ENAMETOOLONG;
	memcpy(dst, s, len);
	dst[len] = '\0';
	*pos += len + 1;
	return 0;
}

/* What the notes need to know about the file as a whole. */
struct elf_file {
	Elf *elf;
	size_t phnum;
	uint64_t size; /* bytes in the file */
	bool msb;      /* big-endian file */
	bool has_base; /* a .stapsdt.base section exists */
	uint64_t base_addr;
	/* The categories' semaphores (link-time addresses) and names. */
	struct file_category { uint64_t sema; char name[USDT_CATEGORY_MAX]; } *cats;
	size_t n_cats, cap_cats;
};

/*
 * Translates a link-time address into a file offset through the PT_LOAD
 * segment that holds it with flag `need` (PF_X for a site, PF_W for a
 * semaphore). The `size` bytes from there on must be in the file itself: a
 * uprobe replaces file bytes, and a semaphore in .bss would live in anonymous
 * memory the kernel's ref_ctr_offset cannot reach.
 */
static int vaddr_to_offset(const struct elf_file *f, uint64_t vaddr,
			   uint32_t need, uint64_t size, uint64_t *offset)
{
	for (size_t i = 0; i < f->phnum; i++) {
		GElf_Phdr ph;
		uint64_t delta;

		if (!gelf_getphdr(f->elf, (int)i, &ph))
			return -EINVAL;
		if (ph.p_type != PT_LOAD || !(ph.p_flags & need))
			continue;
		if (vaddr < ph.p_vaddr)
			continue;
		delta = vaddr - ph.p_vaddr;
		if (delta >= ph.p_filesz || ph.p_filesz - delta < size)
			continue;
		/* The segment's bytes must exist in the file (no wrap-around). */
		if (ph.p_offset > f->size || f->size - ph.p_offset < delta ||
		    f->size - ph.p_offset - delta < size)
			return -EINVAL;
		*offset = ph.p_offset + delta;
		return 0;
	}
	return -ENOENT;
}

/* Decodes one stapsdt note's desc into *n. */
static int parse_note(const struct elf_file *f, const unsigned char *desc,
		      size_t desc_len, struct usdt_note *n, char *err,
		      size_t errlen)
{
	uint64_t note_base;
	size_t pos = 24;
	int rc;

	if (desc_len < STAPSDT_DESC_MIN) {
		set_err(err, errlen, "stapsdt note too short (%zu bytes)",
			desc_len);
		return -EINVAL;
	}
	n->site_vaddr = get_u64(desc, f->msb);
	note_base = get_u64(desc + 8, f->msb);
	n->sema_vaddr = get_u64(desc + 16, f->msb);

	if ((rc = take_string(desc, desc_len, &pos, n->provider,
			      sizeof(n->provider))) ||
	    (rc = take_string(desc, desc_len, &pos, n->name,
			      sizeof(n->name))) ||
	    (rc = take_string(desc, desc_len, &pos, n->args,
			      sizeof(n->args)))) {
		set_err(err, errlen, "stapsdt note with a %s string",
			rc == -ENAMETOOLONG ? "too long" : "unterminated");
		return -EINVAL;
	}
	if (!n->provider[0] || !n->name[0]) {
		set_err(err, errlen, "stapsdt note without provider or name");
		return -EINVAL;
	}

	/* Prelink-style relocation: shift by how far .stapsdt.base moved. */
	if (f->has_base && note_base) {
		uint64_t adjust = f->base_addr - note_base; /* mod 2^64 */

		n->site_vaddr += adjust;
		if (n->sema_vaddr)
			n->sema_vaddr += adjust;
	}

	if (vaddr_to_offset(f, n->site_vaddr, PF_X, 1, &n->site_offset)) {
		set_err(err, errlen,
			"probe %s:%s at 0x%llx is not in an executable segment",
			n->provider, n->name,
			(unsigned long long)n->site_vaddr);
		return -EINVAL;
	}
	n->sema_offset = 0;
	if (n->sema_vaddr &&
	    vaddr_to_offset(f, n->sema_vaddr, PF_W, SEMAPHORE_SIZE,
			    &n->sema_offset)) {
		set_err(err, errlen,
			"semaphore of %s:%s at 0x%llx is not in a writable segment",
			n->provider, n->name,
			(unsigned long long)n->sema_vaddr);
		return -EINVAL;
	}
	return 0;
}

static int list_append(struct usdt_note_list *l, const struct usdt_note *n,
		       size_t *cap)
{
	if (GROW_ARRAY(l->v, *cap, l->n, 16))
		return -ENOMEM;
	l->v[l->n++] = *n;
	return 0;
}

/* Reads every stapsdt note of one SHT_NOTE section. */
static int read_note_section(const struct elf_file *f, Elf_Scn *scn,
			     struct usdt_note_list *out, size_t *cap, char *err,
			     size_t errlen)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t off = 0, next, name_off, desc_off;
	GElf_Nhdr nh;
	int rc;

	if (!data) {
		set_err(err, errlen, "cannot read %s: %s", STAPSDT_NOTE_SECTION,
			elf_errmsg(-1));
		return -EINVAL;
	}
	if (!data->d_buf)
		return 0; /* SHT_NOBITS or empty: no notes */

	while ((next = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
		const unsigned char *buf = data->d_buf;
		struct usdt_note n;

		off = next;
		/* Other kinds of notes may share the section: skip them. */
		if (nh.n_type != STAPSDT_NOTE_TYPE ||
		    nh.n_namesz != sizeof(STAPSDT_OWNER) ||
		    memcmp(buf + name_off, STAPSDT_OWNER,
			   sizeof(STAPSDT_OWNER)) != 0)
			continue;
		if (out->n >= USDT_NOTES_MAX) {
			set_err(err, errlen, "more than %d stapsdt notes",
				USDT_NOTES_MAX);
			return -EINVAL;
		}
		memset(&n, 0, sizeof(n));
		rc = parse_note(f, buf + desc_off, nh.n_descsz, &n, err, errlen);
		if (rc)
			return rc;
		if ((rc = list_append(out, &n, cap))) {
			set_err(err, errlen, "out of memory");
			return rc;
		}
	}
	/* gelf_getnote also returns 0 for a note that overruns the section. */
	if (off < data->d_size) {
		set_err(err, errlen, "malformed note at offset %zu of %s", off,
			STAPSDT_NOTE_SECTION);
		return -EINVAL;
	}
	return 0;
}

/*
 * Reads the category notes of one .note.ctrace section. Under LTO one
 * category may be described once per partition: the same address and
 * name again is fine; one address with two names is a malformed file.
 */
static int read_category_section(struct elf_file *f, Elf_Scn *scn, char *err, size_t errlen)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t off = 0, next, name_off, desc_off;
	GElf_Nhdr nh;

	if (!data) {
		set_err(err, errlen, "cannot read %s: %s", CATEGORY_NOTE_SECTION, elf_errmsg(-1));
		return -EINVAL;
	}
	if (!data->d_buf)
		return 0;
	while ((next = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
		const unsigned char *desc = (const unsigned char *)data->d_buf + desc_off;
		const char *name = (const char *)desc + 8;
		const char *nul;
		uint64_t sema;
		size_t i;

		off = next;
		if (nh.n_type != CATEGORY_NOTE_TYPE || nh.n_namesz != sizeof(CATEGORY_OWNER) ||
		    memcmp((const char *)data->d_buf + name_off, CATEGORY_OWNER, sizeof(CATEGORY_OWNER)))
			continue;
		if (nh.n_descsz < 10 || !(nul = memchr(name, '\0', nh.n_descsz - 8)) ||
		    !category_name_valid(name, (size_t)(nul - name))) {
			set_err(err, errlen, "category note without a valid name");
			return -EINVAL;
		}
		sema = get_u64(desc, f->msb);
		for (i = 0; i < f->n_cats; i++)
			if (f->cats[i].sema == sema)
				break;
		if (i < f->n_cats) {
			if (strcmp(f->cats[i].name, name)) {
				set_err(err, errlen, "semaphore 0x%llx of two categories (%s, %s)",
					(unsigned long long)sema, f->cats[i].name, name);
				return -EINVAL;
			}
			continue;
		}
		if (f->n_cats >= CATEGORIES_MAX) {
			set_err(err, errlen, "more than %d categories", CATEGORIES_MAX);
			return -EINVAL;
		}
		if (GROW_ARRAY(f->cats, f->cap_cats, f->n_cats, 8)) {
			set_err(err, errlen, "out of memory");
			return -ENOMEM;
		}
		f->cats[f->n_cats].sema = sema;
		snprintf(f->cats[f->n_cats++].name, USDT_CATEGORY_MAX, "%s", name);
	}
	if (off < data->d_size) {
		set_err(err, errlen, "malformed note at offset %zu of %s", off, CATEGORY_NOTE_SECTION);
		return -EINVAL;
	}
	return 0;
}

/* Names each note's category (its semaphore's link-time address, as the note gave it). */
static void name_categories(const struct elf_file *f, struct usdt_note_list *out, size_t from)
{
	for (size_t i = from; i < out->n; i++) {
		struct usdt_note *n = &out->v[i];

		snprintf(n->category, sizeof(n->category), "%s", USDT_DEFAULT_CATEGORY);
		for (size_t c = 0; c < f->n_cats && n->sema_vaddr; c++)
			if (f->cats[c].sema == n->sema_vaddr) {
				snprintf(n->category, sizeof(n->category), "%s", f->cats[c].name);
				break;
			}
	}
}

/*
 * Walks the section headers: a first pass finds .stapsdt.base (every note
 * needs it), a second reads the note sections.
 */
static int read_sections(struct elf_file *f, struct usdt_note_list *out,
			 char *err, size_t errlen)
{
	size_t shstrndx, shnum, cap = 0;
	int rc;

	if (elf_getshdrstrndx(f->elf, &shstrndx) ||
	    elf_getshdrnum(f->elf, &shnum)) {
		set_err(err, errlen, "bad section headers: %s", elf_errmsg(-1));
		return -EINVAL;
	}
	for (int pass = 0; pass < 2; pass++) {
		Elf_Scn *scn = NULL;
		size_t seen = 0;

		while ((scn = elf_nextscn(f->elf, scn))) {
			GElf_Shdr sh;
			const char *name;

			seen++;
			if (!gelf_getshdr(scn, &sh) ||
			    !(name = elf_strptr(f->elf, shstrndx, sh.sh_name))) {
				set_err(err, errlen, "bad section header: %s",
					elf_errmsg(-1));
				return -EINVAL;
			}
			if (pass == 0 && !f->has_base &&
			    strcmp(name, STAPSDT_BASE_SECTION) == 0) {
				f->has_base = true;
				f->base_addr = sh.sh_addr;
			} else if (pass == 0 && sh.sh_type == SHT_NOTE &&
				   strcmp(name, CATEGORY_NOTE_SECTION) == 0) {
				rc = read_category_section(f, scn, err, errlen);
				if (rc)
					return rc;
			} else if (pass == 1 && sh.sh_type == SHT_NOTE &&
				   strcmp(name, STAPSDT_NOTE_SECTION) == 0) {
				rc = read_note_section(f, scn, out, &cap, err,
						       errlen);
				if (rc)
					return rc;
			}
		}
		/*
		 * elf_nextscn returns NULL at the end and on an error alike:
		 * every section but the null one must have been seen.
		 */
		if (shnum && seen != shnum - 1) {
			set_err(err, errlen, "bad section headers");
			return -EINVAL;
		}
	}
	return 0;
}

void usdt_note_list_free(struct usdt_note_list *l)
{
	if (!l)
		return;
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

int usdt_notes_read_fd(int fd, struct usdt_note_list *out, char *err,
		       size_t errlen)
{
	struct elf_file f = { 0 };
	GElf_Ehdr eh;
	struct stat st;
	size_t shnum;
	int rc;

	memset(out, 0, sizeof(*out));
	set_err(err, errlen, "%s", "");
	if (fstat(fd, &st)) {
		rc = -errno;
		set_err(err, errlen, "cannot stat: %s", strerror(-rc));
		return rc;
	}
	if (!S_ISREG(st.st_mode)) {
		set_err(err, errlen, "not a regular file");
		return -ENOEXEC;
	}
	f.size = (uint64_t)st.st_size;

	if (elf_version(EV_CURRENT) == EV_NONE) {
		set_err(err, errlen, "libelf: %s", elf_errmsg(-1));
		return -EINVAL;
	}
	/* ELF_C_READ reads with pread: a file truncated under us cannot SIGBUS. */
	f.elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!f.elf) {
		set_err(err, errlen, "libelf: %s", elf_errmsg(-1));
		return -EINVAL;
	}
	rc = -ENOEXEC;
	if (elf_kind(f.elf) != ELF_K_ELF) {
		set_err(err, errlen, "not an ELF file");
		goto out;
	}
	if (gelf_getclass(f.elf) != ELFCLASS64) {
		set_err(err, errlen, "not a 64-bit ELF file");
		goto out;
	}
	if (!gelf_getehdr(f.elf, &eh)) {
		set_err(err, errlen, "truncated ELF header");
		goto out;
	}
	if (eh.e_type != ET_EXEC && eh.e_type != ET_DYN) {
		set_err(err, errlen,
			"not an executable or shared object (ELF type %u)",
			(unsigned)eh.e_type);
		goto out;
	}
	rc = -EINVAL;
	if (eh.e_ident[EI_DATA] != ELFDATA2LSB &&
	    eh.e_ident[EI_DATA] != ELFDATA2MSB) {
		set_err(err, errlen, "unknown ELF byte order");
		goto out;
	}
	f.msb = eh.e_ident[EI_DATA] == ELFDATA2MSB;
	if (elf_getphdrnum(f.elf, &f.phnum)) {
		set_err(err, errlen, "bad program headers: %s", elf_errmsg(-1));
		goto out;
	}
	/*
	 * libelf acts as if a file had no sections when its section header
	 * table lies beyond the end (a truncated file): that is an error here,
	 * not "no probes". Only e_shoff == 0 means no section headers.
	 */
	if (eh.e_shoff != 0 &&
	    (elf_getshdrnum(f.elf, &shnum) || shnum == 0)) {
		set_err(err, errlen, "section headers outside the file (truncated?)");
		goto out;
	}
	out->elf_type = eh.e_type;
	rc = read_sections(&f, out, err, errlen);
	if (!rc)
		name_categories(&f, out, 0);
out:
	free(f.cats);
	elf_end(f.elf);
	if (rc)
		usdt_note_list_free(out);
	return rc;
}

int usdt_notes_read(const char *path, struct usdt_note_list *out, char *err,
		    size_t errlen)
{
	int fd, rc;

	memset(out, 0, sizeof(*out));
	/* O_NONBLOCK: a FIFO must not hang the open; fstat then rejects it. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		rc = -errno;
		set_err(err, errlen, "%s",
			rc == -ENOENT ? "no such file" : strerror(-rc));
		return rc;
	}
	rc = usdt_notes_read_fd(fd, out, err, errlen);
	close(fd);
	return rc;
}

bool usdt_is_ctrace_site(int fd, uint64_t site_offset)
{
	static const unsigned char want[CTRACE_SITE_LEN] = CTRACE_SITE_BYTES;
	unsigned char got[CTRACE_SITE_LEN];
	size_t have = 0;

	_Static_assert(sizeof(want) == CTRACE_SITE_LEN,
		       "CTRACE_SITE_BYTES and CTRACE_SITE_LEN disagree");
	if (site_offset > (uint64_t)INT64_MAX - sizeof(got))
		return false;
	while (have < sizeof(got)) {
		ssize_t r = pread(fd, got + have, sizeof(got) - have,
				  (off_t)(site_offset + have));

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return false;
		have += (size_t)r;
	}
	return memcmp(got, want, sizeof(want)) == 0;
}
