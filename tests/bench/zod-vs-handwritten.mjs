// Benchmark (not a test): `safeParse` speed of the generated `session-wire` schema against a careful hand-written
// Zod 4 schema of the same protocol, on the same messages (the message fixtures), with the same zod build.
//
//   (cd generated/ts && npm ci && npm run build) && node tests/bench/zod-vs-handwritten.mjs [runs] [CPU-s per run]
//
// Each measurement runs ONE schema in a fresh node process, as an application would (V8 specializes Zod's shared
// code for the schemas it meets first, so timing both in one process mostly measures which one warmed up first);
// runs alternate between the two schemas, each run times safeParse over the valid messages and over the invalid
// ones (those the engine rejects after parsing) in CPU time (user + system, which a busy machine disturbs far
// less than wall time). Prints the median ops/s of each (one op = one safeParse of one message) and the median of
// the per-run ratios generated / hand-written.
import { execFileSync } from "node:child_process";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { measureChild, median } from "./measure.mjs";

const root = join(fileURLToPath(import.meta.url), "../../..");
const pkg = join(root, "generated/ts");
// The very module the package imports (its ESM entry), so both schemas run on one zod build.
const { z } = await import(pathToFileURL(join(pkg, "node_modules/zod/index.js")).href);

// ---- The hand-written schema, as a team writes it: strict objects, a discriminated union, superRefine roles. ----
const id = z.string().min(1);
const uint53 = z.int().min(0);
const args = z.record(z.string(), z.unknown());
const usage = z.strictObject({ inputTokens: uint53, outputTokens: uint53, cost: z.number().min(0) });
const messageUsage = z.strictObject({
  inputTokens: uint53,
  cacheCreationInputTokens: uint53.optional(),
  cacheReadInputTokens: uint53.optional(),
  outputTokens: uint53,
  contextWindow: z.int().gt(0).optional(),
  serviceTier: z.string().optional(),
});
const image = z.strictObject({ width: uint53, height: uint53, thumbhash: z.string() });
const hand = {};
hand.event = z.discriminatedUnion("t", [
  z.strictObject({ t: z.literal("text"), text: z.string(), thinking: z.boolean().optional(), steer: z.boolean().optional() }),
  z.strictObject({ t: z.literal("file"), ref: id, name: z.string(), size: uint53, mimeType: z.string().optional(), image: image.optional() }),
  z.strictObject({ t: z.literal("turn-start") }),
  z.strictObject({ t: z.literal("turn-end"), status: z.enum(["completed", "failed", "cancelled"]), usage: usage.optional() }),
  z.strictObject({ t: z.literal("tool-call-start"), call: id, name: z.string(), title: z.string(), description: z.string(), args }),
  z.strictObject({ t: z.literal("tool-call-end"), call: id }),
  z.strictObject({ t: z.literal("service"), text: z.string() }),
  z.strictObject({ t: z.literal("subagent-start"), agentId: id, title: z.string().optional() }),
  z.strictObject({ t: z.literal("subagent-stop"), agentId: id }),
  z.strictObject({ t: z.literal("session-control-changed"), clientType: z.enum(["cli", "phone", "browser", "daemon"]), tokenId: id.optional() }),
  z.strictObject({ t: z.literal("permission-request"), call: id, toolName: z.string(), title: z.string(), description: z.string(), args }),
  z.strictObject({ t: z.literal("permission-response"), call: id, decision: z.enum(["allow-once", "allow-always", "deny"]) }),
  z.strictObject({ t: z.literal("abort") }),
  z.strictObject({
    t: z.literal("agent-configuration-changed"),
    permissionMode: z.enum(["default", "acceptEdits", "bypassPermissions", "plan"]).optional(),
    model: z.string().optional(),
    thinkingLevel: z.string().optional(),
    sandbox: z.boolean().optional(),
  }),
]);
const agentOnly = new Set(["turn-start", "turn-end", "tool-call-start", "tool-call-end", "service", "subagent-start", "subagent-stop", "permission-request"]);
const userOnly = new Set(["permission-response", "abort"]);
hand.envelope = z
  .strictObject({
    id,
    time: uint53,
    role: z.enum(["user", "agent"]),
    turn: id.optional(),
    subagent: id.optional(),
    claudeUuid: id.optional(),
    codexItemId: id.optional(),
    usage: messageUsage.optional(),
    ev: hand.event,
  })
  .superRefine((m, ctx) => {
    const ev = m.ev;
    if ((m.role === "user" && agentOnly.has(ev.t)) || (m.role === "agent" && userOnly.has(ev.t))) {
      ctx.addIssue({ code: "custom", path: ["role"], message: `${ev.t} may not be sent by ${m.role}` });
    }
    if (m.role === "user" && m.subagent !== undefined) ctx.addIssue({ code: "custom", path: ["subagent"], message: "agent only" });
    if (ev.t === "text") {
      if (m.role === "user" && ev.thinking !== undefined) ctx.addIssue({ code: "custom", path: ["ev", "thinking"], message: "agent only" });
      if (m.role === "agent" && ev.steer !== undefined) ctx.addIssue({ code: "custom", path: ["ev", "steer"], message: "user only" });
    }
  });

// ---- The messages. ----
const dir = join(root, "tests/fixtures/messages");
const valid = [];
const invalid = [];
for (const f of readdirSync(dir).sort()) {
  const fx = JSON.parse(readFileSync(join(dir, f), "utf8"));
  if (fx.strictIds || !("message" in fx)) continue;
  (fx.valid ? valid : invalid).push(fx.message);
}
// Sanity: each child checks that its schema gives every fixture's verdict before it times it (measureChild).
async function schemaOf(which) {
  if (which === "hand-written") return hand.envelope;
  const gen = await import(pathToFileURL(join(pkg, "dist/index.js")).href);
  return gen.sessionEnvelopeSchema;
}

const only = process.env.ZOD_BENCH_ONLY;
const seconds = Number(process.argv[3] ?? 1);

if (only) {
  // A child: one schema only.
  const schema = await schemaOf(only);
  measureChild(only, (m) => schema.safeParse(m).success, valid, invalid, seconds);
} else {
  const runs = Number(process.argv[2] ?? 7);
  const results = { generated: [], "hand-written": [] };
  for (let r = 0; r < runs; r++) {
    const order = r % 2 === 0 ? ["generated", "hand-written"] : ["hand-written", "generated"];
    for (const which of order) {
      const out = execFileSync(process.execPath, [fileURLToPath(import.meta.url), String(runs), String(seconds)], {
        env: { ...process.env, ZOD_BENCH_ONLY: which },
        encoding: "utf8",
      });
      results[which].push(JSON.parse(out));
    }
  }
  const fmt = (n) => Math.round(n).toLocaleString("en-US").padStart(11);
  const zodVersion = JSON.parse(readFileSync(join(pkg, "node_modules/zod/package.json"), "utf8")).version;
  console.log(`node ${process.version}, zod ${zodVersion}; ${valid.length} valid and ${invalid.length} invalid messages; ${runs} runs of each schema, ${seconds} CPU-s per corpus per run, one process per run`);
  for (const label of ["valid", "invalid"]) {
    const g = median(results.generated.map((x) => x[label]));
    const h = median(results["hand-written"].map((x) => x[label]));
    // The ratio is the median of the per-run ratios: both schemas of a run ran back to back, under the same load.
    const ratio = median(results.generated.map((x, i) => x[label] / results["hand-written"][i][label]));
    console.log(`${label.padEnd(8)} generated ${fmt(g)} ops/s   hand-written ${fmt(h)} ops/s   ratio ${ratio.toFixed(2)}x`);
  }
}
