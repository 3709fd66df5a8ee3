/* SPDX-License-Identifier: MIT */
/*
 * probelib_build.h - the shared libraries the library tests dlopen(), built
 * at test time from tests/programs/lib/probelib.c, the way users build
 * theirs (cc -shared -fPIC, the header only).
 */
#ifndef CTRACE_TEST_PROBELIB_BUILD_H
#define CTRACE_TEST_PROBELIB_BUILD_H

#include <stddef.h>

#define PROBELIB_SRC "tests/programs/lib/probelib.c"

/*
 * cc -shared -fPIC OPT -Iinclude -DPROBELIB_NAME="NAME" probelib.c -o
 * DIR/libNAME.so; path gets that file's name. 0, or -1 with why set (cc
 * missing, or its errors).
 */
int probelib_build(const char *dir, const char *name, const char *opt, char *path,
		   size_t path_len, char *why, size_t why_len);

#endif
