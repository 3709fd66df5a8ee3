/* SPDX-License-Identifier: MIT */
/*
 * gzip_input.h - reads a trace file whether it is plain or gzip (told by
 * its first two bytes, 1f 8b, not by its name), for `ctrace-bpf fix`.
 *
 * A gzip file is read through zlib's gzread() behind a stdio FILE
 * (fopencookie), so the repair reads both kinds line by line the same way.
 * A gzip stream cut short (the tracer killed, the disk full) reads up to
 * the cut and then ends, as a cut plain file does: the repair is for just
 * those files.
 */
#ifndef CTRACE_GZIP_INPUT_H
#define CTRACE_GZIP_INPUT_H

#include <stdbool.h>
#include <stdio.h>

/*
 * in, rewound, if it is not gzip; else a FILE giving its uncompressed
 * bytes, which owns in (fclose() closes both). in must be seekable.
 * NULL with errno on failure (in is then closed).
 */
FILE *gzip_input_open(FILE *in, bool *is_gzip);

#endif
