#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""otlp_proto_check.py - OTLP/HTTP JSON requests read by the OTLP schema.

  otlp_proto_check.py PROTO_DIR receiver DIR   the bodies a test receiver kept
                                               (N.head: path...; N.body: gzip)
  otlp_proto_check.py PROTO_DIR lines FILE     -o FILE.otlp.json, a request a line

Compiles PROTO_DIR/otlp_subset.proto (our own subset of OTLP's messages,
written from its field numbers: tests/otlp_proto/README.md) with protoc, then
parses each request strictly (protobuf's json_format, unknown fields refused)
as an ExportTraceServiceRequest or ExportMetricsServiceRequest. OTLP's JSON differs
from protobuf's in one way: trace and span ids are hex, not base64 (the OTLP
specification, "JSON Protobuf Encoding"), so they are turned into base64
first, and must be 16 and 8 bytes. Prints "spans=N events=N points=N" and
exits 0, or says what is wrong and exits 1. Run by /usr/bin/python3: Debian's
python3-protobuf.
"""
import base64
import glob
import gzip
import json
import os
import subprocess
import sys
import tempfile

ID_BYTES = {"traceId": 16, "spanId": 8, "parentSpanId": 8}


def hex_ids_to_base64(o, where):
    if isinstance(o, dict):
        for k, v in o.items():
            if k in ID_BYTES:
                raw = bytes.fromhex(v)
                if len(raw) != ID_BYTES[k] or raw == bytes(len(raw)):
                    raise ValueError(f"{where}: {k} {v!r} is not {ID_BYTES[k]} bytes of hex, not all zeros")
                o[k] = base64.b64encode(raw).decode()
            else:
                hex_ids_to_base64(v, where)
    elif isinstance(o, list):
        for v in o:
            hex_ids_to_base64(v, where)


def main():
    proto_dir, mode, what = sys.argv[1:4]
    with tempfile.TemporaryDirectory(prefix="otlp-proto-") as out:
        check(proto_dir, mode, what, out)


def check(proto_dir, mode, what, out):
    subprocess.run(["protoc", "--python_out=" + out, "-I", proto_dir, "otlp_subset.proto"], check=True)
    sys.path.insert(0, out)
    from google.protobuf import json_format
    import otlp_subset_pb2 as otlp

    requests = []  # (where, path or None, text)
    if mode == "receiver":
        for head in sorted(glob.glob(os.path.join(what, "*.head")), key=lambda p: int(os.path.basename(p)[:-5])):
            lines = open(head).read().split("\n")
            if not lines[3].startswith("2"):
                continue  # answered with an error: sent again later
            body = open(head[:-5] + ".body", "rb").read()
            if lines[2] == "gzip":
                body = gzip.decompress(body)
            requests.append((head, lines[0], body.decode("utf-8")))
    else:
        for i, line in enumerate(open(what, encoding="utf-8")):
            requests.append((f"{what}:{i + 1}", None, line))
    spans = events = points = 0
    for where, path, text in requests:
        doc = json.loads(text)
        is_traces = "resourceSpans" in doc
        if path is not None and path != ("/v1/traces" if is_traces else "/v1/metrics"):
            raise SystemExit(f"{where}: sent to {path}")
        hex_ids_to_base64(doc, where)
        msg = otlp.ExportTraceServiceRequest() if is_traces else otlp.ExportMetricsServiceRequest()
        try:
            json_format.Parse(json.dumps(doc), msg, ignore_unknown_fields=False)
        except json_format.ParseError as e:
            raise SystemExit(f"{where}: not an OTLP request: {e}")
        for rs in getattr(msg, "resource_spans", []):
            for ss in rs.scope_spans:
                for s in ss.spans:
                    spans += 1
                    events += len(s.events)
                    if s.end_time_unix_nano < s.start_time_unix_nano:
                        raise SystemExit(f"{where}: span {s.name} ends before it starts")
        for rm in getattr(msg, "resource_metrics", []):
            for sm in rm.scope_metrics:
                for m in sm.metrics:
                    if m.WhichOneof("data") != "gauge":
                        raise SystemExit(f"{where}: metric {m.name} is not a gauge")
                    points += len(m.gauge.data_points)
    print(f"spans={spans} events={events} points={points}")


if __name__ == "__main__":
    main()
