/* SPDX-License-Identifier: MIT */
/*
 * readelf_notes.h - a file's USDT (stapsdt) notes as binutils' readelf
 * prints them: the independent reading the tests compare ours with. For
 * tests linked with cmocka (a readelf that cannot run fails the test).
 */
#ifndef CTRACE_TEST_READELF_NOTES_H
#define CTRACE_TEST_READELF_NOTES_H

#include <stddef.h>

struct readelf_note {
	char provider[80], name[80], args[256];
	unsigned long long loc, base, sema;
};

/* The stapsdt notes of `readelf -nW PATH`, in file order (at most max). */
size_t readelf_notes(const char *path, struct readelf_note *v, size_t max);

#endif
