/* SPDX-License-Identifier: MIT */
/*
 * pftrace_compare.h - does a .pftrace read back (pftrace_to_json()) hold
 * the same trace as the JSON it was made from? Event by event, in order:
 * ph, name, cat, pid, tid, ts, dur, s, id and args; the flow phase events
 * ("s", "f") as a set of (ph, id, pid, tid, ts), since a slice's flows in
 * Perfetto have no order; the context whole, and every fact of the
 * metadata. X's bind_id/flow_in/flow_out (the JSON's binding of a flow to
 * its slice) are Perfetto's flow_ids themselves: not compared. A sort
 * index past int32 is Perfetto's nearest (counted in the metadata):
 * compared so.
 * Header-only: only the tests that link the pftrace code include it.
 */
#ifndef CTRACE_TEST_PFTRACE_COMPARE_H
#define CTRACE_TEST_PFTRACE_COMPARE_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cjson/cJSON.h>

static bool pfc_is_flow_phase(const cJSON *ev)
{
	const cJSON *ph = cJSON_GetObjectItemCaseSensitive(ev, "ph");

	return cJSON_IsString(ph) && (!strcmp(ph->valuestring, "s") || !strcmp(ph->valuestring, "f"));
}

/* The fields of ev compared, as one line of text ("" for none). */
static char *pfc_key(const cJSON *ev)
{
	static const char *const fields[] = { "ph", "name", "cat", "pid", "tid", "ts", "dur", "s", "id", "bp", "args" };
	cJSON *o = cJSON_CreateObject();
	char *s;

	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(ev, fields[i]);

		if (!v)
			continue;
		if (cJSON_IsNumber(v)) /* 1.5 and 1.500 alike; integral to 1 ns (3 decimals of us) */
			cJSON_AddNumberToObject(o, fields[i], v->valuedouble);
		else if (!strcmp(fields[i], "args") && cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(v, "sort_index")) &&
			 cJSON_GetArraySize(v) == 1) {
			double n = cJSON_GetObjectItemCaseSensitive(v, "sort_index")->valuedouble;

			cJSON_AddItemToObject(o, "args", cJSON_CreateObject());
			cJSON_AddNumberToObject(cJSON_GetObjectItem(o, "args"), "sort_index",
						n < -2147483648.0 ? -2147483648.0 : n > 2147483647.0 ? 2147483647.0 : n);
		}
		else
			cJSON_AddItemToObject(o, fields[i], cJSON_Duplicate(v, true));
	}
	s = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	return s;
}

static int pfc_strcmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* true when they hold the same trace; else false with why said (the first difference). */
static bool pftrace_same_trace(const cJSON *json, const cJSON *back, char *why, size_t why_len)
{
	const cJSON *ea = cJSON_GetObjectItemCaseSensitive(json, "traceEvents");
	const cJSON *eb = cJSON_GetObjectItemCaseSensitive(back, "traceEvents");
	const cJSON *ma = cJSON_GetObjectItemCaseSensitive(json, "metadata");
	const cJSON *mb = cJSON_GetObjectItemCaseSensitive(back, "metadata");
	const cJSON *a = ea ? ea->child : NULL, *b = eb ? eb->child : NULL, *m;
	char **fa = NULL, **fb = NULL;
	size_t nfa = 0, nfb = 0, index = 0;
	bool same = true;

	if (!cJSON_Compare(cJSON_GetObjectItemCaseSensitive(json, "context"),
			   cJSON_GetObjectItemCaseSensitive(back, "context"), true)) {
		snprintf(why, why_len, "the context differs");
		return false;
	}
	for (;;) {
		char *ka, *kb;

		while (a && pfc_is_flow_phase(a)) {
			fa = realloc(fa, (nfa + 1) * sizeof(*fa));
			fa[nfa++] = pfc_key(a);
			a = a->next;
		}
		while (b && pfc_is_flow_phase(b)) {
			fb = realloc(fb, (nfb + 1) * sizeof(*fb));
			fb[nfb++] = pfc_key(b);
			b = b->next;
		}
		if (!a || !b) {
			if (a || b) {
				snprintf(why, why_len, "event %zu: only the %s has it", index, a ? "JSON" : "pftrace");
				same = false;
			}
			break;
		}
		ka = pfc_key(a);
		kb = pfc_key(b);
		if (strcmp(ka, kb)) {
			snprintf(why, why_len, "event %zu differs: JSON %.400s, pftrace %.400s", index, ka, kb);
			same = false;
		}
		free(ka);
		free(kb);
		if (!same)
			break;
		a = a->next;
		b = b->next;
		index++;
	}
	if (same && nfa != nfb) {
		snprintf(why, why_len, "flow phase events: %zu in the JSON, %zu in the pftrace", nfa, nfb);
		same = false;
	}
	if (same) {
		if (nfa) { /* qsort(NULL, 0, ...) is undefined */
			qsort(fa, nfa, sizeof(*fa), pfc_strcmp);
			qsort(fb, nfb, sizeof(*fb), pfc_strcmp);
		}
		for (size_t i = 0; i < nfa && same; i++)
			if (strcmp(fa[i], fb[i])) {
				snprintf(why, why_len, "flow phase events differ: %.300s / %.300s", fa[i], fb[i]);
				same = false;
			}
	}
	for (size_t i = 0; i < nfa; i++)
		free(fa[i]);
	for (size_t i = 0; i < nfb; i++)
		free(fb[i]);
	free(fa);
	free(fb);
	if (!same)
		return false;
	if (!cJSON_IsObject(ma) || !cJSON_IsObject(mb)) {
		snprintf(why, why_len, "no metadata in the %s", cJSON_IsObject(ma) ? "pftrace" : "JSON");
		return false;
	}
	cJSON_ArrayForEach(m, ma) {
		if (!cJSON_Compare(m, cJSON_GetObjectItemCaseSensitive(mb, m->string), true)) {
			snprintf(why, why_len, "metadata.%s differs", m->string);
			return false;
		}
	}
	return true;
}

#endif
