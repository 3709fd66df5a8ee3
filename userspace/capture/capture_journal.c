// SPDX-License-Identifier: MIT
#include "capture/capture_journal.h"

#include <string.h>
#include "ingest/tsc_clock.h"

struct capture_writer *capture_journal;

bool capture_path(const char *path)
{
	size_t n = path ? strlen(path) : 0;

	return n > 7 && !strcmp(path + n - 7, ".ctrace");
}

void capture_note_name(uint32_t tgid, uint32_t tid, const char *comm, unsigned flags)
{
	size_t n = strnlen(comm, 64);
	unsigned char *p;

	if (!capture_journal)
		return;
	p = capture_reserve(capture_journal, CAPTURE_NAMES, 12 + n);
	if (!p)
		return;
	memcpy(p, &tgid, 4);
	memcpy(p + 4, &tid, 4);
	memcpy(p + 8, &flags, 4);
	memcpy(p + 12, comm, n);
}

/* MAPS: {u32 pid, u32 epoch, u8 whole, u8 exact, u16 0, u32 n_idents, u64 dev, u64 ino, idents, text}. */
void capture_note_maps(uint32_t pid, uint32_t epoch, bool whole, bool exact, const char *text, size_t len,
		       uint64_t exe_dev, uint64_t exe_ino, const uint64_t *idents, size_t n_idents)
{
	size_t head = 32 + n_idents * 16;
	unsigned char *p;
	uint32_t n32 = (uint32_t)n_idents;

	if (!capture_journal || head + len > CAPTURE_RECORD_MAX)
		return;
	p = capture_reserve(capture_journal, CAPTURE_MAPS, head + len);
	if (!p)
		return;
	memset(p, 0, 32);
	memcpy(p, &pid, 4);
	memcpy(p + 4, &epoch, 4);
	p[8] = whole;
	p[9] = exact;
	memcpy(p + 12, &n32, 4);
	memcpy(p + 16, &exe_dev, 8);
	memcpy(p + 24, &exe_ino, 8);
	if (n_idents)
		memcpy(p + 32, idents, n_idents * 16);
	memcpy(p + head, text, len);
}

void capture_note_category(const char *name)
{
	if (capture_journal)
		capture_put(capture_journal, CAPTURE_CATEGORY, name, strnlen(name, 256));
}

/* TSC: {u64 tsc0, u64 ns0, f64 ticks_per_ns, f64 piece_ns, u64 first, then pieces {tsc, ns, f64}}. */
void capture_note_tsc(const struct tsc_clock *c, size_t *written)
{
	size_t n = c->n > *written ? c->n - *written : 0;
	unsigned char *p;
	uint64_t first = *written;

	if (!capture_journal)
		return;
	p = capture_reserve(capture_journal, CAPTURE_TSC, 40 + n * 24);
	if (!p)
		return;
	memcpy(p, &c->tsc0, 8);
	memcpy(p + 8, &c->ns0, 8);
	memcpy(p + 16, &c->ticks_per_ns, 8);
	memcpy(p + 24, &c->piece_ns, 8);
	memcpy(p + 32, &first, 8);
	for (size_t i = 0; i < n; i++) {
		const struct tsc_piece *pc = &c->pieces[*written + i];

		memcpy(p + 40 + i * 24, &pc->tsc, 8);
		memcpy(p + 48 + i * 24, &pc->ns, 8);
		memcpy(p + 56 + i * 24, &pc->ns_per_tick, 8);
	}
	*written = c->n;
}
