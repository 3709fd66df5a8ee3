#!/usr/bin/env node
// check-trace.mjs - read a ctrace-bpf trace with Chrome DevTools' own trace
// engine (npm @paulirish/trace_engine, the models/trace code of the DevTools
// Performance panel) and print ONE JSON object on stdout saying what the
// engine understood. The tests compare it with their own reading of the file.
//
//   node tests/devtools/check-trace.mjs TRACE.json[.gz] [--brief]
//
// Exit 0 and {"ok":true,...} when the engine parsed the file; exit 1 with a
// message on stderr (and nothing on stdout) when the file is unreadable, not
// JSON, has no traceEvents array, or the engine throws. --brief leaves out the
// per-event lists (slices, instants, dropped, async_matched) and keeps counts.
//
// How it runs the engine: exactly as the Performance panel does when a file is
// loaded: TraceModel.Model.createWithAllHandlers(), then
// model.parse(traceEvents, {metadata}) with every handler (and the insights
// pass), then model.parsedTrace().data holds each handler's data(). Nothing
// below re-parses the raw JSON to build the summary, except the "raw_phases"
// histogram, which only counts input events per "ph" so that the tests can see
// what the engine dropped.
//
// What each field of the summary comes from:
//   events     parsedTrace.traceEvents.length: the engine keeps every event of
//              the array; it has no per-event rejection, it either parses the
//              whole array or throws.
//   generic    Meta.traceIsGeneric. True for our traces. If an event is named
//              TracingStartedInBrowser, TracingStartedInPage,
//              TracingSessionIdForWorker or CpuProfile the engine treats the file
//              as a Chrome recording and then DELETES every process without a
//              page URL (all of ours): our traces must never use those names.
//   bounds     Meta.traceBounds {min,max,range} in us, from B/E/X/I events only.
//   processes  Meta.processNames: {pid: name} from "M" process_name events.
//   threads    Meta.threadsInProcess: {"pid:tid": name} from "M" thread_name.
//   tracks     "pid:tid" of the threads the Renderer handler kept as thread
//              tracks (a thread with no B/E/X/I event is dropped).
//   slices     Renderer handler: per thread, its entries of phase X (raw "X"
//              events, and synthetic X events it built from "B"/"E" pairs)
//              that made it into the thread's call tree (Renderer.entryToNode),
//              sorted by time as the engine sorted them: {name,cat,pid,tid,ts,
//              dur,depth}. depth 0 is a root.
//   dropped    X entries the engine kept in the thread but could NOT place in
//              the tree because they start inside a slice and end after it
//              (TreeHelpers.treify silently skips them: DevTools does not draw
//              them). Empty for a well-nested trace.
//   instants   Renderer handler: thread entries of phase "I" as it kept them:
//              {name,s,pid,tid,ts,depth}; s is null when the event had none.
//   async      null: the engine has NO model for generic async events. Only
//              b/e of cat blink.user_timing and blink.console (UserTimings),
//              blink.animations... are paired; a "ctrace.async" b/e pair is
//              ignored by every handler.
//   async_matched  what the engine's own pairing helper
//              (Helpers.Trace.createMatchedSortedSyntheticEvents, the code
//              UserTimings uses) makes of our b/n/e events when we hand them to
//              it: {name,cat,id,pid,tid,ts,dur}; pid/tid are the END event's.
//              It sorts them by ts, keys a pair on cat+id+name, matches an
//              "e" with the latest open "b" of the same key, and skips an event whose id is falsy (a
//              numeric 0 or ""; the string "0x0" is kept).
//   flows      FlowsHandler: each flow it bound, as the list of the events it
//              links [{name,ph,pid,tid,ts}], in time order. It binds a flow
//              phase event (s/t/f) to the event of equal ts, pid, tid and cat.
//   counters   null: the engine has no model for "C" events (MemoryHandler
//              only keeps Chrome's UpdateCounters events).
//   warnings   what the engine printed with console.* while parsing (e.g.
//              "Begin/End events mismatch ...").
//   raw_phases {ph: count} of the input events (diagnostic, see above).
//   counts     lengths of the lists above (also in --brief).
// ts/dur are rounded to 3 decimals (1 ns): the engine keeps the file's
// microsecond numbers, but a B/E duration is its float subtraction.
//
// Pitfalls found in the engine (version pinned in package.json):
//  * An event without "name" (even an "E", or an "M") crashes the whole parse
//    (MetaHandler calls event.name.endsWith): we exit 1. So do a null event
//    and a process_name/thread_name "M" event without "args".
//  * Nothing else is validated: an X without ts or dur, an event without ph
//    or tid, are accepted as they are (slices with ts/dur null). pid "1" and
//    pid 1 are two different processes (Map keys): pids must be numbers.
//  * An event at ts 0 is left out of the trace bounds (Meta skips ts === 0).
//  * "B"/"E" are paired with ONE stack shared by all threads, in file order
//    (RendererHandler.makeCompleteEvent), not per thread and not by time. An
//    "E" pops the last "B" of any thread; if name or cat differ it logs a
//    mismatch and drops both the pairing and the E (the B stays with dur 0).
//    An "E" with nothing open is ignored.
//  * Only "I" is an instant; the legacy "i" is ignored by every handler, as
//    are "C", "b"/"e"/"n", "s"/"t"/"f" (flows are kept by FlowsHandler only for
//    Chrome's own categories), "P", "O", etc. The "s" scope is not used.
//  * X events that overlap without nesting are left out of the tree (see
//    "dropped"). Each thread's entries are sorted by ts (then longest first),
//    so file order of X events does not matter. Two X with equal ts and dur
//    nest: the second becomes the child (depth 1). An "I" is a tree node too
//    (its depth is that of the slice it falls in); an "I" with s "g" or "p"
//    still sits on its own thread's track.
//  * pids >= 2^30 (our pseudo-processes, e.g. 1073741825) are kept as plain
//    numbers: named, and their threads get tracks like any other.
//  * async ids: a numeric 0 id is falsy and never paired; "0x1" style strings
//    are compared as strings ("0x1" and "0x01" are different ids).
//  * Node has no DOMRect, which some insights need: a small stand-in is
//    installed below before the engine is loaded.
//  * Node version: the package declares no "engines". 0.0.64+ calls
//    URL.parse() on every parse (Node >= 20.18 has it, Debian 12's Node 18
//    does not: "URL.parse is not a function"); 0.0.44 to 0.0.61 (tried)
//    call new URL('') there instead and throw "Invalid URL" on ANY trace that is
//    not a Chrome page recording, i.e. on all of ours, on every Node. So we
//    pin 0.0.65 and supply URL.parse when Node lacks it (engine.shims says
//    which shims were used). Some insights use newer JS still (toSorted,
//    iterator helpers); the engine catches each insight's error and they
//    play no part in this summary.
//  * The engine logs with console.*: everything it prints while parsing is
//    captured into "warnings" so stdout stays one JSON object.

