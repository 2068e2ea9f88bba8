// Writes ../fixtures/*.json, one file per case (it deletes the folder first). The verdicts and parsed values
// below are written by hand from happy-wire's sources and tests (slopus/happy 2c8ecacc); check.mjs holds every
// one of them against happy-wire's real Zod schemas and against ajv over the bundled schema (and over ../schema,
// where only the role rule, an x-roles annotation there, is not enforced). This script never asks Zod and reads
// no schema. Run it, then `git diff ../fixtures` and `node check.mjs`.
//
//   node make-fixtures.mjs
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const fixtureDir = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures');
const cases = [];
const clone = (v) => (v === undefined ? undefined : JSON.parse(JSON.stringify(v)));
/** A valid case; `parsed` defaults to the value itself (nothing stripped). */
const V = (type, about, value, parsed = value) => cases.push({ about, type, valid: true, value: clone(value), parsed: clone(parsed) });
/** An invalid case. */
const I = (type, about, value) => cases.push({ about, type, valid: false, value: clone(value) });
const omit = (o, k) => { const c = clone(o); delete c[k]; return c; };
const set = (o, k, v) => ({ ...clone(o), [k]: v });

const MAX = 9007199254740991; // 2^53 - 1
const TOO_BIG = 9007199254740992; // 2^53
const CUID = 'tz4a98xxat96iws9zmbrgj3a'; // a createId()-shaped value (24 chars)

// ============================================================================ sessionProtocol.ts
// --- sessionRoleSchema
V('sessionRoleSchema', 'role user', 'user');
V('sessionRoleSchema', 'role agent', 'agent');
I('sessionRoleSchema', 'role session is not a session-protocol role', 'session');
I('sessionRoleSchema', 'role null', null);

// --- sessionTextEventSchema
const text = { t: 'text', text: 'hello' };
V('sessionTextEventSchema', 'text without thinking', text);
V('sessionTextEventSchema', 'text with thinking true', { ...text, thinking: true });
V('sessionTextEventSchema', 'text with thinking false', { ...text, thinking: false });
V('sessionTextEventSchema', 'unknown key is stripped', { ...text, extra: 1 }, text);
I('sessionTextEventSchema', 'text missing', { t: 'text' });
I('sessionTextEventSchema', 'text is a number', { t: 'text', text: 1 });
I('sessionTextEventSchema', 'thinking null (optional, not nullable)', { ...text, thinking: null });
I('sessionTextEventSchema', 'thinking as string "true"', { ...text, thinking: 'true' });
I('sessionTextEventSchema', 't missing', { text: 'hello' });
I('sessionTextEventSchema', 'wrong literal t', { t: 'service', text: 'hello' });
I('sessionTextEventSchema', 'not an object', 'hello');

// --- sessionUsageSchema (passthrough)
const usage = { input_tokens: 1200, cache_creation_input_tokens: 30, cache_read_input_tokens: 400, output_tokens: 80, context_window: 258400 };
V('sessionUsageSchema', 'minimal usage', { input_tokens: 1, output_tokens: 2 });
V('sessionUsageSchema', 'all four token fields 0', { input_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 0 });
V('sessionUsageSchema', 'usage from the createEnvelope test', usage);
V('sessionUsageSchema', 'every field incl. service_tier', { ...usage, service_tier: 'priority' });
V('sessionUsageSchema', 'unknown keys are kept (passthrough)', { input_tokens: 1, output_tokens: 2, server_tool_use: { web: 1 }, note: null });
V('sessionUsageSchema', 'largest safe integer', { input_tokens: MAX, output_tokens: MAX, context_window: MAX });
I('sessionUsageSchema', 'input_tokens missing', { output_tokens: 1 });
I('sessionUsageSchema', 'output_tokens missing', { input_tokens: 1 });
I('sessionUsageSchema', 'input_tokens 1.5 is not an integer', { input_tokens: 1.5, output_tokens: 1 });
I('sessionUsageSchema', 'input_tokens -1 is negative', { input_tokens: -1, output_tokens: 1 });
I('sessionUsageSchema', 'input_tokens 2^53 is not a safe integer', { input_tokens: TOO_BIG, output_tokens: 1 });
I('sessionUsageSchema', 'output_tokens -1', { input_tokens: 1, output_tokens: -1 });
I('sessionUsageSchema', 'cache_creation_input_tokens -1', { input_tokens: 1, output_tokens: 1, cache_creation_input_tokens: -1 });
I('sessionUsageSchema', 'cache_read_input_tokens 1.5', { input_tokens: 1, output_tokens: 1, cache_read_input_tokens: 1.5 });
I('sessionUsageSchema', 'context_window 0 is not positive', { input_tokens: 0, output_tokens: 0, context_window: 0 });
I('sessionUsageSchema', 'context_window 1.5', { input_tokens: 0, output_tokens: 0, context_window: 1.5 });
I('sessionUsageSchema', 'input_tokens as string', { input_tokens: '1', output_tokens: 1 });
I('sessionUsageSchema', 'service_tier null', { input_tokens: 1, output_tokens: 1, service_tier: null });
I('sessionUsageSchema', 'usage is an array', [1, 2]);

// --- sessionServiceMessageEventSchema
const service = { t: 'service', text: '**Service:** restarting MCP bridge' };
V('sessionServiceMessageEventSchema', 'service message', service);
V('sessionServiceMessageEventSchema', 'empty service text (usage-only envelopes)', { t: 'service', text: '' });
V('sessionServiceMessageEventSchema', 'unknown key is stripped', { ...service, level: 'info' }, service);
I('sessionServiceMessageEventSchema', 'text missing (test case)', { t: 'service' });
I('sessionServiceMessageEventSchema', 'wrong literal t', { t: 'text', text: 'x' });

