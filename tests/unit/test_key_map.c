// SPDX-License-Identifier: MIT
/*
 * test_key_map - key_map_remove_if (userspace/lib/key_map.c): taking entries
 * out while walking the table, whose deletions shift later entries back
 * (and around its end), leaves every other entry findable, takes each
 * chosen one once, and asks about no taken one again.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <cmocka.h>
#include "lib/key_map.h"

#define N 5000

struct pick {
	unsigned taken[N];
	unsigned modulus;
};

static bool take_multiples(const void *key, size_t len, void *value, void *ctx)
{
	struct pick *p = ctx;
	uint64_t k;

	assert_int_equal(len, sizeof(k));
	memcpy(&k, key, sizeof(k));
	assert_int_equal((uintptr_t)value, k + 1);
	assert_int_equal(p->taken[k], 0); /* never asked again once taken */
	if (k % p->modulus)
		return false;
	p->taken[k]++;
	return true;
}

static void remove_every(unsigned modulus)
{
	static struct pick p;
	struct key_map m;

	memset(&p, 0, sizeof(p));
	p.modulus = modulus;
	key_map_init(&m);
	for (uint64_t k = 0; k < N; k++)
		key_map_put(&m, &k, sizeof(k), (void *)(uintptr_t)(k + 1));
	key_map_remove_if(&m, take_multiples, &p);
	for (uint64_t k = 0; k < N; k++) {
		void *v = key_map_get(&m, &k, sizeof(k));

		if (k % modulus) {
			assert_int_equal((uintptr_t)v, k + 1);
			assert_int_equal(p.taken[k], 0);
		} else {
			assert_null(v);
			assert_int_equal(p.taken[k], 1);
		}
	}
	assert_int_equal(m.count, N - (N + modulus - 1) / modulus);
	key_map_free(&m);
}

static void test_remove_some(void **state)
{
	(void)state;
	remove_every(3);
	remove_every(2);
}

static void test_remove_all(void **state)
{
	(void)state;
	remove_every(1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_remove_some),
		cmocka_unit_test(test_remove_all),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
