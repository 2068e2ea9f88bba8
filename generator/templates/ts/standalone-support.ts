type $Object = Record<string, unknown>;

/** A check function of the standalone validator: errors of `v`, at pointers below `p`, appended to `out`. */
type $Check = (v: unknown, p: string, out: WireError[]) => void;

function $isObject(v: unknown): v is $Object {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** An own property (a name `Object.prototype` also has reads as absent unless the object has it). */
function $own(o: $Object, k: string): unknown {
  return Object.hasOwn(o, k) ? o[k] : undefined;
}

/** A key as a JSON Pointer token. */
function $esc(k: string): string {
  return k.includes("~") || k.includes("/") ? k.replace(/~/g, "~0").replace(/\//g, "~1") : k;
}

/** The number of Unicode code points (what the engine counts as characters). */
function $chars(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

function $kind(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "an array";
  switch (typeof v) {
    case "boolean":
      return "a boolean";
    case "number":
      return Number.isInteger(v) ? "an integer" : "a number";
    case "string":
      return "a string";
    case "object":
      return "an object";
    default:
      return typeof v;
  }
}

function $e(out: WireError[], pointer: string, rule: WireError["rule"], message: string): void {
  out.push({ pointer, rule, message });
}

function $type(out: WireError[], pointer: string, expected: string, got: unknown): void {
  out.push({ pointer, rule: "type", message: `expected ${expected}, got ${$kind(got)}` });
}

/** JSON equality as JSON Schema defines it: numbers by value, objects whatever their key order. */
function $equal(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!$equal(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  for (const k of ka) {
    if (!Object.hasOwn(b, k) || !$equal((a as $Object)[k], (b as $Object)[k])) return false;
  }
  return true;
}

/** The first pair of equal items (by {@link $equal}), or `null`. */
function $dup(a: readonly unknown[]): [number, number] | null {
  for (let j = 1; j < a.length; j++) {
    for (let i = 0; i < j; i++) if ($equal(a[i], a[j])) return [i, j];
  }
  return null;
}

/** Whether `v` passes the check `f` (its errors are not kept). */
function $ok(f: $Check, v: unknown): boolean {
  const out: WireError[] = [];
  f(v, "", out);
  return out.length === 0;
}

/**
 * Which properties of an object, or items of an array, a schema evaluates (for `unevaluatedProperties` and
 * `unevaluatedItems`), as a plan the generator builds from the model: `null` nothing; of an object, names and
 * patterns (every other property with `rest`); of an array, the prefix (every later item with `rest`) and the
 * items `contains` passes; all of several plans, the plan of each check the value passes, an `if`, a
 * `dependentSchemas` entry.
 */
type $Evaluation =
  | null
  | { readonly names: readonly string[]; readonly patterns: readonly RegExp[]; readonly rest: boolean }
  | { readonly prefix: number; readonly rest: boolean; readonly contains: ((v: unknown) => boolean) | null }
  | { readonly all: readonly $Evaluation[] }
  | { readonly valid: readonly (readonly [(v: unknown) => boolean, $Evaluation])[] }
  | { readonly cond: (v: unknown) => boolean; readonly then: $Evaluation; readonly otherwise: $Evaluation }
  | { readonly property: string; readonly then: $Evaluation };

/** Adds to `out` the properties of `v` (the indices of its items, as strings) that `plan` evaluates. */
function $evaluated(plan: $Evaluation, v: unknown, out: Set<string>): void {
  if (plan === null) return;
  if ("names" in plan) {
    if (!$isObject(v)) return;
    for (const k in v) if (Object.hasOwn(v, k) && (plan.rest || plan.names.includes(k) || plan.patterns.some((re) => re.test(k)))) out.add(k);
  } else if ("prefix" in plan) {
    if (!Array.isArray(v)) return;
    for (let i = 0; i < v.length; i++) if (plan.rest || i < plan.prefix || (plan.contains !== null && plan.contains(v[i]))) out.add(String(i));
  } else if ("all" in plan) {
    for (const p of plan.all) $evaluated(p, v, out);
  } else if ("valid" in plan) {
    for (const [ok, p] of plan.valid) if (ok(v)) $evaluated(p, v, out);
  } else if ("cond" in plan) {
    $evaluated(plan.cond(v) ? plan.then : plan.otherwise, v, out);
  } else if ($isObject(v) && Object.hasOwn(v, plan.property)) {
    $evaluated(plan.then, v, out);
  }
}
