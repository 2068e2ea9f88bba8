// One timed pass of a node validator over a JSONL corpus, for the Rust benchmark harness
// (generator/benches/validate.rs), which interleaves rounds and compares the invalid lines.
// usage: node bench.mjs ajv|zod|standalone CORPUS.jsonl  ->  {"seconds": s, "invalid": [line, ...]}
// Timed: JSON.parse + validate per line, on lines already in memory (file reading is not timed).
import { readFileSync } from "node:fs";
import Ajv2020 from "ajv/dist/2020.js";

const [which, file] = process.argv.slice(2);
const lines = readFileSync(file, "utf8").split("\n");
if (lines.at(-1) === "") lines.pop();

let check;
if (which === "ajv") {
  const schema = JSON.parse(readFileSync(new URL("../../generated/schema/session-protocol.schema.json", import.meta.url), "utf8"));
  const validate = new Ajv2020({ strict: true }).compile(schema);
  check = (v) => validate(v);
} else if (which === "zod") {
  const pkg = await import(new URL("../../generated/ts/dist/index.js", import.meta.url));
  check = (v) => pkg.sessionEnvelopeSchema.safeParse(v).success;
} else if (which === "standalone") {
  const pkg = await import(new URL("../../generated/ts/dist/index.js", import.meta.url));
  check = (v) => pkg.validateSessionEnvelope(v).length === 0;
} else {
  throw new Error(`unknown contender ${which}`);
}

const invalid = [];
const t0 = process.hrtime.bigint();
for (let i = 0; i < lines.length; i++) {
  let ok;
  try {
    ok = check(JSON.parse(lines[i]));
  } catch {
    ok = false;
  }
  if (!ok) invalid.push(i + 1);
}
const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
process.stdout.write(JSON.stringify({ seconds, invalid }));
