// SPDX-License-Identifier: MIT
#include "encode/trace_summary.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "ctrace_record.h"
#include "lib/grow_array.h"
#include "model/trace_event.h"
#include "lib/term_safe.h"

static void kind_init(struct summary_kind *k)
{
	memset(k, 0, sizeof(*k));
	key_map_init(&k->by_name);
}

static void kind_free(struct summary_kind *k)
{
	for (size_t i = 0; i < k->n; i++) {
		free(k->v[i]->hist);
		free(k->v[i]);
	}
	free(k->v);
	free(k->other.hist);
	key_map_free(&k->by_name);
}

void trace_summary_init(struct trace_summary *s)
{
	memset(s, 0, sizeof(*s));
	kind_init(&s->spans);
	kind_init(&s->instants);
	kind_init(&s->counters);
}

void trace_summary_free(struct trace_summary *s)
{
	kind_free(&s->spans);
	kind_free(&s->instants);
	kind_free(&s->counters);
}

/*
 * The entry of a name (cut to SUMMARY_NAME_MAX bytes), made on its first
 * event while there is room (and memory); else the kind's "other" entry.
 */
static struct summary_entry *entry_of(struct summary_kind *k, const char *name, size_t len, bool spans)
{
	struct summary_entry *e, **recent;

	if (len > SUMMARY_NAME_MAX)
		len = SUMMARY_NAME_MAX;
	recent = &k->recent[len ? (len * 7 + (unsigned char)name[0] * 3 + (unsigned char)name[len - 1]) % 32 : 0];
	if (*recent && (*recent)->len == len && !memcmp((*recent)->name, name, len))
		return *recent;
	e = key_map_get(&k->by_name, name, len);
	if (e)
		return *recent = e;
	if (k->n < SUMMARY_NAMES && GROW_ARRAY(k->v, k->cap, k->n, 16) == 0 &&
	    (e = calloc(1, sizeof(*e)))) {
		if (spans && !(e->hist = malloc(sizeof(*e->hist)))) {
			free(e);
		} else {
			memcpy(e->name, name, len);
			e->len = len;
			if (e->hist)
				duration_hist_init(e->hist);
			k->v[k->n++] = e;
			key_map_put(&k->by_name, e->name, len, e);
			return e;
		}
	}
	e = &k->other;
	if (spans && !e->hist && (e->hist = malloc(sizeof(*e->hist))))
		duration_hist_init(e->hist);
	return e;
}

void trace_summary_span(struct trace_summary *s, const char *name, size_t len, uint64_t dur_ns,
			bool unfinished)
{
	struct summary_entry *e = entry_of(&s->spans, name, len, true);

	e->count++;
	e->total_ns += dur_ns;
	e->unfinished += unfinished;
	if (e->hist)
		duration_hist_add(e->hist, dur_ns);
	s->spans.total++;
}

void trace_summary_instant(struct trace_summary *s, const char *name, size_t len)
{
	entry_of(&s->instants, name, len, false)->count++;
	s->instants.total++;
}

void trace_summary_counter(struct trace_summary *s, const char *name, size_t len, double value)
{
	struct summary_entry *e = entry_of(&s->counters, name, len, false);

	if (!e->count || value < e->min)
		e->min = value;
	if (!e->count || value > e->max)
		e->max = value;
	e->last = value;
	e->count++;
	s->counters.total++;
}

static int by_total_time(const void *a, const void *b)
{
	const struct summary_entry *x = *(struct summary_entry *const *)a, *y = *(struct summary_entry *const *)b;

	if (x->total_ns != y->total_ns)
		return x->total_ns < y->total_ns ? 1 : -1;
	return strcmp(x->name, y->name);
}

static int by_count(const void *a, const void *b)
{
	const struct summary_entry *x = *(struct summary_entry *const *)a, *y = *(struct summary_entry *const *)b;

	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return strcmp(x->name, y->name);
}

/* Nanoseconds as milliseconds to the microsecond, rounded: "1234.567". */
static const char *ms(uint64_t ns, char *buf, size_t len)
{
	uint64_t us = ns / 1000 + (ns % 1000 >= 500);

	snprintf(buf, len, "%" PRIu64 ".%03" PRIu64, us / 1000, us % 1000);
	return buf;
}

/* A duration to read at a glance, 4 significant digits: "162 ns", "12.35 us", "3.457 ms", "12.500 s". */
static const char *human(uint64_t ns, char *buf, size_t len)
{
	/* %#.4g keeps trailing zeros ("1.540 ms"), and a bare point past 999.9 ("1000."), dropped. */
	double v = ns < 1000000 ? (double)ns / 1e3 : (double)ns / 1e6;
	char num[16];
	int n;

	if (ns < 1000) {
		snprintf(buf, len, "%" PRIu64 " ns", ns);
		return buf;
	}
	if (ns >= 1000000000) {
		snprintf(buf, len, "%.3f s", (double)ns / 1e9);
		return buf;
	}
	n = snprintf(num, sizeof(num), "%#.4g", v);
	if (n > 0 && num[n - 1] == '.')
		num[n - 1] = 0;
	snprintf(buf, len, "%s %s", num, ns < 1000000 ? "us" : "ms");
	return buf;
}

/* A name made safe for the terminal (term_safe.h), padded to 32 columns. */
static void put_name(FILE *f, const struct summary_entry *e)
{
	size_t cols;

	fputs("  ", f);
	cols = term_safe_put(f, e->name, e->len);
	if (e->len == SUMMARY_NAME_MAX)
		fputs("...", f), cols += 3;
	for (; cols < 32; cols++)
		fputc(' ', f);
}

