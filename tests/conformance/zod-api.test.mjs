// API tests of the built `session-wire` package (node's test runner; run by zod.rs with the package directory as
// the working directory). SESSION_WIRE_DIST is dist/index.js; SESSION_WIRE_ID_PATTERN the envelope id's strict
// pattern from the schema (x-strict-pattern).
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { pathToFileURL } from "node:url";

const w = await import(pathToFileURL(process.env.SESSION_WIRE_DIST).href);
const idPattern = new RegExp(process.env.SESSION_WIRE_ID_PATTERN);

const toolCall = { t: "tool-call-start", call: "c1", name: "grep", title: "Search", description: "Searching", args: { pattern: "x" } };

test("the package resolves by name through its exports map", () => {
  // Self-reference by name from inside the package directory (the working directory) goes through `exports`.
  const script = 'const w = await import("session-wire"); const t = await import("session-wire/package.json", { with: { type: "json" } }); console.log(JSON.stringify([typeof w.createEnvelope, typeof w.sessionEnvelopeSchema.safeParse, t.default.name]));';
  const out = execFileSync(process.execPath, ["--input-type=module", "-e", script], { cwd: process.cwd(), encoding: "utf8" });
  assert.deepEqual(JSON.parse(out), ["function", "function", "session-wire"]);
});

test("without Web Crypto, newId says what it needs; an id given by hand still works", () => {
  const script = [
    'delete globalThis.crypto; const w = await import("session-wire");',
    'let said; try { w.createEnvelope("user", { t: "abort" }); } catch (e) { said = [e.name, e.message]; }',
    'const m = w.createEnvelope("user", { t: "abort" }, { id: "m1" });',
    "console.log(JSON.stringify([said, m.id]));",
  ].join(" ");
  const out = execFileSync(process.execPath, ["--input-type=module", "-e", script], { cwd: process.cwd(), encoding: "utf8" });
  const [[name, message], id] = JSON.parse(out);
  assert.equal(name, "TypeError");
  assert.match(message, /^newId needs globalThis\.crypto\.getRandomValues/);
  assert.equal(id, "m1");
});

test("createEnvelope fills a cuid2-shaped id and the time, in schema order", () => {
  const before = Date.now();
  const m = w.createEnvelope("agent", toolCall, { turn: "t1" });
  const after = Date.now();
  assert.match(m.id, idPattern);
  assert.equal(m.id.length, 24);
  assert.ok(Number.isInteger(m.time) && m.time >= before && m.time <= after);
  assert.deepEqual(Object.keys(m), ["id", "time", "role", "turn", "ev"]);
  assert.deepEqual(m.ev, toolCall);
  assert.equal(w.checkEnvelope(m).valid, true);
});

test("newId draws fresh ids of the cuid2 shape", () => {
  const ids = new Set();
  const first = new Set();
  for (let i = 0; i < 5000; i++) {
    const id = w.newId();
    assert.match(id, idPattern);
    ids.add(id);
    first.add(id[0]);
  }
  assert.equal(ids.size, 5000);
  assert.ok(first.size > 20, "the first letter varies");
  assert.match(w.newId(2), /^[a-z][a-z0-9]$/);
  assert.throws(() => w.newId(1), RangeError);
  assert.throws(() => w.newId(33), RangeError);
});

test("createEnvelope keeps given ids and times", () => {
  const m = w.createEnvelope("user", { t: "abort" }, { id: "given", time: 5 });
  assert.equal(m.id, "given");
  assert.equal(m.time, 5);
});

test("createEnvelope treats an option given as undefined as absent: the message has no such key", () => {
  // As callers write it: `{ turn, subagent }` with `subagent` undefined (happy-wire's result has no `subagent` key).
  const m = w.createEnvelope("agent", { t: "text", text: "x" }, { turn: "t1", subagent: undefined, id: undefined });
  assert.deepEqual(Object.keys(m).sort(), ["ev", "id", "role", "time", "turn"]);
  assert.ok(!("subagent" in m));
  assert.match(m.id, /^[a-z][a-z0-9]{23}$/);
});

