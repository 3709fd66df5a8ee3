// SPDX-License-Identifier: MIT
/*
 * Record decoding: a record as the BPF program writes it decodes to the
 * right fields; every inconsistent record is refused, never read past.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/key_map.h"
#include "ingest/literal_cache.h"
#include "ingest/record_decode.h"

/* Builds a record the way bpf/ctrace.bpf.c does: header, name, args. */
static size_t make_record(void *buf, uint16_t kind, const char *name,
			  const char *args, uint16_t flags)
{
	struct ctrace_record r;

	memset(&r, 0, sizeof(r));
	r.ts_ns = 123456789;
	r.tgid = 42;
	r.tid = 43;
	r.kind = kind;
	r.flags = flags;
	r.arg[0] = 0x1111;
	r.arg[1] = 0x2222;
	r.arg[2] = 'p';
	r.arg[3] = 0x4444;
	r.name_len = (uint16_t)strlen(name);
	r.args_len = (uint16_t)strlen(args);
	memcpy(buf, &r, sizeof(r));
	memcpy((char *)buf + sizeof(r), name, r.name_len);
	memcpy((char *)buf + sizeof(r) + r.name_len, args, r.args_len);
	return sizeof(r) + r.name_len + r.args_len;
}

static void test_decodes_every_field(void **state)
{
	char buf[CTRACE_RECORD_MAX];
	struct ctrace_event ev;
	size_t n = make_record(buf, CTRACE_KIND_INSTANT, "tick", "{\"a\":1}",
			       CTRACE_STR_TRUNCATED | (CTRACE_STR_FAULT << CTRACE_ARGS_SHIFT));

	(void)state;
	assert_int_equal(record_decode(buf, n, &ev), 0);
	assert_int_equal(ev.ts_ns, 123456789);
	assert_int_equal(ev.tgid, 42);
	assert_int_equal(ev.tid, 43);
	assert_int_equal(ev.kind, CTRACE_KIND_INSTANT);
	assert_int_equal(ev.arg[2], 'p');
	assert_int_equal(ev.arg[3], 0x4444);
	assert_int_equal(ev.name_len, 4);
	assert_memory_equal(ev.name, "tick", 4);
	assert_int_equal(ev.args_len, 7);
	assert_memory_equal(ev.args, "{\"a\":1}", 7);
	assert_int_equal(ev.name_flags, CTRACE_STR_TRUNCATED);
	assert_int_equal(ev.args_flags, CTRACE_STR_FAULT);
}

static void test_refuses_inconsistent_records(void **state)
{
	char buf[CTRACE_RECORD_MAX + 16];
	struct ctrace_record *r = (struct ctrace_record *)buf;
	struct ctrace_event ev;
	size_t n;

	(void)state;
	n = make_record(buf, CTRACE_KIND_INSTANT, "tick", "", 0);
	assert_int_equal(record_decode(buf, sizeof(*r) - 1, &ev), -EINVAL); /* short header */
	assert_int_equal(record_decode(buf, n - 1, &ev), -EINVAL);          /* strings cut */
	assert_int_equal(record_decode(buf, n + 1, &ev), -EINVAL);          /* trailing bytes */
	r->kind = 0;
	assert_int_equal(record_decode(buf, n, &ev), -EINVAL);
	r->kind = CTRACE_KIND_MAX + 1;
	assert_int_equal(record_decode(buf, n, &ev), -EINVAL);
	r->kind = CTRACE_KIND_INSTANT;
	r->name_len = 0xffff; /* lengths that would read past the record */
	assert_int_equal(record_decode(buf, n, &ev), -EINVAL);
	r->name_len = 4;
	r->args_len = CTRACE_ARGS_MAX + 1;
	assert_int_equal(record_decode(buf, sizeof(*r) + 4 + CTRACE_ARGS_MAX + 1, &ev), -EINVAL);
}

/* Appends a --stacks part (bpf/ctrace_record.h) of `how` with n addresses or bytes. */
static size_t add_stack(char *buf, size_t at, uint16_t how, uint32_t n)
{
	struct ctrace_stack st = { .how = how, .n = n };
	size_t body = how == CTRACE_STACK_FP ? (size_t)n * 8 : CTRACE_STACK_REGS * 8 + (size_t)n;

	memcpy(buf + at, &st, sizeof(st));
	memset(buf + at + sizeof(st), 0x5a, body);
	return at + sizeof(st) + body;
}

