/* SPDX-License-Identifier: MIT */
/*
 * output_file.h - opens the trace's output the way a tool running as root
 * must: never through a symbolic link planted at its name, never over a
 * file that belongs to someone else, and (run via sudo) leaving a new file
 * to the user who ran sudo.
 */
#ifndef CTRACE_OUTPUT_FILE_H
#define CTRACE_OUTPUT_FILE_H

#include <stdbool.h>

/*
 * A writable fd ("-": a copy of standard output), or -errno having said
 * why in one line (but for "-" with standard output closed: -1, unsaid). *created tells whether the file is new (to remove it if tracing
 * cannot start).
 */
int output_open(const char *path, bool *created);

#endif
