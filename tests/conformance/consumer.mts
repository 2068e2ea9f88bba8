// The package as a user meets it. `package.rs` copies this file into scratch projects that installed the packed
// `session-wire` next to a zod release, as `consumer.mts` (an ES module) and as `consumer.cts` (CommonJS: tsc turns
// the import into `require("session-wire")`, and the types come from the package's `require` condition), checks both
// with `tsc --strict` and runs the output. It builds the seed's Realistic Flow with `createEnvelope`, checks it
// message by message and as a stream, checks a few invalid messages, then every line of the JSON array on stdin,
// and prints one JSON report; the test holds the report to the Rust engine and stream checker.
//
// It uses nothing of node but stdin (declared below), so that it type-checks without @types/node.
import {
  checkEnvelope,
  checkSessionStream,
  createEnvelope,
  issueRule,
  rollupSession,
  sessionEnvelopeSchema,
  SessionStreamChecker,
  SessionWireError,
  validateSessionLine,
  validateSessionLineStandalone,
  toPointer,
  type SessionEnvelope,
  type SessionRollup,
} from "session-wire";

declare const process: { stdin: AsyncIterable<string> & { setEncoding(encoding: string): void }; exitCode?: number };

function fail(what: string): never {
  throw new Error(what);
}

// The seed's Realistic Flow (m1..m28): user opens the session on the phone, the agent runs on the CLI, the user
// steers mid-turn, switches model, aborts. Each call is typed per role.
function realisticFlow(): SessionEnvelope[] {
  return [
    createEnvelope("agent", { t: "session-control-changed", clientType: "cli", tokenId: "tok_laptop" }, { id: "m1", time: 1000 }),
    createEnvelope("user", { t: "text", text: "Find all TODO comments and fix the critical ones" }, { id: "m2", time: 2000 }),
    createEnvelope("agent", { t: "turn-start" }, { id: "m3", time: 2500, turn: "t1" }),
    createEnvelope("agent", { t: "text", text: "I'll search for TODOs first." }, { id: "m4", time: 2501, turn: "t1" }),
    createEnvelope(
      "agent",
      { t: "tool-call-start", call: "c1", name: "grep", title: "Searching for TODO", description: "Searching for `TODO` in **src/**", args: { pattern: "TODO", path: "src/" } },
      { id: "m5", time: 2502, turn: "t1" },
    ),
    createEnvelope("agent", { t: "tool-call-end", call: "c1" }, { id: "m6", time: 2503, turn: "t1" }),
    createEnvelope("agent", { t: "text", text: "Found 12 TODOs. Starting with the auth module..." }, { id: "m7", time: 2504, turn: "t1" }),
    createEnvelope("user", { t: "text", text: "Skip auth, focus on the payment module instead", steer: true }, { id: "m8", time: 2600 }),
    createEnvelope(
      "agent",
      { t: "tool-call-start", call: "c2", name: "edit", title: "Editing **src/payment/checkout.ts**", description: "Fixing TODO in payment module", args: { file: "src/payment/checkout.ts" } },
      { id: "m9", time: 2700, turn: "t1" },
    ),
    createEnvelope(
      "agent",
      { t: "permission-request", call: "c2", toolName: "edit", title: "Editing **src/payment/checkout.ts**", description: "Replacing TODO with retry logic", args: { file: "src/payment/checkout.ts" } },
      { id: "m10", time: 2701, turn: "t1" },
    ),
    createEnvelope("user", { t: "permission-response", call: "c2", decision: "allow-once" }, { id: "m11", time: 3000 }),
    createEnvelope("agent", { t: "tool-call-end", call: "c2" }, { id: "m12", time: 3001, turn: "t1" }),
    createEnvelope("agent", { t: "subagent-start", agentId: "sa_research", title: "Payment research" }, { id: "m13", time: 3002, turn: "t1" }),
    createEnvelope("agent", { t: "text", text: "Looking at payment retry patterns..." }, { id: "m14", time: 3003, turn: "t1", subagent: "sa_research" }),
    createEnvelope(
      "agent",
      { t: "tool-call-start", call: "c3", name: "grep", title: "Searching for retry", description: "Searching for retry patterns", args: { pattern: "retry" } },
      { id: "m15", time: 3004, turn: "t1", subagent: "sa_research" },
    ),
    createEnvelope("agent", { t: "tool-call-end", call: "c3" }, { id: "m16", time: 3005, turn: "t1", subagent: "sa_research" }),
    createEnvelope("agent", { t: "text", text: "Found existing retry utility." }, { id: "m17", time: 3006, turn: "t1", subagent: "sa_research" }),
    createEnvelope("agent", { t: "subagent-stop", agentId: "sa_research" }, { id: "m18", time: 3007, turn: "t1" }),
    createEnvelope("agent", { t: "text", text: "Fixed 2 TODOs in the payment module." }, { id: "m19", time: 3008, turn: "t1" }),
    createEnvelope(
      "agent",
      { t: "turn-end", status: "completed", usage: { inputTokens: 4800, outputTokens: 620, cost: 0.024 } },
      { id: "m20", time: 3009, turn: "t1" },
    ),
    createEnvelope("user", { t: "agent-configuration-changed", model: "claude-sonnet-4-6", thinkingLevel: "low" }, { id: "m21", time: 5000 }),
    createEnvelope("user", { t: "text", text: "Now run the tests" }, { id: "m22", time: 5001 }),
    createEnvelope("agent", { t: "turn-start" }, { id: "m23", time: 5100, turn: "t2" }),
    createEnvelope(
      "agent",
      { t: "tool-call-start", call: "c4", name: "bash", title: "Run `npm test`", description: "Running test suite", args: { command: "npm test" } },
      { id: "m24", time: 5101, turn: "t2" },
    ),
    createEnvelope("user", { t: "abort" }, { id: "m25", time: 5200 }),
    createEnvelope("agent", { t: "tool-call-end", call: "c4" }, { id: "m26", time: 5201, turn: "t2" }),
    createEnvelope("agent", { t: "turn-end", status: "cancelled" }, { id: "m27", time: 5202, turn: "t2" }),
    createEnvelope("user", { t: "session-control-changed", clientType: "browser", tokenId: "tok_browser" }, { id: "m28", time: 8000 }),
  ];
}

