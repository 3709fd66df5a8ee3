/* SPDX-License-Identifier: MIT */
/* stk.h - what the parts of stack_chains share (chains.c says what each does). */
#ifndef STK_H
#define STK_H

#include <stdio.h>

/* "line TAG=N": N is the line this is written on, so the call or site next to it. */
#define STK_LINE(tag) printf("line %s=%d\n", tag, __LINE__)

#ifdef __cplusplus
extern "C" {
#endif
void stk_lib_entry(int k);     /* libstk.so */
int stk_lib_armed(void);       /* libstk.so's probes are attached */
int stk_template_entry(int k); /* template.cpp */
#ifdef __cplusplus
}
#endif

#endif