/* Bytes after the strings are a stack part, taken exactly as its header says, or the record is refused. */
static void test_stack_part(void **state)
{
	static char buf[CTRACE_RECORD_MAX + CTRACE_STACK_TRAILER_MAX + 64];
	struct ctrace_event ev;
	size_t n0, n, len = 0;

	(void)state;
	n0 = make_record(buf, CTRACE_KIND_INSTANT, "tick", "{}", 0);
	n = add_stack(buf, n0, CTRACE_STACK_FP, 3);
	assert_int_equal(record_decode(buf, n, &ev), 0);
	assert_ptr_equal(record_stack_part(buf, n, &len), buf + n0);
	assert_int_equal(len, n - n0);
	assert_int_equal(ev.args_len, 2); /* the strings are not changed by it */
	assert_int_equal(record_decode(buf, n - 1, &ev), -EINVAL); /* an address cut */
	assert_int_equal(record_decode(buf, n + 8, &ev), -EINVAL); /* more than it says */
	n = add_stack(buf, n0, CTRACE_STACK_DWARF, CTRACE_STACK_BYTES);
	assert_int_equal(record_decode(buf, n, &ev), 0);
	assert_ptr_equal(record_stack_part(buf, n, &len), buf + n0);
	assert_int_equal(len, n - n0);
	n = add_stack(buf, n0, CTRACE_STACK_DWARF, CTRACE_STACK_BYTES + 8); /* more than the BPF side copies */
	assert_int_equal(record_decode(buf, n, &ev), -EINVAL);
	n = add_stack(buf, n0, CTRACE_STACK_FP, CTRACE_STACK_DEPTH_MAX + 1);
	assert_int_equal(record_decode(buf, n, &ev), -EINVAL);
	n = add_stack(buf, n0, 7, 0); /* an unknown way */
	assert_int_equal(record_decode(buf, n, &ev), -EINVAL);
	assert_int_equal(record_decode(buf, n0 + 4, &ev), -EINVAL); /* a header cut */
	assert_int_equal(record_decode(buf, n0, &ev), 0); /* nothing after the strings: no stack */
	assert_null(record_stack_part(buf, n0, &len));
}

static void test_kind_table(void **state)
{
	(void)state;
	assert_string_equal(record_kind_probe(CTRACE_KIND_SPAN_BEGIN), "span_begin");
	assert_string_equal(record_kind_probe(CTRACE_KIND_DISCARD), "discard");
	assert_string_equal(record_kind_probe(CTRACE_KIND_SCOPE), "scope");
	assert_int_equal(record_name_arg(CTRACE_KIND_SCOPE), 1);
	assert_int_equal(record_args_arg(CTRACE_KIND_SCOPE), 2);
	assert_null(record_kind_probe(0));
	assert_null(record_kind_probe(CTRACE_KIND_MAX + 1));
	assert_int_equal(record_name_arg(CTRACE_KIND_SPAN_BEGIN), 2);
	assert_int_equal(record_args_arg(CTRACE_KIND_SPAN_BEGIN), 3);
	assert_int_equal(record_name_arg(CTRACE_KIND_SPAN_END), -1);
	assert_int_equal(record_args_arg(CTRACE_KIND_SPAN_END), 1);
	assert_int_equal(record_name_arg(CTRACE_KIND_INSTANT), 1);
	assert_int_equal(record_args_arg(CTRACE_KIND_COUNTER_SET), -1);
	/* The kernel's records: no user strings. */
	assert_string_equal(record_kind_probe(CTRACE_KIND_LINK_MAP), "(link_map)");
	assert_int_equal(record_name_arg(CTRACE_KIND_LINK_MAP), -1);
	assert_int_equal(record_args_arg(CTRACE_KIND_EXEC), -1);
	/* Every number up to the highest is a kind (the table has no holes). */
	for (unsigned k = 1; k <= CTRACE_KIND_MAX; k++)
		assert_non_null(record_kind_probe(k));
}

/* The loader's hash map: insert, replace, delete with backward shift, grow. */
static void test_key_map(void **state)
{
	struct key_map m;
	enum { N = 5000 };

	(void)state;
	key_map_init(&m);
	for (uintptr_t i = 1; i <= N; i++)
		assert_null(key_map_put(&m, &i, sizeof(i), (void *)i));
	assert_int_equal(m.count, N);
	for (uintptr_t i = 1; i <= N; i += 2) /* delete every odd key */
		assert_ptr_equal(key_map_del(&m, &i, sizeof(i)), (void *)i);
	for (uintptr_t i = 1; i <= N; i++) {
		void *v = key_map_get(&m, &i, sizeof(i));

		if (i % 2)
			assert_null(v);
		else
			assert_ptr_equal(v, (void *)i);
	}
	{
		uintptr_t k = 2;

		assert_ptr_equal(key_map_put(&m, &k, sizeof(k), (void *)7), (void *)2);
		assert_ptr_equal(key_map_get(&m, &k, sizeof(k)), (void *)7);
		assert_null(key_map_get(&m, "xx", 2)); /* another length, no match */
	}
	assert_int_equal(m.count, N / 2);
	key_map_free(&m);
}

/*
 * A literal copied again for an address (another object mapped there since)
 * replaces the one remembered: references that follow are to the new copy.
 */
static void test_literal_cache_takes_the_new_copy(void **state)
{
	struct literal_cache c;
	const char *s;
	size_t len;
	bool truncated;

	(void)state;
	literal_cache_init(&c);
	literal_cache_put(&c, 7, 0x1000, "hello from cycle_a", 18, false);
	assert_true(literal_cache_get(&c, 7, 0x1000, 255, &s, &len, &truncated));
	assert_int_equal(len, 18);
	assert_memory_equal(s, "hello from cycle_a", 18);
	literal_cache_put(&c, 7, 0x1000, "hello from cycle_b", 18, true);
	assert_true(literal_cache_get(&c, 7, 0x1000, 255, &s, &len, &truncated));
	assert_memory_equal(s, "hello from cycle_b", 18);
	assert_true(truncated);
	literal_cache_free(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decodes_every_field),
		cmocka_unit_test(test_refuses_inconsistent_records),
		cmocka_unit_test(test_stack_part),
		cmocka_unit_test(test_kind_table),
		cmocka_unit_test(test_key_map),
		cmocka_unit_test(test_literal_cache_takes_the_new_copy),
	};

	return cmocka_run_group_tests_name("record_decode", tests, NULL, NULL);
}
