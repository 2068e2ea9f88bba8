// Conformance runner for the generated `session-wire` package's upcaster: every line on stdin is parsed and
// upgraded in place with the BUILT package's `upgrade`; one JSON answer per line goes to stdout, in input order.
//
// usage: node upgrade-runner.mjs <path to generated/ts/dist/index.js>  < lines
//
// An answer: { value, losses: [[rule, pointer], ...] }, or { parse: false } when the line is not JSON.
import { loadPackage, stdinLines } from "./runner-input.mjs";

const w = await loadPackage("upgrade-runner.mjs");
const out = [];
for (const bytes of stdinLines()) {
  let value;
  try {
    value = JSON.parse(new TextDecoder().decode(new Uint8Array(bytes)));
  } catch {
    out.push(JSON.stringify({ parse: false }));
    continue;
  }
  const losses = w.upgrade(value).map((l) => [l.rule, l.pointer]);
  out.push(JSON.stringify({ value, losses }));
}
process.stdout.write(out.length === 0 ? "" : out.join("\n") + "\n");
