// Type tests of the generated `session-wire` package, checked by `tsc --noEmit --strict` against the built
// declarations (see zod.rs). Every `@ts-expect-error` line must stay an error: if the generated types got looser,
// tsc would report the directive as unused and the test would fail.
import {
  createEnvelope,
  rollupSession,
  SessionStreamChecker,
  sessionEnvelopeSchema,
  sessionEventSchema,
  sessionToolCallStartEventSchema,
  type SessionEnvelope,
  type SessionEvent,
  type SessionRole,
  type SessionClientType,
  type SessionId,
  type SessionPermissionMode,
  type SessionRollup,
  type SessionToolCallStartEvent,
} from "../../generated/ts/dist/index.js";

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
function assertType<T extends true>(_: T): void {}

declare const ev: SessionEvent;

// Narrowing on the discriminator.
if (ev.t === "tool-call-start") {
  const args: Record<string, unknown> = ev.args;
  const call: string = ev.call;
  assertType<Equal<typeof ev, SessionToolCallStartEvent>>(true);
  void args;
  void call;
  // @ts-expect-error `status` belongs to turn-end, not to tool-call-start.
  void ev.status;
}
if (ev.t === "turn-end") {
  assertType<Equal<typeof ev.status, "completed" | "failed" | "cancelled">>(true);
  // Optional fields are absent or typed, never null.
  assertType<Equal<typeof ev.usage, { inputTokens: number; outputTokens: number; cost: number } | undefined>>(true);
  // @ts-expect-error `args` belongs to tool-call-start.
  void ev.args;
}

// The union is exhaustive over the tags: a switch without a default covers every event.
function tagOf(e: SessionEvent): string {
  switch (e.t) {
    case "text":
    case "file":
    case "turn-start":
    case "turn-end":
    case "tool-call-start":
    case "tool-call-end":
    case "service":
    case "subagent-start":
    case "subagent-stop":
    case "session-control-changed":
    case "permission-request":
    case "permission-response":
    case "abort":
    case "agent-configuration-changed":
      return e.t;
    default: {
      const never: never = e;
      return never;
    }
  }
}
void tagOf;

// Inferred types agree with the schemas.
assertType<Equal<SessionEvent, ReturnType<typeof sessionEventSchema.parse>>>(true);
assertType<Equal<SessionEnvelope, ReturnType<typeof sessionEnvelopeSchema.parse>>>(true);
assertType<Equal<SessionRole, "user" | "agent">>(true);
assertType<Equal<SessionEnvelope["role"], SessionRole>>(true);
assertType<Equal<ReturnType<typeof sessionToolCallStartEventSchema.parse>["t"], "tool-call-start">>(true);

// Closed objects: no index signature lets unknown properties through.
declare const env: SessionEnvelope;
// @ts-expect-error the envelope is closed.
void env.machineId;
// @ts-expect-error null is not an optional value.
const nullTurn: SessionEnvelope["turn"] = null;
void nullTurn;

// createEnvelope: the event and the options are narrowed to what the role may send.
const ok: SessionEnvelope = createEnvelope("agent", { t: "tool-call-start", call: "c", name: "grep", title: "t", description: "d", args: {} }, { turn: "t1", subagent: "s" });
void ok;
createEnvelope("user", { t: "text", text: "hi", steer: true });
// @ts-expect-error a user may not send tool-call-start.
createEnvelope("user", { t: "tool-call-start", call: "c", name: "grep", title: "t", description: "d", args: {} });
// @ts-expect-error an agent may not send abort.
createEnvelope("agent", { t: "abort" });
// @ts-expect-error a user may not send `thinking`.
createEnvelope("user", { t: "text", text: "hi", thinking: true });
// @ts-expect-error a user may not set `subagent`.
createEnvelope("user", { t: "abort" }, { subagent: "s" });
// @ts-expect-error `time` is a number.
createEnvelope("user", { t: "abort" }, { time: "now" });

// The rollup is typed from the schema: the control and configuration fields with their types, one key per turn-end
// status and usage field (it used to be `{ [field: string]: unknown }`).
const roll: SessionRollup = rollupSession([]);
// A `last` part holds the last event whole: a field it requires is there (`clientType`), an optional one may be null.
assertType<Equal<NonNullable<typeof roll.control>["clientType"], SessionClientType>>(true);
assertType<Equal<NonNullable<typeof roll.control>["tokenId"], SessionId | null>>(true);
assertType<Equal<typeof roll.config.permissionMode, SessionPermissionMode | null>>(true);
assertType<Equal<typeof roll.config.sandbox, boolean | null>>(true);
assertType<Equal<typeof roll.turns, { completed: number; failed: number; cancelled: number }>>(true);
// A sum past the double range is `null`, as JSON writes it.
assertType<Equal<typeof roll.usage, { inputTokens: number | null; outputTokens: number | null; cost: number | null }>>(true);
assertType<Equal<typeof roll.open.toolCalls[number]["call"], string>>(true);
// @ts-expect-error no such status.
void roll.turns.done;
// @ts-expect-error `clientType` is not a number.
const clientCount: number | null | undefined = roll.control?.clientType;
void clientCount;
assertType<Equal<ReturnType<SessionStreamChecker["rollup"]>, SessionRollup>>(true);
