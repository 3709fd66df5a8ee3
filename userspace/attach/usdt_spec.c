// SPDX-License-Identifier: MIT
/*
 * usdt_spec.c - parses --usdt (usdt_spec.h) and expands the presets.
 *
 * One grammar for what a user writes and for the presets, which are lines
 * of it: a preset is tested by the same parser the user's spec goes through.
 *
 *   SPEC   := PROBE ( '~' PROBE ( '|' PROBE )* )? ( ',' OPTION )*
 *   PROBE  := PROVIDER ':' NAME ( '(' ARG ( ',' ARG )* ')' )?
 *   ARG    := 'ARG' n '=' TYPE ( ':' KEY )?      TYPE: int, str, strlen, cxxtype
 *   OPTION := 'name=ARG' n ( '.ARG' m )?  |  'title=' TEXT  |  'dotted' ('/' in the name: '.')
 *             |  'thread=ARG' n (that string names the thread the probe fires on)
 *
 * str: a char *; strlen: a char * whose length is the next argument (the
 * JVM's); cxxtype: a std::type_info *, shown as its type's demangled name.
 */
#include "attach/usdt_spec.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct preset {
	const char *name;
	const char *what; /* for the error message that lists them */
	const char *lines[12];
};

/*
 * The probes of Debian 12's builds (readelf -n): their argument specs and
 * meanings are the programs' own documentation's (PostgreSQL's "Dynamic
 * Tracing" chapter, HotSpot's DTrace probes, CPython's instrumentation
 * page, libstdc++'s unwind-cxx.h).
 */
static const struct preset presets[] = {
	{ "cxx", "libstdc++ exceptions thrown, rethrown and caught", {
		"libstdcxx:throw(ARG0=int:object,ARG1=cxxtype:type),title=C++ throw",
		"libstdcxx:rethrow(ARG0=int:object,ARG1=cxxtype:type),title=C++ rethrow",
		"libstdcxx:catch(ARG0=int:object,ARG1=cxxtype:type),title=C++ catch",
	} },
	{ "python", "CPython function calls, garbage collections and imports", {
		"python:function__entry(ARG0=str:file,ARG1=str:function,ARG2=int:line)"
		"~python:function__return(ARG0=str:file,ARG1=str:function,ARG2=int:line),name=ARG1",
		"python:gc__start(ARG0=int:generation)~python:gc__done(ARG0=int:collected),title=gc",
		"python:import__find__load__start(ARG0=str:module)"
		"~python:import__find__load__done(ARG0=str:module,ARG1=int:found),name=ARG0,title=import",
	} },
	{ "postgres", "PostgreSQL queries, transactions, lock waits and checkpoints", {
		"postgresql:query__start(ARG0=str:query)~postgresql:query__done(ARG0=str:query),name=ARG0",
		"postgresql:query__parse__start(ARG0=str:query)~postgresql:query__parse__done(ARG0=str:query),title=parse",
		"postgresql:query__plan__start~postgresql:query__plan__done,title=plan",
		"postgresql:query__execute__start~postgresql:query__execute__done,title=execute",
		"postgresql:transaction__start(ARG0=int:lxid)"
		"~postgresql:transaction__commit(ARG0=int:lxid)|postgresql:transaction__abort(ARG0=int:lxid),title=transaction",
		"postgresql:lock__wait__start(ARG0=int:tag1,ARG1=int:tag2,ARG2=int:tag3,ARG3=int:tag4,ARG4=int:locktype,ARG5=int:mode)"
		"~postgresql:lock__wait__done,title=lock wait",
		"postgresql:lwlock__wait__start(ARG0=str:tranche,ARG1=int:mode)~postgresql:lwlock__wait__done,title=lwlock wait",
		/* checkpoint__done's specs are %rip-relative (-4@NBuffers(%rip)): usdt_attach.c reads them. */
		"postgresql:checkpoint__start(ARG0=int:flags)"
		"~postgresql:checkpoint__done(ARG0=int:buffers_written,ARG1=int:buffers_total,"
		"ARG2=int:wal_files_added,ARG3=int:wal_files_removed,ARG4=int:wal_files_recycled),title=checkpoint",
		"postgresql:buffer__checkpoint__start(ARG0=int:flags)~postgresql:buffer__checkpoint__done,title=checkpoint: buffers",
		"postgresql:deadlock__found,title=deadlock found",
	} },
	{ "java", "JVM GC pauses, class loading, threads; method calls with -XX:+ExtendedDTraceProbes", {
		"hotspot:method__entry(ARG0=int:thread,ARG1=strlen:class,ARG3=strlen:method,ARG5=strlen:signature)"
		"~hotspot:method__return(ARG0=int:thread,ARG1=strlen:class,ARG3=strlen:method),name=ARG1.ARG3,dotted",
		"hotspot:gc__begin(ARG0=int:full)~hotspot:gc__end,title=GC",
		"hotspot:class__loaded(ARG0=strlen:class,ARG2=int:loader,ARG3=int:shared),title=class loaded",
		"hotspot:thread__start(ARG0=strlen:thread,ARG2=int:java_tid,ARG3=int:native_tid,ARG4=int:daemon),title=thread start,thread=ARG0",
		"hotspot:thread__stop(ARG0=strlen:thread,ARG2=int:java_tid,ARG3=int:native_tid,ARG4=int:daemon),title=thread stop",
	} },
};

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

