/* SPDX-License-Identifier: MIT */
/*
 * test_usdt_argloc.c - a USDT note's argument specs read as the probe
 * reads them (userspace/attach/usdt_argloc.c): every form real notes use, with
 * the specs copied from Debian's PostgreSQL 15 (checkpoint__done,
 * buffer__sync__done: %rip-relative, with the offset before the symbol),
 * sizes and signs, and a one-line reason for what it cannot read.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <linux/ptrace.h>

#include "attach/usdt_argloc.h"

static struct usdt_argloc a[CTRACE_USDT_ARGS];
static char err[300];

#define REG(r) offsetof(struct pt_regs, r)

static void expect_loc(int i, int type, int reg_off, int64_t off, int size, int is_signed, const char *sym)
{
	assert_int_equal(a[i].loc.type, type);
	if (type != CTRACE_USDT_LOC_CONST)
		assert_int_equal(a[i].loc.reg_off, reg_off);
	assert_int_equal(a[i].loc.off, off);
	assert_int_equal(a[i].loc.shift, 64 - 8 * size);
	assert_int_equal(a[i].loc.is_signed, is_signed);
	assert_string_equal(a[i].sym, sym);
}

static void test_rip_relative_forms_of_real_notes(void **state)
{
	(void)state;
	/* postgres 15, checkpoint__done */
	assert_int_equal(usdt_argloc_parse("-4@40+CheckpointStats(%rip) -4@NBuffers(%rip) -4@44+CheckpointStats(%rip) "
					   "-4@48+CheckpointStats(%rip) -4@52+CheckpointStats(%rip)", a, err, sizeof(err)), 5);
	expect_loc(0, CTRACE_USDT_LOC_DEREF, REG(rip), 40, 4, 1, "CheckpointStats");
	expect_loc(1, CTRACE_USDT_LOC_DEREF, REG(rip), 0, 4, 1, "NBuffers");
	expect_loc(4, CTRACE_USDT_LOC_DEREF, REG(rip), 52, 4, 1, "CheckpointStats");
	/* postgres 15, buffer__sync__done: mixed with registers */
	assert_int_equal(usdt_argloc_parse("-4@NBuffers(%rip) -4@%eax -4@%r14d", a, err, sizeof(err)), 3);
	expect_loc(1, CTRACE_USDT_LOC_REG, REG(rax), 0, 4, 1, "");
	expect_loc(2, CTRACE_USDT_LOC_REG, REG(r14), 0, 4, 1, "");
	/* the offset after the symbol, either sign; a local label's dot */
	assert_int_equal(usdt_argloc_parse("8@table+16(%rip) 2@table-8(%rip) 1@.Lstate(%rip)", a, err, sizeof(err)), 3);
	expect_loc(0, CTRACE_USDT_LOC_DEREF, REG(rip), 16, 8, 0, "table");
	expect_loc(1, CTRACE_USDT_LOC_DEREF, REG(rip), -8, 2, 0, "table");
	expect_loc(2, CTRACE_USDT_LOC_DEREF, REG(rip), 0, 1, 0, ".Lstate");
}

static void test_the_forms_libbpf_reads_too(void **state)
{
	(void)state;
	assert_int_equal(usdt_argloc_parse("-1@%r12b 2@%r13w -4@%r14d -8@%r15 -4@$7 8@$-1 -4@$0x10 "
					   "-8@0(%rbp) -4@-8(%rbp) 8@(%rdi) 1@%sil 4@0x18(%rax)", a, err, sizeof(err)), 12);
	expect_loc(0, CTRACE_USDT_LOC_REG, REG(r12), 0, 1, 1, "");
	expect_loc(1, CTRACE_USDT_LOC_REG, REG(r13), 0, 2, 0, "");
	expect_loc(3, CTRACE_USDT_LOC_REG, REG(r15), 0, 8, 1, "");
	expect_loc(4, CTRACE_USDT_LOC_CONST, 0, 7, 4, 1, "");
	expect_loc(5, CTRACE_USDT_LOC_CONST, 0, -1, 8, 0, "");
	expect_loc(6, CTRACE_USDT_LOC_CONST, 0, 16, 4, 1, "");
	expect_loc(7, CTRACE_USDT_LOC_DEREF, REG(rbp), 0, 8, 1, "");
	expect_loc(8, CTRACE_USDT_LOC_DEREF, REG(rbp), -8, 4, 1, "");
	expect_loc(9, CTRACE_USDT_LOC_DEREF, REG(rdi), 0, 8, 0, "");
	expect_loc(10, CTRACE_USDT_LOC_REG, REG(rsi), 0, 1, 0, "");
	expect_loc(11, CTRACE_USDT_LOC_DEREF, REG(rax), 24, 4, 0, "");
	assert_int_equal(usdt_argloc_parse("", a, err, sizeof(err)), 0);
}

static void expect_error(const char *args, const char *reason)
{
	err[0] = '\0';
	assert_int_equal(usdt_argloc_parse(args, a, err, sizeof(err)), -1);
	if (!strstr(err, reason))
		fail_msg("'%s': '%s' does not say '%s'", args, err, reason);
	assert_null(strchr(err, '\n'));
}

static void test_what_it_cannot_read_is_one_line_each(void **state)
{
	(void)state;
	expect_error("4@%xmm0", "register not known");
	expect_error("8@%rip", "register not known");
	expect_error("8@16(%rip)", "with no symbol");
	expect_error("8@sym(%rax)", "other than %rip");
	expect_error("8@(%rax,%rbx,8)", "not a form");
	expect_error("3@%eax", "no size");
	expect_error("%eax", "no size");
	expect_error("4@", "no location");
	expect_error("4@$x", "not a constant");
	expect_error("1@$1 1@$1 1@$1 1@$1 1@$1 1@$1 1@$1 1@$1 1@$1 1@$1 1@$1 1@$1 1@$1", "more than 12");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rip_relative_forms_of_real_notes),
		cmocka_unit_test(test_the_forms_libbpf_reads_too),
		cmocka_unit_test(test_what_it_cannot_read_is_one_line_each),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