import fs from 'node:fs';
import zlib from 'node:zlib';

const ENGINE = '@paulirish/trace_engine';
const shims = []; // browser/newer-Node APIs we had to supply (reported)

function fail(msg) {
  process.stderr.write(`check-trace: ${msg}\n`);
  process.exitCode = 1;
}

// Minimal DOMRect for Node (the engine was written for a browser).
function installDOMRect() {
  if (typeof globalThis.DOMRect === 'function') return;
  class DOMRectStandIn {
    constructor(x = 0, y = 0, width = 0, height = 0) {
      this.x = Number(x);
      this.y = Number(y);
      this.width = Number(width);
      this.height = Number(height);
    }
    get left() { return Math.min(this.x, this.x + this.width); }
    get right() { return Math.max(this.x, this.x + this.width); }
    get top() { return Math.min(this.y, this.y + this.height); }
    get bottom() { return Math.max(this.y, this.y + this.height); }
    static fromRect(r = {}) { return new DOMRectStandIn(r.x, r.y, r.width, r.height); }
    toJSON() {
      const { x, y, width, height, top, right, bottom, left } = this;
      return { x, y, width, height, top, right, bottom, left };
    }
  }
  globalThis.DOMRect = DOMRectStandIn;
  globalThis.DOMRectReadOnly = DOMRectStandIn;
  shims.push('DOMRect');
}

