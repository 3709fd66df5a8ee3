#!/usr/bin/env python3
# make-seeds.py - writes the seed inputs of fuzz_records into
# tests/fuzz/corpus/records/: well-formed records (bpf/ctrace_record.h) of
# every kind, with hostile strings, framed as fuzz_records.c reads them (a
# 16-bit little-endian length before each record; length 0 = drops).
# Run once after the record format changes; the seeds are committed.
import os, struct

HDR = struct.Struct("<QII4QHHHHQ")  # ts, tgid, tid, arg[4], kind, flags, name_len, args_len, tsc
PID, TID2 = 10, 11
out = os.path.join(os.path.dirname(__file__), "corpus", "records")
os.makedirs(out, exist_ok=True)

def rec(kind, args=(0, 0, 0, 0), name=b"", argtext=b"", flags=0, ts=1000, tid=PID, tsc=0):
    args = tuple(args) + (0,) * (4 - len(args))
    body = HDR.pack(ts, PID, tid, *args, kind, flags, len(name), len(argtext), tsc) + name + argtext
    return struct.pack("<H", len(body)) + body

def dbl(v):
    return struct.unpack("<Q", struct.pack("<d", v))[0]

def usdt_str(arg, status, s):
    return struct.pack("<BBH", arg, status, len(s)) + s

def septets(v, count):
    return bytes(0x80 | ((v >> (7 * i)) & 0x7f) for i in range(count))

def typed(*pairs):
    """Typed args as usdt/ctrace_args.h encodes them: (type, key, value) each."""
    out = b"\x1fT"
    for t, key, v in pairs:
        out += t.encode() + bytes([len(key) + 1]) + key
        if t in "iud":
            out += septets(dbl(v) if t == "d" else v & (2**64 - 1), 10)
        elif t in "sS":
            out += septets(len(v), 2) + v
    return out

