// SPDX-License-Identifier: MIT
#include "ingest/process_epoch.h"

uint32_t process_epoch_slot(uint32_t tgid)
{
	return tgid % PROCESS_EPOCH_SLOTS;
}

uint32_t process_epoch_now(const struct process_epochs *pe, uint32_t tgid)
{
	return pe->epoch ? pe->epoch[process_epoch_slot(tgid)] : 0;
}

static uint64_t exec_note(const struct process_epochs *pe, uint32_t tgid)
{
	return pe->exec_began ? pe->exec_began[process_epoch_slot(tgid)] : 0;
}

/* The note first: an exec that begins between the two reads is told by the count. */
struct process_look process_look_begin(const struct process_epochs *pe, uint32_t tgid)
{
	struct process_look look;

	look.exec_began = exec_note(pe, tgid);
	look.epoch = process_epoch_now(pe, tgid);
	return look;
}

/*
 * An exec under way as the look began noted the look's epoch (the epoch
 * moves on only at its end); one that began later moved the count on.
 */
bool process_look_whole(const struct process_epochs *pe, uint32_t tgid,
			const struct process_look *look)
{
	uint64_t note = exec_note(pe, tgid);

	return (uint32_t)note != look->epoch + 1 && note >> 32 == look->exec_began >> 32;
}

/* The note before the epoch: an exec that ends between the two reads began before the first. */
bool process_look_exact(const struct process_epochs *pe, uint32_t tgid,
			const struct process_look *look)
{
	return process_look_whole(pe, tgid, look) && process_epoch_now(pe, tgid) == look->epoch;
}