// URL.parse() (WHATWG: the URL, or null where `new URL` would throw) is in
// Node >= 20.18 / 22.1 but not in Debian 12's Node 18. The engine calls it on
// every parse (Model stores the trace under its page origin; ours have none,
// so it is URL.parse('') -> null). Without it the parse throws.
function installURLParse() {
  if (typeof URL.parse === 'function') return;
  URL.parse = function parse(url, base) {
    try {
      return base === undefined ? new URL(url) : new URL(url, base);
    } catch {
      return null;
    }
  };
  shims.push('URL.parse');
}

function readTrace(file) {
  let buf = fs.readFileSync(file);
  if (buf.length >= 2 && buf[0] === 0x1f && buf[1] === 0x8b) buf = zlib.gunzipSync(buf);
  const json = JSON.parse(buf.toString('utf8'));
  // Same two shapes the DevTools loader takes: a bare array, or an object
  // with a traceEvents array (our {"context","traceEvents","metadata"}).
  if (Array.isArray(json)) return { traceEvents: json, metadata: {} };
  if (json && typeof json === 'object' && Array.isArray(json.traceEvents)) {
    const md = json.metadata && typeof json.metadata === 'object' && !Array.isArray(json.metadata) ? json.metadata : {};
    return { traceEvents: json.traceEvents, metadata: md };
  }
  throw new Error('not a trace: no traceEvents array');
}

const r3 = (v) => (typeof v === 'number' ? Math.round(v * 1000) / 1000 : v ?? null);

// Run fn with console.* redirected into `sink` (the engine logs while parsing).
async function capturingConsole(sink, fn) {
  const names = ['log', 'info', 'warn', 'error', 'debug', 'trace', 'assert'];
  const saved = {};
  for (const n of names) {
    saved[n] = console[n];
    console[n] = (...a) => {
      if (n === 'assert') {
        if (a[0]) return;
        a = ['Assertion failed', ...a.slice(1)];
      }
      sink.push(`${n}: ${a.map((x) => (typeof x === 'string' ? x : String(x))).join(' ')}`);
    };
  }
  try {
    return await fn();
  } finally {
    for (const n of names) console[n] = saved[n];
  }
}

