// SPDX-License-Identifier: MIT
/*
 * fuzz_records - libFuzzer harness over what the loader does with the bytes
 * a traced (hostile) process and the kernel hand it: ring-buffer records ->
 * record_decode() -> trace_model_event() -> the JSON encoder (chrome_trace.c)
 * and the Perfetto one (pftrace_encode.c), side by side. After each input
 * the trace is finished and the whole JSON must be one strict JSON document
 * (RFC 8259, tests/lib/json_strict) in valid UTF-8 that cJSON also parses,
 * and the .pftrace must read back as the same trace; anything else
 * abort()s, as do ASan and UBSan findings.
 *
 * Input: records back to back, each a 16-bit little-endian length and that
 * many bytes (a length of 0 reports ring-buffer drops instead). A record
 * that record_decode() refuses is also fed once more with its string
 * lengths and kind made consistent: random bytes rarely have the exact
 * size, and the model behind the decoder is what needs the coverage.
 *
 * Build and run: tests/fuzz/run-fuzz SECONDS.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cjson/cJSON.h>

#include "json_strict.h"
#include "encode/perfetto/pftrace.h"
#include "pftrace_compare.h"
#include "encode/perfetto/pftrace_encode.h"
#include "encode/json/json_writer.h"
#include "ingest/record_decode.h"
#include "encode/json/chrome_trace.h"
#include "model/trace_model.h"
#include "ingest/tsc_clock.h"
#include "model/usdt_model.h"
#include "attach/usdt_spec.h"

/*
 * Thread ids are folded to 4 processes x 4 threads, so that the fuzzer meets
 * span pairing across threads and contexts often, and into a range no real
 * process has (the kernel's pid limit is 2^22): /proc lookups then fail the
 * same way on every run.
 */
#define FOLD_BASE (1u << 22)

static int out_fd = -1, pf_fd = -1;

/*
 * --usdt's probes, as a user could give them: strings of each kind, a span
 * paired by name. A record's cookie is folded to one of theirs half of the
 * time (bit 63 clear), so that the fuzzer reaches usdt_model.c past the
 * cookie check.
 */
static struct usdt_specs usdt_specs;

static void usdt_specs_once(void)
{
	static const char *const lines[] = {
		"fz:i(ARG0=str,ARG1=cxxtype,ARG2=strlen,ARG5=str:key)",
		"fz:b(ARG0=str)~fz:e(ARG0=str)|fz:f,name=ARG0",
		"fz:v,title=values",
		"fz:c(ARG1=strlen,ARG3=strlen)~fz:d(ARG1=strlen,ARG3=strlen),name=ARG1.ARG3,dotted",
	};
	char err[256];

	if (usdt_specs.n)
		return;
	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++)
		if (usdt_specs_add(&usdt_specs, lines[i], err, sizeof(err)))
			abort();
	usdt_specs.probe[0].signed_args = 0x5a5;
}

static void check(bool ok, const char *what, const char *text, size_t len)
{
	if (ok)
		return;
	fprintf(stderr, "fuzz_records: %s\n%.*s\n", what, (int)(len < 4096 ? len : 4096), text);
	abort();
}

/*
 * The same trace as Perfetto's protobuf (-o FILE.pftrace, written by its
 * encoder from the same typed events, in pf_fd) read back: the same
 * events, every string still valid UTF-8 (pftrace.h), nothing unconverted.
 */
static void same_as_pftrace(const cJSON *doc, const char *text, size_t len)
{
	FILE *pf = fdopen(dup(pf_fd), "r"), *back = tmpfile();
	char why[1200], *btext;
	long blen;
	cJSON *bdoc;

	if (!pf || !back)
		abort();
	rewind(pf);
	check(pftrace_to_json(pf, back, why, sizeof(why)) == 0, "pftrace_to_json failed", text, len);
	blen = ftell(back);
	btext = malloc((size_t)blen + 1);
	if (!btext || pread(fileno(back), btext, (size_t)blen, 0) != blen)
		abort();
	btext[blen] = 0;
	check(json_strict_utf8(btext, (size_t)blen, NULL), "the pftrace read back is not valid UTF-8", btext, (size_t)blen);
	bdoc = cJSON_Parse(btext);
	check(bdoc != NULL, "the pftrace read back is no JSON", btext, (size_t)blen);
	if (!pftrace_same_trace(doc, bdoc, why, sizeof(why))) {
		fprintf(stderr, "fuzz_records: pftrace: %s\n", why);
		check(false, "the pftrace read back differs; the JSON", text, len);
	}
	check(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(bdoc, "metadata"),
					       "pftrace_events_not_converted")->valuedouble == 0,
	      "an event was not converted to pftrace", text, len);
	cJSON_Delete(bdoc);
	free(btext);
	fclose(pf);
	fclose(back);
}

