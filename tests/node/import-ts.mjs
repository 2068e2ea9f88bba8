// Imports a TypeScript module in node 20, which cannot run one: transpiles `<path>.ts` with the TypeScript compiler
// `ts` (its types stripped, nothing type-checked), writes the JavaScript beside it as `<path>.mjs`, imports that.
// Used by the node runners of the tests (tests/jsts/ts-runner.mjs, tests/conformance/pattern-runner.mjs) and by
// tests/bench/backtracking.mjs.
import { readFileSync, writeFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

export async function importTs(ts, path) {
  const src = readFileSync(path + ".ts", "utf8");
  const options = { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } };
  writeFileSync(path + ".mjs", ts.transpileModule(src, options).outputText);
  return import(pathToFileURL(path + ".mjs").href);
}