// --- sessionToolCallStartEventSchema
const tcs = { t: 'tool-call-start', call: 'call-1', name: 'CodexBash', title: 'Run `ls`', description: 'Run `ls -la` in the repo root', args: { command: 'ls -la' } };
V('sessionToolCallStartEventSchema', 'tool call start from the test', tcs);
V('sessionToolCallStartEventSchema', 'empty args object', set(tcs, 'args', {}));
V('sessionToolCallStartEventSchema', 'nested args are kept as given', set(tcs, 'args', { a: [1, { b: null }], c: { d: 'e' } }));
V('sessionToolCallStartEventSchema', 'unknown key is stripped', { ...tcs, agentTitle: 'x' }, tcs);
for (const k of ['call', 'name', 'title', 'description', 'args']) I('sessionToolCallStartEventSchema', `${k} missing`, omit(tcs, k));
I('sessionToolCallStartEventSchema', 'only call given (test case)', { t: 'tool-call-start', call: '1' });
I('sessionToolCallStartEventSchema', 'args is an array', set(tcs, 'args', []));
I('sessionToolCallStartEventSchema', 'args null', set(tcs, 'args', null));
I('sessionToolCallStartEventSchema', 'call is a number', set(tcs, 'call', 1));

// --- sessionToolCallEndEventSchema
const tce = { t: 'tool-call-end', call: 'call-1' };
V('sessionToolCallEndEventSchema', 'tool call end', tce);
V('sessionToolCallEndEventSchema', 'unknown key (error) is stripped', { ...tce, error: 'exit 1' }, tce);
I('sessionToolCallEndEventSchema', 'call missing', { t: 'tool-call-end' });
I('sessionToolCallEndEventSchema', 'call null', { t: 'tool-call-end', call: null });

// --- sessionFileEventSchema
const file = { t: 'file', ref: 'upload-1', name: 'report.txt', size: 1024 };
const image = { thumbhash: 'abc', width: 100, height: 80 };
V('sessionFileEventSchema', 'file without mimeType and image', file);
V('sessionFileEventSchema', 'file with mimeType (test case)', { ...file, mimeType: 'text/plain' });
V('sessionFileEventSchema', 'image file with mimeType and image (test case)', { t: 'file', ref: 'upload-2', name: 'image.png', size: 2048, mimeType: 'image/png', image });
V('sessionFileEventSchema', 'size 1.5 and negative dimensions are plain numbers', { ...file, size: 1.5, image: { thumbhash: '', width: -1, height: 0.5 } });
V('sessionFileEventSchema', 'unknown keys in the event and in image are stripped', { ...file, image: { ...image, alt: 'x' }, extra: 1 }, { ...file, image });
I('sessionFileEventSchema', 'size missing (test case)', { t: 'file', ref: 'x', name: 'x' });
I('sessionFileEventSchema', 'image without thumbhash (test case)', { t: 'file', ref: 'x', name: 'x', size: 1, image: { width: 10, height: 10 } });
I('sessionFileEventSchema', 'ref missing', omit(file, 'ref'));
I('sessionFileEventSchema', 'name missing', omit(file, 'name'));
I('sessionFileEventSchema', 'size as string', set(file, 'size', '1024'));
I('sessionFileEventSchema', 'image width missing', { ...file, image: omit(image, 'width') });
I('sessionFileEventSchema', 'image height as string', { ...file, image: { ...image, height: '80' } });
I('sessionFileEventSchema', 'image null', { ...file, image: null });
I('sessionFileEventSchema', 'mimeType null', { ...file, mimeType: null });

// --- sessionTurnStartEventSchema
V('sessionTurnStartEventSchema', 'turn start', { t: 'turn-start' });
V('sessionTurnStartEventSchema', 'unknown key is stripped', { t: 'turn-start', turn: 'x' }, { t: 'turn-start' });
I('sessionTurnStartEventSchema', 't missing', {});
I('sessionTurnStartEventSchema', 'wrong literal t', { t: 'turn-end' });

// --- sessionStartEventSchema
V('sessionStartEventSchema', 'start with title (test case)', { t: 'start', title: 'Research agent' });
V('sessionStartEventSchema', 'start without title', { t: 'start' });
I('sessionStartEventSchema', 'title is a number (test case)', { t: 'start', title: 1 });
I('sessionStartEventSchema', 'title null', { t: 'start', title: null });

// --- sessionTurnEndStatusSchema
for (const s of ['completed', 'failed', 'cancelled']) V('sessionTurnEndStatusSchema', `status ${s}`, s);
I('sessionTurnEndStatusSchema', 'American spelling canceled', 'canceled');
I('sessionTurnEndStatusSchema', 'null', null);

// --- sessionTurnEndEventSchema
V('sessionTurnEndEventSchema', 'turn end cancelled', { t: 'turn-end', status: 'cancelled' });
V('sessionTurnEndEventSchema', 'unknown key (usage) is stripped', { t: 'turn-end', status: 'completed', usage: { inputTokens: 1 } }, { t: 'turn-end', status: 'completed' });
I('sessionTurnEndEventSchema', 'status missing (test case)', { t: 'turn-end' });
I('sessionTurnEndEventSchema', 'status canceled (test case)', { t: 'turn-end', status: 'canceled' });
I('sessionTurnEndEventSchema', 'status null', { t: 'turn-end', status: null });