// Invalid messages, one per kind of mistake; the test compares each first error with the engine's.
const INVALID = [
  '{"id":"m1","time":1000,"role":"user","ev":{"t":"service","text":"x"}}',
  '{"id":"m1","time":1000,"role":"agent","ev":{"t":"text","text":"x","steer":true}}',
  '{"id":"m1","time":1000,"role":"user","subagent":"sa_1","ev":{"t":"text","text":"x"}}',
  '{"id":"m1","time":1000,"role":"agent","ev":{"t":"start"}}',
  '{"id":"m1","time":1000,"role":"agent","ev":{"t":"session-control-changed","clientType":"cli","machineId":"x"}}',
  '{"id":"m1","time":1000,"role":"agent","ev":{"t":"bogus"}}',
  '{"id":"m1","time":1000,"role":"agent","turn":"t1","ev":{"t":"turn-end","status":"done"}}',
  '{"id":"m1","role":"agent","ev":{"t":"turn-start"}}',
  '{"id":"m1","time":1000,"role":"agent","ev":{"t":"turn-start"}',
];

// Lines with an own `__proto__` key once `JSON.parse` has read them, which Zod's own object neither reads nor copies:
// the raw schema, and a copy of it, must still report it where the engine does.
const OWN_PROTO = [
  '{"id":"m1","time":1000,"role":"agent","__proto__":{"x":1},"ev":{"t":"turn-start"}}',
  '{"id":"m1","time":1000,"role":"agent","ev":{"__proto__":1,"t":"abort","x":2}}',
];

