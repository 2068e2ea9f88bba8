// Type test of the happy-wire example's generated package (examples/happy-wire/generated/ts), checked by
// `tsc --noEmit --strict` against the built declarations (see example.rs): every name happy-wire's index exports
// (47 Zod schemas, `createEnvelope` and 35 types; `stripLeadingTaskNotificationWrappers` is a function, not a
// schema, and is not ported) is imported from the generated package and used the way happy-wire's callers use it.
import {
  AgentMessageSchema,
  ApiMessageSchema,
  ApiUpdateMachineStateSchema,
  ApiUpdateNewMessageSchema,
  ApiUpdateSessionStateSchema,
  CoreUpdateBodySchema,
  CoreUpdateContainerSchema,
  LegacyMessageContentSchema,
  MessageContentSchema,
  MessageMetaSchema,
  RigActivitySchema,
  RigCapabilitiesSchema,
  RigMetadataV1Schema,
  RigModelSchema,
  RigOperatingModeKindSchema,
  RigOperatingModeSchema,
  RigProviderSchema,
  SessionMessageContentSchema,
  SessionMessageSchema,
  SessionProtocolMessageSchema,
  UpdateBodySchema,
  UpdateMachineBodySchema,
  UpdateNewMessageBodySchema,
  UpdateSchema,
  UpdateSessionBodySchema,
  UserMessageSchema,
  VersionedEncryptedValueSchema,
  VersionedMachineEncryptedValueSchema,
  VersionedNullableEncryptedValueSchema,
  VoiceConversationDeniedSchema,
  VoiceConversationGrantedSchema,
  VoiceConversationResponseSchema,
  VoiceUsageResponseSchema,
  createEnvelope,
  sessionEnvelopeSchema,
  sessionEventSchema,
  sessionFileEventSchema,
  sessionRoleSchema,
  sessionServiceMessageEventSchema,
  sessionStartEventSchema,
  sessionStopEventSchema,
  sessionTextEventSchema,
  sessionToolCallEndEventSchema,
  sessionToolCallStartEventSchema,
  sessionTurnEndEventSchema,
  sessionTurnEndStatusSchema,
  sessionTurnStartEventSchema,
  sessionUsageSchema,
  type AgentMessage,
  type ApiMessage,
  type ApiUpdateMachineState,
  type ApiUpdateNewMessage,
  type ApiUpdateSessionState,
  type CoreUpdateBody,
  type CoreUpdateContainer,
  type CreateEnvelopeOptions,
  type LegacyMessageContent,
  type MessageContent,
  type MessageMeta,
  type RigMetadataV1,
  type RigModel,
  type RigOperatingMode,
  type RigOperatingModeKind,
  type RigProvider,
  type SessionEnvelope,
  type SessionEvent,
  type SessionMessage,
  type SessionMessageContent,
  type SessionProtocolMessage,
  type SessionRole,
  type SessionTurnEndStatus,
  type SessionUsage,
  type Update,
  type UpdateBody,
  type UpdateMachineBody,
  type UpdateNewMessageBody,
  type UpdateSessionBody,
  type UserMessage,
  type VersionedEncryptedValue,
  type VersionedMachineEncryptedValue,
  type VersionedNullableEncryptedValue,
  type VoiceConversationResponse,
  type VoiceUsageResponse,
} from "../../examples/happy-wire/generated/ts/dist/index.js";

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
function assertType<T extends true>(_: T): void {}

// Every schema parses; the inferred type of each is its exported type.
const schemas = [
  AgentMessageSchema, ApiMessageSchema, ApiUpdateMachineStateSchema, ApiUpdateNewMessageSchema,
  ApiUpdateSessionStateSchema, CoreUpdateBodySchema, CoreUpdateContainerSchema, LegacyMessageContentSchema,
  MessageContentSchema, MessageMetaSchema, RigActivitySchema, RigCapabilitiesSchema, RigMetadataV1Schema,
  RigModelSchema, RigOperatingModeKindSchema, RigOperatingModeSchema, RigProviderSchema, SessionMessageContentSchema,
  SessionMessageSchema, SessionProtocolMessageSchema, UpdateBodySchema, UpdateMachineBodySchema,
  UpdateNewMessageBodySchema, UpdateSchema, UpdateSessionBodySchema, UserMessageSchema, VersionedEncryptedValueSchema,
  VersionedMachineEncryptedValueSchema, VersionedNullableEncryptedValueSchema, VoiceConversationDeniedSchema,
  VoiceConversationGrantedSchema, VoiceConversationResponseSchema, VoiceUsageResponseSchema, sessionEnvelopeSchema,
  sessionEventSchema, sessionFileEventSchema, sessionRoleSchema, sessionServiceMessageEventSchema,
  sessionStartEventSchema, sessionStopEventSchema, sessionTextEventSchema, sessionToolCallEndEventSchema,
  sessionToolCallStartEventSchema, sessionTurnEndEventSchema, sessionTurnEndStatusSchema, sessionTurnStartEventSchema,
  sessionUsageSchema,
] as const;
export const verdicts: boolean[] = schemas.map((s) => s.safeParse({}).success);