// --- sessionStopEventSchema
V('sessionStopEventSchema', 'stop', { t: 'stop' });
V('sessionStopEventSchema', 'unknown key (title) is stripped', { t: 'stop', title: 'x' }, { t: 'stop' });
I('sessionStopEventSchema', 'wrong literal t', { t: 'start' });
I('sessionStopEventSchema', 'null', null);

// --- sessionEventSchema (discriminated on t)
const testEvents = [
  { t: 'text', text: 'hello' },
  { t: 'text', text: 'thinking', thinking: true },
  { t: 'service', text: '**Service:** restarting MCP bridge' },
  tcs,
  { t: 'tool-call-end', call: 'call-1' },
  { t: 'file', ref: 'upload-1', name: 'report.txt', size: 1024, mimeType: 'text/plain' },
  { t: 'file', ref: 'upload-2', name: 'image.png', size: 2048, mimeType: 'image/png', image: { thumbhash: 'abc', width: 100, height: 80 } },
  { t: 'turn-start' },
  { t: 'start', title: 'Research agent' },
  { t: 'turn-end', status: 'completed' },
  { t: 'stop' },
];
testEvents.forEach((e, i) => V('sessionEventSchema', `accepts all supported event types #${i + 1} (${e.t})`, e));
V('sessionEventSchema', 'unknown key is stripped from the chosen member', { t: 'text', text: 'x', extra: 1 }, { t: 'text', text: 'x' });
const badEvents = [
  { t: 'tool-call-start', call: '1' },
  { t: 'file', ref: 'x', name: 'x' },
  { t: 'file', ref: 'x', name: 'x', size: 1, image: { width: 10, height: 10 } },
  { t: 'turn-end' },
  { t: 'turn-end', status: 'canceled' },
  { t: 'start', title: 1 },
  { t: 'service' },
  { t: 'not-real' },
];
badEvents.forEach((e, i) => I('sessionEventSchema', `rejects malformed events #${i + 1} (${e.t})`, e));
I('sessionEventSchema', 't missing', { text: 'x' });
I('sessionEventSchema', 't null', { t: null, text: 'x' });
I('sessionEventSchema', 't is a number', { t: 1 });
I('sessionEventSchema', 't is case-sensitive', { t: 'Text', text: 'x' });
I('sessionEventSchema', 'v2 event names are not v1 events (subagent-start)', { t: 'subagent-start', agentId: 'a' });

// --- sessionEnvelopeSchema
const env = { id: 'msg-1', time: 1000, role: 'agent', ev: { t: 'text', text: 'hello' } };
const SE = 'sessionEnvelopeSchema';
V(SE, 'minimal agent text envelope', env);
V(SE, 'every optional field present', { ...env, turn: 'turn-1', subagent: CUID, claudeUuid: 'c0ffee-uuid', codexItemId: 'item-1', usage: { ...usage, service_tier: 'default' } });
V(SE, 'validates envelopes that include turn/subagent (test case)', { id: 'msg-1', time: 1234, role: 'agent', turn: 'turn-1', subagent: CUID, ev: { t: 'text', text: 'hello' } });
V(SE, 'createEnvelope explicit-options result (test case)', { id: 'fixed-id', time: 12345, role: 'agent', turn: 'turn-1', subagent: CUID, codexItemId: 'item-1', usage, ev: { t: 'tool-call-end', call: 'call-1' } });
V(SE, 'empty turn and id are accepted (no format check)', { ...env, id: '', turn: '' });
V(SE, 'time 1.5 and negative time are plain numbers', { ...env, time: -1.5 });
V(SE, 'subagent of 2 lowercase letters', { ...env, subagent: 'ab' });
V(SE, 'subagent of digits only (isCuid needs no leading letter)', { ...env, subagent: '12' });
V(SE, 'subagent of 32 characters', { ...env, subagent: 'a'.repeat(32) });
V(SE, 'envelope and ev unknown keys are stripped, usage unknown keys kept',
  { ...env, extra: 1, ev: { t: 'text', text: 'hello', steer: true }, usage: { input_tokens: 1, output_tokens: 2, server_tool_use: { web: 1 } } },
  { ...env, usage: { input_tokens: 1, output_tokens: 2, server_tool_use: { web: 1 } } });
