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
