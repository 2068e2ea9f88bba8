// Oracle for the happy-wire -> wiregen JSON Schema port.
//
//   node check.mjs            (from examples/happy-wire/oracle, after `npm ci` and `node fetch-happy-wire.mjs`)
//
// 0. Verifies happy-wire/ against the git blob ids in happy-wire/SOURCE.json and loads its index.ts.
// 1. Lints ../schema against wiregen's dialect (keywords, $schema, file roots, x- annotations,
//    descriptions, discriminated unions, session-protocol layer).
// 2. Checks the names the files give (TS, Zod, Rust) against happy-wire's real exports.
// 3. Asks happy-wire's envelope superRefine, event by event and role by role, which roles it allows, and
//    demands that each event's x-roles lists exactly those (schema/ says the role rule only in x-roles).
// 4. Compares every exported Zod tree with the JSON Schema carrying its name, node by node.
// 5. Runs every fixture in ../fixtures through
//      a. happy-wire's own Zod schema of that name (sources at slopus/happy 2c8ecacc, zod 4.4.3,
//         @paralleldrive/cuid2 2.3.1): `valid` must equal safeParse().success and `parsed` must
//         deep-equal safeParse().data;
//      b. ajv 8 (draft 2020-12, strict) over the bundled schema wiregen generates from ../schema
//         (../generated/schema/happy-wire.schema.json, which prints the role rule as if/then), against
//         the $defs entry of that type: same verdict;
//      c. ajv 8 (strict, the x- annotations declared as a vocabulary) over the files of ../schema: same
//         verdict, except that a value whose only fault is the role rule is valid there (x-roles is an
//         annotation a plain validator does not enforce);
//      d. a projection of the value through the JSON Schema's object policies (x-unknown-keys strip =
//         drop unknown keys, open = keep them): must deep-equal `parsed` (proves the strip/open marking).
// 6. Checks the createEnvelope facts ../README.md quotes.
// 7. Requires a valid and an invalid fixture for every exported schema.
// Exits 1 on any mismatch.

import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { tsImport } from 'tsx/esm/api';
import Ajv2020 from 'ajv/dist/2020.js';
import { createHash } from 'node:crypto';

const here = dirname(fileURLToPath(import.meta.url));
const schemaDir = join(here, '..', 'schema');
const fixtureDir = join(here, '..', 'fixtures');
const problems = [];
const problem = (where, msg) => problems.push(`${where}: ${msg}`);

// 0. The oracle's copy of happy-wire must be byte-identical to the commit (git blob ids).
const source = JSON.parse(readFileSync(join(here, 'happy-wire', 'SOURCE.json'), 'utf8'));
const missing = Object.keys(source.files).filter((p) => !existsSync(join(here, 'happy-wire', p)));
if (missing.length) {
  console.error(`happy-wire's sources are not here (${missing.length} of ${Object.keys(source.files).length} files missing, e.g. happy-wire/${missing[0]}):`
    + ' run `node fetch-happy-wire.mjs` (or `node fetch-happy-wire.mjs PATH-TO-A-CLONE-OF-slopus/happy`) first');
  process.exit(1);
}
for (const [p, sha] of Object.entries(source.files)) {
  const bytes = readFileSync(join(here, 'happy-wire', p));
  const blob = createHash('sha1').update(`blob ${bytes.length}\0`).update(bytes).digest('hex');
  if (blob !== sha) problem(`oracle/happy-wire/${p}`, `differs from ${source.commit.slice(0, 8)} (git blob ${blob}, expected ${sha})`);
}
const hw = await tsImport('./happy-wire/src/index.ts', import.meta.url);

// ---------------------------------------------------------------------------------------------
// Load the schema files.
const files = new Map(); // file name -> document
for (const f of readdirSync(schemaDir).filter((f) => f.endsWith('.schema.json')).sort()) {
  files.set(f, JSON.parse(readFileSync(join(schemaDir, f), 'utf8')));
}

// ---------------------------------------------------------------------------------------------
// 1. Dialect lint.
const SUPPORTED = new Set([
  '$schema', '$id', '$ref', '$defs', '$comment', '$anchor', 'title', 'description', 'default', 'examples',
  'deprecated', 'readOnly', 'writeOnly', 'type', 'enum', 'const', 'properties', 'required', 'additionalProperties',
  'patternProperties', 'propertyNames', 'minProperties', 'maxProperties', 'dependentRequired', 'items', 'prefixItems',
  'minItems', 'maxItems', 'uniqueItems', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf',
  'minLength', 'maxLength', 'pattern', 'allOf', 'anyOf', 'oneOf', 'not', 'if', 'then', 'else',
]);
const X_KEYWORDS = [
  'x-naming', 'x-package', 'x-name', 'x-ts-name', 'x-zod-name', 'x-rust-name', 'x-unknown-keys', 'x-discriminator',
  'x-role-property', 'x-categories', 'x-roles', 'x-category', 'x-order', 'x-status', 'x-auto',
  // The v1 sequence rules on the envelope: read by the stream checker only, no constraint on a message.
  'x-sequence',
];
const ROOT_ONLY = new Set(['$schema', '$id', '$comment', 'title', 'description', 'x-naming', 'x-package', '$defs']);
const DIALECT = 'https://json-schema.org/draft/2020-12/schema';

