// Benchmark (not a test): the standalone validator of `session-wire` (`validateSessionEnvelope`, straight-line code,
// no Zod) against the generated Zod schema (`sessionEnvelopeSchema.safeParse`) and ajv 8 compiled from the bundled
// JSON Schema (generated/schema/session-protocol.schema.json), on the same PRE-PARSED messages: the message fixtures
// (strict-id ones left out), parsed once with JSON.parse outside the timed loops.
//
//   (cd generated/ts && npm ci && npm run build) && (cd tests/node && npm ci) \
//     && node tests/bench/standalone.mjs [runs] [CPU-s per corpus per run]
//
// As in zod-vs-handwritten.mjs, each measurement runs ONE contender in a fresh node process (V8 specializes shared
// code for what it meets first), runs alternate the order of the contenders, and time is CPU time (user + system).
// Each run times the valid messages and the invalid ones separately. Prints the median ops/s of each contender
// (one op = one check of one message) and the medians of the per-run ratios standalone / Zod and standalone / ajv.
// Every contender must first give every message its fixture verdict.
import { execFileSync } from "node:child_process";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { measureChild, median } from "./measure.mjs";

const root = join(fileURLToPath(import.meta.url), "../../..");
const dir = join(root, "tests/fixtures/messages");
const valid = [];
const invalid = [];
for (const f of readdirSync(dir).sort()) {
  const fx = JSON.parse(readFileSync(join(dir, f), "utf8"));
  if (fx.strictIds || !("message" in fx)) continue;
  (fx.valid ? valid : invalid).push(fx.message);
}

const CONTENDERS = ["standalone", "zod", "ajv"];

async function checkerOf(which) {
  if (which === "ajv") {
    const { default: Ajv2020 } = await import(pathToFileURL(join(root, "tests/node/node_modules/ajv/dist/2020.js")).href);
    const schema = JSON.parse(readFileSync(join(root, "generated/schema/session-protocol.schema.json"), "utf8"));
    const validate = new Ajv2020({ strict: true }).compile(schema);
    return (m) => validate(m);
  }
  const pkg = await import(pathToFileURL(join(root, "generated/ts/dist/index.js")).href);
  if (which === "zod") return (m) => pkg.sessionEnvelopeSchema.safeParse(m).success;
  if (which === "standalone") return (m) => pkg.validateSessionEnvelope(m).length === 0;
  throw new Error(`unknown contender ${which}`);
}


const only = process.env.STANDALONE_BENCH_ONLY;
const seconds = Number(process.argv[3] ?? 1);
if (only) {
  // A child: one contender only.
  const check = await checkerOf(only);
  measureChild(only, check, valid, invalid, seconds);
} else {
  const runs = Number(process.argv[2] ?? 7);
  const results = Object.fromEntries(CONTENDERS.map((c) => [c, []]));
  for (let r = 0; r < runs; r++) {
    const order = CONTENDERS.map((_, i) => CONTENDERS[(i + r) % CONTENDERS.length]);
    for (const which of order) {
      const out = execFileSync(process.execPath, [fileURLToPath(import.meta.url), String(runs), String(seconds)], {
        env: { ...process.env, STANDALONE_BENCH_ONLY: which },
        encoding: "utf8",
      });
      results[which].push(JSON.parse(out));
    }
  }
  const fmt = (n) => Math.round(n).toLocaleString("en-US").padStart(11);
  const version = (p) => JSON.parse(readFileSync(join(root, p), "utf8")).version;
  console.log(
    `node ${process.version}, zod ${version("generated/ts/node_modules/zod/package.json")}, ajv ${version("tests/node/node_modules/ajv/package.json")}; ` +
      `${valid.length} valid and ${invalid.length} invalid pre-parsed messages; ${runs} runs of each contender, ${seconds} CPU-s per corpus per run, one process per run`,
  );
  for (const label of ["valid", "invalid"]) {
    const ops = CONTENDERS.map((c) => `${c} ${fmt(median(results[c].map((x) => x[label])))} ops/s`).join("   ");
    // Ratios are medians of per-run ratios: the contenders of a run ran back to back, under the same load.
    const ratio = (other) => median(results.standalone.map((x, i) => x[label] / results[other][i][label])).toFixed(2);
    console.log(`${label.padEnd(8)} ${ops}   standalone/zod ${ratio("zod")}x   standalone/ajv ${ratio("ajv")}x`);
  }
}
