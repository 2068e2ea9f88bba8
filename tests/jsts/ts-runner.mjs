// The TypeScript side of the JSON-Schema-Test-Suite harness (tests/jsts/ts.rs): in ONE node process, transpiles
// every case's two generated modules (`<id>.zod.ts`, `<id>.standalone.ts`) with the TypeScript compiler of
// generated/ts (types are stripped, nothing is type-checked here), imports them, and runs every instance:
// `m[schema].safeParse(data).success` for Zod (`rootSchema`), `m[validate](data).length === 0` for the standalone
// validator (`validateRoot`), by the root type's names the case gives.
//
// usage: node ts-runner.mjs <dir> <typescript module path>
//   <dir>/cases.json: [{ id, zod: bool, standalone: bool, schema, validate, keeps: bool, data: [instance, ...] }]
//   (instances as JSON text, so an own "__proto__" key stays a key; `keeps`: the schema drops no key); writes one
//   JSON object to stdout:
//   { "<id>": { zod: [bool...] | null, standalone: [bool...] | null, zodFirst, standaloneFirst: [[rule, pointer, message] |
//   null, ...] (each instance's first error), zodChanged: [index...] (with `keeps`, the instances Zod takes whose
//   value is not the instance), hostile: [string...] (the standalone validator's failures on values no
//   line can hold: see HOSTILE), errors: [string...] } }
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { importTs } from "../node/import-ts.mjs";

const [dir, tsPath] = process.argv.slice(2);
const ts = createRequire(import.meta.url)(tsPath);
const cases = JSON.parse(readFileSync(join(dir, "cases.json"), "utf8"));

const load = (file) => importTs(ts, join(dir, file));

/** A first error as [rule, pointer, message]. */
const first = (errors) => [errors[0].rule, errors[0].pointer, errors[0].message];

/** `n` levels of `wrap` around `null`. */
const nest = (n, wrap) => {
  let v = null;
  for (let i = 0; i < n; i++) v = wrap(v);
  return v;
};
const cyclicArray = [];
cyclicArray.push(cyclicArray);
const cyclicObject = {};
for (const k of ["a", "foo", "", "items"]) cyclicObject[k] = cyclicObject;
const deepArray = nest(100000, (v) => [v]);
/**
 * Values no line can hold (nested 100,000 deep, far past JavaScript's stack, cyclic, or of kinds JSON does not
 * have), in shapes a schema's recursion follows: the standalone validator must answer them with an error list
 * (`too-deep` where its type can recurse as deep as the value goes), never throw.
 */
const HOSTILE = [
  ["100,000 nested arrays", deepArray],
  ["two of them (uniqueItems)", [deepArray, deepArray]],
  ...["a", "foo", "", "items"].map((k) => [`100,000 objects nested under "${k}"`, nest(100000, (v) => ({ [k]: v }))]),
  ["100,000 levels of arrays and objects", nest(100000, (v) => [{ a: v, foo: v }])],
  ["a cyclic array", cyclicArray],
  ["a cyclic object", cyclicObject],
  // Values no JSON text holds at all, alone and inside arrays and objects.
  ...[10n, Symbol("s"), () => 1, undefined, new Map([[1, 2]])].flatMap((v) => [
    [`${typeof v} ${String(v)}`, v],
    [`[${typeof v}]`, [v, v]],
    [`{a: ${typeof v}}`, { a: v, foo: v, "": v, items: v }],
  ]),
];

/** JSON equality of two parsed values, own properties only, in any key order. */
function sameJson(a, b) {
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => sameJson(x, b[i]));
  }
  if (a === null || b === null || typeof a !== "object" || typeof b !== "object") return a === b;
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => Object.hasOwn(b, k) && sameJson(a[k], b[k]));
}

const result = {};
for (const c of cases) {
  const r = { zod: null, standalone: null, errors: [] };
  const data = c.data.map((t) => JSON.parse(t));
  if (c.zod) {
    try {
      const m = await load(c.id + ".zod");
      const parsed = data.map((d) => m[c.schema].safeParse(d));
      r.zod = parsed.map((p) => p.success);
      r.zodFirst = parsed.map((p) => (p.success ? null : first(m.toWireErrors(p.error))));
      // A schema that drops no key gives back the instance it takes, own `__proto__` keys included.
      // What it gives back passes the schema again: what stripping drops, nothing else there needs.
      r.zodAgain = parsed.flatMap((p, i) => (p.success && !m[c.schema].safeParse(p.data).success ? [i] : []));
      if (c.keeps) r.zodChanged = parsed.flatMap((p, i) => (p.success && !sameJson(p.data, data[i]) ? [i] : []));
    } catch (e) {
      r.errors.push(`zod: ${e && e.stack ? e.stack : e}`);
    }
  }
  if (c.standalone) {
    try {
      const m = await load(c.id + ".standalone");
      const errors = data.map((d) => m[c.validate](d));
      r.standalone = errors.map((e) => e.length === 0);
      r.standaloneFirst = errors.map((e) => (e.length === 0 ? null : first(e)));
      r.hostile = [];
      for (const [name, v] of HOSTILE) {
        try {
          if (!Array.isArray(m[c.validate](v))) r.hostile.push(`${name}: no error list`);
        } catch (e) {
          r.hostile.push(`${name}: threw ${e}`);
        }
      }
    } catch (e) {
      r.errors.push(`standalone: ${e && e.stack ? e.stack : e}`);
    }
  }
  result[c.id] = r;
}
process.stdout.write(JSON.stringify(result));
