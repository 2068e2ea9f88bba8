// Validates fixture lines with ajv 8 in strict mode against the bundled schema.
// Line-level framing rules come first, as in every checker: JSON syntax, then nesting depth <= 127 (serde_json's limit),
// counted on the text as serde_json counts it (json-depth.mjs).
// usage: node ajv-check.mjs SCHEMA.json < lines.jsonl  ->  one JSON verdict per input line:
//   {"valid": true} | {"valid": false, "pointer": "/ev/status", "keyword": "enum"} | {"valid": false, "error": "not JSON"}
import { readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import Ajv2020 from "ajv/dist/2020.js";
import { textDepth } from "./json-depth.mjs";

const schema = JSON.parse(readFileSync(process.argv[2], "utf8"));
const ajv = new Ajv2020({ strict: true, allErrors: false });
const validate = ajv.compile(schema);
const rl = createInterface({ input: process.stdin, crlfDelay: Infinity });
const out = [];
for await (const line of rl) {
  let value;
  try {
    value = JSON.parse(line);
  } catch {
    out.push(JSON.stringify({ valid: false, error: "not JSON" }));
    continue;
  }
  if (textDepth(line) > 127) {
    out.push(JSON.stringify({ valid: false, error: "too deep" }));
    continue;
  }
  if (validate(value)) {
    out.push(JSON.stringify({ valid: true }));
  } else {
    const e = validate.errors[0];
    out.push(JSON.stringify({ valid: false, pointer: e.instancePath, keyword: e.keyword }));
  }
}
process.stdout.write(out.join("\n") + (out.length ? "\n" : ""));