V(SE, 'v2 field parentId at envelope level is stripped', { ...env, parentId: 'call-1' }, env);
for (const ev of [{ t: 'file', ref: 'r', name: 'a.png', size: 9, mimeType: 'image/png' }, { t: 'turn-start' }, { t: 'turn-end', status: 'completed' }, tcs]) {
  V(SE, `role user with ${ev.t} (no role rule for it)`, { ...env, role: 'user', ev });
}
V(SE, 'role agent with service', { ...env, ev: { t: 'service', text: 'internal event' } });
V(SE, 'role agent with start', { ...env, subagent: CUID, ev: { t: 'start', title: 'Research agent' } });
V(SE, 'role agent with stop', { ...env, subagent: CUID, ev: { t: 'stop' } });
V(SE, 'usage-only Codex service envelope without turn', { id: 'u1', time: 5, role: 'agent', usage: { input_tokens: 10, output_tokens: 0 }, ev: { t: 'service', text: '' } });
I(SE, 'role user with service, time present: only the role rule fails', { id: 'msg-2', time: 1, role: 'user', ev: { t: 'service', text: 'internal event' } });
I(SE, 'role user with start, time present: only the role rule fails', { id: 'msg-3', time: 1, role: 'user', subagent: 'abc123def456ghi789jkl012', ev: { t: 'start', title: 'Research agent' } });
I(SE, 'role user with stop, time present: only the role rule fails', { id: 'msg-5', time: 1, role: 'user', ev: { t: 'stop' } });
I(SE, 'non-cuid subagent, time present: only the cuid rule fails', { id: 'msg-4', time: 1, role: 'agent', turn: 'turn-1', subagent: 'provider-tool-id', ev: { t: 'text', text: 'hello' } });
I(SE, 'bad subagent and role rule together', { id: 'm', time: 1, role: 'user', subagent: 'A-B', ev: { t: 'service', text: 'x' } });
I(SE, 'rejects session role envelopes for text events (test case; time missing too)', { id: 'msg-session-1', role: 'session', ev: { t: 'text', text: 'shadow copy of user message' } });
I(SE, 'rejects service from non-agent role (test case; time missing)', { id: 'msg-2', role: 'user', ev: { t: 'service', text: 'internal event' } });
I(SE, 'rejects start from non-agent role (test case; time missing)', { id: 'msg-3', role: 'user', subagent: CUID, ev: { t: 'start', title: 'Research agent' } });
I(SE, 'rejects non-cuid subagent values (test case; time missing)', { id: 'msg-4', role: 'agent', turn: 'turn-1', subagent: 'provider-tool-id', ev: { t: 'text', text: 'hello' } });
I(SE, 'README normative example lacks time', { id: 'x8s1k2', role: 'agent', turn: 'turn-42', ev: { t: 'turn-start' } });
for (const [about, s] of [['one character', 'a'], ['empty', ''], ['upper case', 'ABC'], ['hyphen', 'a-b'], ['33 characters', 'a'.repeat(33)], ['underscore', 'sa_research']]) {
  I(SE, `subagent ${about} is not a cuid2`, { ...env, subagent: s });
}
I(SE, 'subagent null', { ...env, subagent: null });
I(SE, 'turn null', { ...env, turn: null });
I(SE, 'claudeUuid empty', { ...env, claudeUuid: '' });
I(SE, 'codexItemId empty', { ...env, codexItemId: '' });
I(SE, 'claudeUuid null', { ...env, claudeUuid: null });
for (const k of ['id', 'time', 'role', 'ev']) I(SE, `${k} missing`, omit(env, k));
I(SE, 'id is a number', { ...env, id: 1 });
I(SE, 'time as string', { ...env, time: '1000' });
I(SE, 'role session', { ...env, role: 'session' });
I(SE, 'ev without t', { ...env, ev: { text: 'x' } });
I(SE, 'ev with unknown t', { ...env, ev: { t: 'ready' } });
I(SE, 'usage with context_window 0', { ...env, usage: { input_tokens: 0, output_tokens: 0, context_window: 0 } });
I(SE, 'usage null', { ...env, usage: null });

// ============================================================================ messageMeta.ts
const MM = 'MessageMetaSchema';
const metaAll = {
  sentFrom: 'cli', permissionMode: 'bypassPermissions', model: 'claude-opus', modelProviderId: 'anthropic', fallbackModel: 'claude-sonnet',
  customSystemPrompt: 'You are terse.', appendSystemPrompt: 'Answer in French.', allowedTools: ['Bash', 'Edit'], disallowedTools: [], effort: 'high', displayText: 'Fix it',
};
V(MM, 'empty meta', {});
V(MM, 'native Rig selection codes (test case)', { permissionMode: 'workspace_write', model: 'shared-model', modelProviderId: 'codex', effort: 'high' });
V(MM, 'every field set', metaAll);
V(MM, 'every nullable field null', { model: null, fallbackModel: null, customSystemPrompt: null, appendSystemPrompt: null, allowedTools: null, disallowedTools: null, effort: null });
V(MM, 'permissionMode is any string', { permissionMode: 'anything' });
V(MM, 'unknown key is stripped', { sentFrom: 'web', sessionId: 'x' }, { sentFrom: 'web' });
for (const k of ['sentFrom', 'permissionMode', 'modelProviderId', 'displayText']) I(MM, `${k} null (optional, not nullable)`, { [k]: null });
I(MM, 'model is a number', { model: 1 });
I(MM, 'allowedTools holds a number', { allowedTools: ['Bash', 1] });
I(MM, 'allowedTools is a string', { allowedTools: 'Bash' });

// ============================================================================ legacyProtocol.ts
const UM = 'UserMessageSchema';
const userMsg = { role: 'user', content: { type: 'text', text: 'fix this test' }, meta: { sentFrom: 'mobile' } };
V(UM, 'legacy decrypted user message payload (test case)', userMsg);
V(UM, 'without meta, with localKey', { role: 'user', content: { type: 'text', text: 'hello' }, localKey: 'k-1' });
V(UM, 'unknown keys in content, meta and top level are stripped',
  { ...userMsg, content: { type: 'text', text: 'x', images: [] }, meta: { sentFrom: 'web', x: 1 }, extra: true },
  { ...userMsg, content: { type: 'text', text: 'x' }, meta: { sentFrom: 'web' } });
I(UM, 'content type image', { ...userMsg, content: { type: 'image', text: 'x' } });
I(UM, 'content text missing', { ...userMsg, content: { type: 'text' } });
I(UM, 'content missing', omit(userMsg, 'content'));
I(UM, 'role agent', { ...userMsg, role: 'agent' });
I(UM, 'localKey null', { ...userMsg, localKey: null });
I(UM, 'meta null', { ...userMsg, meta: null });

const AM = 'AgentMessageSchema';
const agentMsg = { role: 'agent', content: { type: 'output', data: { type: 'message', message: 'done' } }, meta: { sentFrom: 'cli' } };
V(AM, 'legacy decrypted agent message payload (test case)', agentMsg);
V(AM, 'content keeps unknown keys; top-level localKey and extras are stripped',
  { role: 'agent', content: { type: 'output', data: { x: 1 } }, localKey: 'k', extra: 1 },
  { role: 'agent', content: { type: 'output', data: { x: 1 } } });
