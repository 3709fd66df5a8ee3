// SPDX-License-Identifier: MIT
/*
 * trace_count - counts the events of a ctrace-bpf trace by name, reading it
 * as it streams from `ctrace-bpf -o -` (traces of tens of millions of events
 * are counted without landing on disk, at several hundred MB/s).
 *
 *   ctrace-bpf -p PID -o - | trace_count
 *
 * Prints "name<TAB>count" for every distinct event name, then
 * "#dropped_events<TAB>N" and "#records<TAB>N" from the trace's metadata
 * (-1 when the trace has none: it did not end properly).
 * It relies on the writer's layout: one event per line, "name" written
 * as "name":"...", names of the benchmarks plain ASCII.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SLOTS 1024 /* distinct names kept; the benchmarks use a few dozen */

static struct {
	char *name;
	unsigned long long count;
} table[SLOTS];

static void count(const char *name, size_t len)
{
	unsigned h = 2166136261u; /* FNV-1a */

	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)name[i]) * 16777619u;
	for (unsigned i = 0; i < SLOTS; i++) {
		unsigned s = (h + i) % SLOTS;

		if (!table[s].name) {
			table[s].name = strndup(name, len);
			table[s].count = 1;
			return;
		}
		if (strlen(table[s].name) == len && !memcmp(table[s].name, name, len)) {
			table[s].count++;
			return;
		}
	}
}

/* The number after "key": in line, or -1. */
static long long field(const char *line, const char *key)
{
	const char *p = strstr(line, key);

	return p ? strtoll(p + strlen(key), NULL, 10) : -1;
}

int main(void)
{
	static const char tag[] = "\"name\":\"";
	long long dropped = -1, records = -1;
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;

	while ((n = getline(&line, &cap, stdin)) > 0) {
		const char *p = strstr(line, tag), *end;

		if (p) {
			p += sizeof(tag) - 1;
			end = memchr(p, '"', (size_t)(line + n - p));
			if (end)
				count(p, (size_t)(end - p));
		}
		/* The metadata object closes the trace. */
		if (strstr(line, "\"metadata\"")) {
			dropped = field(line, "\"dropped_events\":");
			records = field(line, "\"records\":");
		}
	}
	for (unsigned i = 0; i < SLOTS; i++)
		if (table[i].name)
			printf("%s\t%llu\n", table[i].name, table[i].count);
	printf("#dropped_events\t%lld\n#records\t%lld\n", dropped, records);
	free(line);
	return 0;
}