/* Feeds one record to the model. */
static void feed(struct trace_model *m, const uint8_t *rec, size_t len)
{
	struct ctrace_event ev;
	struct ctrace_record hdr;
	uint8_t copy[CTRACE_RECORD_MAX];

	if (record_decode(rec, len, &ev) < 0) {
		size_t room;

		if (len < sizeof(hdr) || len > sizeof(copy))
			return;
		/* The same bytes, made consistent: kind in range, lengths that add up. */
		memcpy(copy, rec, len);
		memcpy(&hdr, copy, sizeof(hdr));
		room = len - sizeof(hdr);
		hdr.kind = (uint16_t)(1 + hdr.kind % CTRACE_KIND_MAX);
		hdr.name_len = (uint16_t)(hdr.name_len % (CTRACE_NAME_MAX + 1));
		if (hdr.name_len > room)
			hdr.name_len = (uint16_t)room;
		if (room - hdr.name_len > CTRACE_ARGS_MAX)
			return;
		hdr.args_len = (uint16_t)(room - hdr.name_len);
		memcpy(copy, &hdr, sizeof(hdr));
		if (record_decode(copy, len, &ev) < 0)
			abort(); /* the decoder refused a consistent record */
	}
	if (ev.kind == CTRACE_KIND_USDT && !(ev.arg[0] >> 63))
		ev.arg[0] = usdt_probe_cookie(&usdt_specs, ev.arg[0] % usdt_specs.n_probes);
	ev.tgid = FOLD_BASE + ev.tgid % 4;
	ev.tid = ev.tid % 2 ? ev.tgid : FOLD_BASE + 4 + ev.tid % 4;
	trace_model_event(m, &ev);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct proc_facts target = { .pid = FOLD_BASE, .ns_pid = FOLD_BASE,
						   .comm = "fuzz", .exe = "/fuzz", .cwd = "/" };
	struct tsc_clock tsc = { 0, 0, 3.0 }; /* fixed: the same result every run */
	struct trace_facts facts = { .tracer_version = "fuzz", .target = &target };
	struct trace_stats stats = { 0 };
	struct json_writer w, pw;
	struct chrome_trace tf;
	struct pftrace_encoder *pe;
	struct trace_fanout fan;
	struct trace_model m;
	struct usdt_model um;
	uint64_t drops = 0;
	char *text, why[256];
	size_t len;
	cJSON *doc;

	if (out_fd < 0 && (out_fd = memfd_create("fuzz-trace", 0)) < 0)
		abort();
	if (pf_fd < 0 && (pf_fd = memfd_create("fuzz-pftrace", 0)) < 0)
		abort();
	if (ftruncate(out_fd, 0) != 0 || lseek(out_fd, 0, SEEK_SET) != 0 ||
	    jw_init(&w, out_fd, 64) < 0) /* a small buffer: flushes mid-event */
		abort();
	if (ftruncate(pf_fd, 0) != 0 || lseek(pf_fd, 0, SEEK_SET) != 0 || jw_init(&pw, pf_fd, 64) < 0)
		abort();
	jw_packets(&pw);
	pe = pftrace_encoder_new(&pw);
	if (!pe)
		abort();
	trace_fanout_init(&fan);
	trace_fanout_add(&fan, pftrace_encoder(pe));
	trace_fanout_begin(&fan, &facts);
	chrome_trace_begin(&tf, &w, &facts);
	trace_fanout_add(&fan, chrome_trace_encoder(&tf));
	trace_model_init(&m, &fan, &stats);
	m.tsc = &tsc;
	usdt_specs_once();
	usdt_model_init(&um, &usdt_specs);
	m.usdt = &um;
	stats.usdt = &um;
	while (size >= 2) {
		size_t n = data[0] | (size_t)data[1] << 8;

		data += 2;
		size -= 2;
		if (n == 0) {
			trace_model_drops(&m, FOLD_BASE, 1000 + drops, 1, drops + 1);
			drops++;
			continue;
		}
		if (n > size)
			n = size;
		feed(&m, data, n);
		data += n;
		size -= n;
	}
	trace_model_finish(&m, UINT64_MAX / 2);
	stats.stop_reason = "fuzz";
	trace_fanout_end(&fan, &facts, &stats);
	if (jw_flush(&w) < 0 || jw_flush(&pw) < 0)
		abort();
	jw_free(&w);
	jw_free(&pw);
	pftrace_encoder_free(pe);

	len = (size_t)lseek(out_fd, 0, SEEK_END);
	text = malloc(len + 1);
	if (!text || pread(out_fd, text, len, 0) != (ssize_t)len)
		abort();
	text[len] = '\0';
	check(json_strict_utf8(text, len, NULL), "the trace is not valid UTF-8", text, len);
	check(strlen(text) == len, "the trace holds a NUL byte", text, len);
	check(json_strict_check(text, len, why, sizeof(why)), why, text, len);
	doc = cJSON_ParseWithLengthOpts(text, len, NULL, 0);
	check(doc != NULL, "cJSON cannot parse the trace", text, len);
	check(cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(doc, "traceEvents")),
	      "no traceEvents array", text, len);
	same_as_pftrace(doc, text, len);
	cJSON_Delete(doc);
	free(text);
	return 0;
}
