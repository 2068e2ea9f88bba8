// The pattern matcher's runner (tests/conformance/patterns.rs): in one node process, transpiles the two standalone
// modules the test wrote (`as-generated.ts`: each pattern as the generator emits it; `program-only.ts`: the same
// patterns with JavaScript's own RegExp turned off, so every string goes through the linear-time program) with
// the TypeScript compiler of generated/ts, and checks each string against each pattern three ways.
//
// usage: node pattern-runner.mjs <dir> <typescript module path>
//   <dir>/input.json: { sources: [js source, ...], strings: [[[utf-16 code unit, ...], ...] per pattern],
//   long: [[pattern index, [[unit, count], ...]], ...] }; a string is built from its code units, so lone
//   surrogates go through as they are. Writes { short: [[[regexp, program, generated, test], ...] per pattern],
//   long: [verdict, ...] }: `regexp` is what ECMA-262 says, a sticky `u`-mode RegExp tried at each code point
//   boundary of the string; `test` is `new RegExp(source, "u").test(s)`, which in V8 also finds a `\B` inside a
//   surrogate pair; the others whether the module's validateRoot({ "<index>": s }) reports no error. `long` has
//   the generated module's verdict on each long string (built from runs of one unit), which a backtracking RegExp
//   would take minutes or hours on.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { importTs } from "../node/import-ts.mjs";

const [dir, tsPath] = process.argv.slice(2);
const ts = createRequire(import.meta.url)(tsPath);
const input = JSON.parse(readFileSync(join(dir, "input.json"), "utf8"));

const generated = await importTs(ts, join(dir, "as-generated"));
const programOnly = await importTs(ts, join(dir, "program-only"));
const passes = (m, i, s) => m.validateRoot({ [String(i)]: s }).length === 0;
const text = (units) => String.fromCharCode(...units);

/** Whether a match starts at a code point boundary of `s` (ECMA-262's search, which steps by code points). */
function search(sticky, s) {
  for (let i = 0; ; ) {
    sticky.lastIndex = i;
    if (sticky.test(s)) return true;
    if (i >= s.length) return false;
    i += s.codePointAt(i) > 0xffff ? 2 : 1;
  }
}

const short = input.sources.map((source, i) => {
  const re = new RegExp(source, "u");
  const sticky = new RegExp(source, "uy");
  return input.strings[i].map((units) => {
    const s = text(units);
    return [search(sticky, s), passes(programOnly, i, s), passes(generated, i, s), re.test(s)];
  });
});
const long = input.long.map(([i, runs]) => passes(generated, i, runs.map(([unit, n]) => String.fromCharCode(unit).repeat(n)).join("")));
process.stdout.write(JSON.stringify({ short, long }));
