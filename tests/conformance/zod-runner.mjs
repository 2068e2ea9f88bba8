// Conformance runner for the generated `session-wire` package: every line on stdin (raw bytes, split on "\n")
// goes through the BUILT package in this one process; one JSON verdict per line goes to stdout, in input order.
//
// usage: node zod-runner.mjs <path to generated/ts/dist/index.js>  < lines
//
// A verdict: {
//   valid, first: {pointer, rule, message} | null  -- validateSessionLine on the bytes
//   text: {valid, pointer, rule} | null            -- validateSessionLine on the decoded string (null if not UTF-8)
//   schema: {valid, pointer, rule} | null           -- sessionEnvelopeSchema.safeParse on the parsed line, its first
//                                                      raw Zod issue (path joined as a JSON Pointer, rule from the
//                                                      issue itself); null when the line does not parse
//   roundTrip: bool | null                          -- a valid line parses to a value deep-equal to the input
// }
import { isDeepStrictEqual } from "node:util";
import { loadPackage, stdinLines } from "./runner-input.mjs";

const w = await loadPackage("zod-runner.mjs");
const lines = stdinLines();

const brief = (r) => (r.valid ? { valid: true } : { valid: false, pointer: r.errors[0].pointer, rule: r.errors[0].rule });

const out = [];
for (const bytes of lines) {
  const line = new Uint8Array(bytes);
  const r = w.validateSessionLine(line);
  const verdict = { valid: r.valid, first: r.valid ? null : r.errors[0], text: null, schema: null, roundTrip: null };
  let text = null;
  try {
    text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(line);
  } catch {
    text = null;
  }
  if (text !== null) verdict.text = brief(w.validateSessionLine(text));
  if (r.valid) verdict.roundTrip = isDeepStrictEqual(r.value, JSON.parse(text));
  const parsed = w.parseLine(line);
  if (parsed.ok) {
    const s = w.sessionEnvelopeSchema.safeParse(parsed.value);
    if (s.success) {
      verdict.schema = { valid: true };
    } else {
      const first = s.error.issues[0];
      verdict.schema = { valid: false, pointer: w.toPointer(first.path), rule: w.issueRule(first) };
    }
  }
  out.push(JSON.stringify(verdict));
}
process.stdout.write(out.length ? out.join("\n") + "\n" : "");
