// Validates values against named types of a bundled schema with ajv 8 in strict mode.
// usage: node ajv-types.mjs SCHEMA.json < cases.jsonl, each line {"ref": "#/$defs/Name", "value": ...}
//   ->  one JSON verdict per input line: {"valid": true} | {"valid": false, "pointer": "/role", "keyword": "const"}
import { readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import Ajv2020 from "ajv/dist/2020.js";

const schema = JSON.parse(readFileSync(process.argv[2], "utf8"));
const ajv = new Ajv2020({ strict: true, allErrors: false });
ajv.addSchema(schema);
// Compiling the whole document first makes strict mode look at every definition, used or not.
ajv.getSchema(schema.$id);
const validators = new Map();
const rl = createInterface({ input: process.stdin, crlfDelay: Infinity });
const out = [];
for await (const line of rl) {
  const { ref, value } = JSON.parse(line);
  let validate = validators.get(ref);
  if (!validate) {
    validate = ajv.getSchema(schema.$id + ref);
    if (!validate) throw new Error(`no schema at ${ref}`);
    validators.set(ref, validate);
  }
  if (validate(value)) {
    out.push(JSON.stringify({ valid: true }));
  } else {
    const e = validate.errors[0];
    out.push(JSON.stringify({ valid: false, pointer: e.instancePath, keyword: e.keyword }));
  }
}
process.stdout.write(out.join("\n") + (out.length ? "\n" : ""));