V(AM, 'content with only type', { role: 'agent', content: { type: 'event' } });
I(AM, 'content without type', { role: 'agent', content: { data: {} } });
I(AM, 'content type is a number', { role: 'agent', content: { type: 1 } });
I(AM, 'content null', { role: 'agent', content: null });

const LMC = 'LegacyMessageContentSchema';
V(LMC, 'legacy union: user (test case)', { role: 'user', content: { type: 'text', text: 'hello' } });
V(LMC, 'legacy union: agent event (test case)', { role: 'agent', content: { type: 'event', data: { type: 'ready' } } });
I(LMC, 'legacy union has no session member', { role: 'session', content: env });
I(LMC, 'role missing', { content: { type: 'text', text: 'x' } });
I(LMC, 'user member with agent content', { role: 'user', content: { type: 'output', data: {} } });

// ============================================================================ messages.ts
const SMC = 'SessionMessageContentSchema';
V(SMC, 'encrypted content', { c: 'ZmFrZS1lbmNyeXB0ZWQ=', t: 'encrypted' });
V(SMC, 'unknown key is stripped', { t: 'encrypted', c: 'x', iv: 'y' }, { c: 'x', t: 'encrypted' });
I(SMC, 't plain', { c: 'x', t: 'plain' });
I(SMC, 'c missing', { t: 'encrypted' });
I(SMC, 'c null', { c: null, t: 'encrypted' });

const SM = 'SessionMessageSchema';
const row = { id: 'msg-1', seq: 10, content: { t: 'encrypted', c: 'ZmFrZS1lbmNyeXB0ZWQ=' }, createdAt: 123, updatedAt: 124 };
V(SM, 'localId absent', row);
V(SM, 'localId string', { ...row, localId: 'local-1' });
V(SM, 'localId null', { ...row, localId: null });
V(SM, 'unknown keys on the row and on content are stripped', { ...row, sessionId: 's', content: { ...row.content, extra: 1 } }, row);
for (const k of ['id', 'seq', 'content', 'createdAt', 'updatedAt']) I(SM, `${k} missing`, omit(row, k));
I(SM, 'seq as string', { ...row, seq: '10' });
I(SM, 'localId is a number', { ...row, localId: 1 });
I(SM, 'content not encrypted', { ...row, content: { t: 'plain', c: 'x' } });

V('ApiMessageSchema', 'alias of SessionMessageSchema: stored row', { ...row, localId: null });
I('ApiMessageSchema', 'alias of SessionMessageSchema: createdAt missing', omit(row, 'createdAt'));

const SPM = 'SessionProtocolMessageSchema';
const spm = { role: 'session', content: { id: 'msg-1', time: 1000, role: 'agent', turn: 'turn-1', ev: { t: 'text', text: 'hello' } }, meta: { sentFrom: 'cli' } };
V(SPM, 'modern session protocol wrapper payload (test case)', spm);
V(SPM, 'without meta', omit(spm, 'meta'));
V(SPM, 'unknown keys stripped at every strip level', { ...spm, extra: 1, content: { ...spm.content, extra: 2 }, meta: { sentFrom: 'cli', extra: 3 } }, spm);
V(SPM, 'uploaded image file envelope with claudeUuid (apiSession test shape)', { role: 'session', content: { id: 'f1', time: 1, role: 'user', claudeUuid: 'u-image-1', ev: { t: 'file', ref: 'sessions/test-session-id/attachments/image.enc', name: 'claude-image-1.png', size: 2048, mimeType: 'image/png' } }, meta: { sentFrom: 'cli' } });
I(SPM, 'envelope role rule applies inside the wrapper', { role: 'session', content: { id: 'm', time: 1, role: 'user', ev: { t: 'service', text: 'x' } } });
I(SPM, 'meta null', { ...spm, meta: null });
I(SPM, 'role agent', { ...spm, role: 'agent' });
I(SPM, 'content missing', { role: 'session' });
I(SPM, 'content wrapped in the interim {type:session,data} shape', { role: 'session', content: { type: 'session', data: spm.content } });

const MC = 'MessageContentSchema';
V(MC, 'top-level union: user (test case)', { role: 'user', content: { type: 'text', text: 'hello from user' } });
V(MC, 'top-level union: agent (test case)', { role: 'agent', content: { type: 'output', data: { type: 'message', message: 'hello from agent' } } });
V(MC, 'top-level union: session (test case)', { role: 'session', content: { id: 'msg-2', time: 2000, role: 'agent', turn: 'turn-2', ev: { t: 'text', text: 'hello from session protocol' } } });
V(MC, 'session member strips envelope extras', { role: 'session', content: { ...env, x: 1 }, y: 2 }, { role: 'session', content: env });
I(MC, 'role system', { role: 'system', content: { type: 'text', text: 'x' } });
I(MC, 'role missing', { content: { type: 'text', text: 'x' } });
I(MC, 'role null', { role: null, content: { type: 'text', text: 'x' } });
I(MC, 'session member with user service envelope', { role: 'session', content: { id: 'm', time: 1, role: 'user', ev: { t: 'service', text: 'x' } } });
I(MC, 'session member with non-cuid subagent', { role: 'session', content: { ...env, subagent: 'Not-Cuid' } });
I(MC, 'user member with image content', { role: 'user', content: { type: 'image', text: 'x' } });
I(MC, 'agent member without content type', { role: 'agent', content: {} });