// Streams that break a stream rule (the Realistic Flow's own messages, reordered or repeated).
function invalidStreams(flow: SessionEnvelope[]): SessionEnvelope[][] {
  const m = (id: string): SessionEnvelope => flow.find((x) => x.id === id) ?? fail(`no ${id}`);
  return [
    [m("m3"), m("m6")], // tool-call-end of a call that never started
    [m("m3"), m("m3")], // the same id twice
    [m("m2"), m("m4")], // an agent message with a turn id while no turn is open
    [m("m3"), m("m5"), m("m9"), m("m10"), m("m12")], // the call ends while its permission request is unanswered
  ];
}

/** A located error (a message-level rule id or a stream rule id). */
interface Located {
  pointer: string;
  rule: string;
  message: string;
}

function first(errors: readonly Located[]): Located | null {
  const e = errors[0];
  return e === undefined ? null : { pointer: e.pointer, rule: e.rule, message: e.message };
}

async function stdinJson(): Promise<unknown> {
  process.stdin.setEncoding("utf8");
  let text = "";
  for await (const chunk of process.stdin) text += chunk;
  return JSON.parse(text);
}

async function main(): Promise<void> {
  const flow = realisticFlow();
  const lines = flow.map((m) => JSON.stringify(m));
  for (const [i, line] of lines.entries()) {
    const message = flow[i] ?? fail("flow");
    if (!checkEnvelope(message).valid) fail(`checkEnvelope rejects ${line}`);
    if (!validateSessionLine(line).valid) fail(`validateSessionLine rejects ${line}`);
    if (validateSessionLineStandalone(line).length !== 0) fail(`validateSessionLineStandalone rejects ${line}`);
  }
  const records = checkSessionStream(flow);
  const bad = records.find((r) => !r.valid);
  if (bad !== undefined) fail(`checkSessionStream rejects line ${bad.line}: ${JSON.stringify(bad.errors)}`);
  const rollup: SessionRollup = rollupSession(flow);
  // The same, line by line, as a live log would be checked.
  const checker = new SessionStreamChecker();
  for (const line of lines) if (!checker.checkLine(line).valid) fail(`checkLine rejects ${line}`);
  if (JSON.stringify(checker.rollup()) !== JSON.stringify(rollup)) fail("the line checker's rollup differs");
  // Typed reads of the rollup.
  const controller: "cli" | "phone" | "browser" | "daemon" | null | undefined = rollup.control?.clientType;
  const model: string | null = rollup.config.model;
  const cancelled: number = rollup.turns.cancelled;

  // A message a role may not send throws, with the errors.
  let thrown: Located | null = null;
  try {
    createEnvelope("user", { t: "service", text: "x" } as never);
  } catch (e) {
    if (!(e instanceof SessionWireError)) throw e;
    thrown = first(e.errors);
  }

  const input = await stdinJson();
  if (!Array.isArray(input)) fail("stdin holds a JSON array of lines");
  console.log(
    JSON.stringify({
      flow: lines,
      rollup,
      typed: { controller, model, cancelled },
      invalid: INVALID.map((line) => {
        const r = validateSessionLine(line);
        return { line, zod: r.valid ? null : first(r.errors), standalone: first(validateSessionLineStandalone(line)) };
      }),
      thrown,
      ownProto: OWN_PROTO.map((line) => ({
        line,
        raw: [sessionEnvelopeSchema, sessionEnvelopeSchema.describe("a copy")].map((schema) => {
          const r = schema.safeParse(JSON.parse(line));
          const issue = r.success ? undefined : r.error.issues[0];
          return issue === undefined ? null : { pointer: toPointer(issue.path), rule: issueRule(issue) };
        }),
      })),
      streams: invalidStreams(flow).map((s) => ({
        lines: s.map((m) => JSON.stringify(m)),
        records: checkSessionStream(s).filter((r) => !r.valid).map((r) => ({ line: r.line, first: first(r.errors) })),
      })),
      corpus: input.map((line: unknown) => {
        const r = validateSessionLine(String(line));
        return r.valid ? [] : r.errors;
      }),
    }),
  );
}

main().catch((e: unknown) => {
  console.error(e instanceof Error ? (e.stack ?? e.message) : String(e));
  process.exitCode = 1;
});
