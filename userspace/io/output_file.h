/* SPDX-License-Identifier: MIT */
/*
 * output_file.h - opens the trace's output the way a tool running as root
 * must: never through a symbolic link planted at its name, never over a
 * file that belongs to someone else, readable by its owner alone (a trace
 * holds what the target sent: its arguments, command line, directory), and
 * (run via sudo) leaving a new file to the user who ran sudo.
 */
#ifndef CTRACE_OUTPUT_FILE_H
#define CTRACE_OUTPUT_FILE_H

#include <stdbool.h>
#include <sys/types.h>

/* What output_open gives its files unless told otherwise (--mode). */
#define OUTPUT_MODE_DEFAULT 0600

/*
 * The mode of every file output_open opens from now on, exactly (the umask
 * aside): a file it creates, and a file of ours it writes over.
 */
void output_file_set_mode(mode_t mode);

/*
 * A writable fd ("-": a copy of standard output), or -errno having said
 * why in one line (but for "-" with standard output closed: -1, unsaid).
 * *created tells whether the file is new (to remove it if tracing cannot
 * start). A plain file opened is given the mode of output_file_set_mode().
 */
int output_open(const char *path, bool *created);
/*
 * The next output_open(path) returns fd, opened and checked by another
 * process (the trace command, for the conversion it starts behind its
 * capture: the file and its lock are that command's).
 */
void output_file_give(const char *path, int fd);
/* Whether an output's name picks Perfetto's protobuf (FILE.pftrace). */
bool output_is_pftrace(const char *path);

#endif
