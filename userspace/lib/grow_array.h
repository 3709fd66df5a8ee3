/* SPDX-License-Identifier: MIT */
/*
 * grow_array.h - room for one more element at the end of a realloc()ed
 * array: the one way the loader's lists grow (attached objects, linker
 * hooks, notes, mappings, targets, processes to attach, TSC pieces, the
 * repair's line buffer), doubling so that n appends cost O(n) copies.
 */
#ifndef CTRACE_GROW_ARRAY_H
#define CTRACE_GROW_ARRAY_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

/*
 * With n elements used of *cap allocated at *v: 0 once element n fits
 * (the array doubled, or grew to `first` from empty, when it was full), or
 * -ENOMEM with *v and *cap as they were.
 */
static inline int grow_array_room(void **v, size_t *cap, size_t n, size_t elem, size_t first)
{
	size_t c;
	void *p;

	if (n < *cap)
		return 0;
	c = *cap ? *cap * 2 : first;
	if (c <= *cap || c > SIZE_MAX / elem)
		return -ENOMEM;
	p = realloc(*v, c * elem);
	if (!p)
		return -ENOMEM;
	*v = p;
	*cap = c;
	return 0;
}

/* grow_array_room() for an array `arr` of any element type. */
#define GROW_ARRAY(arr, cap, n, first)                                         \
	__extension__({                                                        \
		void *grow_p_ = (arr);                                         \
		int grow_rc_ = grow_array_room(&grow_p_, &(cap), (n),          \
					       sizeof(*(arr)), (first));       \
		(arr) = grow_p_;                                               \
		grow_rc_;                                                      \
	})

#endif
