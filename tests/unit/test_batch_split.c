// SPDX-License-Identifier: MIT
/*
 * The batched path's format, end to end in one process: events appended by
 * the real header (include/ctrace.h, both semaphores raised by hand, so the
 * flush site is only its nops) are split by userspace/ingest/batch_split.c into
 * the events the per-event path would have decoded; a copy cut anywhere, or
 * any byte changed, is refused or read within bounds, never past.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#undef CTRACE_SITE_LAYOUT_ONLY /* the real sites: this test appends events */
#include "../../include/ctrace.h"
#include "ingest/batch_split.h"
#include "lib/categories.h"

#define MAX_EVENTS 64

/* Category net's semaphore in this file (defined by its sites' asm), raised by hand. */
extern volatile unsigned short ctrace_semaphore_net __attribute__((visibility("hidden")));

static struct batch_event seen[MAX_EVENTS];
static char strings[MAX_EVENTS][2][2100];
static size_t n_seen;

static void collect(void *ctx, struct batch_event *e)
{
	(void)ctx;
	if (n_seen == MAX_EVENTS)
		return;
	seen[n_seen] = *e;
	memcpy(strings[n_seen][0], e->ev.name, e->ev.name_len);
	memcpy(strings[n_seen][1], e->ev.args, e->ev.args_len);
	seen[n_seen].ev.name = strings[n_seen][0];
	seen[n_seen].ev.args = strings[n_seen][1];
	n_seen++;
}

/* A fresh buffer for this thread, the semaphores up as if a batching tracer were attached. */
static struct ctrace__batch *armed(void)
{
	ctrace_semaphore = 1;
	ctrace_batch_semaphore.semaphore = 1;
	if (ctrace__batch_tls) {
		ctrace__batch_tls->len = 0;
		ctrace__batch_tls->count = 0;
	}
	n_seen = 0;
	return ctrace__batch_tls;
}

static size_t copy_size(void)
{
	return CTRACE__BATCH_HEADER + ctrace__batch_tls->len;
}

static void test_every_kind_round_trip(void **state)
{
	struct ctrace_span sp;
	char runtime[32];
	int marker;
	int64_t end;

	(void)state;
	armed();
	strcpy(runtime, "{\"k\":7}");
	CTRACE_INSTANT(NULL, "lit", CTRACE_SCOPE_PROCESS, runtime);
	CTRACE_SPAN_BEGIN(&marker, &sp, "span", NULL);
	CTRACE_SPAN_END(&sp, "{\"e\":1}");
	CTRACE_COUNTER_SET(NULL, "c", 2.5);
	CTRACE_NEW_PID(&marker, "pseudo");
	CTRACE_DISCARD(&marker);
	{
		CTRACE_SCOPE(NULL, "scoped", NULL);
	}
	assert_non_null(ctrace__batch_tls);
	end = batch_split(ctrace__batch_tls, copy_size(), 0, 7, 8, collect, NULL);
	assert_int_equal(end, (int64_t)ctrace__batch_tls->first_seq + 7);
	assert_int_equal(n_seen, 7);

	assert_int_equal(seen[0].ev.kind, CTRACE_KIND_INSTANT);
	assert_int_equal(seen[0].ev.tgid, 7);
	assert_int_equal(seen[0].ev.tid, 8);
	assert_int_equal(seen[0].ev.arg[2], 'p');
	assert_true(seen[0].literals & BATCH_NAME_LITERAL); /* by address: the loader reads it */
	assert_string_equal((const char *)(uintptr_t)seen[0].ev.arg[1], "lit");
	assert_int_equal(seen[0].ev.args_len, strlen(runtime)); /* copied inline */
	assert_memory_equal(seen[0].ev.args, runtime, strlen(runtime));

	assert_int_equal(seen[1].ev.kind, CTRACE_KIND_SPAN_BEGIN);
	assert_int_equal(seen[1].ev.arg[0], (uintptr_t)&marker);
	assert_int_equal(seen[1].ev.arg[1], (uintptr_t)&sp);
	assert_int_equal(seen[1].ev.arg[3], 0); /* NULL args: not stored, still 0 */
	assert_int_equal(seen[2].ev.kind, CTRACE_KIND_SPAN_END);
	assert_int_equal(seen[2].ev.arg[0], (uintptr_t)&sp);
	assert_true(seen[2].literals & BATCH_ARGS_LITERAL);

	assert_int_equal(seen[3].ev.kind, CTRACE_KIND_COUNTER_SET);
	{
		double v;

		memcpy(&v, &seen[3].ev.arg[2], sizeof(v));
		assert_true(v == 2.5);
	}
	assert_int_equal(seen[4].ev.kind, CTRACE_KIND_NEW_PID);
	assert_int_equal(seen[5].ev.kind, CTRACE_KIND_DISCARD);
	assert_int_equal(seen[5].ev.arg[0], (uintptr_t)&marker);
	assert_int_equal(seen[6].ev.kind, CTRACE_KIND_SCOPE_TSC);
	assert_true(seen[6].ev.tsc >= seen[6].ev.arg[3]); /* the end, and the ticks since the start */
	for (size_t i = 1; i < n_seen; i++) {
		assert_true(seen[i].tsc >= seen[i - 1].tsc);
		assert_int_equal(seen[i].seq, seen[i - 1].seq + 1);
	}
}

