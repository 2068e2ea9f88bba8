// The runner of tests/conformance/many_keys.rs: imports the standalone module the test wrote (`<dir>/standalone.ts`)
// and checks objects of many keys against the schema's two types with 20,000 declared properties, `Closed`
// (additionalProperties false) and `Evaluated` (unevaluatedProperties false beside an allOf), and values against
// `Strings` (an enum of 20,000 strings), `Values` (an enum of 47 values, arrays and objects among them) and `Any`
// (an anyOf of 20,000 consts). Prints one JSON object: the number of errors of each check, and the messages the
// standalone validator and the Zod schemas (`<dir>/schemas.zod.ts`) give for values outside the two enums.
//
// usage: node many-keys-runner.mjs <dir> <typescript module path>
import { createRequire } from "node:module";
import { join } from "node:path";
import { importTs } from "../node/import-ts.mjs";

const [dir, tsPath] = process.argv.slice(2);
const ts = createRequire(import.meta.url)(tsPath);
const m = await importTs(ts, join(dir, "standalone"));
const zod = await importTs(ts, join(dir, "schemas.zod"));
const keys = (prefix, n) => Object.fromEntries(Array.from({ length: n }, (_, i) => [prefix + i, 1]));
const out = {
  closedUnknown: m.validateClosed(keys("q", 1_000_000)).length,
  closedDeclared: m.validateClosed(keys("p", 20_000)).length,
  evaluatedUnknown: m.validateEvaluated(keys("q", 1_000_000)).length,
  evaluatedDeclared: m.validateEvaluated(keys("p", 20_000)).length,
  strings: ["v0", "v19999", "v20000", 0].map((v) => m.validateStrings(v).length),
  values: [[1], { a: 1 }, -0, "0", null, true, 1.5, [1, 2], { a: 2 }, 1, false].map((v) => m.validateValues(v).length),
  any: [0, 19999, 20000, "0"].map((v) => m.validateAny(v).length),
  messages: [
    ["Strings", "v20000"],
    ["Values", [1, 2]],
    ["Values", false],
  ].map(([type, v]) => {
    const parsed = zod[type[0].toLowerCase() + type.slice(1) + "Schema"].safeParse(v);
    return {
      standalone: m["validate" + type](v).map((e) => e.message),
      zod: parsed.success ? [] : zod.toWireErrors(parsed.error).map((e) => e.message),
    };
  }),
};
process.stdout.write(JSON.stringify(out));
