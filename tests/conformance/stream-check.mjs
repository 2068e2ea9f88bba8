// The TypeScript stream checker for the conformance test: one node process for every stream fixture.
//
// Usage: node stream-check.mjs <path to the built package's dist/index.js>, with a JSON array of stream file
// paths on stdin. Prints one JSON array: per file, the first error of every rejected line (through
// `SessionStreamChecker.checkLine`, lines split exactly like `wiregen validate --stream`), the rollup, and the
// same through the array API (`checkSessionStream` / `rollupSession` on `JSON.parse`d lines) when every line
// is JSON.
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

const [pkg] = process.argv.slice(2);
const { SessionStreamChecker, checkSessionStream, rollupSession } = await import(pathToFileURL(pkg).href);

/** Splits like the CLI: on `\n`, dropping one trailing `\r` per line; no empty record after a final newline. */
function lines(bytes) {
  const out = [];
  let start = 0;
  for (let i = 0; i < bytes.length; i++) {
    if (bytes[i] === 10) {
      out.push(bytes.subarray(start, i));
      start = i + 1;
    }
  }
  if (start < bytes.length) out.push(bytes.subarray(start));
  return out.map((l) => (l.length > 0 && l[l.length - 1] === 13 ? l.subarray(0, l.length - 1) : l));
}

const firstErrors = (records) => records.filter((r) => !r.valid).map((r) => ({ line: r.line, ...r.errors[0] }));

const files = JSON.parse(readFileSync(0, "utf8"));
const results = [];
for (const file of files) {
  const ls = lines(readFileSync(file));
  const checker = new SessionStreamChecker();
  const records = ls.map((l) => checker.checkLine(l));
  let arrayApi = null;
  const parsed = [];
  try {
    for (const l of ls) parsed.push(JSON.parse(new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(l)));
    arrayApi = { invalid: firstErrors(checkSessionStream(parsed)), rollup: rollupSession(parsed) };
  } catch {
    arrayApi = null;
  }
  results.push({ file, invalid: firstErrors(records), rollup: checker.rollup(), arrayApi });
}
// A number JSON cannot hold is written as what it is, not as the `null` JSON.stringify makes of it: the rollup
// object itself must hold `null` where the Rust checker writes `null` (a sum past the double range held Infinity).
process.stdout.write(JSON.stringify(results, (_, v) => (typeof v === "number" && !Number.isFinite(v) ? `non-finite ${v}` : v)));
