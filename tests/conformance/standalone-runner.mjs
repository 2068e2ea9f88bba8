// Conformance runner for the standalone validator of the generated `session-wire` package: every line on stdin
// (raw bytes, split on "\n") goes through the BUILT package's `validateSessionLineStandalone` in this one process;
// one JSON verdict per line goes to stdout, in input order.
//
// usage: node standalone-runner.mjs <path to generated/ts/dist/index.js>  < lines
//
// A verdict: {
//   valid, first: {pointer, rule, message} | null  -- validateSessionLineStandalone on the bytes
//   text: {valid, pointer, rule} | null            -- the same on the decoded string (null if not UTF-8)
//   guard: bool | null                             -- isSessionEnvelope on the parsed line (null if it does not parse)
//   all: [[pointer, rule], ...]                    -- every error of validateSessionLineStandalone, in order
// }
import { loadPackage, stdinLines } from "./runner-input.mjs";

const w = await loadPackage("standalone-runner.mjs");
const lines = stdinLines();

const brief = (errors) => (errors.length === 0 ? { valid: true } : { valid: false, pointer: errors[0].pointer, rule: errors[0].rule });

const out = [];
for (const bytes of lines) {
  const line = new Uint8Array(bytes);
  const errors = w.validateSessionLineStandalone(line);
  const verdict = { valid: errors.length === 0, first: errors[0] ?? null, text: null, guard: null, all: errors.map((e) => [e.pointer, e.rule]) };
  let text = null;
  try {
    text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(line);
  } catch {
    text = null;
  }
  if (text !== null) verdict.text = brief(w.validateSessionLineStandalone(text));
  const parsed = w.parseLine(line);
  if (parsed.ok) verdict.guard = w.isSessionEnvelope(parsed.value);
  out.push(JSON.stringify(verdict));
}
process.stdout.write(out.length ? out.join("\n") + "\n" : "");
