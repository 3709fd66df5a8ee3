/* SPDX-License-Identifier: MIT */
/*
 * ctrace_batch.h - the batched path of a traced site (included by
 * usdt/ctrace_site.h; applications never include it directly).
 *
 * While a batching tracer (ctrace-bpf 0.3+) is attached, a site does not
 * fire its uprobe: it appends a small binary event to a buffer of its
 * thread, and the thread fires ONE probe, ctrace:batch, when the buffer is
 * full. How a site knows: the batch probe's note names a second semaphore,
 * ctrace_batch_semaphore (hidden: one per executable or DSO, like
 * ctrace_semaphore). Attaching ctrace:batch raises it; the uprobe's removal
 * (the tracer's exit, even by SIGKILL) lowers it, and the very next event
 * takes the per-event path again (or none). The semaphore is read only in
 * a site's out-of-line block: the untraced cost stays the 2-instruction
 * guard. Tools that attach single probes (bpftrace, BCC, older ctrace-bpf)
 * do not raise it, and see one uprobe hit per event as before.
 *
 * The buffer: one per thread per object, mmap()ed at the thread's first
 * batched event (no malloc: a site may run inside malloc or a signal
 * handler's caller), its pointer in hidden TLS, taken over by a later
 * thread once its own has exited (the memory is bounded by the most
 * threads alive at once, times 16 KiB, per object). Its header starts the copy
 * the probe takes, so the tracer gets the thread's sequence number of the
 * first event with every batch: every gap is countable. The tracer also
 * reads an idle thread's buffer itself (process_vm_readv) and, at a fatal
 * signal, exit or exec, the kernel side copies it: see bpf/ctrace.bpf.c.
 *
 * The per-event site stays the fallback, so nothing is lost or corrupted:
 *   - a site hit while the thread is appending (a signal handler) or
 *     flushing: `busy`;
 *   - a non-literal string longer than the inline limit, or a pointer below
 *     64 KiB (never mapped on Linux: it is shown as unreadable, as before);
 *   - no buffer (mmap failed).
 *
 * Layout (the loader's userspace/ingest/batch_split.c reads it, little endian):
 *   header (64 bytes, struct ctrace__batch), then events back to back,
 *   each 8-byte aligned:
 *     u64 tsc                 rdtsc at the site (CTRACE_SCOPE: its end)
 *     u8 kind                 the record kinds of bpf/ctrace_record.h
 *     u8 flags                CTRACE__BF_*
 *     u8 mask                 which of the probe's arguments follow (bit i:
 *                             argument i, in note order); the others are 0
 *                             (or an inline string's pointer)
 *     u8 small                with CTRACE__BF_SMALL2: argument 2
 *     u16 name_len, args_len  bytes of the inline strings
 *     u64 arg[popcount(mask)] the arguments present
 *     u64 category            with CTRACE__BF_CATEGORY: the address of the
 *                             site's category's name, a string literal
 *                             (include/ctrace.h's CTRACE__BATCHED_IN_0);
 *                             without, the default category's event
 *     name bytes, args bytes  (inline strings only), padded to 8
 * So an instant with a literal name, no marker and no args is 24 bytes.
 */
#ifndef CTRACE_BATCH_H
#define CTRACE_BATCH_H

