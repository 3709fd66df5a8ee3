/* SPDX-License-Identifier: MIT */
/*
 * ctrace_args.h - typed args: how CTRACE_INSTANT_ARGS and its kin (in
 * include/ctrace.h) encode their key/value pairs (included by ctrace.h;
 * applications never include it directly).
 *
 * The pairs travel as an event's args text, so both paths carry them as
 * they carry any computed args: the batched path copies the text into the
 * thread's buffer, the per-event probe's BPF program reads it as a string.
 * So the encoding has no NUL byte (a string read stops at the first), and
 * it takes no formatting in the program: no locale, no division, no
 * allocation, safe in a signal handler. The loader (userspace/ingest/typed_args.c)
 * writes the pairs as a JSON object with their types.
 *
 *   "\x1f" "T"                     the magic: no JSON object starts so
 *   then per pair:
 *     u8 type                      'i' int64, 'u' uint64, 'd' double (its
 *                                  IEEE-754 bits), 's' string, 'S' string
 *                                  cut to what the buffer holds, 'n' a NULL
 *                                  string, 'x' a pointer below 64 KiB
 *                                  (never mapped on Linux: not read)
 *     u8 key length + 1            then the key's bytes (a literal)
 *     'I' 'U': 1 + n bytes         an int64 (zigzagged: 0, -1, 1, -2 ...)
 *                                  or uint64 in as few septets n (1-10)
 *                                  as it needs: 0x80 | n, then the n
 *                                  septets as below
 *     'i' 'u' 'd': 10 bytes        the 64 bits, 7 a byte from the lowest,
 *                                  each byte's top bit set (integers so
 *                                  from headers before the 'I' 'U' form)
 *     's' 'S': 2 bytes, then the   the length, 7 bits a byte from the
 *     string's bytes               lowest, top bits set
 *   then NUL.
 */
#ifndef CTRACE_ARGS_H
#define CTRACE_ARGS_H

#define CTRACE__KV_MAGIC "\x1f" "T"
#define CTRACE__KV_BYTES 512   /* the buffer, on the stack of the site's armed block */
#define CTRACE__KV_KEY_MAX 31  /* so that four pairs always fit: 2 + 4 * 44 + 1 bytes */
#define CTRACE__KV_PAIRS_MAX 4
#define CTRACE__KV_NUM_BYTES 10
#define CTRACE__KV_LEN_BYTES 2

/* The loader includes this file for the format above only. */
#ifndef CTRACE_ARGS_FORMAT_ONLY

/*
 * The encoder's state is a pointer returned by each call, not a count in
 * the buffer's struct: the buffer's address escapes (to the probe), and a
 * count beside it would be stored and reloaded around every call.
 */
static __inline__ __attribute__((always_inline)) char *ctrace__kv_begin(char *b)
{
	b[0] = '\x1f';
	b[1] = 'T';
	return b + 2;
}

static __inline__ __attribute__((always_inline)) char *ctrace__kv_key(char *p, char type, const char *key,
								       unsigned int klen)
{
	p[0] = type;
	p[1] = CTRACE__CAST(char, klen + 1);
	__builtin_memcpy(p + 2, key, klen);
	return p + 2 + klen;
}

/*
 * A number's 64 bits as 10 septets at p (room is certain: CTRACE__KV_KEY_MAX,
 * CTRACE__KV_PAIRS_MAX). The low 56 bits are spread into 8 bytes by
 * halving (28|28 into 32-bit lanes, 14|14 into 16-bit ones, 7|7 into
 * bytes): 9 operations and one store instead of a loop of 8.
 */
static __inline__ __attribute__((always_inline)) void ctrace__kv_septets(char *p, unsigned long long v)
{
	unsigned long long x = v & 0x00ffffffffffffffull;

	x = (x & 0x000000000fffffffull) | (x & 0x00fffffff0000000ull) << 4;
	x = (x & 0x00003fff00003fffull) | (x & 0x0fffc0000fffc000ull) << 2;
	x = (x & 0x007f007f007f007full) | (x & 0x3f803f803f803f80ull) << 1;
	x |= 0x8080808080808080ull;
	__builtin_memcpy(p, &x, 8);
	p[8] = CTRACE__CAST(char, 0x80u | CTRACE__CAST(unsigned int, (v >> 56) & 0x7fu));
	p[9] = CTRACE__CAST(char, 0x80u | CTRACE__CAST(unsigned int, v >> 63));
}

static __inline__ __attribute__((always_inline)) char *ctrace__kv_num(char *p, char type, const char *key,
								       unsigned int klen, unsigned long long v)
{
	p = ctrace__kv_key(p, type, key, klen);
	ctrace__kv_septets(p, v);
	return p + 10;
}

/*
 * An integer in the septets it needs ('I' 'U'): 4096 takes 3 bytes, not
 * 10, and a byte less is a byte less for the flush to copy, which is most
 * of what a batched pair costs. The 10 septets are stored whole as above
 * (no loop, no branch) and the pointer moves on by the n kept: what lies
 * past them is written over by what follows. n = ceil(bits / 7) by a
 * multiply (exact for 1-64 bits): no division.
 */
static __inline__ __attribute__((always_inline)) char *ctrace__kv_int(char *p, char type, const char *key,
								       unsigned int klen, unsigned long long v)
{
	unsigned int bits = 64u - CTRACE__CAST(unsigned int, __builtin_clzll(v | 1u));
	unsigned int n = ((bits + 6u) * 147u) >> 10;

	p = ctrace__kv_key(p, type, key, klen);
	p[0] = CTRACE__CAST(char, 0x80u | n);
	ctrace__kv_septets(p + 1, v);
	return p + 1 + n;
}