test("createEnvelope rejects forbidden role/event and role/field combinations", () => {
  const cases = [
    [() => w.createEnvelope("user", toolCall), "/role", "role-event"],
    [() => w.createEnvelope("agent", { t: "abort" }), "/role", "role-event"],
    [() => w.createEnvelope("user", { t: "text", text: "x", thinking: true }), "/ev/thinking", "role-field"],
    [() => w.createEnvelope("agent", { t: "text", text: "x", steer: true }), "/ev/steer", "role-field"],
    [() => w.createEnvelope("user", { t: "abort" }, { subagent: "s" }), "/subagent", "role-field"],
    [() => w.createEnvelope("user", { t: "abort" }, { id: "" }), "/id", "min-length"],
    [() => w.createEnvelope("user", { t: "nope" }), "/ev/t", "unknown-event"],
    [() => w.createEnvelope("user", { t: "abort" }, { extra: 1 }), "/extra", "additional-property"],
  ];
  for (const [make, pointer, rule] of cases) {
    assert.throws(make, (e) => {
      assert.ok(e instanceof w.SessionWireError);
      assert.equal(e.errors[0].pointer, pointer);
      assert.equal(e.errors[0].rule, rule);
      assert.ok(e.message.includes(`[${rule}]`));
      return true;
    });
  }
});

test("raw Zod issues carry the rule id and the engine's path", () => {
  const base = { id: "m1", time: 1, role: "agent" };
  const cases = [
    [{ ...base, ev: { t: "session-control-changed", clientType: "cli", machineId: "x" } }, ["ev", "machineId"], "removed-property"],
    [{ ...base, ev: { t: "abort", x: 1 } }, ["ev", "x"], "additional-property"],
    [{ ...base, ev: { t: "ready" } }, ["ev", "t"], "removed-event"],
    [{ ...base, ev: {} }, ["ev", "t"], "required"],
    [{ ...base, ev: { t: 1 } }, ["ev", "t"], "type"],
    [{ ...base, ev: { t: "turn-end" } }, ["ev", "status"], "required"],
    [{ ...base, ev: { t: "turn-end", status: "done" } }, ["ev", "status"], "enum"],
    [{ ...base, time: 1.5, ev: { t: "turn-start" } }, ["time"], "type"],
    [{ ...base, time: 2 ** 53, ev: { t: "turn-start" } }, ["time"], "maximum"],
    [{ ...base, time: -1, ev: { t: "turn-start" } }, ["time"], "minimum"],
    [{ ...base, turn: null, ev: { t: "turn-start" } }, ["turn"], "type"],
    [{ ...base, role: "user", ev: { t: "turn-start" } }, ["role"], "role-event"],
  ];
  for (const [value, path, rule] of cases) {
    const r = w.sessionEnvelopeSchema.safeParse(value);
    assert.equal(r.success, false, JSON.stringify(value));
    const first = r.error.issues[0];
    assert.deepEqual(first.path, path, JSON.stringify(value));
    assert.equal(w.issueRule(first), rule, JSON.stringify(value));
    assert.ok(first.message.endsWith(` [${rule}]`), first.message);
  }
  const role = w.sessionEnvelopeSchema.safeParse({ ...base, role: "user", ev: { t: "turn-start" } }).error.issues[0];
  assert.equal(role.params.rule, "role-event");
});

test("raw Zod reads an own __proto__ key of a closed object, in a copy made with .describe() or .refine() too, and an open object keeps one", () => {
  // JSON.parse makes an own `__proto__` property, which Zod's own object neither reads nor copies.
  const lines = [
    ['{"id":"m1","time":1,"role":"agent","__proto__":{"x":1},"ev":{"t":"turn-start"}}', ["__proto__"]],
    ['{"id":"m1","time":1,"role":"agent","ev":{"t":"turn-start","__proto__":1}}', ["ev", "__proto__"]],
    ['{"id":"m1","time":1,"role":"agent","ev":{"__proto__":1,"t":"abort","x":2}}', ["ev", "__proto__"]],
  ];
  const copies = [w.sessionEnvelopeSchema, w.sessionEnvelopeSchema.describe("a copy"), w.sessionEnvelopeSchema.refine(() => true)];
  for (const schema of copies) {
    for (const [line, path] of lines) {
      const r = schema.safeParse(JSON.parse(line));
      assert.equal(r.success, false, line);
      assert.deepEqual(r.error.issues[0].path, path, line);
      assert.equal(w.issueRule(r.error.issues[0]), "additional-property", line);
      assert.equal(r.error.issues[0].message, "unknown property `__proto__` [additional-property]", line);
    }
  }
  // An open object keeps an own `__proto__` in its value, as an own property (the prototype is untouched).
  const open = w.sessionEnvelopeSchema.safeParse(JSON.parse('{"id":"m1","time":1,"role":"agent","ev":{"t":"tool-call-start","call":"c1","name":"n","title":"t","description":"d","args":{"a":0,"__proto__":{"x":1},"b":2}}}'));
  assert.equal(open.success, true);
  const args = open.data.ev.args;
  assert.deepEqual(Object.keys(args), ["a", "__proto__", "b"]);
  assert.deepEqual(Object.getOwnPropertyDescriptor(args, "__proto__").value, { x: 1 });
  assert.equal(Object.getPrototypeOf(args), Object.prototype);
  assert.equal(args.x, undefined);
});