/*
 * Typed pairs (usdt/ctrace_args.h) go with their length known at the site
 * (CTRACE__BD_ARGS_LEN, in the TSC's place): copied inline exactly, the
 * TSC still read at the append, on each of the three kinds that take them.
 */
static void test_typed_pairs_round_trip(void **state)
{
	struct ctrace_span sp;
	char path[16];
	unsigned long long before;

	(void)state;
	armed();
	strcpy(path, "/etc/hosts");
	before = ctrace__batch_rdtsc();
	CTRACE_INSTANT_ARGS(NULL, "typed", CTRACE_SCOPE_THREAD, CTRACE_ARG_INT("fd", -3), CTRACE_ARG_STR("path", path));
	CTRACE_SPAN_BEGIN_ARGS(NULL, &sp, "span", CTRACE_ARG_UINT("n", 7));
	CTRACE_SPAN_END_ARGS(&sp, CTRACE_ARG_DOUBLE("ms", 0.5));
	assert_int_equal(batch_split(ctrace__batch_tls, copy_size(), 0, 7, 8, collect, NULL),
			 (int64_t)ctrace__batch_tls->first_seq + 3);
	assert_int_equal(n_seen, 3);
	for (size_t i = 0; i < 3; i++) {
		CTRACE__KV_BUILD(CTRACE_ARG_INT("fd", -3), CTRACE_ARG_STR("path", path))
		const char *want = CTRACE__KV_TEXT;
		size_t want_len = CTRACE__KV_LEN;

		if (i == 1) {
			ctrace__kv = ctrace__kv_begin(ctrace__kv_buf);
			CTRACE_ARG_UINT("n", 7);
			want = CTRACE__KV_TEXT;
			want_len = CTRACE__KV_LEN;
		} else if (i == 2) {
			ctrace__kv = ctrace__kv_begin(ctrace__kv_buf);
			CTRACE_ARG_DOUBLE("ms", 0.5);
			want = CTRACE__KV_TEXT;
			want_len = CTRACE__KV_LEN;
		}
		assert_false(seen[i].literals & BATCH_ARGS_LITERAL);
		assert_int_equal(seen[i].ev.args_len, want_len);
		assert_memory_equal(seen[i].ev.args, want, want_len);
		assert_true(seen[i].tsc >= before); /* a TSC reading, not the length */
	}
	assert_int_equal(seen[0].ev.kind, CTRACE_KIND_INSTANT);
	assert_int_equal(seen[1].ev.kind, CTRACE_KIND_SPAN_BEGIN);
	assert_int_equal(seen[2].ev.kind, CTRACE_KIND_SPAN_END);
	assert_int_equal(seen[2].ev.arg[0], (uintptr_t)&sp);
}

/*
 * The inlined append (usdt/ctrace_batch.h) stores each word without a
 * branch and keeps it only if it is not 0: words that are 0 or not at run
 * time, in every combination, come back as they were; an instant's scope
 * that does not fit a byte is stored as a word.
 */