/* Copies [p, end) into dst (size n) if it fits and is a word of [A-Za-z0-9_]. */
static bool take_word(char *dst, size_t n, const char *p, const char *end)
{
	size_t len = (size_t)(end - p);

	if (!len || len >= n)
		return false;
	for (const char *q = p; q < end; q++)
		if (!isalnum((unsigned char)*q) && *q != '_')
			return false;
	memcpy(dst, p, len);
	dst[len] = '\0';
	return true;
}

/* "ARGn" at p: n (0-11), the end in *endp; -1 if not. */
static int arg_number(const char *p, const char **endp)
{
	char *e;
	long n;

	if (strncmp(p, "ARG", 3) || !isdigit((unsigned char)p[3]))
		return -1;
	n = strtol(p + 3, &e, 10);
	if (n < 0 || n >= CTRACE_USDT_ARGS)
		return -1;
	*endp = e;
	return (int)n;
}

/* One ARG item of a probe's parentheses, [p, end). */
static int parse_arg(struct usdt_probe *pr, const char *p, const char *end, char *err, size_t errlen)
{
	static const struct { const char *name; uint8_t how; } types[] = {
		{ "int", CTRACE_USDT_HOW_VALUE },
		{ "str", CTRACE_USDT_HOW_STR },
		{ "strlen", CTRACE_USDT_HOW_STR_LEN },
		{ "cxxtype", CTRACE_USDT_HOW_STR_AT_8 },
	};
	const char *q, *colon;
	size_t tlen;
	int n = arg_number(p, &q), t;

	if (n < 0 || q >= end || *q != '=')
		return fail(err, errlen, "'%.*s': an argument is ARGn=TYPE with n from 0 to 11 (e.g. ARG0=str)",
			    (int)(end - p), p);
	q++;
	colon = memchr(q, ':', (size_t)(end - q));
	tlen = (size_t)((colon ? colon : end) - q);
	for (t = 0; t < (int)(sizeof(types) / sizeof(types[0])); t++)
		if (strlen(types[t].name) == tlen && !strncmp(types[t].name, q, tlen))
			break;
	if (t == (int)(sizeof(types) / sizeof(types[0])))
		return fail(err, errlen, "'%.*s': the type is int, str, strlen or cxxtype", (int)(end - p), p);
	pr->how[n] = types[t].how;
	if (types[t].how == CTRACE_USDT_HOW_STR_AT_8)
		pr->demangle[n] = true;
	if (colon) {
		char key[USDT_WORD_MAX];

		if (!take_word(key, sizeof(key), colon + 1, end))
			return fail(err, errlen, "'%.*s': a key is a word of letters, digits and _",
				    (int)(end - p), p);
		memcpy(pr->arg_names[n], key, sizeof(key));
	}
	return 0;
}