async function main() {
  const args = process.argv.slice(2);
  const brief = args.includes('--brief');
  const files = args.filter((a) => a !== '--brief');
  if (files.length !== 1) {
    fail('usage: node check-trace.mjs TRACE.json[.gz] [--brief]');
    return;
  }
  const file = files[0];

  let trace;
  try {
    trace = readTrace(file);
  } catch (e) {
    fail(`${file}: cannot read trace: ${e.message}`);
    return;
  }

  installDOMRect();
  installURLParse();
  let Trace;
  try {
    Trace = await import(ENGINE);
  } catch (e) {
    fail(`cannot load ${ENGINE} (run scripts/install-devtools-checker): ${e.message}`);
    return;
  }
  let engineVersion = null;
  try {
    const pj = new URL(`./node_modules/${ENGINE}/package.json`, import.meta.url);
    engineVersion = JSON.parse(fs.readFileSync(pj, 'utf8')).version;
  } catch { /* only informative */ }

  const warnings = [];
  let parsed;
  try {
    parsed = await capturingConsole(warnings, async () => {
      const model = Trace.TraceModel.Model.createWithAllHandlers();
      await model.parse(trace.traceEvents, { metadata: trace.metadata });
      return model.parsedTrace();
    });
  } catch (e) {
    fail(`${file}: the DevTools trace engine rejected the trace: ${e && e.stack ? e.stack : e}`);
    return;
  }
  if (!parsed || !parsed.data) {
    fail(`${file}: the DevTools trace engine returned no data`);
    return;
  }
  const data = parsed.data;
  const meta = data.Meta;
  const renderer = data.Renderer;

  const processes = {};
  for (const [pid, ev] of meta.processNames) processes[pid] = ev.args?.name ?? null;

  const threads = {};
  for (const [pid, byTid] of meta.threadsInProcess) {
    for (const [tid, ev] of byTid) threads[`${pid}:${tid}`] = ev.args?.name ?? null;
  }

  const num = (a, b) => Number(a) - Number(b);
  const tracks = [];
  const slices = [];
  const dropped = [];
  const instants = [];
  for (const [pid, proc] of [...renderer.processes].sort((a, b) => num(a[0], b[0]))) {
    for (const [tid, thread] of [...proc.threads].sort((a, b) => num(a[0], b[0]))) {
      tracks.push(`${pid}:${tid}`);
      for (const ev of thread.entries) {
        const node = renderer.entryToNode.get(ev);
        if (ev.ph === 'X') {
          const s = { name: ev.name, cat: ev.cat ?? null, pid, tid, ts: r3(ev.ts), dur: r3(ev.dur) };
          if (node) slices.push({ ...s, depth: node.depth });
          else dropped.push(s);
        } else if (ev.ph === 'I') {
          instants.push({ name: ev.name, s: ev.s ?? null, pid, tid, ts: r3(ev.ts), depth: node ? node.depth : null });
        }
      }
    }
  }

  // Not the engine's model (it has none for generic async events): its own
  // pairing helper applied to our nestable async events. Deactivate the
  // synthetic-events registry first: registering costs an indexOf over all
  // raw events per pair, and we only want the pairs.
  let asyncMatched = [];
  try {
    Trace.Helpers.SyntheticEvents.SyntheticEventsManager.reset();
    const nestable = trace.traceEvents.filter((e) => e && (e.ph === 'b' || e.ph === 'e' || e.ph === 'n'));
    asyncMatched = Trace.Helpers.Trace.createMatchedSortedSyntheticEvents(nestable).map((e) => ({
      name: e.name, cat: e.cat ?? null, id: e.args?.data?.beginEvent?.id ?? null,
      pid: e.pid, tid: e.tid, ts: r3(e.ts), dur: r3(e.dur),
    }));
  } catch (e) {
    warnings.push(`checker: async pairing helper threw: ${e.message}`);
    asyncMatched = null;
  }

  // FlowsHandler: each flow the engine bound, as the events it links (in
  // time order), each {name,ph,pid,tid,ts}. It binds a flow phase event
  // ("s"/"t"/"f") to the event of equal ts, pid, tid and cat.
  const flows = (data.Flows?.flows ?? []).map((flow) => flow.map((e) => ({
    name: e.name, ph: e.ph, pid: e.pid, tid: e.tid, ts: r3(e.ts),
  })));

  const rawPhases = {};
  for (const e of trace.traceEvents) {
    const ph = e && typeof e === 'object' ? String(e.ph) : typeof e;
    rawPhases[ph] = (rawPhases[ph] ?? 0) + 1;
  }

  const summary = {
    ok: true,
    engine: { package: ENGINE, version: engineVersion, node: process.version, shims },
    file,
    events: parsed.traceEvents.length,
    generic: meta.traceIsGeneric,
    bounds: { min: r3(meta.traceBounds.min), max: r3(meta.traceBounds.max), range: r3(meta.traceBounds.range) },
    processes,
    threads,
    tracks,
    counts: {
      slices: slices.length,
      dropped: dropped.length,
      instants: instants.length,
      async_matched: asyncMatched ? asyncMatched.length : null,
      flows: flows.length,
      warnings: warnings.length,
    },
    slices,
    dropped,
    instants,
    async: null, // the engine has no model for generic b/e (see top)
    async_matched: asyncMatched,
    flows,
    counters: null, // the engine has no model for "C" events (see top)
    warnings,
    raw_phases: rawPhases,
  };
  if (brief) {
    for (const k of ['slices', 'dropped', 'instants', 'async_matched', 'flows']) delete summary[k];
  }
  process.stdout.write(JSON.stringify(summary) + '\n');
}

main().catch((e) => fail(`internal error: ${e && e.stack ? e.stack : e}`));