static void put_other(FILE *f, const struct summary_kind *k, size_t shown)
{
	size_t more = k->n - shown;

	if (more)
		fprintf(f, "  (%zu more name%s)\n", more, more == 1 ? "" : "s");
	if (k->other.count)
		fprintf(f, "  (names past the first %d, not told apart: %" PRIu64 " events)\n",
			SUMMARY_NAMES, k->other.count);
}

/* A sorted copy of a kind's entries (NULL if none or no memory). */
static struct summary_entry **sorted(const struct summary_kind *k, int (*cmp)(const void *, const void *))
{
	struct summary_entry **v = k->n ? malloc(k->n * sizeof(*v)) : NULL;

	if (v) {
		memcpy(v, k->v, k->n * sizeof(*v));
		qsort(v, k->n, sizeof(*v), cmp);
	}
	return v;
}

static void print_spans(FILE *f, const struct summary_kind *k, size_t top)
{
	struct summary_entry **v = sorted(k, by_total_time);
	size_t shown = 0;
	char a[32], b[32], c[32], d[32];

	fprintf(f, "Spans by total time: %" PRIu64 " spans, %zu%s names\n", k->total, k->n, k->other.count ? "+" : "");
	if (!k->total)
		return;
	fprintf(f, "  %-32s %10s %14s %12s %12s %12s\n", "name", "count", "total ms", "mean", "p50", "p99");
	for (; v && shown < k->n && shown < top; shown++) {
		const struct summary_entry *e = v[shown];

		put_name(f, e);
		fprintf(f, " %10" PRIu64 " %14s %12s %12s %12s", e->count, ms(e->total_ns, a, sizeof(a)),
			human(e->total_ns / e->count, b, sizeof(b)), human(duration_hist_quantile(e->hist, 0.5), c, sizeof(c)),
			human(duration_hist_quantile(e->hist, 0.99), d, sizeof(d)));
		if (e->unfinished)
			fprintf(f, "  (%" PRIu64 " unfinished)", e->unfinished);
		fputc('\n', f);
	}
	free(v);
	put_other(f, k, shown);
}

static void print_instants(FILE *f, const struct summary_kind *k, size_t top)
{
	struct summary_entry **v = sorted(k, by_count);
	size_t shown = 0;

	fprintf(f, "Instants by count: %" PRIu64 " instants, %zu%s names\n", k->total, k->n, k->other.count ? "+" : "");
	if (!k->total)
		return;
	fprintf(f, "  %-32s %10s\n", "name", "count");
	for (; v && shown < k->n && shown < top; shown++) {
		put_name(f, v[shown]);
		fprintf(f, " %10" PRIu64 "\n", v[shown]->count);
	}
	free(v);
	put_other(f, k, shown);
}

static void print_counters(FILE *f, const struct summary_kind *k, size_t top)
{
	struct summary_entry **v = sorted(k, by_count);
	size_t shown = 0;

	fprintf(f, "Counters by samples: %" PRIu64 " samples, %zu%s names\n", k->total, k->n, k->other.count ? "+" : "");
	if (!k->total)
		return;
	fprintf(f, "  %-32s %10s %12s %12s %12s\n", "name", "samples", "last", "min", "max");
	for (; v && shown < k->n && shown < top; shown++) {
		const struct summary_entry *e = v[shown];

		put_name(f, e);
		fprintf(f, " %10" PRIu64 " %12.10g %12.10g %12.10g\n", e->count, e->last, e->min, e->max);
	}
	free(v);
	put_other(f, k, shown);
}

void trace_summary_print(FILE *f, const struct trace_summary *s, const struct summary_losses *l,
			 size_t top_spans, size_t top_other)
{
	print_spans(f, &s->spans, top_spans);
	print_instants(f, &s->instants, top_other);
	print_counters(f, &s->counters, top_other);
	if (!l->known) {
		fputs("Lost: not known (the trace has no metadata)\n", f);
		return;
	}
	fprintf(f, "Lost: %" PRIu64 " events dropped, %" PRIu64 " spans unfinished at the stop, %" PRIu64
		" span ends without a begin, %" PRIu64 " entries evicted (--max-memory)%s",
		l->dropped, l->unfinished_spans, l->unmatched_ends, l->evicted,
		l->truncated ? "; the trace was cut short and repaired (ctrace-bpf fix)" : "");
	if (l->ring)
		fprintf(f, ", %" PRIu64 " events overwritten in the flight recorder's ring (--ring)",
			l->overwritten);
	fputc('\n', f);
}

static void summary_event(void *ctx, const struct trace_event *ev)
{
	struct trace_summary *s = ctx;
	/* A name as the trace shows it: the program's bytes, or "(unreadable)". */
	const char *name = ev->name.flags & CTRACE_STR_FAULT ? "(unreadable)" : ev->name.s;
	size_t n = ev->name.flags & CTRACE_STR_FAULT ? 12 : ev->name.n;

	switch (ev->kind) {
	case TE_COMPLETE:
		if (!ev->open_at_dump) /* summed once, when it ends */
			trace_summary_span(s, name, n, ev->dur_ns, ev->unfinished != NULL);
		break;
	case TE_ASYNC:
		trace_summary_span(s, name, n, ev->end_ns > ev->ts_ns ? ev->end_ns - ev->ts_ns : 0, false);
		break;
	case TE_INSTANT:
		trace_summary_instant(s, name, n);
		break;
	case TE_COUNTER:
		trace_summary_counter(s, name, n, ev->value);
		break;
	default:
		break;
	}
}

struct trace_encoder trace_summary_encoder(struct trace_summary *s)
{
	return (struct trace_encoder){ .event = summary_event, .ctx = s };
}