test("role rules run only once the shape is valid, like the engine", () => {
  const r = w.sessionEnvelopeSchema.safeParse({ id: "m1", time: -1, role: "user", ev: { t: "turn-start" } });
  assert.deepEqual(r.error.issues.map((i) => w.issueRule(i)), ["minimum"]);
});

test("the event schema alone reports the discriminator at /t", () => {
  const r = w.sessionEventSchema.safeParse({ t: "start" });
  assert.deepEqual(r.error.issues[0].path, ["t"]);
  assert.equal(w.issueRule(r.error.issues[0]), "removed-event");
  assert.match(r.error.issues[0].message, /subagent-start/);
});

test("the tables come from the schema", () => {
  assert.ok(w.sessionEventTags.includes("tool-call-start"));
  assert.deepEqual(w.sessionEventRoles["abort"], ["user"]);
  assert.equal(w.sessionRemovedEvents["ready"], "turn-end");
  assert.deepEqual([...w.RULES].sort(), [...new Set(w.RULES)].sort());
});

test("validateSessionLine takes strings and bytes", () => {
  const line = '{"id":"m1","time":1,"role":"user","ev":{"t":"abort"}}';
  assert.equal(w.validateSessionLine(line).valid, true);
  assert.equal(w.validateSessionLine(new TextEncoder().encode(line)).valid, true);
  assert.equal(w.validateSessionLine(new Uint8Array([0xff])).errors[0].rule, "invalid-utf8");
  // Told at the byte where it stops being UTF-8, as the engine tells it (the message was "the line is not valid
  // UTF-8"): a bad byte, a cut sequence, an overlong form, a surrogate, a code point past U+10FFFF.
  const at = (bytes) => w.validateSessionLine(new Uint8Array(bytes)).errors[0].message;
  const text = [...new TextEncoder().encode('{"id":"m1","time":1,"role":"user","ev":{"t":"text","text":"é')];
  assert.equal(at([...text, 0xff, 0x22, 0x7d, 0x7d]), `invalid UTF-8 at byte ${text.length + 1}`);
  for (const bad of [[0xc3], [0xe2, 0x82], [0xc0, 0xaf], [0xe0, 0x80, 0xaf], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0xf8]]) {
    assert.equal(at([...text, ...bad, 0x22, 0x7d, 0x7d]), `invalid UTF-8 at byte ${text.length + 1}`, String(bad));
  }
  assert.equal(w.validateSessionLine("\ud800").errors[0].rule, "invalid-utf8");
});

test("descriptions are attached to the schemas", () => {
  assert.ok(w.sessionEnvelopeSchema.description.length > 0);
  assert.ok(w.sessionToolCallStartEventSchema.description.length > 0);
  assert.ok(w.sessionRoleSchema.description.length > 0);
});

