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

function $e(out: WireError[], pointer: string, rule: WireError["rule"], message: string): void {
  out.push({ pointer, rule, message });
}

function $type(out: WireError[], pointer: string, expected: string, got: unknown): void {
  out.push({ pointer, rule: "type", message: `expected ${expected}, got ${$kind(got)}` });
}

/** The message of the first error the check `f` finds in `v`, or `null` when it passes. */
function $why(f: $Check, v: unknown): string | null {
  const out: WireError[] = [];
  f(v, "", out);
  return out.length === 0 ? null : out[0]!.message;
}

/** Whether `v` passes the check `f` (its errors are not kept). */
function $ok(f: $Check, v: unknown): boolean {
  const out: WireError[] = [];
  f(v, "", out);
  return out.length === 0;
}
