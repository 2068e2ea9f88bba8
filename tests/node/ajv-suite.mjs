// ajv 8 (draft 2020-12, not strict) on the copy of the JSON-Schema-Test-Suite in tests/jsts/suite/, for scale beside
// wiregen's own counts (`cargo test -p wiregen --test jsts`): how many instances it gets right, gets wrong, or
// cannot run: the schema does not compile or validating throws. The suite's remote documents
// (tests/jsts/suite/remotes/) are added under the URIs the suite serves them at, as its own harness does.
// usage: node tests/node/ajv-suite.mjs  ->  one line per file with a miss, then the totals
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import Ajv2020 from "ajv/dist/2020.js";

const root = new URL("../jsts/suite/draft2020-12/", import.meta.url).pathname;
const files = [
  ...readdirSync(root).filter((f) => f.endsWith(".json")).sort(),
  ...readdirSync(join(root, "optional")).filter((f) => f.endsWith(".json")).sort().map((f) => `optional/${f}`),
];
const remotesRoot = new URL("../jsts/suite/remotes/", import.meta.url).pathname;
const remotes = readdirSync(remotesRoot, { recursive: true })
  .filter((f) => f.endsWith(".json"))
  .sort()
  .map((f) => [`http://localhost:1234/${f}`, JSON.parse(readFileSync(join(remotesRoot, f), "utf8"))]);
function compile(schema) {
  const ajv = new Ajv2020({ strict: false });
  for (const [uri, doc] of remotes) {
    try {
      ajv.addSchema(doc, uri);
    } catch {
      // a remote document ajv cannot take (another draft's metaschema) is left out
    }
  }
  return ajv.compile(schema);
}
const total = { passed: 0, wrong: 0, failed: 0 };
for (const file of files) {
  const count = { passed: 0, wrong: 0, failed: 0 };
  for (const group of JSON.parse(readFileSync(join(root, file), "utf8"))) {
    let validate = null;
    try {
      validate = compile(group.schema);
    } catch {
      count.failed += group.tests.length;
      continue;
    }
    for (const t of group.tests) {
      let verdict;
      try {
        verdict = validate(t.data);
      } catch {
        count.failed++;
        continue;
      }
      if (verdict === t.valid) count.passed++;
      else count.wrong++;
    }
  }
  for (const k of Object.keys(total)) total[k] += count[k];
  if (count.wrong + count.failed > 0) {
    console.log(`${file}: ${count.passed} passed, ${count.wrong} wrong, ${count.failed} not run`);
  }
}
const n = total.passed + total.wrong + total.failed;
console.log(`ajv 8 on ${n} instances: ${total.passed} passed, ${total.wrong} wrong, ${total.failed} not run`);
