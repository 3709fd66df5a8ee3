// SPDX-License-Identifier: MIT
/*
 * usdt_argloc.c - parse a USDT note's argument specs (usdt_argloc.h).
 * Every form <sys/sdt.h> makes GCC and Clang write on x86-64: SIZE@LOC
 * with SIZE 1, 2, 4 or 8, negative for a signed argument, and LOC one of
 * $CONST, %REG (any width), [DISP](%REG), SYM(%rip), SYM+N(%rip),
 * N+SYM(%rip), SYM-N(%rip).
 */
#include "attach/usdt_argloc.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/ptrace.h>

/* A register of every width (libbpf's names), with the offset of its 64-bit whole in struct pt_regs. */
static const struct {
	const char *names[4];
	short off;
} regs[] = {
	{ { "rip", "eip", NULL, NULL }, offsetof(struct pt_regs, rip) },
	{ { "rax", "eax", "ax", "al" }, offsetof(struct pt_regs, rax) },
	{ { "rbx", "ebx", "bx", "bl" }, offsetof(struct pt_regs, rbx) },
	{ { "rcx", "ecx", "cx", "cl" }, offsetof(struct pt_regs, rcx) },
	{ { "rdx", "edx", "dx", "dl" }, offsetof(struct pt_regs, rdx) },
	{ { "rsi", "esi", "si", "sil" }, offsetof(struct pt_regs, rsi) },
	{ { "rdi", "edi", "di", "dil" }, offsetof(struct pt_regs, rdi) },
	{ { "rbp", "ebp", "bp", "bpl" }, offsetof(struct pt_regs, rbp) },
	{ { "rsp", "esp", "sp", "spl" }, offsetof(struct pt_regs, rsp) },
	{ { "r8", "r8d", "r8w", "r8b" }, offsetof(struct pt_regs, r8) },
	{ { "r9", "r9d", "r9w", "r9b" }, offsetof(struct pt_regs, r9) },
	{ { "r10", "r10d", "r10w", "r10b" }, offsetof(struct pt_regs, r10) },
	{ { "r11", "r11d", "r11w", "r11b" }, offsetof(struct pt_regs, r11) },
	{ { "r12", "r12d", "r12w", "r12b" }, offsetof(struct pt_regs, r12) },
	{ { "r13", "r13d", "r13w", "r13b" }, offsetof(struct pt_regs, r13) },
	{ { "r14", "r14d", "r14w", "r14b" }, offsetof(struct pt_regs, r14) },
	{ { "r15", "r15d", "r15w", "r15b" }, offsetof(struct pt_regs, r15) },
};

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -1;
}

/* The pt_regs offset of register `name` (len bytes, no '%'), or -1. */
static int reg_offset(const char *name, size_t len)
{
	for (size_t i = 0; i < sizeof(regs) / sizeof(regs[0]); i++)
		for (int w = 0; w < 4; w++)
			if (regs[i].names[w] && strlen(regs[i].names[w]) == len &&
			    !strncmp(regs[i].names[w], name, len))
				return regs[i].off;
	return -1;
}

/* A number (decimal, 0x hex, a sign) at *p, which moves past it; false if none. */
static bool number(const char **p, const char *end, int64_t *v)
{
	char buf[32], *e;
	size_t n = (size_t)(end - *p);

	if (n >= sizeof(buf))
		n = sizeof(buf) - 1;
	memcpy(buf, *p, n);
	buf[n] = '\0';
	if (!isdigit((unsigned char)buf[0]) && !((buf[0] == '-' || buf[0] == '+') && isdigit((unsigned char)buf[1])))
		return false;
	errno = 0;
	*v = (int64_t)strtoull(buf, &e, 0);
	if (buf[0] == '-')
		*v = strtoll(buf, &e, 0);
	if (errno || e == buf)
		return false;
	*p += e - buf;
	return true;
}

static bool sym_char(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '.' || c == '$';
}