seeds = {
    "every_kind": b"".join([
        rec(1, (0, 0x10, 1, 1), b"outer", b'{"k":1}'),
        rec(3, (0, 1, ord("g"), 1), b"instant", b'{"a":[1,2,{"b":null}]}', ts=1100),
        rec(4, (0, 1, dbl(1.5)), b"counter", ts=1200),
        rec(5, (0, 1, dbl(2.5)), b"counter", ts=1300),
        rec(6, (0xabc, 1), b"pseudo", ts=1400),
        rec(3, (0xabc, 1, ord("p"), 0), b"in pseudo", ts=1500),
        rec(7, (0xabc,), ts=1600),
        rec(2, (0x10, 1), b"", b'{"end":true}', ts=1700),
        rec(1, (0, 0x20, 1, 0), b"async", ts=1800),
        rec(2, (0x20, 0), ts=1900, tid=TID2),
        rec(8, (0, 1, 0, 3000), b"scope", b'{"s":1}', ts=2000),
        rec(9, (PID, PID + 1), ts=2100),
        rec(10, (PID,), b"/usr/bin/next", ts=2200),
        rec(11, (0, 1, 0, 3000), b"scope_tsc", b'{"s":2}', ts=2300, tsc=9000),
        struct.pack("<H", 0),
    ]),
    "hostile_strings": b"".join([
        rec(3, (0, 1, ord("t"), 1), b"bad \xff\xfe \xc3\x28 \xed\xa0\x80 \xf4\x90\x80\x80", b'{"k":"\xff"}'),
        rec(3, (0, 1, ord("t"), 1), b'q" b\\ \x01\x1f\x7f \xe2\x80\xa8', b'{"q":"\\"\\\\\\u0000"}'),
        rec(3, (0, 1, ord("z"), 1), b"x" * 256, b"[" * 2000, flags=0x1 | 0x4),
        rec(3, (0, 1, ord("t"), 1), b"", b"", flags=0x2 | 0x8),
        rec(3, (0, 1, ord("t"), 1), b"args", b'{"k":1,"k":2} trailing'),
        rec(3, (0, 1, ord("t"), 1), b"surrogate", b'{"k":"\\ud800"}'),
        rec(4, (0, 1, dbl(float("nan"))), b"nan"),
        rec(5, (0, 1, dbl(float("inf"))), b"nan"),
        rec(2, (0x999, 0)),
        rec(7, (0x777,)),
        rec(6, (0x777, 1), b"", flags=0x2),
        rec(1, (0, 0x30, 1, 1), b"TracingStartedInBrowser", b'{"a":1e999}'),
    ]),
    # Flows (14 out, 15 in), thread names (16), sort indexes (17, 18), renames (19).
    "flows_names": b"".join([
        rec(1, (0, 0x60, 1, 0), b"sender", ts=10),
        rec(14, (7,), ts=11),
        rec(14, (7,), ts=12),
        rec(15, (8,), ts=13),
        rec(2, (0x60, 0), ts=20),
        rec(15, (7,), ts=21, tid=TID2),
        rec(8, (0, 1, 0, 5), b"receiver", ts=30, tid=TID2),
        rec(15, (7,), ts=31, tid=TID2),
        rec(14, (9,), ts=32, tid=TID2),
        rec(16, (1,), b"named by the program", ts=40),
        rec(16, (1,), b"", flags=0x2, ts=41),
        rec(17, (2**64 - 3,), ts=42),
        rec(18, (5,), ts=43, tid=TID2),
        rec(19, (PID, TID2, 0), b"renamed", ts=44),
        rec(19, (PID, 12345, 0), b"never seen", ts=45),
        rec(1, (0, 0x70, 1, 0), b"open at stop", ts=50),
        rec(14, (10,), ts=51),
    ]),
    # Typed args (CTRACE_INSTANT_ARGS...): every type; a span's begin and end both typed (merged).
    "typed_args": b"".join([
        rec(3, (0, 1, ord("t"), 1), b"read", typed(("i", b"fd", -3), ("u", b"bytes", 2**64 - 1),
                                                   ("d", b"ms", 0.25), ("s", b"path", b"/a \"b\" \xff"))),
        rec(1, (0, 0x80, 1, 1), b"op", typed(("i", b"id", 7), ("n", b"res", None)), ts=1100),
        rec(2, (0x80, 1), b"", typed(("d", b"nan", float("nan")), ("S", b"cut", b"x" * 40), ("x", b"low", None)), ts=1200),
        rec(3, (0, 1, ord("t"), 1), b"broken", typed(("i", b"fd", 1))[:-3], ts=1300),
    ]),
    # --usdt hits (20): the values (8 bytes each, arg[1] of them), then each string as
    # {u8 arg, u8 status, u16 len} and its bytes; arg[0] folded to a probe's cookie by the harness.
    "usdt": b"".join([
        rec(20, (0, 6), struct.pack("<6Q", 1, 2, 3, 4, 5, 6),
            usdt_str(0, 0, b"hello") + usdt_str(1, 0, b"St13runtime_error") + usdt_str(2, 2, b"x" * 30)
            + usdt_str(5, 1, b""), ts=10),
        rec(20, (1, 1), struct.pack("<Q", 0x1000), usdt_str(0, 0, b"outer"), ts=20),
        rec(20, (1, 1), struct.pack("<Q", 0x1000), usdt_str(0, 0, b"inner"), ts=30),
        rec(20, (2, 1), struct.pack("<Q", 0x1000), usdt_str(0, 0, b"outer"), ts=40),
        rec(20, (3, 0), ts=50),
        rec(20, (4, 2), struct.pack("<2Q", 2**64 - 1, 2**63), ts=60),
        rec(20, (5, 4), struct.pack("<4Q", 0, 10, 0, 4), usdt_str(1, 0, b"java/lang/String") + usdt_str(3, 0, b"hash"), ts=70),
        rec(20, (1, 1), struct.pack("<Q", 0x1000), usdt_str(0, 3, b""), ts=80),
        rec(20, (2**63, 1), struct.pack("<Q", 7), ts=90),
    ]),
    "span_reuse": b"".join([
        rec(1, (0, 0x40, 1, 0), b"first", ts=1),
        rec(1, (0, 0x40, 1, 0), b"again", ts=2),
        rec(2, (0x40, 0), ts=0),
        rec(1, (0, 0x50, 1, 0), b"open at stop", ts=5),
    ]),
}
for name, data in seeds.items():
    with open(os.path.join(out, name), "wb") as f:
        f.write(data)