const VEV = 'VersionedEncryptedValueSchema';
V(VEV, 'versioned value', { version: 2, value: 'abc' });
V(VEV, 'unknown key is stripped', { version: 2, value: 'abc', x: 1 }, { version: 2, value: 'abc' });
I(VEV, 'value null', { version: 2, value: null });
I(VEV, 'version missing', { value: 'abc' });

const VNEV = 'VersionedNullableEncryptedValueSchema';
V(VNEV, 'value null', { version: 3, value: null });
V(VNEV, 'value string', { version: 3, value: 'abc' });
I(VNEV, 'value missing (nullable, not optional)', { version: 3 });
I(VNEV, 'value is a number', { version: 3, value: 1 });

const VMEV = 'VersionedMachineEncryptedValueSchema';
V(VMEV, 'machine value', { version: 1, value: 'abc' });
I(VMEV, 'value null', { version: 1, value: null });
I(VMEV, 'version null', { version: null, value: 'abc' });

const UNM = 'UpdateNewMessageBodySchema';
const updA = { t: 'new-message', sid: 'session-1', message: { id: 'msg-1', seq: 10, localId: null, content: { t: 'encrypted', c: 'ZmFrZS1lbmNyeXB0ZWQ=' }, createdAt: 123, updatedAt: 124 } };
V(UNM, 'new-message update', updA);
V(UNM, 'unknown keys stripped in body and message', { ...updA, x: 1, message: { ...updA.message, y: 2 } }, updA);
I(UNM, 'message missing', omit(updA, 'message'));
I(UNM, 'sid null', { ...updA, sid: null });
I(UNM, 'message with bad content', { ...updA, message: { ...updA.message, content: { t: 'encrypted' } } });
I(UNM, 'wrong t', { ...updA, t: 'update-session' });
V('ApiUpdateNewMessageSchema', 'parses a new-message update (test case)', updA);
I('ApiUpdateNewMessageSchema', 'seq missing in message', { ...updA, message: omit(updA.message, 'seq') });

const USB = 'UpdateSessionBodySchema';
const updB = { t: 'update-session', id: 'session-1', metadata: { version: 2, value: 'abc' }, agentState: { version: 3, value: null } };
V(USB, 'update-session with metadata and nullable agentState value', updB);
V(USB, 'metadata and agentState absent', { t: 'update-session', id: 's' });
V(USB, 'metadata and agentState null', { t: 'update-session', id: 's', metadata: null, agentState: null });
V(USB, 'unknown keys stripped', { ...updB, extra: 1, metadata: { version: 2, value: 'abc', x: 1 } }, updB);
I(USB, 'metadata value null (metadata value is not nullable)', { ...updB, metadata: { version: 1, value: null } });
I(USB, 'agentState value missing', { ...updB, agentState: { version: 1 } });
I(USB, 'id missing', omit(updB, 'id'));
V('ApiUpdateSessionStateSchema', 'parses update-session with nullable agentState value (test case)', updB);
V('ApiUpdateSessionStateSchema', 'accepts shared wire update-session payload (app apiTypes spec)', { t: 'update-session', id: 'session-1' });
I('ApiUpdateSessionStateSchema', 'wrong t', { t: 'update-machine', id: 'session-1' });

const UMB = 'UpdateMachineBodySchema';
const updC = { t: 'update-machine', machineId: 'machine-1', metadata: { version: 1, value: 'abc' }, daemonState: { version: 2, value: 'def' }, active: true, activeAt: 12345 };
V(UMB, 'update-machine with every field', updC);
V(UMB, 'only machineId', { t: 'update-machine', machineId: 'm' });
V(UMB, 'metadata and daemonState null, active false', { t: 'update-machine', machineId: 'm', metadata: null, daemonState: null, active: false });
V(UMB, 'unknown keys stripped', { ...updC, extra: 1, daemonState: { version: 2, value: 'def', z: 0 } }, updC);
I(UMB, 'active null', { ...updC, active: null });
I(UMB, 'activeAt as string', { ...updC, activeAt: '12345' });
I(UMB, 'daemonState value null', { ...updC, daemonState: { version: 2, value: null } });
I(UMB, 'machineId missing', omit(updC, 'machineId'));
V('ApiUpdateMachineStateSchema', 'parses update-machine with optional activity fields (test case)', updC);
I('ApiUpdateMachineStateSchema', 'active as string', { ...updC, active: 'true' });

V('UpdateBodySchema', 'alias of UpdateNewMessageBodySchema: new-message', updA);
I('UpdateBodySchema', 'alias is not the union: update-session is rejected', updB);

const D = [
  { id: 'upd-1', seq: 1, body: { t: 'new-message', sid: 'session-1', message: { id: 'msg-1', seq: 1, localId: null, content: { t: 'encrypted', c: 'x' }, createdAt: 1, updatedAt: 1 } }, createdAt: 1 },
  { id: 'upd-2', seq: 2, body: { t: 'update-session', id: 'session-1', metadata: null, agentState: { version: 1, value: null } }, createdAt: 2 },
  { id: 'upd-3', seq: 3, body: { t: 'update-machine', machineId: 'machine-1', metadata: null, daemonState: null }, createdAt: 3 },
];
const CUB = 'CoreUpdateBodySchema';
D.forEach((d) => V(CUB, `body ${d.body.t}`, d.body));
V(CUB, 'unknown key stripped from the chosen member', { ...D[2].body, extra: 1 }, D[2].body);
I(CUB, 'unknown t', { t: 'delete-session', id: 's' });
I(CUB, 't missing', { id: 's' });
I(CUB, 'update-machine member without machineId', { t: 'update-machine', id: 'm' });

