/* SPDX-License-Identifier: MIT */
/* commands.h - the subcommands of ctrace-bpf; main() in main.c picks one. */
#ifndef CTRACE_COMMANDS_H
#define CTRACE_COMMANDS_H

#include <stdbool.h>
#include <stdint.h>

#define CTRACE_BPF_VERSION "0.1.0"

/* Each takes the arguments after the subcommand's name (argv[0] is its name) and returns the exit code. */
int cmd_trace(int argc, char **argv);
/* ctrace-bpf list (-p PID | PATH): the USDT probes of a process or file. */
int cmd_list(int argc, char **argv);
/* ctrace-bpf fix FILE: closes a trace that was cut short so viewers open it. */
int cmd_fix(int argc, char **argv);
/* ctrace-bpf report FILE: the summary of a trace file (the one the trace command prints at its end). */
int cmd_report(int argc, char **argv);
/* ctrace-bpf convert FILE.ctrace -o OUT: a capture written as a trace. */
int cmd_convert(int argc, char **argv);
/*
 * The trace command's last line: why it stopped, what the trace holds
 * (files: "" or " in N files..."), what was dropped, what opens it. Also
 * the conversion's behind a capture, which writes that trace.
 */
void say_trace_written(const char *reason, uint64_t events, const char *files, uint64_t dropped, bool pftrace);

#endif
