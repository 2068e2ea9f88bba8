// The JavaScript side of the differential test (`differential.rs`): every line on stdin (raw bytes, split on "\n")
// goes through every JavaScript checker in this one process, and one JSON answer per line goes to stdout, in input
// order. The Rust side compares the answers with the engine's.
//
// usage: node fuzz-runner.mjs <generated/ts/dist/index.js> <bundled schema.json> <tests/node>  < lines
//
// An answer is an array [zod, schema, standalone, ajv, roundTrip]:
//   zod         0 (valid) | [rule, pointer]   validateSessionLine on the bytes (Zod, with the line rules)
//   schema      null | 0 | [rule, pointer]    sessionEnvelopeSchema.safeParse on parseLine's value, its first raw issue;
//                                             null when the line does not parse
//   standalone  0 | [rule, pointer]           validateSessionLineStandalone on the bytes
//   ajv         "valid" | "invalid" | "not-json" | "too-deep"
//                                             ajv 8 strict on the bundled schema, on JSON.parse of the line decoded
//                                             as ajv-check.mjs reads it (invalid UTF-8 becomes U+FFFD, a BOM is kept),
//                                             after the depth rule (<= 127 levels, counted on the text:
//                                             tests/node/json-depth.mjs)
//   roundTrip   0 | 1                         1 when a line Zod calls valid parses to a value that is not deep-equal to
//                                             JSON.parse of the line
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { isDeepStrictEqual } from "node:util";
import { loadPackage, stdinLines } from "./runner-input.mjs";

const w = await loadPackage("fuzz-runner.mjs");
const schemaPath = process.argv[3];
const nodeDir = process.argv[4];
if (!schemaPath || !nodeDir) {
  console.error("usage: node fuzz-runner.mjs <dist/index.js> <schema.json> <tests/node>");
  process.exit(2);
}
const require = createRequire(join(nodeDir, "package.json"));
const Ajv2020 = require("ajv/dist/2020.js").default;
const ajv = new Ajv2020({ strict: true, allErrors: false });
const validate = ajv.compile(JSON.parse(readFileSync(schemaPath, "utf8")));
const lossy = new TextDecoder("utf-8", { fatal: false, ignoreBOM: true });
const { textDepth } = await import(pathToFileURL(join(nodeDir, "json-depth.mjs")).href);

const first = (errors) => (errors.length === 0 ? 0 : [errors[0].rule, errors[0].pointer]);

function ajvVerdict(bytes) {
  const text = lossy.decode(bytes);
  let value;
  try {
    value = JSON.parse(text);
  } catch {
    return "not-json";
  }
  if (textDepth(text) > 127) return "too-deep";
  return validate(value) ? "valid" : "invalid";
}

const out = [];
for (const bytes of stdinLines()) {
  const line = new Uint8Array(bytes);
  const z = w.validateSessionLine(line);
  let schema = null;
  let roundTrip = 0;
  const parsed = w.parseLine(line);
  if (parsed.ok) {
    const s = w.sessionEnvelopeSchema.safeParse(parsed.value);
    schema = s.success ? 0 : [w.issueRule(s.error.issues[0]), w.toPointer(s.error.issues[0].path)];
  }
  if (z.valid && parsed.ok && !isDeepStrictEqual(z.value, JSON.parse(new TextDecoder().decode(line)))) roundTrip = 1;
  const s = w.validateSessionLineStandalone(line);
  out.push(JSON.stringify([z.valid ? 0 : first(z.errors), schema, first(s), ajvVerdict(line), roundTrip]));
}
process.stdout.write(out.length ? out.join("\n") + "\n" : "");