static void test_runtime_words_round_trip(void **state)
{
	struct ctrace_span sp;
	int marker;
	volatile unsigned pick = 0;
	volatile double value = 0;
	volatile unsigned long long scope = 300;
	unsigned i;

	(void)state;
	armed();
	for (i = 0; i < 4; i++) {
		pick = i;
		CTRACE_SPAN_BEGIN(pick & 1 ? &marker : NULL, pick & 2 ? &sp : NULL, "s", NULL);
	}
	CTRACE_COUNTER_SET(NULL, "c", value);
	value = -1.5;
	CTRACE_COUNTER_SET(&marker, "c", value);
	CTRACE_INSTANT(NULL, "i", scope, NULL);
	scope = 't';
	CTRACE_INSTANT(NULL, "i", scope, NULL);
	batch_split(ctrace__batch_tls, copy_size(), 0, 7, 8, collect, NULL);
	assert_int_equal(n_seen, 8);
	for (i = 0; i < 4; i++) {
		assert_int_equal(seen[i].ev.kind, CTRACE_KIND_SPAN_BEGIN);
		assert_int_equal(seen[i].ev.arg[0], i & 1 ? (uintptr_t)&marker : 0);
		assert_int_equal(seen[i].ev.arg[1], i & 2 ? (uintptr_t)&sp : 0);
		assert_string_equal((const char *)(uintptr_t)seen[i].ev.arg[2], "s");
		assert_int_equal(seen[i].ev.arg[3], 0);
		assert_true(seen[i].literals & BATCH_NAME_LITERAL);
	}
	for (i = 4; i < 6; i++) {
		double v;

		assert_int_equal(seen[i].ev.kind, CTRACE_KIND_COUNTER_SET);
		memcpy(&v, &seen[i].ev.arg[2], sizeof(v));
		assert_true(v == (i == 4 ? 0.0 : -1.5));
		assert_int_equal(seen[i].ev.arg[0], i == 4 ? 0 : (uintptr_t)&marker);
	}
	assert_int_equal(seen[6].ev.arg[2], 300);
	assert_int_equal(seen[7].ev.arg[2], 't');
	for (i = 1; i < n_seen; i++)
		assert_int_equal(seen[i].seq, seen[i - 1].seq + 1);
}

/* Events numbered below `from` were taken before: not given again. */
static void test_from_skips_taken(void **state)
{
	uint64_t first;

	(void)state;
	armed();
	for (int i = 0; i < 5; i++)
		CTRACE_INSTANT(NULL, "n", CTRACE_SCOPE_THREAD, NULL);
	first = ctrace__batch_tls->first_seq;
	assert_int_equal(batch_split(ctrace__batch_tls, copy_size(), first + 3, 1, 1, collect, NULL),
			 (int64_t)first + 5);
	assert_int_equal(n_seen, 2);
	assert_int_equal(seen[0].seq, first + 3);
}

/* A full buffer flushes (the site's nops here) and starts again, numbered on. */
static void test_full_buffer_numbers_on(void **state)
{
	uint64_t before;

	(void)state;
	armed();
	before = ctrace__batch_tls->first_seq;
	for (int i = 0; i < 1000; i++)
		CTRACE_INSTANT(NULL, "n", CTRACE_SCOPE_THREAD, NULL);
	assert_true(ctrace__batch_tls->first_seq > before);
	assert_int_equal(ctrace__batch_tls->first_seq + ctrace__batch_tls->count, before + 1000);
}

/* Long or unreadable-looking strings decline: the per-event site takes them. */
static void test_fallbacks_decline(void **state)
{
	static char big[2000];

	(void)state;
	armed();
	memset(big, 'x', sizeof(big) - 1);
	assert_int_equal(ctrace__batch_append(CTRACE__DESC(3u, 4u, 1u, 3u, 1u), 0, (uintptr_t) "n", 't',
					      (uintptr_t)big, 0), 1);
	assert_int_equal(ctrace__batch_append(CTRACE__DESC(3u, 4u, 1u, 3u, 0u), 0, 8, 't', 0, 0), 1);
	ctrace__batch_tls->busy = 1; /* a signal handler in the middle of an append */
	assert_int_equal(ctrace__batch_append(CTRACE__DESC(3u, 4u, 1u, 3u, 1u), 0, (uintptr_t) "n", 't', 0, 0), 1);
	ctrace__batch_tls->busy = 0;
	assert_int_equal(ctrace__batch_tls->len, 0);
}

/*
 * A site of another category batches like the default's, its event
 * carrying the address of its category's name ("net"), after its
 * arguments and before its inline strings, on the fast append (literal
 * name) and the copy (a string copied inline) alike; the default's
 * carries none and is of the default category.
 */