const CUC = 'CoreUpdateContainerSchema';
D.forEach((d, i) => V(CUC, `container updates for all shared update variants #${i + 1} (${d.body.t}) (test case)`, d));
V(CUC, 'unknown keys stripped at container and body', { ...D[1], extra: 1, body: { ...D[1].body, x: 2 } }, D[1]);
I(CUC, 'body with unknown t', { ...D[0], body: { t: 'ephemeral', id: 'x' } });
I(CUC, 'createdAt missing', omit(D[0], 'createdAt'));
V('UpdateSchema', 'alias of CoreUpdateContainerSchema: update-machine container', D[2]);
I('UpdateSchema', 'alias of CoreUpdateContainerSchema: body null', { ...D[2], body: null });

// ============================================================================ voice.ts
const VG = 'VoiceConversationGrantedSchema';
const granted = { allowed: true, conversationToken: 'tok', conversationId: 'conv-1', agentId: 'agent-1', elevenUserId: 'eu-1', usedSeconds: 12.5, limitSeconds: 600 };
V(VG, 'granted', granted);
V(VG, 'unknown key stripped', { ...granted, extra: 1 }, granted);
I(VG, 'allowed false', { ...granted, allowed: false });
I(VG, 'allowed "true" (string)', { ...granted, allowed: 'true' });
I(VG, 'conversationToken missing', omit(granted, 'conversationToken'));
I(VG, 'usedSeconds as string', { ...granted, usedSeconds: '12' });

const VD = 'VoiceConversationDeniedSchema';
const denied = { allowed: false, reason: 'subscription_required', usedSeconds: 600, limitSeconds: 600, agentId: 'agent-1' };
for (const r of ['voice_hard_limit_reached', 'subscription_required', 'voice_conversation_limit_reached']) V(VD, `denied: ${r}`, { ...denied, reason: r });
V(VD, 'unknown key stripped', { ...denied, conversationToken: 'x' }, denied);
I(VD, 'unknown reason', { ...denied, reason: 'rate_limited' });
I(VD, 'allowed true', { ...denied, allowed: true });
I(VD, 'agentId missing', omit(denied, 'agentId'));

const VR = 'VoiceConversationResponseSchema';
V(VR, 'granted member', granted);
V(VR, 'denied member', denied);
V(VR, 'unknown key stripped from the chosen member', { ...denied, extra: [] }, denied);
I(VR, 'allowed "true" is not the boolean discriminator', { ...granted, allowed: 'true' });
I(VR, 'allowed missing', omit(granted, 'allowed'));
I(VR, 'allowed 1', { ...granted, allowed: 1 });
I(VR, 'allowed null', { ...denied, allowed: null });
I(VR, 'granted fields with allowed false', { ...granted, allowed: false });

const VU = 'VoiceUsageResponseSchema';
const vusage = { usedSeconds: 30, limitSeconds: 600, conversationCount: 2, conversationLimit: 10, elevenUserId: 'eu-1' };
V(VU, 'usage response', vusage);
V(VU, 'unknown key stripped', { ...vusage, plan: 'pro' }, vusage);
I(VU, 'conversationLimit missing', omit(vusage, 'conversationLimit'));
I(VU, 'elevenUserId null', { ...vusage, elevenUserId: null });
I(VU, 'conversationCount as string', { ...vusage, conversationCount: '2' });

// ============================================================================ rigMetadata.ts
const provider = { id: 'codex', kind: 'codex', name: 'OpenAI Codex' };
const RP = 'RigProviderSchema';
V(RP, 'provider', provider);
V(RP, 'unknown keys kept', { ...provider, icon: 'openai', models: 3 });
I(RP, 'kind missing', omit(provider, 'kind'));
I(RP, 'id null', { ...provider, id: null });

const model = {
  id: 'm', code: 'm', name: 'Model', value: 'Model', providerId: 'codex', providerKind: 'codex', providerName: 'OpenAI Codex',
  provider, serviceTiers: [], thinkingLevels: ['high'], defaultThinkingLevel: 'high',
};
const RM = 'RigModelSchema';
V(RM, 'model from the test payload', model);
V(RM, 'with contextWindow and unknown keys (model and provider) kept', { ...model, contextWindow: 272000.5, beta: true, provider: { ...provider, x: 1 }, serviceTiers: ['flex', 'priority'] });
I(RM, 'serviceTiers missing', omit(model, 'serviceTiers'));
I(RM, 'contextWindow null', { ...model, contextWindow: null });
I(RM, 'provider without name', { ...model, provider: omit(provider, 'name') });

const RK = 'RigOperatingModeKindSchema';
for (const k of ['default', 'yolo']) V(RK, `known kind ${k}`, k);
V(RK, 'any other string (runtime is z.string())', 'future-kind');
V(RK, 'empty string', '');
I(RK, 'number', 1);
I(RK, 'null', null);

const mode = { code: 'auto', value: 'Auto', description: 'Sandboxed review.', kind: 'safe-yolo' };
const RO = 'RigOperatingModeSchema';
V(RO, 'operating mode', mode);
V(RO, 'unknown kind zzz accepted', { ...mode, kind: 'zzz' });
V(RO, 'unknown keys kept', { ...mode, shortcut: 'ctrl+y' });
I(RO, 'kind missing', omit(mode, 'kind'));
I(RO, 'kind is a number', { ...mode, kind: 1 });
I(RO, 'description null', { ...mode, description: null });

