/* SPDX-License-Identifier: MIT */
/*
 * capture_files.h - the files the tracer opened to read the processes'
 * mapped strings from (file_maps.c), handed to the conversion behind the
 * capture (trace_behind.c) by descriptor, over a socket of the pair the
 * two share.
 *
 * A capture names each mapped file by the path /proc/PID/maps gave and
 * its device and inode; a conversion in a process of its own opens it by
 * that name. That fails for a file in another mount namespace (a
 * container's: the tracer opened it through /proc/PID/map_files or
 * /proc/PID/root, which are gone with the process), or one removed or
 * renamed since it was mapped (a plugin host's temporary libraries). The
 * descriptor the tracer holds is that very file, whatever its name.
 *
 * Each descriptor goes before the MAPS record that needs it is written,
 * so the conversion, which reads that record later from the capture, has
 * it waiting on the socket. A descriptor not handed (the socket full) is
 * opened by its name, as a later `convert` of a kept capture does.
 */
#ifndef CTRACE_CAPTURE_FILES_H
#define CTRACE_CAPTURE_FILES_H

#include <stdint.h>

/* The tracer's end (-1: no conversion behind, nothing is sent). */
extern int capture_files_to;

/*
 * The file {dev, ino} (file_maps.c's key: major << 32 | minor, inode) is
 * open at fd: queued for the conversion. The tracer keeps its fd.
 */
void capture_files_note(const unsigned long long key[2], int fd);
/* What is queued goes now (before a MAPS record is written). */
void capture_files_flush(void);

/*
 * The conversion's side: every descriptor waiting on `sock` (never
 * blocks), each given to take(ctx, key, fd), which owns it.
 */
void capture_files_take(int sock, void (*take)(void *ctx, const unsigned long long key[2], int fd), void *ctx);

#endif