/* PROVIDER:NAME[(ARG...)] at [p, end) as a new probe of spec `spec`. */
static int parse_probe(struct usdt_specs *s, unsigned spec, enum usdt_role role, const char *p,
		       const char *end, char *err, size_t errlen)
{
	const char *colon = memchr(p, ':', (size_t)(end - p));
	const char *paren = memchr(p, '(', (size_t)(end - p));
	const char *name_end = paren ? paren : end;
	struct usdt_probe *pr;

	if (s->n_probes == USDT_PROBES_MAX)
		return fail(err, errlen, "more than %d probes asked for", USDT_PROBES_MAX);
	pr = &s->probe[s->n_probes];
	memset(pr, 0, sizeof(*pr));
	if (!colon || colon > name_end || !take_word(pr->provider, sizeof(pr->provider), p, colon) ||
	    !take_word(pr->name, sizeof(pr->name), colon + 1, name_end))
		return fail(err, errlen, "'%.*s' is not PROVIDER:NAME (see ctrace-bpf list -p PID for a process's probes)",
			    (int)(end - p), p);
	for (size_t i = 0; i < s->n_probes; i++)
		if (!strcmp(s->probe[i].provider, pr->provider) && !strcmp(s->probe[i].name, pr->name))
			return fail(err, errlen, "%s:%s is asked for twice", pr->provider, pr->name);
	if (paren) {
		const char *q = paren + 1;

		if (end[-1] != ')' || end - 1 <= q)
			return fail(err, errlen, "'%.*s': the arguments end with ')'", (int)(end - p), p);
		while (q < end - 1) {
			const char *comma = memchr(q, ',', (size_t)(end - 1 - q));
			const char *item_end = comma ? comma : end - 1;

			if (parse_arg(pr, q, item_end, err, errlen))
				return -1;
			q = item_end + 1;
		}
	}
	pr->spec = spec;
	pr->role = role;
	s->n_probes++;
	return 0;
}

/* The end of the probe part of a spec that starts at p: its first ',' outside parentheses. */
static const char *probes_end(const char *p)
{
	int depth = 0;

	for (; *p; p++) {
		if (*p == '(')
			depth++;
		else if (*p == ')')
			depth--;
		else if (*p == ',' && !depth)
			break;
	}
	return p;
}

/* [p, end) up to the first of `stops` outside parentheses. */
static const char *probe_end(const char *p, const char *end, const char *stops)
{
	int depth = 0;

	for (; p < end; p++) {
		if (*p == '(')
			depth++;
		else if (*p == ')')
			depth--;
		else if (!depth && strchr(stops, *p))
			break;
	}
	return p;
}

static int parse_options(struct usdt_spec *sp, const char *p, char *err, size_t errlen)
{
	while (*p == ',') {
		const char *end = strchr(p + 1, ',');
		const char *o = p + 1, *q;

		/* A title may hold anything but a comma. */
		end = end ? end : o + strlen(o);
		if (!strncmp(o, "title=", 6) && end > o + 6) {
			size_t n = (size_t)(end - o - 6);

			if (n >= sizeof(sp->title))
				return fail(err, errlen, "the title is longer than %zu bytes", sizeof(sp->title) - 1);
			memcpy(sp->title, o + 6, n);
			sp->title[n] = '\0';
		} else if (end - o == 6 && !strncmp(o, "dotted", 6)) {
			sp->dotted = true;
		} else if (!strncmp(o, "thread=", 7) && (sp->thread_name_arg = arg_number(o + 7, &q)) >= 0 &&
			   q == end) {
			/* taken */
		} else if (!strncmp(o, "name=", 5) && (sp->name_arg = arg_number(o + 5, &q)) >= 0 &&
			   (q == end || (*q == '.' && (sp->name_arg2 = arg_number(q + 1, &q)) >= 0 && q == end))) {
			/* taken */
		} else {
			return fail(err, errlen, "'%.*s': an option is name=ARGn, name=ARGn.ARGm, thread=ARGn, dotted or title=TEXT",
				    (int)(end - o), o);
		}
		p = end;
	}
	return 0;
}

static bool is_str(uint8_t how)
{
	return how != CTRACE_USDT_HOW_VALUE;
}