/* LOC of one spec, [p, end): out's location (its size and sign already set). */
static int parse_loc(const char *p, const char *end, struct usdt_argloc *out, const char *spec,
		     char *err, size_t errlen)
{
	struct ctrace_usdt_arg_loc *loc = &out->loc;
	const char *open, *sym = NULL;
	size_t sym_len = 0;
	int64_t disp = 0, more;
	int reg;

	if (*p == '$') { /* $CONST */
		p++;
		if (!number(&p, end, &disp) || p != end)
			return fail(err, errlen, "argument spec '%s': not a constant", spec);
		loc->type = CTRACE_USDT_LOC_CONST;
		loc->off = disp;
		return 0;
	}
	if (*p == '%') { /* %REG */
		if ((reg = reg_offset(p + 1, (size_t)(end - p - 1))) < 0 || reg == offsetof(struct pt_regs, rip))
			return fail(err, errlen, "argument spec '%s': register not known", spec);
		loc->type = CTRACE_USDT_LOC_REG;
		loc->reg_off = (short)reg;
		return 0;
	}
	/* [N+]SYM[+-N](%REG), or [N](%REG) */
	open = memchr(p, '(', (size_t)(end - p));
	if (!open || end - open < 4 || open[1] != '%' || end[-1] != ')' ||
	    memchr(open, ',', (size_t)(end - open)))
		return fail(err, errlen, "argument spec '%s': not a form this version reads", spec);
	if ((reg = reg_offset(open + 2, (size_t)(end - open - 3))) < 0)
		return fail(err, errlen, "argument spec '%s': register not known", spec);
	if (number(&p, open, &disp) && *p == '+')
		p++;
	if (p < open && !isdigit((unsigned char)*p) && sym_char(*p)) {
		for (sym = p; p < open && sym_char(*p); p++)
			;
		sym_len = (size_t)(p - sym);
		if ((*p == '+' || *p == '-') && number(&p, open, &more))
			disp += more;
	}
	if (p != open)
		return fail(err, errlen, "argument spec '%s': not a form this version reads", spec);
	if (reg == offsetof(struct pt_regs, rip) && !sym)
		return fail(err, errlen, "argument spec '%s': %%rip-relative with no symbol", spec);
	if (sym && reg != offsetof(struct pt_regs, rip))
		return fail(err, errlen, "argument spec '%s': a symbol off a register other than %%rip", spec);
	if (sym_len >= sizeof(out->sym))
		return fail(err, errlen, "argument spec '%s': symbol too long", spec);
	loc->type = CTRACE_USDT_LOC_DEREF;
	loc->reg_off = (short)reg;
	loc->off = disp;
	if (sym)
		memcpy(out->sym, sym, sym_len);
	out->sym[sym_len] = '\0';
	return 0;
}

int usdt_argloc_parse(const char *args, struct usdt_argloc *out, char *err, size_t errlen)
{
	const char *p = args;
	int n = 0;

	while (*p) {
		const char *start, *end, *at;
		char spec[USDT_SYM_MAX + 64];
		long size;

		while (*p == ' ')
			p++;
		if (!*p)
			break;
		for (start = p; *p && *p != ' '; p++)
			;
		end = p;
		snprintf(spec, sizeof(spec), "%.*s", (int)(end - start), start);
		if (n == CTRACE_USDT_ARGS)
			return fail(err, errlen, "more than %d arguments", CTRACE_USDT_ARGS);
		memset(&out[n], 0, sizeof(out[n]));
		at = memchr(start, '@', (size_t)(end - start));
		size = at ? strtol(start, NULL, 10) : 0;
		if (!at || at - start > 2 || !(labs(size) == 1 || labs(size) == 2 || labs(size) == 4 || labs(size) == 8))
			return fail(err, errlen, "argument spec '%s': no size (1, 2, 4 or 8, then '@')", spec);
		out[n].loc.is_signed = size < 0;
		out[n].loc.shift = (uint8_t)(64 - 8 * labs(size));
		if (at + 1 == end || parse_loc(at + 1, end, &out[n], spec, err, errlen) < 0)
			return at + 1 == end ? fail(err, errlen, "argument spec '%s': no location", spec) : -1;
		n++;
	}
	return n;
}
