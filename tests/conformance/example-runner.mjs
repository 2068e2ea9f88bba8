// Conformance runner for the happy-wire example's generated package (examples/happy-wire/generated/ts): every
// fixture on stdin (one JSON line each: {schema, validate, guard, value: <JSON text>, parsed: <JSON text> | null})
// goes through the BUILT package in this one process; one JSON verdict per line goes to stdout, in input order.
//
// usage: node example-runner.mjs <path to dist/index.js>  < fixtures
//
// A verdict: {
//   zod: {valid, pointer, rule} | {error}  -- <schema>.safeParse(value): its first issue (path as a pointer, rule from
//                                             the issue)
//   dataEqual: bool | null                 -- a valid value parses to a value deep-equal to `parsed` (happy-wire's own
//                                             parse output)
//   standalone: {valid, pointer, rule}     -- <validate>(value): its first error
//   guard: bool                            -- <guard>(value)
// }
import { isDeepStrictEqual } from "node:util";
import { loadPackage, stdinLines } from "./runner-input.mjs";

const w = await loadPackage("example-runner.mjs");
const out = [];
for (const bytes of stdinLines()) {
  const f = JSON.parse(new TextDecoder().decode(bytes));
  const value = JSON.parse(f.value);
  const v = { zod: null, dataEqual: null, standalone: null, guard: null };
  const schema = w[f.schema];
  if (schema === undefined || typeof schema.safeParse !== "function") {
    v.zod = { error: `the package exports no schema ${f.schema}` };
  } else {
    const r = schema.safeParse(value);
    if (r.success) {
      v.zod = { valid: true };
      if (f.parsed !== null) v.dataEqual = isDeepStrictEqual(r.data, JSON.parse(f.parsed));
    } else {
      const first = r.error.issues[0];
      v.zod = { valid: false, pointer: w.toPointer(first.path), rule: w.issueRule(first) };
    }
  }
  const errors = w[f.validate](value);
  v.standalone = errors.length === 0 ? { valid: true } : { valid: false, pointer: errors[0].pointer, rule: errors[0].rule };
  v.guard = w[f.guard](value);
  out.push(JSON.stringify(v));
}
process.stdout.write(out.length ? out.join("\n") + "\n" : "");