function ptr(parts) {
  return '/' + parts.map((p) => String(p).replace(/~/g, '~0').replace(/\//g, '~1')).join('/');
}

// Visit every schema position: cb(schema, pathParts, context) where context says what holds it.
function walk(schema, path, cb, ctx = 'def') {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return;
  cb(schema, path, ctx);
  for (const [k, v] of Object.entries(schema.properties ?? {})) walk(v, [...path, 'properties', k], cb, 'property');
  for (const [k, v] of Object.entries(schema.patternProperties ?? {})) walk(v, [...path, 'patternProperties', k], cb, 'sub');
  for (const [k, v] of Object.entries(schema.$defs ?? {})) walk(v, [...path, '$defs', k], cb, 'def');
  for (const kw of ['items', 'additionalProperties', 'propertyNames', 'not', 'if', 'then', 'else']) {
    if (typeof schema[kw] === 'object' && schema[kw] !== null) walk(schema[kw], [...path, kw], cb, kw === 'items' ? 'items' : 'sub');
  }
  for (const kw of ['allOf', 'anyOf', 'oneOf', 'prefixItems']) {
    (schema[kw] ?? []).forEach((s, i) => walk(s, [...path, kw, i], cb, 'sub'));
  }
}

// Resolve a $ref relative to a file.
function resolveRef(fileName, ref) {
  const [filePart, frag = ''] = ref.split('#');
  const target = filePart === '' ? fileName : filePart;
  const doc = files.get(target);
  if (!doc) return null;
  let node = doc;
  for (const raw of frag.split('/').slice(1)) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (node == null || typeof node !== 'object' || !(key in node)) return null;
    node = node[key];
  }
  return { file: target, schema: node };
}
function deref(fileName, schema) {
  let cur = { file: fileName, schema };
  for (let i = 0; i < 20 && cur.schema && typeof cur.schema.$ref === 'string'; i++) {
    const next = resolveRef(cur.file, cur.schema.$ref);
    if (!next) return null;
    cur = next;
  }
  return cur;
}

const packageRoots = [...files].filter(([, d]) => d['x-package']);
if (packageRoots.length !== 1) problem('schema/', `exactly one file must hold x-package, found ${packageRoots.length}`);
const layerPresent = [...files.values()].some((d) => Object.values(d.$defs ?? {}).some((s) => s['x-role-property']));

for (const [f, doc] of files) {
  if (doc.$schema !== DIALECT) problem(f, `$schema must be ${DIALECT}`);
  for (const k of Object.keys(doc)) if (!ROOT_ONLY.has(k)) problem(f, `root holds ${k}; a metadata-only root must hold only ${[...ROOT_ONLY].join(', ')}`);
  if (!doc.description) problem(f, 'root needs a description');
  walk(doc, [], (s, path, ctx) => {
    const at = `${f}#${ptr(path)}`;
    for (const k of Object.keys(s)) {
      if (k.startsWith('x-')) {
        if (!X_KEYWORDS.includes(k)) problem(at, `unknown annotation ${k}`);
      } else if (!SUPPORTED.has(k)) problem(at, `unsupported keyword ${k}`);
    }
    if (s.pattern !== undefined) {
      try { new RegExp(s.pattern, 'u'); } catch (e) { problem(at, `pattern is not a Unicode ECMA-262 regex: ${e.message}`); }
      if (/\(\?[=!<]|\\[1-9]|\\k</.test(s.pattern)) problem(at, 'pattern uses lookaround or a backreference');
    }
    if (s.type !== undefined) {
      const ts = Array.isArray(s.type) ? s.type : [s.type];
      for (const t of ts) if (!['null', 'boolean', 'object', 'array', 'number', 'integer', 'string'].includes(t)) problem(at, `bad type ${t}`);
    }
    if (s.enum !== undefined && !s.enum.every((v) => typeof v === 'string')) problem(at, 'enum must list strings');
    if ('x-unknown-keys' in s) {
      if (s['x-unknown-keys'] !== 'strip') problem(at, 'x-unknown-keys must be "strip"');
      if ('additionalProperties' in s) problem(at, 'x-unknown-keys needs additionalProperties absent');
    }
    // Descriptions: every type ($defs entry, inline object or enum), property and array item.
    const isPath = path.length > 0 && path[path.length - 2] !== 'oneOf' && path[path.length - 2] !== 'anyOf'
      && !path.includes('if') && !path.includes('then');
    if (layerPresent && isPath && (ctx === 'def' || ctx === 'property' || ctx === 'items') && !(typeof s.description === 'string' && s.description.trim())) {
      problem(at, 'needs a non-empty description');
    }
    if (s['x-discriminator'] !== undefined || s.oneOf !== undefined) {
      if (!s.oneOf) problem(at, 'x-discriminator without oneOf');
      const d = s['x-discriminator'];
      if (!d) problem(at, 'oneOf without x-discriminator');
      const seen = new Set();
      for (const [i, m] of (s.oneOf ?? []).entries()) {
        const r = m.$ref ? deref(f, m) : { file: f, schema: m };
        if (!r) { problem(`${at}/oneOf/${i}`, 'unresolvable member'); continue; }
        const ms = r.schema;
        if (ms.type !== 'object') problem(`${at}/oneOf/${i}`, 'member is not an object type');
        if (!(ms.required ?? []).includes(d)) problem(`${at}/oneOf/${i}`, `member does not require ${d}`);
        const c = ms.properties?.[d]?.const;
        if (!['string', 'boolean', 'number'].includes(typeof c)) problem(`${at}/oneOf/${i}`, `member does not fix ${d} by const`);
        if (seen.has(JSON.stringify(c))) problem(`${at}/oneOf/${i}`, `duplicate discriminator ${JSON.stringify(c)}`);
        seen.add(JSON.stringify(c));
      }
    }
    if (typeof s.$ref === 'string' && !resolveRef(f, s.$ref)) problem(at, `unresolvable $ref ${s.$ref}`);
  });
}

// Session-protocol layer.
const envelopes = [];
for (const [f, doc] of files) for (const [k, s] of Object.entries(doc.$defs ?? {})) if (s['x-role-property']) envelopes.push({ f, k, s });
for (const e of envelopes) {
  const { f, k, s } = e;
  const at = `${f}#/$defs/${k}`;
  const roleProp = s['x-role-property'];
  const roleSchema = deref(f, s.properties?.[roleProp])?.schema;
  const roles = roleSchema?.enum ?? [];
  if (!roles.length) problem(at, 'x-role-property must name an enum property');
  const cats = (s['x-categories'] ?? []).map((c) => c.name);
  if (!cats.length || !(s['x-categories'] ?? []).every((c) => c.name && c.title)) problem(at, 'x-categories needs name and title');
  for (const [p, ps] of Object.entries(s.properties)) {
    if ((s.required ?? []).includes(p) && p !== roleProp && p !== 'ev' && !['id', 'now'].includes(ps['x-auto'])) {
      problem(`${at}/properties/${p}`, 'required envelope property needs x-auto "id" or "now"');
    }
    if ('x-roles' in ps) problem(`${at}/properties/${p}`, 'x-roles on an envelope property: happy-wire has no per-field role rule');
  }
  const ev = deref(f, s.properties?.ev);
  const members = (ev?.schema?.oneOf ?? []).map((m) => deref(ev.file, m));
  if (!members.length) problem(at, 'ev must be a $ref to the discriminated union of events');
  const orders = new Set();
  for (const m of members) {
    const ms = m.schema;
    const where = `${m.file}#/$defs/${Object.entries(files.get(m.file).$defs).find(([, v]) => v === ms)?.[0]}`;
    const xr = ms['x-roles'];
    if (!Array.isArray(xr) || !xr.length || !xr.every((r) => roles.includes(r))) problem(where, 'x-roles must be a non-empty list of roles');
    if (!cats.includes(ms['x-category'])) problem(where, 'x-category must be one of the envelope categories');
    if (!Number.isInteger(ms['x-order']) || orders.has(ms['x-order'])) problem(where, 'x-order must be a unique integer');
    orders.add(ms['x-order']);
    if (ms['x-status'] !== 'existing') problem(where, 'x-status must be "existing"');
    const t = ms.properties?.t?.const;
    if (!Array.isArray(ms.examples) || !ms.examples.length || !ms.examples.every((e) => e.t === t)) problem(where, 'examples must hold event bodies with their t');
    if (xr && new Set(xr).size !== xr.length) problem(where, 'x-roles lists a role twice');
  }
  Object.assign(e, { at, roleProp, roles, members });
  // Nothing else says the role rule: no if/then/else or allOf on the envelope (wiregen derives the rule from
  // x-roles; the structure comparison below also refuses any keyword Zod's tree does not need).
  for (const kw of ['if', 'then', 'else', 'allOf']) if (kw in s) problem(at, `${kw}: the role rule is x-roles only; wiregen prints it into every output`);
}

// ---------------------------------------------------------------------------------------------
// 2. Names.
const rootNaming = packageRoots[0]?.[1]['x-naming'] ?? {};
const pascalToCamel = (s) => s.charAt(0).toLowerCase() + s.slice(1);
const namesByZod = new Map(); // Zod constant name -> { file, key }
const tsNames = new Map();
const rustNames = new Map();
const unionMembers = new Set(); // "file#key" of every member of a oneOf union
for (const [f, doc] of files) {
  for (const [k, s] of Object.entries(doc.$defs ?? {})) {
    for (const m of s.oneOf ?? []) {
      const r = resolveRef(f, m.$ref);
      if (r) unionMembers.add(`${r.file}#${Object.entries(files.get(r.file).$defs).find(([, v]) => v === r.schema)?.[0]}`);
    }
  }
}
for (const [f, doc] of files) {
  const naming = { ...rootNaming, ...(doc['x-naming'] ?? {}) };
  for (const [k, s] of Object.entries(doc.$defs ?? {})) {
    const base = s['x-name'] ?? k;
    const member = unionMembers.has(`${f}#${k}`);
    const ts = s['x-ts-name'] ?? `${naming.prefix ?? ''}${base}${member ? naming['member-suffix'] ?? '' : ''}`;
    const zod = s['x-zod-name'] ?? `${naming.zod === 'camel' ? pascalToCamel(ts) : ts}Schema`;
    const rust = s['x-rust-name'] ?? base;
    for (const [map, name] of [[namesByZod, zod], [tsNames, ts], [rustNames, rust]]) {
      if (map.has(name)) problem(`${f}#/$defs/${k}`, `name ${name} is already used by ${map.get(name).file}#/$defs/${map.get(name).key}`);
      map.set(name, { file: f, key: k });
    }
  }
  // Inline named types: their Rust names must be unique too.
  walk(doc, [], (s, path, ctx) => {
    if (ctx !== 'def' && s['x-name']) {
      const rust = s['x-rust-name'] ?? s['x-name'];
      if (rustNames.has(rust)) problem(`${f}#${ptr(path)}`, `Rust name ${rust} is already used`);
      rustNames.set(rust, { file: f, key: ptr(path) });
    }
  });
}
// Every exported Zod schema of happy-wire must be named by exactly one $defs entry, and vice versa
// every $defs entry whose Zod name is not exported must be one happy-wire leaves unnamed.
const isZod = (v) => v && typeof v === 'object' && typeof v.safeParse === 'function';
const exportedZod = Object.keys(hw).filter((n) => isZod(hw[n])).sort();
for (const n of exportedZod) if (!namesByZod.has(n)) problem('names', `happy-wire exports ${n}, but no $defs entry is named so`);
const extraZod = [...namesByZod.keys()].filter((n) => !hw[n]).sort();
// TS types: every exported type alias of happy-wire (read from the sources) but hand-written ones.
const srcDir = join(here, 'happy-wire', 'src');
const exportedTypes = [];
for (const f of readdirSync(srcDir).filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'))) {
  const src = readFileSync(join(srcDir, f), 'utf8');
  for (const m of src.matchAll(/export type (\w+)/g)) exportedTypes.push(m[1]);
  for (const m of src.matchAll(/export type \{ (\w+) \}/g)) exportedTypes.push(m[1]);
}
const HAND_WRITTEN_TYPES = new Set(['CreateEnvelopeOptions']); // no schema behind it
for (const t of new Set(exportedTypes)) {
  if (HAND_WRITTEN_TYPES.has(t)) continue;
  if (!tsNames.has(t)) problem('names', `happy-wire exports type ${t}, but no $defs entry gives that TS name`);
}

// 3. The role rule. happy-wire writes it as a superRefine on the envelope (service, start and stop need role
// "agent"); schema/ says it only as x-roles on each event. Ask the real superRefine: for each event (its first
// example) and each role, parse a minimal envelope; a refused role must fail with exactly one custom issue at
// the role property. The roles it accepts must be exactly the event's x-roles.
let roleProbes = 0;
const restricted = [];
for (const { at, k, f, roleProp, roles, members, s } of envelopes) {
  const zName = [...namesByZod].find(([, l]) => l.file === f && l.key === k)?.[0];
  const zEnv = hw[zName];
  if (!zEnv || typeof zEnv.safeParse !== 'function') { problem(at, `role rule: happy-wire exports no Zod schema ${zName}`); continue; }
  const base = {};
  for (const p of s.required ?? []) {
    const auto = s.properties?.[p]?.['x-auto'];
    if (auto === 'id') base[p] = 'probe-id';
    else if (auto === 'now') base[p] = 1;
  }
  for (const m of members ?? []) {
    const key = Object.entries(files.get(m.file).$defs).find(([, v]) => v === m.schema)?.[0];
    const where = `${m.file}#/$defs/${key}`;
    const ev = m.schema.examples?.[0];
    const allowed = [];
    for (const role of roles) {
      roleProbes++;
      const r = zEnv.safeParse({ ...base, [roleProp]: role, ev });
      if (r.success) { allowed.push(role); continue; }
      const issues = r.error.issues;
      if (issues.length !== 1 || issues[0].code !== 'custom' || issues[0].path.join('/') !== roleProp) {
        problem(where, `role rule: the envelope with role ${role} and this event's first example fails for another reason: ${JSON.stringify(issues)}`);
      }
    }
    const xr = m.schema['x-roles'] ?? [];
    if (JSON.stringify([...xr].sort()) !== JSON.stringify([...allowed].sort())) {
      problem(where, `role rule: x-roles is ${JSON.stringify(xr)}, happy-wire's ${zName} accepts ${JSON.stringify(allowed)}`);
    }
    if (allowed.length < roles.length) restricted.push(`${m.schema.properties?.t?.const} (${allowed.join(', ')})`);
  }
}

// ---------------------------------------------------------------------------------------------
// 4. Structure: walk every exported Zod schema (zod 4 internals, `_zod.def`) beside the JSON Schema
// that carries its name and demand the same tree: property names and order, required vs optional,
// nullability, strip vs passthrough, literals, enums, integer bounds, string lengths, unions, arrays.
// This covers every nested object, also the ones no fixture leaves a field out of.
const ANNOTATIONS = new Set(['description', 'title', 'examples', '$comment', 'default', 'deprecated', 'readOnly', 'writeOnly', '$anchor', '$id', '$schema']);
const validationKeys = (s) => Object.keys(s).filter((k) => !k.startsWith('x-') && !ANNOTATIONS.has(k)).sort();
let structureChecked = 0;
function sameKeys(at, s, expected) {
  const got = validationKeys(s).join(',');
  const want = [...expected].sort().join(',');
  if (got !== want) problem(at, `structure: JSON Schema keywords are [${got}], happy-wire's Zod needs [${want}]`);
}
function compareStructure(z, file, s, at) {
  structureChecked++;
  let def = z._zod.def;
  let zNull = false;
  if (def.type === 'nullable') { zNull = true; z = def.innerType; def = z._zod.def; }
  let r = deref(file, s);
  if (!r) { problem(at, 'structure: unresolvable $ref'); return; }
  file = r.file; s = r.schema;
  let jsNull = false;
  let core = s;
  if (s.anyOf) {
    jsNull = s.anyOf.some((b) => b.type === 'null' && validationKeys(b).join() === 'type');
    const rest = s.anyOf.filter((b) => b.type !== 'null');
    if (rest.length !== 1 || s.anyOf.length !== 2) { problem(at, 'structure: anyOf must be [T, {type: null}]'); return; }
    sameKeys(at, s, ['anyOf']);
    r = deref(file, rest[0]); file = r.file; core = r.schema;
  } else if (Array.isArray(s.type)) {
    jsNull = s.type.includes('null');
    const t = s.type.filter((x) => x !== 'null');
    if (t.length !== 1 || s.type.length !== 2) { problem(at, 'structure: type array must be [T, "null"]'); return; }
    core = { ...s, type: t[0] };
  }
  if (zNull !== jsNull) problem(at, `structure: Zod ${zNull ? 'allows' : 'rejects'} null, the JSON Schema ${jsNull ? 'allows' : 'rejects'} it`);
  const checks = (def.checks ?? []).map((c) => c._zod.def);
  const custom = checks.filter((c) => c.check === 'custom');
  switch (def.type) {
    case 'string': {
      const want = ['type'];
      if (core.type !== 'string') problem(at, `structure: expected type string, got ${core.type}`);
      for (const c of checks) {
        if (c.check === 'min_length') { want.push('minLength'); if (core.minLength !== c.minimum) problem(at, `structure: minLength must be ${c.minimum}`); }
        else if (c.check === 'max_length') { want.push('maxLength'); if (core.maxLength !== c.maximum) problem(at, `structure: maxLength must be ${c.maximum}`); }
        else if (c.check !== 'custom') problem(at, `structure: unhandled string check ${c.check}`);
      }
      // A custom refine (isCuid) is re-expressed by hand; fixtures prove its meaning.
      if (custom.length) want.push('minLength', 'maxLength', 'pattern');
      sameKeys(at, core, new Set(want));
      break;
    }
    case 'number': {
      const want = new Set(['type']);
      const isInt = checks.some((c) => c.check === 'number_format' && c.format === 'safeint');
      if (core.type !== (isInt ? 'integer' : 'number')) problem(at, `structure: expected type ${isInt ? 'integer' : 'number'}, got ${core.type}`);
      let min = isInt ? -MAX_SAFE : undefined, exMin;
      for (const c of checks) {
        if (c.check === 'number_format') { if (c.format !== 'safeint') problem(at, `structure: unhandled number format ${c.format}`); }
        else if (c.check === 'greater_than') { if (c.inclusive) min = c.value; else { exMin = c.value; min = undefined; } }
        else problem(at, `structure: unhandled number check ${c.check}`);
      }
      if (min !== undefined) { want.add('minimum'); if (core.minimum !== min) problem(at, `structure: minimum must be ${min}`); }
      if (exMin !== undefined) { want.add('exclusiveMinimum'); if (core.exclusiveMinimum !== exMin) problem(at, `structure: exclusiveMinimum must be ${exMin}`); }
      if (isInt) { want.add('maximum'); if (core.maximum !== MAX_SAFE) problem(at, `structure: maximum must be ${MAX_SAFE}`); }
      sameKeys(at, core, want);
      break;
    }
    case 'boolean':
      if (core.type !== 'boolean') problem(at, `structure: expected type boolean, got ${core.type}`);
      sameKeys(at, core, ['type']);
      break;
    case 'literal':
      if (def.values.length !== 1 || core.const !== def.values[0]) problem(at, `structure: const must be ${JSON.stringify(def.values)}`);
      sameKeys(at, core, ['const']);
      break;
    case 'enum':
      if (JSON.stringify(core.enum) !== JSON.stringify(Object.values(def.entries)) || core.type !== 'string') problem(at, `structure: enum must be ${JSON.stringify(Object.values(def.entries))}`);
      sameKeys(at, core, ['type', 'enum']);
      break;
    case 'record':
      if (def.keyType._zod.def.type !== 'string' || def.valueType._zod.def.type !== 'unknown') problem(at, 'structure: unhandled record');
      if (core.type !== 'object') problem(at, 'structure: a record is {"type": "object"}');
      sameKeys(at, core, ['type']);
      break;
    case 'array':
      if (core.type !== 'array') problem(at, `structure: expected type array, got ${core.type}`);
      sameKeys(at, core, ['type', 'items']);
      compareStructure(def.element, file, core.items, `${at}/items`);
      break;
    case 'union': {
      if (!def.discriminator) { problem(at, 'structure: plain unions are not expected in happy-wire'); break; }
      if (core['x-discriminator'] !== def.discriminator) problem(at, `structure: x-discriminator must be ${def.discriminator}`);
      sameKeys(at, core, ['oneOf']);
      if ((core.oneOf ?? []).length !== def.options.length) { problem(at, `structure: oneOf must have ${def.options.length} members`); break; }
      def.options.forEach((o, i) => compareStructure(o, file, core.oneOf[i], `${at}/oneOf/${i}`));
      break;
    }
    case 'object': {
      if (core.type !== 'object') problem(at, `structure: expected type object, got ${core.type}`);
      const zKeys = Object.keys(def.shape);
      const jKeys = Object.keys(core.properties ?? {});
      if (zKeys.join() !== jKeys.join()) problem(at, `structure: properties must be [${zKeys}] in this order, got [${jKeys}]`);
      const passthrough = def.catchall?._zod.def.type === 'unknown';
      if (def.catchall && !passthrough) problem(at, 'structure: unhandled catchall');
      if (passthrough && ('x-unknown-keys' in core || 'additionalProperties' in core)) problem(at, 'structure: a passthrough object must be open (no additionalProperties, no x-unknown-keys)');
      if (!passthrough && core['x-unknown-keys'] !== 'strip') problem(at, 'structure: a strip object needs "x-unknown-keys": "strip"');
      const req = [];
      for (const k of zKeys) {
        let pz = def.shape[k];
        if (pz._zod.def.type === 'optional') pz = pz._zod.def.innerType; else req.push(k);
        if (core.properties?.[k]) compareStructure(pz, file, core.properties[k], `${at}/properties/${k}`);
      }
      const want = ['type', 'properties'];
      if (req.length) want.push('required');
      if (JSON.stringify([...(core.required ?? [])].sort()) !== JSON.stringify([...req].sort())) problem(at, `structure: required must be [${req}], got [${core.required ?? []}]`);
      // The only object-level refine is the envelope's superRefine: the role rule, which the port says with
      // x-role-property on the envelope and x-roles on each event (both checked against Zod above).
      if (custom.length && !core['x-role-property']) problem(at, 'structure: an object refine other than the envelope role rule');
      sameKeys(at, core, want);
      break;
    }
    default:
      problem(at, `structure: unhandled Zod type ${def.type}`);
  }
}
const MAX_SAFE = Number.MAX_SAFE_INTEGER;
for (const n of exportedZod) {
  const loc = namesByZod.get(n);
  if (loc) compareStructure(hw[n], loc.file, files.get(loc.file).$defs[loc.key], `${loc.file}#/$defs/${loc.key} (${n})`);
}

// ---------------------------------------------------------------------------------------------
// 5. Fixtures.
// ajv over the bundled schema: the one document wiregen generates from ../schema (`wiregen generate`; `wiregen check`
// and the freshness test keep it current). Its root is the envelope; $defs holds every type by its base name, an
// event of the protocol as <base>Event (TextEvent), the envelope's entry being {"$ref": "#"}. It carries no x-
// annotation, so ajv runs strict with no vocabulary added, and it prints the role rule as if/then on the envelope.
const crate = packageRoots[0]?.[1]['x-package']?.crate;
const bundleRel = `generated/schema/${crate}.schema.json`;
let bundle = null;
try { bundle = JSON.parse(readFileSync(join(here, '..', bundleRel), 'utf8')); } catch (e) { problem(bundleRel, `cannot read the bundled schema: ${e.message}`); }
const ajv = new Ajv2020({ strict: true, allErrors: false });
if (bundle) {
  try { ajv.addSchema(bundle); ajv.getSchema(bundle.$id); } catch (e) { problem(bundleRel, `ajv refuses the bundled schema: ${e.message}`); bundle = null; }
}
// Compile every $defs entry, used or not, so strict mode sees all of them.
for (const key of Object.keys(bundle?.$defs ?? {})) {
  try { ajv.getSchema(`${bundle.$id}#/$defs/${key}`); } catch (e) { problem(`${bundleRel}#/$defs/${key}`, `ajv cannot compile: ${e.message}`); }
}
const eventKeys = new Set(envelopes.flatMap((e) => (e.members ?? []).map((m) => `${m.file}#${Object.entries(files.get(m.file).$defs).find(([, v]) => v === m.schema)?.[0]}`)));
/** The bundle's $defs name of a source $defs entry: the base name, + "Event" for an event of the protocol. */
const bundledName = (loc) => `${files.get(loc.file).$defs[loc.key]['x-name'] ?? loc.key}${eventKeys.has(`${loc.file}#${loc.key}`) ? 'Event' : ''}`;
const ajvValidators = new Map();
function ajvFor(name) {
  const loc = namesByZod.get(name);
  if (!loc || !bundle) return null;
  if (!ajvValidators.has(name)) {
    const key = bundledName(loc);
    const at = `${bundleRel}#/$defs/${key}`;
    let v = null;
    let def = bundle.$defs?.[key];
    if (def && def.$ref === '#') def = bundle; // the root type
    if (!def) problem(at, `the bundled schema has no entry for ${loc.file}#/$defs/${loc.key} (${name})`);
    else if (def.description !== files.get(loc.file).$defs[loc.key].description) problem(at, `is not ${loc.file}#/$defs/${loc.key} (${name}): the descriptions differ`);
    else {
      try { v = ajv.getSchema(`${bundle.$id}#/$defs/${key}`) ?? null; } catch (e) { problem(at, `ajv cannot compile: ${e.message}`); }
    }
    ajvValidators.set(name, v);
  }
  return ajvValidators.get(name);
}

// ajv over the files of ../schema as they are (x- annotations declared as a vocabulary): a plain validator's view,
// which has the whole message except the role rule (x-roles is an annotation).
const ajvSource = new Ajv2020({ strict: true, allErrors: false });
ajvSource.addVocabulary(X_KEYWORDS);
for (const [f, doc] of files) {
  try { ajvSource.addSchema(doc); } catch (e) { problem(f, `ajv refuses the file: ${e.message}`); }
}
const sourceValidators = new Map();
function ajvSourceFor(name) {
  const loc = namesByZod.get(name);
  if (!loc) return null;
  if (!sourceValidators.has(name)) {
    let v = null;
    try { v = ajvSource.getSchema(`${files.get(loc.file).$id}#/$defs/${loc.key}`) ?? null; } catch (e) { problem(`${loc.file}#/$defs/${loc.key}`, `ajv cannot compile: ${e.message}`); }
    sourceValidators.set(name, v);
  }
  return sourceValidators.get(name);
}

// Projection: the parsed value the JSON Schema's object policies give for a valid value.
function project(file, schema, value) {
  const r = deref(file, schema);
  file = r.file; schema = r.schema;
  if (schema.oneOf) {
    const d = schema['x-discriminator'];
    for (const m of schema.oneOf) {
      const mr = deref(file, m);
      if (mr.schema.properties?.[d]?.const === value?.[d]) return project(mr.file, mr.schema, value);
    }
    throw new Error('no union member matches');
  }
  if (schema.anyOf) {
    if (value === null) return null;
    const branch = schema.anyOf.find((b) => b.type !== 'null');
    return project(file, branch, value);
  }
  if (value === null) return null;
  if (Array.isArray(value)) return schema.items ? value.map((v) => project(file, schema.items, v)) : value;
  const types = Array.isArray(schema.type) ? schema.type : [schema.type];
  if (typeof value === 'object' && types.includes('object')) {
    if (!schema.properties) return value; // any object (a record): kept as is
    const out = {};
    for (const [k, v] of Object.entries(value)) {
      if (k in schema.properties) out[k] = project(file, schema.properties[k], v);
      else if (schema['x-unknown-keys'] === 'strip') continue;
      else if (schema.additionalProperties === false) throw new Error(`closed object got ${k}`);
      else out[k] = v;
    }
    return out;
  }
  return value;
}

function deepEqual(a, b) {
  if (a === b) return true;
  if (typeof a !== typeof b || a === null || b === null || typeof a !== 'object') return Number.isNaN(a) && Number.isNaN(b);
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) return a.length === b.length && a.every((v, i) => deepEqual(v, b[i]));
  const ka = Object.keys(a), kb = Object.keys(b);
  return ka.length === kb.length && ka.every((k) => Object.prototype.hasOwnProperty.call(b, k) && deepEqual(a[k], b[k]));
}

const fixtureFiles = readdirSync(fixtureDir).filter((f) => f.endsWith('.json')).sort();
const counts = new Map(); // type -> {valid, invalid}
let zodOk = 0, ajvOk = 0, sourceOk = 0, roleOnly = 0, projOk = 0;
const roleProps = new Set(envelopes.map((e) => e.roleProp));
for (const ff of fixtureFiles) {
  const fx = JSON.parse(readFileSync(join(fixtureDir, ff), 'utf8'));
  const at = `fixtures/${ff}`;
  const keys = Object.keys(fx).sort().join(',');
  if (keys !== (fx.valid ? 'about,parsed,type,valid,value' : 'about,type,valid,value')) { problem(at, `fixture keys are ${keys}`); continue; }
  const c = counts.get(fx.type) ?? { valid: 0, invalid: 0 };
  c[fx.valid ? 'valid' : 'invalid']++;
  counts.set(fx.type, c);
  const zod = hw[fx.type];
  if (!isZod(zod)) { problem(at, `${fx.type} is not an exported Zod schema of happy-wire`); continue; }
  const res = zod.safeParse(fx.value);
  let ok = true;
  if (res.success !== fx.valid) {
    ok = false;
    problem(at, `zod: fixture says valid=${fx.valid}, happy-wire says ${res.success}${res.success ? '' : ' ' + JSON.stringify(res.error.issues)}`);
  } else if (fx.valid && !deepEqual(res.data, fx.parsed)) {
    ok = false;
    problem(at, `zod: parsed differs: happy-wire gives ${JSON.stringify(res.data)}`);
  }
  // Cases written to isolate one message-level rule must fail on that rule alone, in Zod and in ajv.
  const only = /only the (role|cuid) rule fails/.exec(fx.about);
  if (only && !res.success) {
    const field = only[1] === 'role' ? 'role' : 'subagent';
    const issues = res.error.issues;
    if (issues.length !== 1 || issues[0].code !== 'custom' || issues[0].path.join('/') !== field) {
      ok = false;
      problem(at, `zod: expected exactly one custom issue at ${field}, got ${JSON.stringify(issues)}`);
    }
  }
  if (ok) zodOk++;
  // A value whose only fault is the role rule: every Zod issue is the superRefine's, at the envelope's role.
  const roleRuleOnly = !res.success && res.error.issues.every((i) => i.code === 'custom' && roleProps.has(i.path.at(-1)));
  if (roleRuleOnly) roleOnly++;
  const sv = ajvSourceFor(fx.type);
  if (!sv) problem(at, `ajv (schema/): no compiled $defs entry is named ${fx.type}`);
  else {
    const want = fx.valid || roleRuleOnly;
    const got = sv(fx.value);
    if (got !== want) problem(at, `ajv (schema/): expected ${want}${roleRuleOnly ? ' (only the role rule fails, which schema/ says as x-roles)' : ''}, ajv says ${got} ${JSON.stringify(sv.errors)}`);
    else sourceOk++;
  }
  const v = ajvFor(fx.type);
  if (!v) { if (bundle) problem(at, `ajv: no compiled bundled-schema entry for ${fx.type}`); continue; }
  const av = v(fx.value);
  if (av !== fx.valid) problem(at, `ajv: fixture says valid=${fx.valid}, ajv says ${av} ${JSON.stringify(v.errors)}`);
  else if (only && v.errors?.[0]?.instancePath !== `/${only[1] === 'role' ? 'role' : 'subagent'}`) problem(at, `ajv: the first error must be at /${only[1] === 'role' ? 'role' : 'subagent'}, got ${JSON.stringify(v.errors)}`);
  else ajvOk++;
  if (fx.valid) {
    const loc = namesByZod.get(fx.type);
    let p;
    try { p = project(loc.file, files.get(loc.file).$defs[loc.key], fx.value); } catch (e) { p = e; }
    if (!deepEqual(p, fx.parsed)) problem(at, `projection: the schema's strip/open policy gives ${p instanceof Error ? p.message : JSON.stringify(p)}`);
    else projOk++;
  } else projOk++;
}
// ---------------------------------------------------------------------------------------------
// 6. createEnvelope facts quoted in ../README.md (a function, so not fixtures).
{
  const fact = (what, cond) => { if (!cond) problem('createEnvelope', what); };
  const e1 = hw.createEnvelope('agent', { t: 'turn-start' });
  fact('default id is a 24-char createId() value', /^[a-z][0-9a-z]{23}$/.test(e1.id));
  fact('default time is Date.now()', typeof e1.time === 'number' && Math.abs(e1.time - Date.now()) < 60000);
  const e2 = hw.createEnvelope('agent', { t: 'text', text: 'x', extra: 1 }, { id: '', time: 0, turn: '', subagent: '', claudeUuid: '', codexItemId: '' });
  fact('id "" and time 0 are kept (??), empty optional strings are dropped (truthiness)', deepEqual(e2, { id: '', time: 0, role: 'agent', ev: { t: 'text', text: 'x' } }));
  const direct = ajvFor('sessionEnvelopeSchema');
  if (direct) fact('the same options written into an envelope are invalid (claudeUuid/codexItemId "" fail min 1)', !direct({ id: '', time: 0, role: 'agent', turn: '', subagent: '', claudeUuid: '', codexItemId: '', ev: { t: 'text', text: 'x' } }));
  let threw = false;
  try { hw.createEnvelope('user', { t: 'service', text: 'x' }); } catch { threw = true; }
  fact('createEnvelope enforces the role rule (throws)', threw);
}

// 7. Coverage: every exported Zod schema has at least one valid and one invalid fixture.
for (const n of exportedZod) {
  const c = counts.get(n);
  if (!c || !c.valid || !c.invalid) problem('coverage', `${n} needs at least one valid and one invalid fixture (has ${JSON.stringify(c ?? {})})`);
}

// ---------------------------------------------------------------------------------------------
const total = fixtureFiles.length;
const nValid = [...counts.values()].reduce((a, c) => a + c.valid, 0);
console.log(`happy-wire sources: ${Object.keys(source.files).length} files verified against ${source.commit}`);
console.log(`schema files: ${files.size}; named $defs entries: ${namesByZod.size} (happy-wire exports ${exportedZod.length} Zod schema constants${extraZod.length ? `; not exported by happy-wire: ${extraZod.join(', ')}` : ''})`);
console.log(`structure: ${structureChecked} schema nodes compared with happy-wire's Zod trees`);
console.log(`fixtures: ${total} (${nValid} valid, ${total - nValid} invalid) over ${counts.size} schemas`);
for (const [n, c] of [...counts].sort(([a], [b]) => a.localeCompare(b))) console.log(`  ${n.padEnd(40)} ${String(c.valid).padStart(3)} valid ${String(c.invalid).padStart(3)} invalid`);
console.log(`role rule: ${roleProbes} event/role pairs asked of happy-wire's superRefine; it restricts ${restricted.join(', ') || 'no event'}`);
console.log(`zod (happy-wire): ${zodOk}/${total} agree; ajv (${bundleRel}): ${ajvOk}/${total} agree; strip/open projection: ${projOk}/${total} agree`);
console.log(`ajv (schema/ as is): ${sourceOk}/${total} as expected (${roleOnly} fail only the role rule, which schema/ says as x-roles: valid there)`);
if (problems.length) {
  console.log(`\n${problems.length} problem(s):`);
  for (const p of problems) console.log('  ' + p);
  console.log(`\nFAIL: ${problems.length} mismatch(es)/problem(s)`);
  process.exit(1);
}
console.log('\nOK: 0 mismatches');