test("a string with an unpaired surrogate has no line: checkEnvelope and createEnvelope refuse it where it is", () => {
  const half = "\u{1F600}".slice(0, 1); // an emoji cut in half, as cutting text by UTF-16 length does
  const cases = [
    [() => w.createEnvelope("user", { t: "text", text: `ok ${half}` }), "/ev/text"],
    [() => w.createEnvelope("agent", { ...toolCall, args: { [`k${half}`]: 1 } }), `/ev/args/k${half}`],
    [() => w.createEnvelope("agent", { ...toolCall, args: { "a/b": ["x", "\uDC00"] } }), "/ev/args/a~1b/1"],
  ];
  for (const [make, pointer] of cases) {
    assert.throws(make, (e) => {
      assert.ok(e instanceof w.SessionWireError);
      assert.deepEqual([e.errors[0].pointer, e.errors[0].rule], [pointer, "invalid-utf8"]);
      return true;
    });
  }
  const m = { id: "m1", time: 1, role: "user", ev: { t: "text", text: half } };
  assert.deepEqual(w.checkEnvelope(m).errors.map((e) => [e.pointer, e.rule]), [["/ev/text", "invalid-utf8"]]);
  // What the line checkers say of its JSON, and of the string itself as a line.
  assert.equal(w.validateSessionLine(JSON.stringify(m)).errors[0].rule, "malformed-json");
  // A whole emoji is text like any other.
  assert.equal(w.createEnvelope("user", { t: "text", text: "\u{1F600}" }).ev.text, "\u{1F600}");
  // Every place of a lone surrogate, against the definition (a high one not followed by a low one, a low one not
  // preceded by a high one): at the start, the end, between pairs, high after low, twice.
  const [hi, lo] = ["\uD83D", "\uDE00"];
  const lone = (s) => [...s].some((c) => c.length === 1 && c.charCodeAt(0) >= 0xd800 && c.charCodeAt(0) <= 0xdfff);
  const texts = ["", "a", hi + lo, lo, hi, lo + hi, hi + hi + lo, hi + lo + lo, "a" + lo, lo + "a", hi + "a" + lo,
    hi + lo + hi + lo, lo + lo, hi + hi, "x" + hi + lo + "y" + lo + hi + "z", hi + lo + hi];
  for (const text of texts) {
    const got = w.checkEnvelope({ id: "m1", time: 1, role: "user", ev: { t: "text", text } }).errors.map((e) => e.rule);
    assert.deepEqual(got, lone(text) ? ["invalid-utf8"] : [], JSON.stringify(text));
  }
});