/* int64 bits zigzagged: small negative values need few septets too. */
#define CTRACE__ZIGZAG(x) (((x) << 1) ^ (0ull - ((x) >> 63)))

static __inline__ __attribute__((always_inline)) char *ctrace__kv_double(char *p, const char *key,
									  unsigned int klen, double d)
{
	unsigned long long bits;

	__builtin_memcpy(&bits, &d, sizeof(bits));
	return ctrace__kv_num(p, 'd', key, klen, bits);
}

/*
 * The most a pair other than a string's bytes takes: type, key length, key,
 * 11 bytes of an integer (a double takes 10, a string's length 2).
 */
#define CTRACE__KV_PAIR_MAX (2 + CTRACE__KV_KEY_MAX + 11)

/*
 * A string: as much of it as the buffer b holds ('S' when cut), always
 * leaving room for three more pairs after it (there are at most four).
 */
static __inline__ char *ctrace__kv_str(char *p, const char *b, const char *key, unsigned int klen,
				       const char *s)
{
	const unsigned int after = 3 * CTRACE__KV_PAIR_MAX;
	unsigned long long len, room;
	unsigned int used;

	if (!s || CTRACE__PCAST(unsigned long long, s) < 65536)
		return ctrace__kv_key(p, s ? 'x' : 'n', key, klen);
	len = __builtin_strlen(s);
	/* What the string's bytes may take: all but the final NUL, this pair's head and the pairs after. */
	used = CTRACE__CAST(unsigned int, p - b) + 1 + 2 + klen + 2 + after;
	room = used < CTRACE__KV_BYTES ? CTRACE__KV_BYTES - used : 0;
	p = ctrace__kv_key(p, len > room ? 'S' : 's', key, klen);
	if (len > room)
		len = room;
	p[0] = CTRACE__CAST(char, 0x80u | CTRACE__CAST(unsigned int, len & 0x7fu));
	p[1] = CTRACE__CAST(char, 0x80u | CTRACE__CAST(unsigned int, len >> 7));
	__builtin_memcpy(p + 2, s, CTRACE__CAST(unsigned long, len));
	return p + 2 + len;
}

static __inline__ __attribute__((always_inline)) const char *ctrace__kv_end(char *p, const char *b)
{
	*p = '\0';
	return b;
}

/* The key: a string literal ("" key refuses anything else) of at most CTRACE__KV_KEY_MAX bytes. */
#define CTRACE__KV_KEY(key)                                                    \
	"" key, CTRACE__CAST(unsigned int, sizeof(char[sizeof(key) <= CTRACE__KV_KEY_MAX + 1 ? 1 : -1]) * 0 + \
					    sizeof(key) - 1)

/*
 * An int64 argument's bits: through long long first, so that a double is
 * cut toward zero as a C cast does (to unsigned it would be undefined when
 * negative). C++: quiet under -Wuseless-cast, as CTRACE__U64 is.
 */
#ifdef __cplusplus
extern "C++" {
template <typename T>
static __inline__ __attribute__((always_inline)) unsigned long long ctrace__i64(T v)
{
	return static_cast<unsigned long long>(static_cast<long long>(v));
}
static __inline__ __attribute__((always_inline)) unsigned long long ctrace__i64(long long v)
{
	return static_cast<unsigned long long>(v);
}
}
#define CTRACE__I64(x) ctrace__i64(x)
#else
#define CTRACE__I64(x) ((unsigned long long)(long long)(x))
#endif

/* The pairs, each written by the calls below, in their order. */
#define CTRACE_ARG_INT(key, v) (ctrace__kv = ctrace__kv_int(ctrace__kv, 'I', CTRACE__KV_KEY(key), CTRACE__ZIGZAG(CTRACE__I64(v))))
#define CTRACE_ARG_UINT(key, v) (ctrace__kv = ctrace__kv_int(ctrace__kv, 'U', CTRACE__KV_KEY(key), CTRACE__U64(v)))
#define CTRACE_ARG_DOUBLE(key, v) (ctrace__kv = ctrace__kv_double(ctrace__kv, CTRACE__KV_KEY(key), CTRACE__DOUBLE(v)))
#define CTRACE_ARG_STR(key, s) (ctrace__kv = ctrace__kv_str(ctrace__kv, ctrace__kv_buf, CTRACE__KV_KEY(key), (s)))

/* 1 to 4 pairs, or the build fails. */
#define CTRACE__KV_COUNT(...) CTRACE__KV_COUNT_(__VA_ARGS__, 5, 4, 3, 2, 1, 0)
#define CTRACE__KV_COUNT_(a, b, c, d, e, n, ...) n
#define CTRACE__KV_BUILD(...)                                                  \
	char ctrace__kv_buf[CTRACE__KV_BYTES];                                 \
	char *ctrace__kv = ctrace__kv_begin(ctrace__kv_buf);                   \
	(void)sizeof(char[CTRACE__KV_COUNT(__VA_ARGS__) <= CTRACE__KV_PAIRS_MAX ? 1 : -1]); \
	__VA_ARGS__;
/* The pairs' text, once built, and its length (after CTRACE__KV_TEXT, which ends it). */
#define CTRACE__KV_TEXT ctrace__kv_end(ctrace__kv, ctrace__kv_buf)
#define CTRACE__KV_LEN CTRACE__CAST(unsigned int, ctrace__kv - ctrace__kv_buf)

#endif /* CTRACE_ARGS_FORMAT_ONLY */
#endif