#ifdef __cplusplus
extern "C" {
#endif

#define CTRACE__BATCH_MAGIC 0x43544231u /* "1BTC" */
#define CTRACE__BATCH_ANCHOR_MAGIC 0x41544243u /* "CBTA" */
#define CTRACE__BATCH_ANCHOR_VERSION 1

struct ctrace__batch;

/*
 * The batch probe's semaphore, and beside it the list of every buffer of
 * this object, so that a tracer finds the buffers an earlier trace left
 * (their threads announce a buffer only once, when they take it): the
 * note gives the semaphore's address, the list is 8 bytes further, and
 * the magic says this layout is there (an older header has a bare
 * semaphore).
 */
struct ctrace__batch_anchor {
	volatile unsigned short semaphore;  /* raised by the kernel while ctrace:batch is attached */
	unsigned short version;             /* CTRACE__BATCH_ANCHOR_VERSION */
	unsigned int magic;                 /* CTRACE__BATCH_ANCHOR_MAGIC */
	struct ctrace__batch *volatile all; /* every buffer of this object in this process */
};
extern struct ctrace__batch_anchor ctrace_batch_semaphore;
__attribute__((weak, used, visibility("hidden"), section(".probes"))) struct ctrace__batch_anchor
	ctrace_batch_semaphore = { 0, CTRACE__BATCH_ANCHOR_VERSION, CTRACE__BATCH_ANCHOR_MAGIC, 0 };
#define CTRACE__BATCH_BYTES 16384       /* the buffer, header included */
#define CTRACE__BATCH_HEADER 64
/* Longest non-literal string copied inline; a longer one takes the per-event path. */
#define CTRACE__BATCH_NAME_MAX 255
#define CTRACE__BATCH_ARGS_MAX 1024

/* flags of an event */
#define CTRACE__BF_NAME_LITERAL 0x1 /* name: a literal, sent by address */
#define CTRACE__BF_ARGS_LITERAL 0x2
#define CTRACE__BF_NAME_INLINE 0x4  /* name: copied after the arguments */
#define CTRACE__BF_ARGS_INLINE 0x8
#define CTRACE__BF_SMALL2 0x10      /* word 2 is the head's byte 3 (an instant's scope) */
#define CTRACE__BF_CATEGORY 0x20    /* the category word follows the arguments */

/* Why the batch probe fired (its third argument). */
#define CTRACE__BATCH_FULL 0
#define CTRACE__BATCH_HELLO 1 /* a new buffer: the tracer learns where it is */

struct ctrace__batch {
	unsigned int magic;
	unsigned int tid;                /* the thread that allocated it */
	unsigned long long first_seq;    /* the thread's number of the first event below */
	/*
	 * Bytes of committed events. A reader (the tracer) reads first_seq,
	 * then len, then the events, then first_seq again: a flush resets
	 * len before it moves first_seq on, and first_seq before new events
	 * are written, so a changed first_seq means "read again".
	 */
	volatile unsigned int len;
	unsigned int count;              /* events committed */
	volatile unsigned int busy;      /* an append or a flush is under way */
	unsigned int reserved0;
	unsigned int version;            /* 1 */
	unsigned int pid;                /* the process that allocated it (a fork copies it) */
	struct ctrace__batch *next;      /* every buffer of this object, for reuse */
	/*
	 * The TSC when its thread took it: a buffer taken over by a later
	 * thread (whose tid may be the old one's, reused) or mapped at the
	 * same address by a new image is another stream of events.
	 */
	unsigned long long born;
	unsigned long long reserved;
	unsigned char data[CTRACE__BATCH_BYTES - CTRACE__BATCH_HEADER];
};

/* The thread's buffer in this object. */
extern __thread struct ctrace__batch *ctrace__batch_tls;
__attribute__((weak, visibility("hidden"))) __thread struct ctrace__batch *ctrace__batch_tls;

/*
 * Every buffer of this object in this process: ctrace_batch_semaphore.all.
 * A thread's buffer is not freed when the thread exits (a thread-exit
 * destructor would keep a dlclose()d library mapped, and the kernel side
 * copies the buffer at the exit anyway): the next thread to start takes
 * over one whose thread is gone, so the memory is bounded by the most
 * threads alive at once.
 */

/*
 * nothrow: in C++ a call that may throw would make the compiler copy a
 * scope's end (a destructor) into a landing pad: a second site.
 */
#define CTRACE__NOINLINE __attribute__((noinline, unused, nothrow))

static __inline__ __attribute__((always_inline)) unsigned long long ctrace__batch_rdtsc(void)
{
	unsigned int lo, hi;

	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return CTRACE__CAST(unsigned long long, hi) << 32 | lo;
}

/* Raw system calls: the header includes no libc header but stddef.h. */
static __inline__ long ctrace__syscall6(long nr, long a0, long a1, long a2, long a3, long a4, long a5)
{
	long ret;
	register long r10 __asm__("r10") = a3;
	register long r8 __asm__("r8") = a4;
	register long r9 __asm__("r9") = a5;

	__asm__ __volatile__("syscall"
			     : "=a"(ret)
			     : "a"(nr), "D"(a0), "S"(a1), "d"(a2), "r"(r10), "r"(r8), "r"(r9)
			     : "rcx", "r11", "memory");
	return ret;
}

/*
 * The batch probe: buffer, bytes to copy (header included), why, the
 * sequence number after the last event it holds, and the TSC. Its note names
 * ctrace_batch_semaphore. The stores before it are done (memory clobber).
 */
static CTRACE__NOINLINE void ctrace__batch_flush(struct ctrace__batch *b, unsigned long long why)
{
	unsigned long long count_end = b->first_seq + b->count;

	/* The TSC now (the probe carries it; loaders since 2026-12-05 time every event by one TSC mapping instead, batch_path.c). */
	CTRACE__SITE5_SEM(batch, "ctrace_batch_semaphore", CTRACE__PTR(b),
			  CTRACE__CAST(unsigned long long, CTRACE__BATCH_HEADER + b->len), why, count_end,
			  ctrace__batch_rdtsc());
	b->len = 0;
	b->count = 0;
	__asm__ __volatile__("" ::: "memory");
	b->first_seq = count_end;
	__asm__ __volatile__("" ::: "memory");
}

/* The thread's first batched event in this object: its buffer. NULL: per event. */
static CTRACE__NOINLINE struct ctrace__batch *ctrace__batch_start(void)
{
	unsigned int pid = CTRACE__CAST(unsigned int, ctrace__syscall6(39 /* getpid */, 0, 0, 0, 0, 0, 0));
	unsigned int tid = CTRACE__CAST(unsigned int, ctrace__syscall6(186 /* gettid */, 0, 0, 0, 0, 0, 0));
	struct ctrace__batch *b;
	long p;

	/* A buffer of this process whose thread has exited (tgkill: ESRCH), taken over atomically. */
	for (b = ctrace_batch_semaphore.all; b; b = b->next) {
		unsigned int owner = b->tid;

		if (b->pid == pid && owner != tid &&
		    ctrace__syscall6(234 /* tgkill */, CTRACE__CAST(long, pid), CTRACE__CAST(long, owner), 0, 0, 0, 0) == -3 &&
		    __atomic_compare_exchange_n(&b->tid, &owner, tid, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
			goto take;
	}
	p = ctrace__syscall6(9 /* mmap */, 0, CTRACE__BATCH_BYTES, 3 /* PROT_READ|WRITE */,
			     0x22 /* MAP_PRIVATE|MAP_ANONYMOUS */, -1, 0);
	if (p < 0 && p > -4096)
		return 0;
	b = CTRACE__PCAST(struct ctrace__batch *, p);
	b->tid = tid;
	b->pid = pid;
	b->magic = CTRACE__BATCH_MAGIC;
	b->next = ctrace_batch_semaphore.all;
	while (!__atomic_compare_exchange_n(&ctrace_batch_semaphore.all, &b->next, b, 0, __ATOMIC_ACQ_REL,
					    __ATOMIC_RELAXED))
		;
take:
	b->busy = 1;
	b->magic = CTRACE__BATCH_MAGIC;
	b->version = 1;
	b->len = 0;
	b->count = 0;
	b->first_seq = 0;
	b->born = ctrace__batch_rdtsc();
	ctrace__batch_tls = b;
	ctrace__batch_flush(b, CTRACE__BATCH_HELLO);
	b->busy = 0;
	return b;
}

/*
 * A string's length, or more than max when it is longer or it reaches the
 * end of its page with no NUL: the next page may not be mapped, and a
 * site must never fault where the per-event path would not (the BPF
 * program reads such a string safely). memchr reads no further than asked.
 */
static __inline__ __attribute__((always_inline)) unsigned long ctrace__batch_strlen(unsigned long long p,
										   unsigned long max)
{
	unsigned long in_page = 4096u - CTRACE__CAST(unsigned long, p & 4095u);
	unsigned long n = in_page < max + 1u ? in_page : max + 1u;
	const char *s = CTRACE__PCAST(const char *, p);
	const char *nul = CTRACE__CAST(const char *, __builtin_memchr(s, 0, n));

	return nul ? CTRACE__CAST(unsigned long, nul - s) : max + 1u;
}

/*
 * desc: kind | words << 8 | name word << 12 | args word << 16 (7: none) |
 * literal bits << 20 (bit 0 name, bit 1 args: __builtin_constant_p at the
 * site) | CTRACE__BD_SMALL2 (word 2 fits a byte: an instant's scope).
 */
#define CTRACE__BD_SMALL2 (1u << 24)
/* The args' length is known (typed pairs, usdt/ctrace_args.h): the tsc argument holds it. */
#define CTRACE__BD_ARGS_LEN (1u << 25)
/* A site of another category than the default: the event carries the cat argument. */
#define CTRACE__BD_CATEGORY (1u << 26)

/* Argument word i (a constant at every site) of an event. */
#define CTRACE__BATCH_WORD(i, a0, a1, a2, a3) ((i) == 0 ? (a0) : (i) == 1 ? (a1) : (i) == 2 ? (a2) : (a3))

/*
 * The append of an event whose name or args is not a literal (known at the
 * site): its strings are measured and copied inline. Out of line (see
 * ctrace__batch_copy_*): inlined at the site, its calls (memchr, memcpy)
 * made gcc save registers on the untraced path of the site's function.
 */
static __inline__ __attribute__((always_inline)) int ctrace__batch_append_copy(unsigned int desc, unsigned long long a0,
										 unsigned long long a1, unsigned long long a2,
										 unsigned long long a3, unsigned long long tsc,
										 unsigned long long cat)
{
	struct ctrace__batch *b = ctrace__batch_tls;
	unsigned int words = desc >> 8 & 7u, name_w = desc >> 12 & 7u, args_w = desc >> 16 & 7u;
	unsigned int flags = 0, nlen = 0, alen = 0, mask = 0, small = 0, len;
	unsigned long long w[4], head, name_p = 0, args_p = 0;
	unsigned long n;
	unsigned char *e, *p;
	unsigned long long known = 0;

	if (desc & CTRACE__BD_ARGS_LEN) {
		known = tsc;
		tsc = 0;
	}
	if (__builtin_expect(!b, 0) && !(b = ctrace__batch_start()))
		return 1;
	if (b->busy)
		return 1; /* a signal handler's site in the middle of an append */
	b->busy = 1;
	__asm__ __volatile__("" ::: "memory");
	if (!tsc)
		tsc = ctrace__batch_rdtsc();
	w[0] = a0;
	w[1] = a1;
	w[2] = a2;
	w[3] = a3;
	if (name_w < 4 && w[name_w]) {
		if (desc >> 20 & 1u) {
			flags |= CTRACE__BF_NAME_LITERAL;
		} else if (w[name_w] < 65536u ||
			   (n = ctrace__batch_strlen(w[name_w], CTRACE__BATCH_NAME_MAX)) > CTRACE__BATCH_NAME_MAX) {
			goto per_event;
		} else {
			nlen = CTRACE__CAST(unsigned int, n);
			flags |= CTRACE__BF_NAME_INLINE;
		}
	}
	if (args_w < 4 && w[args_w]) {
		if (desc >> 21 & 1u) {
			flags |= CTRACE__BF_ARGS_LITERAL;
		} else if (known && known <= CTRACE__BATCH_ARGS_MAX) { /* in the site's own buffer: no NUL to look for */
			alen = CTRACE__CAST(unsigned int, known);
			flags |= CTRACE__BF_ARGS_INLINE;
		} else if (w[args_w] < 65536u ||
			   (n = ctrace__batch_strlen(w[args_w], CTRACE__BATCH_ARGS_MAX)) > CTRACE__BATCH_ARGS_MAX) {
			goto per_event;
		} else {
			alen = CTRACE__CAST(unsigned int, n);
			flags |= CTRACE__BF_ARGS_INLINE;
		}
	}
	len = b->len;
	/* The most this event can take: the header, four words, its category, its strings. */
	if (__builtin_expect(len + 48u + (desc & CTRACE__BD_CATEGORY ? 8u : 0u) + nlen + alen + 7u > sizeof(b->data),
			     0)) {
		ctrace__batch_flush(b, CTRACE__BATCH_FULL);
		len = 0;
	}
	e = b->data + len;
	p = e + 16;
	if ((desc & CTRACE__BD_SMALL2) && w[2] < 256u) {
		small = CTRACE__CAST(unsigned int, w[2]);
		flags |= CTRACE__BF_SMALL2;
		w[2] = 0;
	}
	if (flags & CTRACE__BF_NAME_INLINE) {
		name_p = w[name_w];
		w[name_w] = 0;
	}
	if (flags & CTRACE__BF_ARGS_INLINE) {
		args_p = w[args_w];
		w[args_w] = 0;
	}
	/* Unrolled: each test is one predictable branch a site (its words are constants). */
	if (words > 0 && w[0]) {
		__builtin_memcpy(p, &w[0], 8);
		p += 8;
		mask |= 1u;
	}
	if (words > 1 && w[1]) {
		__builtin_memcpy(p, &w[1], 8);
		p += 8;
		mask |= 2u;
	}
	if (words > 2 && w[2]) {
		__builtin_memcpy(p, &w[2], 8);
		p += 8;
		mask |= 4u;
	}
	if (words > 3 && w[3]) {
		__builtin_memcpy(p, &w[3], 8);
		p += 8;
		mask |= 8u;
	}
	if (desc & CTRACE__BD_CATEGORY) {
		__builtin_memcpy(p, &cat, 8);
		p += 8;
		flags |= CTRACE__BF_CATEGORY;
	}
	if (nlen)
		__builtin_memcpy(p, CTRACE__PCAST(const void *, name_p), nlen);
	if (alen)
		__builtin_memcpy(p + nlen, CTRACE__PCAST(const void *, args_p), alen);
	__builtin_memcpy(e, &tsc, 8);
	head = (desc & 0xffu) | flags << 8 | mask << 16 | small << 24 |
	       CTRACE__CAST(unsigned long long, nlen) << 32 | CTRACE__CAST(unsigned long long, alen) << 48;
	__builtin_memcpy(e + 8, &head, 8);
	__asm__ __volatile__("" ::: "memory");
	b->len = len + CTRACE__CAST(unsigned int, p - e) + ((nlen + alen + 7u) & ~7u);
	b->count++;
	__asm__ __volatile__("" ::: "memory");
	b->busy = 0;
	return 0;
per_event:
	b->busy = 0;
	return 1;
}

/*
 * ctrace__batch_append_copy out of line, one function per shape of event
 * (its words, which is the name, which the args: constants there, so the
 * decode folds away as in the inlined append; 50 -> about 30 ns an
 * instant with computed args). Kinds of the same shape share one. A kind
 * of another shape takes ctrace__batch_copy_any, correct but slower (about
 * 15 ns more): add its shape here and in both switches of ctrace__batch_copy.
 */
#define CTRACE__BATCH_SHAPE(words, name_w, args_w) ((words) | (name_w) << 4 | (args_w) << 8)
/* Each shape twice: the default category's, and another's (the category word one argument more). */
#define CTRACE__BATCH_COPY_FN(words, name_w, args_w)                                                   \
	static CTRACE__NOINLINE int ctrace__batch_copy_##words##name_w##args_w(                            \
		unsigned int desc, unsigned long long a0, unsigned long long a1, unsigned long long a2,   \
		unsigned long long a3, unsigned long long tsc)                                            \
	{                                                                                                 \
		return ctrace__batch_append_copy((desc & ~(0x777u << 8) & ~CTRACE__BD_CATEGORY) |         \
							 CTRACE__BATCH_SHAPE(words##u, name_w##u, args_w##u) << 8, \
						 a0, a1, a2, a3, tsc, 0);                                  \
	}                                                                                                 \
	static CTRACE__NOINLINE int ctrace__batch_copy_cat_##words##name_w##args_w(                        \
		unsigned int desc, unsigned long long a0, unsigned long long a1, unsigned long long a2,   \
		unsigned long long a3, unsigned long long tsc, unsigned long long cat)                    \
	{                                                                                                 \
		return ctrace__batch_append_copy((desc & ~(0x777u << 8)) | CTRACE__BD_CATEGORY |           \
							 CTRACE__BATCH_SHAPE(words##u, name_w##u, args_w##u) << 8, \
						 a0, a1, a2, a3, tsc, cat);                                \
	}
CTRACE__BATCH_COPY_FN(4, 1, 3) /* instant */
CTRACE__BATCH_COPY_FN(4, 2, 3) /* span begin */
CTRACE__BATCH_COPY_FN(2, 7, 1) /* span end */
CTRACE__BATCH_COPY_FN(3, 1, 7) /* counters */
CTRACE__BATCH_COPY_FN(2, 1, 7) /* new pid */
CTRACE__BATCH_COPY_FN(4, 1, 2) /* scope */

static CTRACE__NOINLINE int ctrace__batch_copy_any(unsigned int desc, unsigned long long a0, unsigned long long a1,
						   unsigned long long a2, unsigned long long a3, unsigned long long tsc)
{
	return ctrace__batch_append_copy(desc & ~CTRACE__BD_CATEGORY, a0, a1, a2, a3, tsc, 0);
}

static CTRACE__NOINLINE int ctrace__batch_copy_cat_any(unsigned int desc, unsigned long long a0,
						       unsigned long long a1, unsigned long long a2,
						       unsigned long long a3, unsigned long long tsc,
						       unsigned long long cat)
{
	return ctrace__batch_append_copy(desc | CTRACE__BD_CATEGORY, a0, a1, a2, a3, tsc, cat);
}

/* Out of line, by shape and category (constants at the site: the switches fold away). */
static __inline__ __attribute__((always_inline)) int ctrace__batch_copy(unsigned int desc, unsigned long long a0,
									  unsigned long long a1, unsigned long long a2,
									  unsigned long long a3, unsigned long long tsc,
									  unsigned long long cat)
{
	if (desc & CTRACE__BD_CATEGORY) {
		switch (desc >> 8 & 0x777u) {
		case CTRACE__BATCH_SHAPE(4u, 1u, 3u):
			return ctrace__batch_copy_cat_413(desc, a0, a1, a2, a3, tsc, cat);
		case CTRACE__BATCH_SHAPE(4u, 2u, 3u):
			return ctrace__batch_copy_cat_423(desc, a0, a1, a2, a3, tsc, cat);
		case CTRACE__BATCH_SHAPE(2u, 7u, 1u):
			return ctrace__batch_copy_cat_271(desc, a0, a1, a2, a3, tsc, cat);
		case CTRACE__BATCH_SHAPE(3u, 1u, 7u):
			return ctrace__batch_copy_cat_317(desc, a0, a1, a2, a3, tsc, cat);
		case CTRACE__BATCH_SHAPE(2u, 1u, 7u):
			return ctrace__batch_copy_cat_217(desc, a0, a1, a2, a3, tsc, cat);
		case CTRACE__BATCH_SHAPE(4u, 1u, 2u):
			return ctrace__batch_copy_cat_412(desc, a0, a1, a2, a3, tsc, cat);
		default:
			return ctrace__batch_copy_cat_any(desc, a0, a1, a2, a3, tsc, cat);
		}
	}
	switch (desc >> 8 & 0x777u) {
	case CTRACE__BATCH_SHAPE(4u, 1u, 3u):
		return ctrace__batch_copy_413(desc, a0, a1, a2, a3, tsc);
	case CTRACE__BATCH_SHAPE(4u, 2u, 3u):
		return ctrace__batch_copy_423(desc, a0, a1, a2, a3, tsc);
	case CTRACE__BATCH_SHAPE(2u, 7u, 1u):
		return ctrace__batch_copy_271(desc, a0, a1, a2, a3, tsc);
	case CTRACE__BATCH_SHAPE(3u, 1u, 7u):
		return ctrace__batch_copy_317(desc, a0, a1, a2, a3, tsc);
	case CTRACE__BATCH_SHAPE(2u, 1u, 7u):
		return ctrace__batch_copy_217(desc, a0, a1, a2, a3, tsc);
	case CTRACE__BATCH_SHAPE(4u, 1u, 2u):
		return ctrace__batch_copy_412(desc, a0, a1, a2, a3, tsc);
	default:
		return ctrace__batch_copy_any(desc, a0, a1, a2, a3, tsc);
	}
}

/*
 * Appends one event; 0 when done, else the caller fires the per-event site.
 * tsc: 0, or the TSC the event carries (CTRACE_SCOPE's end). Words that are
 * 0 (a NULL marker or args) and inline strings' pointers are not stored:
 * the event's mask says which are.
 *
 * Inlined into the site's out-of-line block (never on the untraced path):
 * there desc is a constant and most words are known (a NULL marker, a
 * literal name, an instant's scope), so what is left is a few stores next
 * to the TSC read. On this project's AMD VM rdtsc takes 12-13 ns and the
 * instructions around it hardly overlap it, so every instruction of the
 * shared function, which decodes desc at run time (about 90), showed: 29
 * ns an instant that way, 13.5 ns inlined. Each word is stored, and kept (p
 * moves on) only if it is not 0: no branch on an argument's value. A site
 * whose name or args is not a literal calls ctrace__batch_copy_*.
 */
static __inline__ __attribute__((always_inline)) int ctrace__batch_append_in(unsigned int desc, unsigned long long a0,
									       unsigned long long a1, unsigned long long a2,
									       unsigned long long a3, unsigned long long tsc,
									       unsigned long long cat)
{
	struct ctrace__batch *b = ctrace__batch_tls;
	unsigned int name_w = desc >> 12 & 7u, args_w = desc >> 16 & 7u;
	unsigned long long name_p = name_w < 4 ? CTRACE__BATCH_WORD(name_w, a0, a1, a2, a3) : 0;
	unsigned long long args_p = args_w < 4 ? CTRACE__BATCH_WORD(args_w, a0, a1, a2, a3) : 0;
	unsigned int flags, mask, small = 0, len;
	unsigned long long head;
	unsigned char *e, *p;

	/* A string that is not a literal (known at the site): copied out of line. */
	if ((name_w < 4 && !(desc >> 20 & 1u)) || (args_w < 4 && !(desc >> 21 & 1u)))
		return ctrace__batch_copy(desc, a0, a1, a2, a3, tsc, cat);
	flags = CTRACE__CAST(unsigned int, name_p != 0) * CTRACE__BF_NAME_LITERAL |
		CTRACE__CAST(unsigned int, args_p != 0) * CTRACE__BF_ARGS_LITERAL;
	if (__builtin_expect(!b, 0) && !(b = ctrace__batch_start()))
		return 1;
	if (b->busy)
		return 1; /* a signal handler's site in the middle of an append */
	b->busy = 1;
	__asm__ __volatile__("" ::: "memory");
	/* Read with busy set: a signal handler's event cannot take the same place. */
	len = b->len;
	/* The most this event can take: the header, four words and its category. */
	if (__builtin_expect(len > sizeof(b->data) - (desc & CTRACE__BD_CATEGORY ? 56u : 48u), 0)) {
		ctrace__batch_flush(b, CTRACE__BATCH_FULL);
		len = 0;
	}
	if (!tsc)
		tsc = ctrace__batch_rdtsc();
	if ((desc & CTRACE__BD_SMALL2) && a2 < 256u) {
		small = CTRACE__CAST(unsigned int, a2);
		flags |= CTRACE__BF_SMALL2;
		a2 = 0;
	}
	mask = CTRACE__CAST(unsigned int, a0 != 0) | CTRACE__CAST(unsigned int, a1 != 0) << 1 |
	       CTRACE__CAST(unsigned int, a2 != 0) << 2 | CTRACE__CAST(unsigned int, a3 != 0) << 3;
	e = b->data + len;
	p = e + 16;
	__builtin_memcpy(p, &a0, 8);
	p += (a0 != 0) * 8u;
	__builtin_memcpy(p, &a1, 8);
	p += (a1 != 0) * 8u;
	__builtin_memcpy(p, &a2, 8);
	p += (a2 != 0) * 8u;
	__builtin_memcpy(p, &a3, 8);
	p += (a3 != 0) * 8u;
	if (desc & CTRACE__BD_CATEGORY) {
		__builtin_memcpy(p, &cat, 8);
		p += 8;
		flags |= CTRACE__BF_CATEGORY;
	}
	__builtin_memcpy(e, &tsc, 8);
	head = (desc & 0xffu) | flags << 8 | mask << 16 | small << 24;
	__builtin_memcpy(e + 8, &head, 8);
	__asm__ __volatile__("" ::: "memory");
	b->len = len + CTRACE__CAST(unsigned int, p - e);
	b->count++;
	__asm__ __volatile__("" ::: "memory");
	b->busy = 0;
	return 0;
}

/* An event of the default category: no category word. */
static __inline__ __attribute__((always_inline)) int ctrace__batch_append(unsigned int desc, unsigned long long a0,
									    unsigned long long a1, unsigned long long a2,
									    unsigned long long a3, unsigned long long tsc)
{
	return ctrace__batch_append_in(desc & ~CTRACE__BD_CATEGORY, a0, a1, a2, a3, tsc, 0);
}

#ifdef __cplusplus
}
#endif

#endif /* CTRACE_BATCH_H */