test("the runtime has no regular expression with a lookbehind (Safari before 16.4 refuses the module)", () => {
  const runtime = readFileSync(new URL("../../generated/ts/src/runtime.ts", import.meta.url), "utf8");
  assert.equal(/\(\?<[=!]/.test(runtime), false);
});

test("parsed values no line may hold are too deep for every value checker, and createEnvelope refuses them", () => {
  let deep = {};
  for (let i = 0; i < 200; i++) deep = { a: deep };
  const m = { id: "m1", time: 1, role: "agent", ev: { ...toolCall, args: deep } };
  const tooDeep = { pointer: "", rule: "too-deep", message: "JSON nests deeper than 127 levels" };
  assert.deepEqual(w.checkEnvelope(m).errors, [tooDeep]);
  assert.throws(() => w.createEnvelope("agent", { ...toolCall, args: deep }), (e) => e.errors[0].rule === "too-deep");
  // The same value as a line: the parser says so first, for both line checkers. (The standalone validator of
  // parsed values checks the schema only: walking every value would cost it ~40% of its speed.)
  assert.equal(w.validateSessionLine(JSON.stringify(m)).errors[0].rule, "too-deep");
  assert.equal(w.validateSessionLineStandalone(JSON.stringify(m))[0].rule, "too-deep");
  // At the limit (the envelope, ev, args and 124 more levels) a value is fine, as a value and as a line.
  let ok = {};
  for (let i = 0; i < 123; i++) ok = { a: ok };
  const fine = { id: "m1", time: 1, role: "agent", ev: { ...toolCall, args: ok } };
  assert.equal(w.checkEnvelope(fine).valid, true);
  assert.deepEqual(w.validateSessionEnvelope(fine), []);
  assert.equal(w.validateSessionLine(JSON.stringify(fine)).valid, true);
  // A cyclic value (no JSON text holds one) ends as too deep instead of looping.
  const cyclic = { ...toolCall, args: {} };
  cyclic.args.self = cyclic.args;
  assert.equal(w.checkEnvelope({ id: "m1", time: 1, role: "agent", ev: cyclic }).errors[0].rule, "too-deep");
});

test("an error past a text's first line is located by line and column, as the engine locates it", () => {
  // `wiregen validate` says the same of these texts (generator/tests/validate_cli.rs holds its words).
  const deep = '{"id":"m1",\n"x":' + "[".repeat(130) + "]".repeat(130) + "}";
  const tooDeep = "JSON nests deeper than 127 levels (at line 2 column 131)";
  assert.equal(w.validateSessionLine(deep).errors[0].message, tooDeep);
  assert.equal(w.validateSessionLineStandalone(deep)[0].message, tooDeep);
  assert.equal(w.validateSessionLine("[" + "[".repeat(130)).errors[0].message, "JSON nests deeper than 127 levels (at column 128)");
});

test("one bad value gives one issue: a value of the wrong type that has a length is not also too short", () => {
  for (const [line, pointer] of [
    ['{"id":[],"time":1,"role":"agent","ev":{"t":"text","text":"hi"}}', "/id"],
    ['{"id":"m1","time":1,"role":"agent","turn":[],"ev":{"t":"text","text":"hi"}}', "/turn"],
    ['{"id":"m1","time":1,"role":"agent","ev":{"t":"tool-call-end","call":[]}}', "/ev/call"],
  ]) {
    const want = [{ pointer, rule: "type", message: "expected a string, got an array" }];
    assert.deepEqual(w.validateSessionLine(line).errors, want, line);
    assert.deepEqual(w.validateSessionLineStandalone(line), want, line);
  }
});

test("NaN and the infinities are no JSON number for any value checker", () => {
  for (const cost of [NaN, Infinity, -Infinity]) {
    const m = { id: "m1", time: 1, role: "agent", turn: "t1",
      ev: { t: "turn-end", status: "completed", usage: { inputTokens: 1, outputTokens: 1, cost } } };
    const zod = w.checkEnvelope(m).errors[0];
    const standalone = w.validateSessionEnvelope(m)[0];
    assert.deepEqual([zod.rule, zod.pointer], ["type", "/ev/usage/cost"], String(cost));
    assert.deepEqual(standalone, { pointer: "/ev/usage/cost", rule: "type", message: "expected a number, got a non-finite number" });
    assert.equal(w.isSessionEnvelope(m), false);
  }
});

test("every standalone validator answers values no line can hold, and checkEnvelope calls them too-deep", () => {
  let deep = null;
  for (let i = 0; i < 100000; i++) deep = [deep];
  const cyclic = { id: "m1", time: 1, role: "agent", ev: { t: "text", text: "hi" } };
  cyclic.ev.self = cyclic;
  const hostile = [deep, cyclic, 10n, Symbol("s"), () => 1, undefined, new Map(), [10n], { role: deep, ev: { t: deep } }];
  const validators = Object.entries(w).filter(([name, f]) => name.startsWith("validateSession") && typeof f === "function");
  assert.ok(validators.length > 20, validators.map(([n]) => n).join(", "));
  for (const [name, validate] of validators) {
    if (name.endsWith("Line") || name.endsWith("LineStandalone")) continue;
    for (const v of hostile) assert.ok(Array.isArray(validate(v)), `${name}(${typeof v})`);
  }
  // An enum error quotes the value; a value JSON cannot write is named by its kind.
  assert.deepEqual(w.validateSessionRole(10n), [{ pointer: "", rule: "type", message: "expected a string, got bigint" }]);
  assert.deepEqual(w.validateSessionTurnStatus("done")[0].message, "`done` is not one of `completed`, `failed`, `cancelled`");
  for (const v of [deep, cyclic]) assert.deepEqual(w.checkEnvelope(v).errors[0].rule, "too-deep");
});

test("a value outside JSON is checked as the JavaScript value it is, as Zod checks it, not as JSON.stringify writes it", () => {
  // README, Constructs: a Date or a Map is an object with no own keys; an unconstrained position takes anything.
  const m = (args) => ({ id: "m1", time: 1, role: "agent", turn: "t1", ev: { ...toolCall, args } });
  for (const args of [new Date(0), new Map([["a", 1]]), { when: new Date(0), u: undefined, n: 1n }]) {
    assert.deepEqual(w.checkEnvelope(m(args)).errors, [], String(args));
    assert.deepEqual(w.validateSessionEnvelope(m(args)), []);
    assert.equal(w.sessionEnvelopeSchema.safeParse(m(args)).success, true);
  }
  // Where an object is declared, a Date is checked as {}: it lacks what is required.
  assert.deepEqual(w.validateSessionUsage(new Date(0)), w.validateSessionUsage({}));
  assert.ok(w.validateSessionUsage({}).length > 0);
  const made = w.createEnvelope("agent", { ...toolCall, args: { when: new Date(0) } }, { turn: "t1" });
  assert.equal(JSON.parse(JSON.stringify(made)).ev.args.when, "1970-01-01T00:00:00.000Z");
});

test("the stream checker reads neither a line nor a value with an unpaired surrogate for its echoes", () => {
  const lines = [
    '{"id":"m1","time":1,"role":"agent","turn":"t1","ev":{"t":"turn-start"}}',
    '{"id":"m2","time":2,"role":"agent","turn":"t1","ev":{"t":"tool-call-start","call":"c1","name":"x","title":"\\ud800","description":"d","args":{}}}',
    '{"id":"m3","time":3,"role":"agent","turn":"t1","ev":{"t":"tool-call-end","call":"c1"}}',
  ];
  const byLine = new w.SessionStreamChecker();
  const byValue = new w.SessionStreamChecker();
  const lineRecords = lines.map((l) => byLine.checkLine(l));
  const valueRecords = lines.map((l) => byValue.check(JSON.parse(l)));
  assert.deepEqual([lineRecords[1].errors[0].rule, valueRecords[1].errors[0].rule], ["malformed-json", "invalid-utf8"]);
  // The call it would have opened: no line holds it, so the echo names no cause, by line or by value.
  for (const r of [lineRecords[2], valueRecords[2]]) {
    assert.equal(r.errors[0].rule, "call.not-open");
    assert.equal(r.errors[0].causedBy, undefined);
  }
});

test("createEnvelope fills only absent values: a null id or time is refused like a null turn", () => {
  for (const key of ["id", "time", "turn"]) {
    assert.throws(() => w.createEnvelope("user", { t: "abort" }, { [key]: null }),
      (e) => e.errors[0].pointer === `/${key}` && e.errors[0].rule === "type", key);
  }
  assert.match(w.createEnvelope("user", { t: "abort" }, { id: undefined }).id, idPattern);
});

test("upgrade leaves a message that needs nothing untouched, frozen or not", () => {
  const m = Object.freeze({ id: "m1", time: 1, role: "agent", ev: Object.freeze({ t: "text", text: "x" }) });
  assert.deepEqual(w.upgrade(m), []);
});

test("a bad string is malformed JSON told in the engine's words and at its place, in a key too", () => {
  // What `wiregen validate` says of each line (serde_json's reading): a key with an unpaired surrogate escape was
  // "expected a property name and `:`" here, one column on (helper 112).
  const cases = [
    ['{"id":"m","time":1,"role":"agent","ev":{"t":"text","text":"x"},"\\udc00":1}', "an unpaired surrogate escape (UTF-8 cannot encode half a pair) at column 70"],
    ['{"id":"m","time":1,"role":"agent","ev":{"t":"text","text":"\\udc00"}}', "an unpaired surrogate escape (UTF-8 cannot encode half a pair) at column 65"],
    ['{"id":"m\\ud800x"}', "an unpaired surrogate escape (UTF-8 cannot encode half a pair) at column 15"],
    ['{"id":"m\\ud800\\u0041"}', "an unpaired surrogate escape (UTF-8 cannot encode half a pair) at column 20"],
    ['{"a\\q":1}', "invalid escape at column 5"],
    ['{"a\u0001":1}', "control character (\\u0000-\\u001F) found while parsing a string at column 4"],
  ];
  for (const [line, what] of cases) {
    const message = `malformed JSON: ${what}`;
    for (const errors of [w.validateSessionLine(line).errors, w.validateSessionLineStandalone(line)]) {
      assert.deepEqual(errors, [{ pointer: "", rule: "malformed-json", message }], line);
    }
    assert.deepEqual(w.parseLine(line).error.message, message);
  }
});

test("a repeated key is malformed JSON to every line checker, told as the engine tells it, wherever it is", () => {
  const cases = [
    ['{"id":"m1","time":1,"role":"user","ev":{"t":"abort","text":"stop","t":"text"}}', "/ev/t", "column 67"],
    ['{"id":"m1","time":1,"role":"user","ev":{"t":"abort"},"i\\u0064":"m2"}', "/id", "column 54"],
    ['{"id":"m1","time":1,"role":"agent","turn":"t1","ev":{"t":"tool-call-start","call":"c","name":"n","title":"t",\n"description":"d","args":{"a/b":[{"x":1},{"x":1,"y":{},"x":2}]},"args":{}}}', "/ev/args/a~1b/1/x", "line 2 column 56"],
  ];
  for (const [line, pointer, at] of cases) {
    const message = `malformed JSON: repeated key ${pointer} (JSON parsers differ on which of its members counts) at ${at}`;
    for (const errors of [w.validateSessionLine(line).errors, w.validateSessionLineStandalone(line)]) {
      assert.deepEqual(errors, [{ pointer: "", rule: "malformed-json", message }]);
    }
    assert.deepEqual(w.parseLine(line).error.message, message);
  }
  // The same key in two objects, or in an object and one inside it, is no repetition.
  assert.equal(w.validateSessionLine('{"id":"m1","time":1,"role":"agent","turn":"t1","ev":{"t":"tool-call-start","call":"c","name":"n","title":"t","description":"d","args":{"id":{"id":1},"b":[{"id":2},{"id":2}]}}}').valid, true);
  // The stream checker reads such a line as JSON.parse does for what it would have opened: the lines after it
  // name it as their cause.
  const checker = new w.SessionStreamChecker();
  const records = [
    '{"id":"m1","time":1,"role":"agent","turn":"t1","ev":{"t":"turn-start"},"time":1}',
    '{"id":"m2","time":2,"role":"agent","turn":"t1","ev":{"t":"text","text":"hi"}}',
  ].map((l) => checker.checkLine(l));
  assert.deepEqual([records[0].errors[0].rule, records[1].errors[0].rule, records[1].errors[0].causedBy], ["malformed-json", "turn.not-open", 1]);
});

test("a line parser given another depth limit names that limit in its too-deep message", () => {
  for (const [limit, text, column] of [[2, '{"a":{"b":{}}}', 11], [1, "[[]]", 2], [3, "[[[[]]]]", 4]]) {
    const message = `JSON nests deeper than ${limit} levels (at column ${column})`;
    assert.deepEqual(w.parseLine(text, limit).error, { pointer: "", rule: "too-deep", message });
    assert.deepEqual(w.scanJson(text, limit), { pointer: "", rule: "too-deep", message });
    // Within the limit, the same text parses.
    assert.equal(w.parseLine(text, limit + 1).error, undefined);
  }
  // The default limit is the engine's, and says so.
  const deep = "[".repeat(w.MAX_DEPTH + 1) + "]".repeat(w.MAX_DEPTH + 1);
  assert.equal(w.parseLine(deep).error.message, `JSON nests deeper than ${w.MAX_DEPTH} levels (at column ${w.MAX_DEPTH + 1})`);
});

test("a line is text or bytes of any realm; anything else is the caller's mistake, a TypeError", async () => {
  const { runInNewContext } = await import("node:vm");
  const line = '{"id":"m1","time":1,"role":"user","ev":{"t":"abort"}}';
  const bytes = new TextEncoder().encode(line);
  const otherRealm = runInNewContext("new Uint8Array(b)", { b: [...bytes] });
  assert.equal(otherRealm instanceof Uint8Array, false, "the vm's Uint8Array is another realm's");
  const views = [bytes, Buffer.from(line), otherRealm, new DataView(bytes.buffer)];
  for (const view of views) {
    assert.deepEqual(w.validateSessionLine(view), { valid: true, value: JSON.parse(line), errors: [] });
    assert.deepEqual(w.validateSessionLineStandalone(view), []);
  }
  // Bytes that are not UTF-8 are told where, in any realm.
  const bad = runInNewContext("new Uint8Array([0x7b, 0xff])");
  assert.deepEqual(w.parseLine(bad).error, { pointer: "", rule: "invalid-utf8", message: "invalid UTF-8 at byte 2" });
  for (const [value, kind] of [[42, "an integer"], [null, "null"], [undefined, "undefined"], [{}, "an object"], [[1], "an array"]]) {
    const message = `a line is a string or a Uint8Array, not ${kind}`;
    assert.throws(() => w.validateSessionLine(value), { name: "TypeError", message });
    assert.throws(() => w.validateSessionLineStandalone(value), { name: "TypeError", message });
    assert.throws(() => w.parseLine(value), { name: "TypeError", message });
    assert.throws(() => new w.SessionStreamChecker().checkLine(value), { name: "TypeError", message });
  }
});
