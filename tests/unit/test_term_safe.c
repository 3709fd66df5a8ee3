/* SPDX-License-Identifier: MIT */
/*
 * test_term_safe.c - target-controlled text made safe for a terminal
 * (userspace/lib/term_safe.h): every byte a terminal acts on is written \xHH,
 * printable UTF-8 stays as it is, a cut never splits an escape or a
 * character, and the column count pads tables right.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "lib/term_safe.h"

static const char *safe(const char *s)
{
	static char buf[256];

	return term_safe_str(buf, sizeof(buf), s);
}

/* ESC sequences, an OSC title, CR, BS, newline, tab, DEL: all \xHH. */
static void test_c0_and_del_escaped(void **state)
{
	(void)state;
	assert_string_equal(safe("a\033[2J\033]0;owned\007b"), "a\\x1b[2J\\x1b]0;owned\\x07b");
	assert_string_equal(safe("x\rfake\bline\n\t\x7f"), "x\\x0dfake\\x08line\\x0a\\x09\\x7f");
	assert_string_equal(safe("\x01\x1f"), "\\x01\\x1f");
}

/* The backslash too: an escaped ESC and the text "\x1b" read differently. */
static void test_backslash_escaped(void **state)
{
	(void)state;
	assert_string_equal(safe("a\\x1b"), "a\\x5cx1b");
}

/* C1 controls, as UTF-8 (U+009B CSI) or as lone bytes: escaped byte by byte. */
static void test_c1_escaped(void **state)
{
	(void)state;
	assert_string_equal(safe("a\xc2\x9b" "2J\xc2\x9d" "0;t\xc2\x9c"), "a\\xc2\\x9b2J\\xc2\\x9d0;t\\xc2\\x9c");
	assert_string_equal(safe("a\x9b" "2J"), "a\\x9b2J");
	/* U+0080 and U+009F, the range's ends; U+00A0 (no-break space) is text */
	assert_string_equal(safe("\xc2\x80\xc2\x9f\xc2\xa0"), "\\xc2\\x80\\xc2\\x9f\xc2\xa0");
}

/* Invalid UTF-8: overlongs, surrogates, past U+10FFFF, cut sequences. */
static void test_invalid_utf8_escaped(void **state)
{
	(void)state;
	assert_string_equal(safe("\xc0\x9b"), "\\xc0\\x9b");         /* overlong ESC-like */
	assert_string_equal(safe("\xe0\x82\x9b"), "\\xe0\\x82\\x9b"); /* overlong C1 */
	assert_string_equal(safe("\xed\xa0\x80"), "\\xed\\xa0\\x80"); /* a surrogate */
	assert_string_equal(safe("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");
	assert_string_equal(safe("\xe2\x82"), "\\xe2\\x82");         /* cut at the end */
	assert_string_equal(safe("\xe2\x82" "a"), "\\xe2\\x82a");    /* cut by ASCII */
	assert_string_equal(safe("\xff\xfe"), "\\xff\\xfe");
}

/* Printable UTF-8 (2, 3 and 4 bytes) stays: names stay readable. */
static void test_printable_utf8_kept(void **state)
{
	(void)state;
	assert_string_equal(safe("caf\xc3\xa9 \xe2\x80\xa6 \xf0\x9f\x98\x80 ~"), "caf\xc3\xa9 \xe2\x80\xa6 \xf0\x9f\x98\x80 ~");
}

/* The bidi overrides and isolates reorder a line: escaped; other marks stay. */
static void test_bidi_controls_escaped(void **state)
{
	(void)state;
	assert_string_equal(safe("a\xe2\x80\xae" "b"), "a\\xe2\\x80\\xaeb");  /* U+202E */
	assert_string_equal(safe("a\xe2\x81\xa6" "b"), "a\\xe2\\x81\\xa6b");  /* U+2066 */
	assert_string_equal(safe("a\xe2\x80\xa9" "b"), "a\xe2\x80\xa9" "b"); /* U+2029 */
}

/* A buffer too small: cut between escapes and characters, "..." after. */
static void test_cut_never_splits(void **state)
{
	char buf[12];

	(void)state;
	assert_string_equal(term_safe_str(buf, sizeof(buf), "abcdefghijklmnop"), "abcdefgh...");
	assert_string_equal(term_safe_str(buf, sizeof(buf), "ab\033\033\033"), "ab\\x1b...");
	assert_string_equal(term_safe_str(buf, sizeof(buf), "abcde\xe2\x80\xa6wxyz"), "abcde\xe2\x80\xa6...");
	assert_string_equal(term_safe_str(buf, sizeof(buf), "abcdef\xe2\x80\xa6xyz"), "abcdef...");
	/* exactly full: no "..." */
	assert_string_equal(term_safe_str(buf, sizeof(buf), "abcdefghijk"), "abcdefghijk");
	assert_string_equal(term_safe_str(buf, sizeof(buf), "abcdefg\033"), "abcdefg\\x1b");
	assert_string_equal(term_safe_str(buf, 4, "abcd"), "...");
	assert_string_equal(term_safe_str(buf, 4, "abc"), "abc");
	assert_string_equal(term_safe_str(buf, sizeof(buf), ""), "");
}

/* TERM_SAFE: a whole path of escapes fits. */
static void test_macro_holds_a_whole_path(void **state)
{
	char *path = malloc(PATH_MAX);
	const char *out;

	(void)state;
	assert_non_null(path);
	memset(path, '\033', PATH_MAX - 1);
	path[PATH_MAX - 1] = '\0';
	out = TERM_SAFE(path);
	assert_int_equal(strlen(out), 4 * (PATH_MAX - 1));
	assert_memory_equal(out + strlen(out) - 4, "\\x1b", 4);
	free(path);
}

/* term_safe_put: the same bytes as term_safe_str, and their columns. */
static void test_put_counts_columns(void **state)
{
	const char name[] = "a\033b\xc3\xa9\x9b";
	char *text = NULL;
	size_t len = 0, cols;
	FILE *f = open_memstream(&text, &len);

	(void)state;
	assert_non_null(f);
	cols = term_safe_put(f, name, sizeof(name) - 1);
	fclose(f);
	assert_string_equal(text, "a\\x1bb\xc3\xa9\\x9b");
	assert_int_equal(cols, 1 + 4 + 1 + 1 + 4);
	free(text);
}

/* term_safe_put takes a length: a NUL inside is escaped, not an end. */
static void test_put_escapes_nul(void **state)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	(void)state;
	assert_non_null(f);
	term_safe_put(f, "a\0b", 3);
	fclose(f);
	assert_string_equal(text, "a\\x00b");
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_c0_and_del_escaped),
		cmocka_unit_test(test_backslash_escaped),
		cmocka_unit_test(test_c1_escaped),
		cmocka_unit_test(test_invalid_utf8_escaped),
		cmocka_unit_test(test_printable_utf8_kept),
		cmocka_unit_test(test_bidi_controls_escaped),
		cmocka_unit_test(test_cut_never_splits),
		cmocka_unit_test(test_macro_holds_a_whole_path),
		cmocka_unit_test(test_put_counts_columns),
		cmocka_unit_test(test_put_escapes_nul),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
