#!/usr/bin/env bash
# selftest.sh - check the DevTools trace checker itself: run check-trace.mjs on
# the hand-written sample-trace.json (and a few broken files made here) and
# assert what the engine must report. Needs scripts/install-devtools-checker
# to have run. Prints one line per check and "N passed, N failed" last; exits
# non-zero if any check failed.
set -u

dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
checker="$dir/check-trace.mjs"
sample="$dir/sample-trace.json"

if [ ! -f "$dir/node_modules/@paulirish/trace_engine/package.json" ]; then
	echo "selftest: the trace engine is not installed: run scripts/install-devtools-checker" >&2
	exit 1
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); echo "ok - $1"; }
ko() { fail=$((fail + 1)); echo "not ok - $1"; }

# expect_json NAME FILE JS: JS is a node expression over `s` (the summary
# object) that must be true.
expect_json() {
	if node -e '
		const fs = require("fs");
		const s = JSON.parse(fs.readFileSync(process.argv[1], "utf8"));
		const near = (a, b) => typeof a === "number" && Math.abs(a - b) < 1e-6;
		const slice = (name) => s.slices.filter((x) => x.name === name);
		const inst = (name) => s.instants.filter((x) => x.name === name);
		if (!eval(process.argv[2])) { console.error("  failed: " + process.argv[2]); process.exit(1); }
	' "$2" "$3"; then ok "$1"; else ko "$1"; fi
}

# expect_reject NAME FILE: the checker must exit non-zero, print nothing on
# stdout and say why on stderr.
expect_reject() {
	node "$checker" "$2" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ "$rc" -ne 0 ] && [ ! -s "$tmp/out" ] && [ -s "$tmp/err" ]; then
		ok "$1 (exit $rc: $(head -c 100 "$tmp/err" | head -n 1))"
	else
		ko "$1 (exit $rc, stdout $(wc -c <"$tmp/out") bytes)"
	fi
}

# --- the sample -----------------------------------------------------------
if node "$checker" "$sample" >"$tmp/sum.json" 2>"$tmp/err"; then
	ok "sample parses (exit 0)"
else
	ko "sample parses: $(cat "$tmp/err")"
fi
if [ "$(wc -l <"$tmp/sum.json")" -eq 1 ]; then ok "stdout is one line"; else ko "stdout is one line"; fi
S="$tmp/sum.json"
expect_json "ok, 20 events, generic trace" "$S" 's.ok === true && s.events === 20 && s.generic === true'
expect_json "both processes named (pid 4242 and pseudo pid 1073741825)" "$S" \
	's.processes["4242"] === "myapp" && s.processes["1073741825"] === "request 17"'
expect_json "threads named" "$S" \
	's.threads["4242:4242"] === "main" && s.threads["4242:4243"] === "worker-1" && s.threads["1073741825:4243"] === "worker-1"'
expect_json "three thread tracks, pseudo-process included" "$S" \
	'JSON.stringify(s.tracks) === JSON.stringify(["4242:4242","4242:4243","1073741825:4243"])'
expect_json "6 X slices, none dropped" "$S" 's.slices.length === 6 && s.dropped.length === 0'
expect_json "nested slices on main: parse > tokenize > lex" "$S" '
	slice("parse").length === 1 && near(slice("parse")[0].ts, 1000) && near(slice("parse")[0].dur, 500.25) && slice("parse")[0].depth === 0 &&
	near(slice("tokenize")[0].ts, 1100.125) && near(slice("tokenize")[0].dur, 200.5) && slice("tokenize")[0].depth === 1 &&
	near(slice("lex")[0].dur, 50) && slice("lex")[0].depth === 2 && slice("lex")[0].tid === 4242'
expect_json "3-decimal durations kept (emit 10.001)" "$S" 'near(slice("emit")[0].dur, 10.001) && near(slice("emit")[0].ts, 1700.5)'
expect_json "slice on worker and on the pseudo-process" "$S" '
	slice("job")[0].tid === 4243 && near(slice("job")[0].dur, 300) &&
	slice("handle")[0].pid === 1073741825 && near(slice("handle")[0].dur, 100)'
