/* SPDX-License-Identifier: MIT */
/*
 * lttng_peer_tp.h - the tracepoint provider of lttng_peer.c: the same
 * instant as probe_cost's (marker, name, scope, args), as an LTTng-UST user
 * would declare it (the name copied into the event as a string, as
 * ctf_string does; ctrace-bpf's batched path sends a literal's address).
 * LTTng-UST's tracepoint headers include this file again, with macros
 * redefined, to generate the probe's code: hence the guard's shape.
 */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER bench

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "./lttng_peer_tp.h"

#if !defined(LTTNG_PEER_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define LTTNG_PEER_TP_H

#include <lttng/tracepoint.h>

LTTNG_UST_TRACEPOINT_EVENT(bench, instant,
	LTTNG_UST_TP_ARGS(const void *, marker, const char *, name, int, scope, const char *, args),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer_hex(unsigned long, marker, (unsigned long)marker)
		lttng_ust_field_string(name, name)
		lttng_ust_field_integer(char, scope, scope)
		lttng_ust_field_integer_hex(unsigned long, args, (unsigned long)args)))

#endif /* LTTNG_PEER_TP_H */

#include <lttng/tracepoint-event.h>