assertType<Equal<AgentMessage, ReturnType<typeof AgentMessageSchema.parse>>>(true);
assertType<Equal<ApiMessage, SessionMessage>>(true);
assertType<Equal<ApiUpdateMachineState, UpdateMachineBody>>(true);
assertType<Equal<ApiUpdateNewMessage, UpdateNewMessageBody>>(true);
assertType<Equal<ApiUpdateSessionState, UpdateSessionBody>>(true);
assertType<Equal<UpdateBody, UpdateNewMessageBody>>(true);
assertType<Equal<Update, CoreUpdateContainer>>(true);
assertType<Equal<CoreUpdateBody, UpdateNewMessageBody | UpdateSessionBody | UpdateMachineBody>>(true);
assertType<Equal<CoreUpdateContainer, ReturnType<typeof CoreUpdateContainerSchema.parse>>>(true);
assertType<Equal<LegacyMessageContent, UserMessage | AgentMessage>>(true);
assertType<Equal<MessageContent, ReturnType<typeof MessageContentSchema.parse>>>(true);
assertType<Equal<MessageMeta, ReturnType<typeof MessageMetaSchema.parse>>>(true);
assertType<Equal<RigMetadataV1, ReturnType<typeof RigMetadataV1Schema.parse>>>(true);
assertType<Equal<RigModel, ReturnType<typeof RigModelSchema.parse>>>(true);
assertType<Equal<RigOperatingMode, ReturnType<typeof RigOperatingModeSchema.parse>>>(true);
// happy-wire's hand-written type is the four kinds; the schema (and so the generated type) is any string.
assertType<Equal<RigOperatingModeKind, string>>(true);
assertType<Equal<RigProvider, ReturnType<typeof RigProviderSchema.parse>>>(true);
assertType<Equal<SessionMessageContent, { c: string; t: "encrypted" }>>(true);
assertType<Equal<SessionProtocolMessage, ReturnType<typeof SessionProtocolMessageSchema.parse>>>(true);
assertType<Equal<SessionRole, "user" | "agent">>(true);
assertType<Equal<SessionTurnEndStatus, "completed" | "failed" | "cancelled">>(true);
assertType<Equal<SessionEnvelope["role"], SessionRole>>(true);
assertType<Equal<VersionedEncryptedValue, { version: number; value: string }>>(true);
assertType<Equal<VersionedMachineEncryptedValue, { version: number; value: string }>>(true);
assertType<Equal<VersionedNullableEncryptedValue, { version: number; value: string | null }>>(true);
assertType<Equal<VoiceUsageResponse, ReturnType<typeof VoiceUsageResponseSchema.parse>>>(true);

// Narrowing on the discriminators, string and boolean.
declare const ev: SessionEvent;
if (ev.t === "turn-end") {
  const status: SessionTurnEndStatus = ev.status;
  void status;
}
declare const voice: VoiceConversationResponse;
if (voice.allowed) {
  const token: string = voice.conversationToken;
  void token;
} else {
  const reason: string = voice.reason;
  void reason;
}
declare const content: MessageContent;
if (content.role === "session") {
  const env: SessionEnvelope = content.content;
  void env;
}
// Open objects keep unknown keys (an index signature); nullish fields are optional and nullable.
declare const usage: SessionUsage;
const extra: unknown = usage["anything"];
void extra;
declare const message: SessionMessage;
const localId: string | null | undefined = message.localId;
void localId;

// createEnvelope as happy-wire's tests call it (sessionProtocol.test.ts cases 8 and 9).
const made: SessionEnvelope = createEnvelope("agent", { t: "turn-start" });
void made;
const opts: CreateEnvelopeOptions = {
  id: "fixed-id",
  time: 12345,
  turn: "turn-1",
  subagent: "abc123def456ghi789jkl012",
  codexItemId: "item-1",
  usage: { input_tokens: 1200, cache_creation_input_tokens: 30, cache_read_input_tokens: 400, output_tokens: 80, context_window: 258400 },
};
createEnvelope("agent", { t: "tool-call-end", call: "call-1" }, opts);
// A caller holding a role and an event of the wide types still compiles, as against happy-wire.
declare const someRole: SessionRole;
createEnvelope(someRole, ev, opts);
// Literal roles narrow the event: a user cannot send `service` (happy-wire throws at run time; this is a type error).
// @ts-expect-error a user may not send service
createEnvelope("user", { t: "service", text: "internal event" });
