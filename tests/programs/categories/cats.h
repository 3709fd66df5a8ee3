/* SPDX-License-Identifier: MIT */
/*
 * cats.h - what each file of the categories program (one category a file,
 * tests/integration/test_categories.c builds it) exports: fire its sites
 * once, whether its category is armed, the raw value of its semaphore,
 * and how many times its sites evaluated their arguments.
 */
#ifndef CATS_H
#define CATS_H

#define CAT_DECLARE(cat)                                                       \
	void cat##_fire(int round);                                            \
	int cat##_armed(void);                                                 \
	unsigned cat##_sem_value(void);                                        \
	unsigned cat##_evals(void);

CAT_DECLARE(ctrace)
CAT_DECLARE(verbose)
CAT_DECLARE(net)
CAT_DECLARE(db)
CAT_DECLARE(plugin)

/*
 * After the rounds, one thread fires ORDER_EVENTS events named "order",
 * event i carrying i: i % 4 == 0 a default-category instant with a typed
 * pair {"i":i}, 1 a verbose instant the same, 2 a net counter of value i
 * (net_order), 3 a default counter of value i. Several buffers' worth, so
 * that the batched path flushes between them.
 */
#define ORDER_EVENTS 4000
void net_order(int i);

/* The raw semaphore of category `cat` in this object (defined by the header's asm). */
#define CAT_SEMAPHORE_VALUE(cat)                                               \
	({                                                                     \
		extern volatile unsigned short ctrace_semaphore_##cat          \
			__attribute__((visibility("hidden")));                 \
		(unsigned)ctrace_semaphore_##cat;                              \
	})

#endif