expect_json "4 I instants with their scope" "$S" '
	s.instants.length === 4 && inst("cache flush")[0].s === "p" && inst("gc")[0].s === "g" &&
	inst("tick")[0].s === "t" && inst("accepted")[0].pid === 1073741825'
expect_json "no engine model for counters or async (null)" "$S" 's.counters === null && s.async === null'
expect_json "engine pairing helper matches b/e 0x1 across threads" "$S" '
	s.async_matched.length === 1 && s.async_matched[0].name === "read" && s.async_matched[0].id === "0x1" &&
	near(s.async_matched[0].dur, 350.5)'
expect_json "trace bounds 1000..1900 us" "$S" 'near(s.bounds.min, 1000) && near(s.bounds.max, 1900)'
expect_json "no engine warnings" "$S" 's.warnings.length === 0'

# --- gzip, --brief, and 'i' vs 'I' ----------------------------------------
gzip -c "$sample" >"$tmp/sample.json.gz"
if node "$checker" "$tmp/sample.json.gz" --brief >"$tmp/gz.json" 2>"$tmp/err"; then
	expect_json ".json.gz read, --brief keeps counts only" "$tmp/gz.json" \
		's.counts.slices === 6 && s.counts.instants === 4 && !("slices" in s)'
else
	ko ".json.gz read: $(cat "$tmp/err")"
fi
node -e '
	const fs = require("fs");
	const t = JSON.parse(fs.readFileSync(process.argv[1], "utf8"));
	t.traceEvents.push({ph: "i", name: "legacy", cat: "ctrace", s: "t", pid: 4242, tid: 4242, ts: 1360});
	t.traceEvents.push({ph: "B", name: "b1", cat: "ctrace", pid: 4242, tid: 4242, ts: 1800});
	t.traceEvents.push({ph: "E", name: "b1", cat: "ctrace", pid: 4242, tid: 4242, ts: 1850.5});
	fs.writeFileSync(process.argv[2], JSON.stringify(t));
' "$sample" "$tmp/plus.json"
if node "$checker" "$tmp/plus.json" >"$tmp/plus-sum.json" 2>"$tmp/err"; then
	expect_json "'i' instant ignored by the engine, 'I' kept" "$tmp/plus-sum.json" \
		's.instants.length === 4 && inst("legacy").length === 0 && s.raw_phases.i === 1'
	expect_json "B/E pair becomes one slice" "$tmp/plus-sum.json" 'slice("b1").length === 1 && near(slice("b1")[0].dur, 50.5)'
else
	ko "sample plus i/B/E parses: $(cat "$tmp/err")"
fi

# --- files the checker must reject ----------------------------------------
printf '%s\n' '{"traceEvents":[{"ph":"B","name":"a","cat":"c","pid":1,"tid":1,"ts":1},{"ph":"E","cat":"c","pid":1,"tid":1,"ts":2}]}' >"$tmp/noname.json"
expect_reject "rejects an E event without name" "$tmp/noname.json"
printf '%s\n' '{"traceEvents":[{"ph":"X","cat":"c","pid":1,"tid":1,"ts":1,"dur":1}]}' >"$tmp/noname-x.json"
expect_reject "rejects an X event without name" "$tmp/noname-x.json"
printf 'garbage{\n' >"$tmp/garbage.json"
expect_reject "rejects garbage" "$tmp/garbage.json"
head -c 200 "$sample" >"$tmp/truncated.json"
expect_reject "rejects a truncated file" "$tmp/truncated.json"
printf '%s\n' '{"context":{},"metadata":{}}' >"$tmp/noevents.json"
expect_reject "rejects an object without traceEvents" "$tmp/noevents.json"
expect_reject "rejects a missing file" "$tmp/does-not-exist.json"

echo "selftest: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
