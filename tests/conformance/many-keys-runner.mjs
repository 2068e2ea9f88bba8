// The runner of tests/conformance/many_keys.rs: imports the standalone module the test wrote (`<dir>/standalone.ts`)
// and checks objects of many keys against the schema's two types, each with 20,000 declared properties: `Closed`
// (additionalProperties false) and `Evaluated` (unevaluatedProperties false beside an allOf). Prints one JSON
// object: the number of errors of each check.
//
// usage: node many-keys-runner.mjs <dir> <typescript module path>
import { createRequire } from "node:module";
import { join } from "node:path";
import { importTs } from "../node/import-ts.mjs";

const [dir, tsPath] = process.argv.slice(2);
const m = await importTs(createRequire(import.meta.url)(tsPath), join(dir, "standalone"));
const keys = (prefix, n) => Object.fromEntries(Array.from({ length: n }, (_, i) => [prefix + i, 1]));
const out = {
  closedUnknown: m.validateClosed(keys("q", 100_000)).length,
  closedDeclared: m.validateClosed(keys("p", 20_000)).length,
  evaluatedUnknown: m.validateEvaluated(keys("q", 100_000)).length,
  evaluatedDeclared: m.validateEvaluated(keys("p", 20_000)).length,
};
process.stdout.write(JSON.stringify(out));