const caps = {
  abort: true,
  attachments: { enabled: true, maxBytes: 10, mediaTypes: ['image/*'] },
  files: { browse: true, read: true, search: true, write: true },
  modelSelection: true, reasoningSelection: true, permissionModeSelection: true, resume: false,
  rpcMethods: ['abort', 'bash', 'readFile', 'writeFile', 'ripgrep'], shell: true, steering: true,
};
const RC = 'RigCapabilitiesSchema';
V(RC, 'capabilities from the test payload', caps);
V(RC, 'unknown keys kept at every level', { ...caps, voice: false, attachments: { ...caps.attachments, maxCount: 4 }, files: { ...caps.files, delete: false } });
I(RC, 'attachments.maxBytes as string', { ...caps, attachments: { ...caps.attachments, maxBytes: '10' } });
I(RC, 'files.write missing', { ...caps, files: omit(caps.files, 'write') });
I(RC, 'rpcMethods is a string', { ...caps, rpcMethods: 'abort' });

const activity = {
  subagents: { running: 0, queued: 0, total: 0 }, workflows: { running: 0, total: 0 },
  processes: { running: 0 }, tasks: { pending: 0, inProgress: 0, completed: 0, total: 0 },
};
const RA = 'RigActivitySchema';
V(RA, 'activity from the test payload', activity);
V(RA, 'fractional counters and unknown keys kept', { ...activity, timers: 1, processes: { running: 1.5, zombie: 0 } });
I(RA, 'tasks.inProgress missing', { ...activity, tasks: omit(activity.tasks, 'inProgress') });
I(RA, 'workflows null', { ...activity, workflows: null });

const rig = {
  rigMetadataVersion: 1,
  client: { id: 'rig', name: 'Rig', version: '0.0.30' },
  provider, providers: [provider], model: { providerId: 'codex', id: 'm' }, models: [model],
  currentModelProviderId: 'codex', currentModelCode: 'm', permissionMode: 'auto', currentOperatingModeCode: 'auto',
  operatingModes: [mode], reasoning: { current: 'high', levels: ['high'] }, thoughtLevels: [{ code: 'high', value: 'high' }],
  session: { status: 'running', permissionMode: 'auto', modelLocked: false },
  capabilities: caps, activity, mcpServers: [], tools: [], skills: [], futureField: true,
};
const RMV = 'RigMetadataV1Schema';
V(RMV, 'Rig v1 payload retains unknown future fields (test case)', rig);
V(RMV, 'unknown operating-mode kind future-kind (test case)', { ...rig, operatingModes: [{ code: 'future', value: 'Future', description: 'Future mode', kind: 'future-kind' }] });
V(RMV, 'later additive revision 2 parses', { ...rig, rigMetadataVersion: 2 });
V(RMV, 'every optional field, reasoning.current null, unknown keys in nested objects kept', {
  ...rig, currentThoughtLevelCode: 'high', reasoning: { current: null, levels: [] },
  client: { ...rig.client, build: 7 }, model: { ...rig.model, alias: 'x' },
  thoughtLevels: [{ code: 'low', value: 'Low', hint: 'fast' }], session: { ...rig.session, serviceTier: 'flex', pid: 1 },
  mcpServers: [{ name: 'github', status: 'connected', tools: 12 }], tools: ['bash'], skills: ['review'],
});
V(RMV, 'largest safe version', { ...rig, rigMetadataVersion: MAX });
I(RMV, 'rigMetadataVersion 0 (min 1)', { ...rig, rigMetadataVersion: 0 });
I(RMV, 'rigMetadataVersion 1.5 is not an integer', { ...rig, rigMetadataVersion: 1.5 });
I(RMV, 'rigMetadataVersion 2^53 is not a safe integer', { ...rig, rigMetadataVersion: TOO_BIG });
I(RMV, 'rigMetadataVersion as string', { ...rig, rigMetadataVersion: '1' });
I(RMV, 'client.id other than rig', { ...rig, client: { ...rig.client, id: 'other' } });
I(RMV, 'reasoning.current missing (nullable, not optional)', { ...rig, reasoning: { levels: [] } });
I(RMV, 'tools missing', omit(rig, 'tools'));
I(RMV, 'mcpServers item without status', { ...rig, mcpServers: [{ name: 'github' }] });
I(RMV, 'session.serviceTier null', { ...rig, session: { ...rig.session, serviceTier: null } });
I(RMV, 'currentThoughtLevelCode null', { ...rig, currentThoughtLevelCode: null });
I(RMV, 'operatingModes item without kind', { ...rig, operatingModes: [omit(mode, 'kind')] });

// ============================================================================ write
rmSync(fixtureDir, { recursive: true, force: true });
mkdirSync(fixtureDir, { recursive: true });
const perType = new Map();
const slug = (s) => s.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '').slice(0, 70).replace(/-$/, '');
const names = new Set();
for (const c of cases) {
  const n = (perType.get(c.type) ?? 0) + 1;
  perType.set(c.type, n);
  const name = `${c.type}.${String(n).padStart(2, '0')}.${c.valid ? 'valid' : 'invalid'}.${slug(c.about)}.json`;
  if (names.has(name)) throw new Error(`duplicate fixture name ${name}`);
  names.add(name);
  const doc = { about: c.about, type: c.type, valid: c.valid, value: c.value };
  if (c.valid) doc.parsed = c.parsed;
  writeFileSync(join(fixtureDir, name), JSON.stringify(doc, null, 2) + '\n');
}
console.log(`wrote ${cases.length} fixtures (${cases.filter((c) => c.valid).length} valid, ${cases.filter((c) => !c.valid).length} invalid) to ${fixtureDir}`);