static void test_categories_round_trip(void **state)
{
	struct ctrace_span sp;
	char runtime[16] = "{\"n\":1}";

	(void)state;
	armed();
	ctrace_semaphore_net = 1;
	CTRACE_INSTANT(NULL, "default", CTRACE_SCOPE_THREAD, NULL);
	CTRACE_IN(net, INSTANT, NULL, "lit", CTRACE_SCOPE_PROCESS, NULL);
	CTRACE_IN(net, INSTANT, NULL, "copied", CTRACE_SCOPE_THREAD, runtime);
	CTRACE_IN(net, COUNTER_SET, NULL, "c", 4);
	CTRACE_IN(net, SPAN_BEGIN, NULL, &sp, "span", NULL);
	CTRACE_IN(net, SPAN_END, &sp, runtime);
	CTRACE_IN(net, INSTANT_ARGS, NULL, "typed", CTRACE_SCOPE_THREAD, CTRACE_ARG_INT("k", -3));
	ctrace_semaphore_net = 0;
	assert_int_equal(batch_split(ctrace__batch_tls, copy_size(), 0, 1, 1, collect, NULL),
			 (int64_t)ctrace__batch_tls->first_seq + 7);
	assert_int_equal(n_seen, 7);
	assert_int_equal(seen[0].category, 0);
	assert_int_equal(seen[0].ev.cat, CATEGORY_DEFAULT_ID);
	for (size_t i = 1; i < n_seen; i++) {
		assert_true(seen[i].category != 0);
		assert_string_equal((const char *)(uintptr_t)seen[i].category, "net");
		assert_int_equal(seen[i].ev.cat, 0); /* the caller reads the name */
		assert_int_equal(seen[i].seq, seen[i - 1].seq + 1);
	}
	assert_int_equal(seen[1].ev.kind, CTRACE_KIND_INSTANT);
	assert_int_equal(seen[1].ev.arg[2], 'p');
	assert_string_equal((const char *)(uintptr_t)seen[1].ev.arg[1], "lit");
	assert_string_equal((const char *)(uintptr_t)seen[2].ev.arg[1], "copied");
	assert_int_equal(seen[2].ev.args_len, strlen(runtime)); /* inline, after the category word */
	assert_memory_equal(seen[2].ev.args, runtime, strlen(runtime));
	assert_int_equal(seen[3].ev.kind, CTRACE_KIND_COUNTER_SET);
	{
		double v;

		memcpy(&v, &seen[3].ev.arg[2], sizeof(v));
		assert_true(v == 4);
	}
	assert_int_equal(seen[4].ev.kind, CTRACE_KIND_SPAN_BEGIN);
	assert_int_equal(seen[4].ev.arg[1], (uintptr_t)&sp);
	assert_int_equal(seen[5].ev.kind, CTRACE_KIND_SPAN_END);
	assert_memory_equal(seen[5].ev.args, runtime, strlen(runtime));
	assert_int_equal(seen[6].ev.kind, CTRACE_KIND_INSTANT);
	assert_true(seen[6].ev.args_len > 0);
}

/* Every cut and every changed byte: refused or read within the copy. */
static void test_hostile_copies(void **state)
{
	static unsigned char copy[CTRACE__BATCH_BYTES];
	size_t n;

	(void)state;
	armed();
	CTRACE_INSTANT(NULL, "a", CTRACE_SCOPE_THREAD, NULL);
	{
		char s[16] = "{\"x\":1}";

		CTRACE_INSTANT(NULL, s, CTRACE_SCOPE_THREAD, s);
	}
	CTRACE_COUNTER_ADD(NULL, "c", 1);
	ctrace_semaphore_net = 1; /* an event with a category word, and one with its strings after it */
	CTRACE_IN(net, INSTANT, NULL, "n", CTRACE_SCOPE_THREAD, NULL);
	{
		char s[16] = "{\"y\":2}";

		CTRACE_IN(net, INSTANT, NULL, s, CTRACE_SCOPE_THREAD, s);
	}
	ctrace_semaphore_net = 0;
	n = copy_size();
	for (size_t cut = 0; cut < n; cut++) {
		/* A copy cut short: the header's len no longer fits, or an event is cut. */
		memcpy(copy, ctrace__batch_tls, n);
		batch_split(copy, cut, 0, 1, 1, collect, NULL);
		n_seen = 0;
	}
	for (size_t at = 0; at < n; at++) {
		for (int bit = 0; bit < 8; bit++) {
			unsigned char *heap = malloc(n); /* exactly n: ASan sees any read past */

			memcpy(heap, ctrace__batch_tls, n);
			heap[at] ^= (unsigned char)(1 << bit);
			batch_split(heap, n, 0, 1, 1, collect, NULL);
			n_seen = 0;
			free(heap);
		}
	}
	assert_true(batch_split(ctrace__batch_tls, 10, 0, 1, 1, collect, NULL) < 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_kind_round_trip),
		cmocka_unit_test(test_typed_pairs_round_trip),
		cmocka_unit_test(test_runtime_words_round_trip),
		cmocka_unit_test(test_from_skips_taken),
		cmocka_unit_test(test_full_buffer_numbers_on),
		cmocka_unit_test(test_fallbacks_decline),
		cmocka_unit_test(test_categories_round_trip),
		cmocka_unit_test(test_hostile_copies),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
