// happy-wire's session-protocol names in the v2 package. `package.rs` checks this file with `tsc --strict` inside
// the scratch consumers (it imports the packed `session-wire` by name, next to each tested zod) and runs it.
//
// Every export of happy-wire's `sessionProtocol.ts` that continues in v2 is imported here under its happy-wire
// name and used the way happy-wire's own tests and callers use it: a call site compiles after changing only the
// import. What v2 changed in a shape is v2's (the usage object moved into `turn-end` and is camelCase; the envelope
// lost `claudeUuid`, `codexItemId` and `usage`), so the values below are v2 values. The README's TypeScript section
// has the table (happy-wire name -> v2 export) and says why `sessionStartEventSchema` and `sessionStopEventSchema`
// do not continue (the last lines hold that they are not exported).
import {
  createEnvelope,
  sessionEnvelopeSchema,
  sessionEventSchema,
  sessionFileEventSchema,
  sessionRoleSchema,
  sessionServiceEventSchema,
  sessionServiceMessageEventSchema,
  sessionTextEventSchema,
  sessionToolCallEndEventSchema,
  sessionToolCallStartEventSchema,
  sessionTurnEndEventSchema,
  sessionTurnEndStatusSchema,
  sessionTurnStartEventSchema,
  sessionTurnStatusSchema,
  sessionUsageSchema,
  type CreateEnvelopeOptions,
  type SessionEnvelope,
  type SessionEvent,
  type SessionRole,
  type SessionServiceEvent,
  type SessionTurnEndStatus,
  type SessionTurnStatus,
  type SessionUsage,
} from "session-wire";

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
function assertType<T extends true>(_: T): void {}

function check(ok: boolean, what: string): void {
  if (!ok) throw new Error(what);
}

// The renamed names are the same schemas and types as v2's own.
check(sessionServiceMessageEventSchema === sessionServiceEventSchema, "sessionServiceMessageEventSchema is the service schema");
check(sessionTurnEndStatusSchema === sessionTurnStatusSchema, "sessionTurnEndStatusSchema is the turn status schema");
assertType<Equal<SessionTurnEndStatus, SessionTurnStatus>>(true);
assertType<Equal<SessionTurnEndStatus, "completed" | "failed" | "cancelled">>(true);

// happy-wire's sessionProtocol.test.ts: every event schema parses its events, and the union takes them all.
const role: SessionRole = sessionRoleSchema.parse("agent");
const status: SessionTurnEndStatus = sessionTurnEndStatusSchema.parse("completed");
const events: SessionEvent[] = [
  sessionTextEventSchema.parse({ t: "text", text: "hello" }),
  sessionTextEventSchema.parse({ t: "text", text: "thinking", thinking: true }),
  sessionServiceMessageEventSchema.parse({ t: "service", text: "**Service:** restarting MCP bridge" }),
  sessionToolCallStartEventSchema.parse({
    t: "tool-call-start",
    call: "call-1",
    name: "CodexBash",
    title: "Run `ls`",
    description: "Run `ls -la` in the repo root",
    args: { command: "ls -la" },
  }),
  sessionToolCallEndEventSchema.parse({ t: "tool-call-end", call: "call-1" }),
  sessionFileEventSchema.parse({ t: "file", ref: "upload-2", name: "image.png", size: 2048, image: { thumbhash: "abc", width: 100, height: 80 } }),
  sessionTurnStartEventSchema.parse({ t: "turn-start" }),
  sessionTurnEndEventSchema.parse({ t: "turn-end", status }),
];
for (const event of events) check(sessionEventSchema.safeParse(event).success, `sessionEventSchema takes ${event.t}`);
check(!sessionEventSchema.safeParse({ t: "turn-end", status: "canceled" }).success, "`canceled` is not a status");
check(!sessionEventSchema.safeParse({ t: "service" }).success, "service needs text");
const service: SessionServiceEvent = sessionServiceMessageEventSchema.parse({ t: "service", text: "Context window compacted" });
void service;

// Usage: the same names, v2's shape (the turn's usage, on `turn-end`).
const usage: SessionUsage = sessionUsageSchema.parse({ inputTokens: 2400, outputTokens: 180, cost: 0.012 });
sessionTurnEndEventSchema.parse({ t: "turn-end", status: "completed", usage });

// Envelopes and createEnvelope, as happy-wire's callers hold them: a `SessionRole` (not a literal), a
// `SessionEvent` and `CreateEnvelopeOptions` compile; the role rules are checked at run time.
const envelope: SessionEnvelope = sessionEnvelopeSchema.parse({ id: "msg-1", time: 1234, role: "agent", turn: "turn-1", ev: { t: "text", text: "hello" } });
check(!sessionEnvelopeSchema.safeParse({ id: "msg-2", time: 1234, role: "user", ev: { t: "service", text: "internal event" } }).success, "service from a user is rejected");
function send(r: SessionRole, ev: SessionEvent, opts: CreateEnvelopeOptions = {}): SessionEnvelope {
  return createEnvelope(r, ev, opts);
}
const created = send(role, { t: "tool-call-end", call: "call-1" }, { id: "fixed-id", time: 12345, turn: "turn-1" });
check(created.id === "fixed-id" && created.time === 12345 && created.turn === "turn-1" && created.ev.t === "tool-call-end", "createEnvelope keeps the options");
const defaults = createEnvelope("agent", { t: "turn-start" });
check(typeof defaults.id === "string" && defaults.id.length > 0 && typeof defaults.time === "number", "createEnvelope fills id and time");
let threw = false;
try {
  send("user", { t: "service", text: "internal event" });
} catch {
  threw = true;
}
check(threw, "createEnvelope validates role/event compatibility");
void envelope;

// Not continued: v2 renamed `start`/`stop` to `subagent-start`/`subagent-stop` with a required `agentId`, so no v1
// value of them is valid v2; an alias would compile a call site that then fails at run time.
// @ts-expect-error sessionStartEventSchema is not exported (use sessionSubagentStartEventSchema).
type Start = typeof import("session-wire").sessionStartEventSchema;
// @ts-expect-error sessionStopEventSchema is not exported (use sessionSubagentStopEventSchema).
type Stop = typeof import("session-wire").sessionStopEventSchema;
export type { Start, Stop };
