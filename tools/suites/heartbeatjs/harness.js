// Runs the heartbeat script (its path in argv[2]) against a fake page with a
// virtual clock, through the steps in argv[3] (JSON), and prints what the
// script did: each ping and beacon with the virtual time.
"use strict";
const fs = require("fs");
const vm = require("vm");

const script = fs.readFileSync(process.argv[2], "utf8");
const steps = JSON.parse(process.argv[3]);
let now = 0, seq = 0;
const timers = new Map();
const log = [];
const listeners = {doc: {}, win: {}};
const answers = [];
const on = (set) => (type, fn) => { (set[type] = set[type] || []).push(fn); };
const fire = (set, type, e) => (set[type] || []).forEach((fn) => fn(e));
const document = {visibilityState: "visible", addEventListener: on(listeners.doc)};
const sandbox = {
  document,
  navigator: {sendBeacon: (url) => { log.push([now, "beacon", url]); return true; }},
  addEventListener: on(listeners.win),
  setTimeout: (fn, ms) => { timers.set(++seq, {at: now + ms, fn}); return seq; },
  clearTimeout: (id) => { timers.delete(id); },
  fetch: (url, init) => {
    log.push([now, "ping", url, init.method, init.credentials]);
    const a = answers.shift();
    if (a === "error") return Promise.reject(new TypeError("network"));
    if (a === 503) return Promise.resolve({ok: false, status: 503, json: () => Promise.reject(new Error("no"))});
    return Promise.resolve({ok: true, status: 200, json: () => Promise.resolve(a)});
  },
};
const settle = () => new Promise((r) => setImmediate(r));

async function advance(ms) {
  const until = now + ms;
  for (;;) {
    let next = null;
    for (const [id, t] of timers) if (t.at <= until && (next === null || t.at < timers.get(next).at)) next = id;
    if (next === null) break;
    const t = timers.get(next);
    timers.delete(next);
    now = t.at;
    t.fn();
    await settle();
  }
  now = until;
}

(async () => {
  for (const s of steps) {
    if (s.answer !== undefined) answers.push(s.answer);
    if (s.load) { vm.runInNewContext(script, sandbox); await settle(); }
    if (s.advance) await advance(s.advance);
    if (s.visibility) {
      document.visibilityState = s.visibility;
      fire(listeners.doc, "visibilitychange", {});
      await settle();
    }
    if (s.pagehide !== undefined) fire(listeners.win, "pagehide", {persisted: s.pagehide});
  }
  const leaked = Object.keys(sandbox).filter((k) => !["document", "navigator", "addEventListener", "setTimeout", "clearTimeout", "fetch"].includes(k));
  process.stdout.write(JSON.stringify({log, leaked}));
})();