/* One line of the grammar (a user's --usdt, or a preset's line). */
static int parse_line(struct usdt_specs *s, const char *line, const char *preset, char *err,
		      size_t errlen)
{
	const char *end = probes_end(line), *tilde = probe_end(line, end, "~");
	struct usdt_spec *sp;
	unsigned idx = (unsigned)s->n;

	if (s->n == USDT_SPECS_MAX)
		return fail(err, errlen, "more than %d --usdt specs", USDT_SPECS_MAX);
	sp = &s->spec[idx];
	memset(sp, 0, sizeof(*sp));
	sp->name_arg = sp->name_arg2 = sp->thread_name_arg = -1;
	sp->preset = preset;
	sp->begin = (unsigned)s->n_probes;
	if (parse_probe(s, idx, tilde < end ? USDT_ROLE_BEGIN : USDT_ROLE_INSTANT, line, tilde, err, errlen))
		return -1;
	if (tilde < end) {
		const char *p = tilde + 1;

		sp->span = true;
		while (p < end) {
			const char *bar = probe_end(p, end, "|~");

			if (*bar == '~')
				return fail(err, errlen, "'%s': a span is BEGIN~END (or BEGIN~END|END)", line);
			if (sp->n_ends == USDT_ENDS_MAX)
				return fail(err, errlen, "'%s': more than %d ends", line, USDT_ENDS_MAX);
			sp->end[sp->n_ends++] = (unsigned)s->n_probes;
			if (parse_probe(s, idx, USDT_ROLE_END, p, bar, err, errlen))
				return -1;
			p = bar + (bar < end);
		}
		if (!sp->n_ends)
			return fail(err, errlen, "'%s': a span is BEGIN~END", line);
	}
	if (parse_options(sp, end, err, errlen))
		return -1;
	if (sp->thread_name_arg >= 0 && !is_str(s->probe[sp->begin].how[sp->thread_name_arg]))
		return fail(err, errlen, "'%s': thread=ARG%d needs ARG%d=str or strlen", line,
			    sp->thread_name_arg, sp->thread_name_arg);
	if (sp->name_arg >= 0) {
		const struct usdt_probe *b = &s->probe[sp->begin];

		if (!is_str(b->how[sp->name_arg]) || (sp->name_arg2 >= 0 && !is_str(b->how[sp->name_arg2])))
			return fail(err, errlen, "'%s': name=ARG%d needs ARG%d=str in %s:%s(...)", line,
				    sp->name_arg, sp->name_arg, b->provider, b->name);
		/* An end that carries the name too closes only the begin of that name. */
		sp->end_names_match = sp->span;
		for (unsigned e = 0; e < sp->n_ends; e++) {
			const struct usdt_probe *ep = &s->probe[sp->end[e]];

			if (!is_str(ep->how[sp->name_arg]) ||
			    (sp->name_arg2 >= 0 && !is_str(ep->how[sp->name_arg2])))
				sp->end_names_match = false;
		}
	}
	if (!sp->title[0]) {
		const struct usdt_probe *b = &s->probe[sp->begin];
		char title[sizeof(sp->title)];

		snprintf(title, sizeof(title), "%s:%s", b->provider, b->name);
		memcpy(sp->title, title, sizeof(title));
	}
	s->n++;
	return 0;
}

int usdt_specs_add(struct usdt_specs *s, const char *arg, char *err, size_t errlen)
{
	size_t used = strlen(s->given);

	snprintf(s->given + used, sizeof(s->given) - used, "%s%s", used ? " " : "", arg);
	for (size_t i = 0; i < sizeof(presets) / sizeof(presets[0]); i++) {
		if (strcmp(arg, presets[i].name))
			continue;
		for (size_t l = 0; l < sizeof(presets[i].lines) / sizeof(presets[i].lines[0]) &&
				   presets[i].lines[l]; l++)
			if (parse_line(s, presets[i].lines[l], presets[i].name, err, errlen))
				return -1;
		return 0;
	}
	if (!strchr(arg, ':'))
		return fail(err, errlen, "--usdt %s: not a preset (cxx, python, postgres, java) nor PROVIDER:NAME", arg);
	if (parse_line(s, arg, NULL, err, errlen)) {
		char why[256];

		snprintf(why, sizeof(why), "%s", err);
		return fail(err, errlen, "--usdt %s: %s", arg, why);
	}
	return 0;
}

uint64_t usdt_probe_cookie(const struct usdt_specs *s, size_t i)
{
	uint64_t cookie = i;

	for (int a = 0; a < CTRACE_USDT_ARGS; a++)
		cookie |= (uint64_t)(s->probe[i].how[a] & 3) << (CTRACE_USDT_HOW_SHIFT + 2 * a);
	return cookie;
}

const struct usdt_probe *usdt_probe_of_cookie(const struct usdt_specs *s, uint64_t cookie)
{
	size_t i = cookie & 0xffff;

	if (i >= s->n_probes || usdt_probe_cookie(s, i) != cookie)
		return NULL;
	return &s->probe[i];
}
