//! The package's files around the code: `package.json` (an ES module build and a CommonJS build behind `exports`
//! conditions), the two `tsconfig`s, the build step that names the CommonJS files (`build-cjs.mjs`), `README.md`
//! (from the model: the package, what it exports, an example) and `LICENSE`.
//!
//! Both builds are plain `tsc` runs over the same `src/`: `tsconfig.json` writes the ES modules to `dist/` (with
//! `.d.ts`, source and declaration maps), `tsconfig.cjs.json` writes CommonJS to `dist/cjs/`, and `build-cjs.mjs`
//! renames those to `.cjs`/`.d.cts` (the package is `"type": "module"`, so a `.js` there would be read as ESM).

use serde::Serialize;
use serde_json::json;

use super::super::{EmitError, EmitOptions, OutFile};
use super::js::Code;
use super::{standalone, ZOD_DEV_RANGE, ZOD_PEER_RANGE};
use crate::emit::docs::{code, markdown_environment};
use crate::ir::*;

/// The TypeScript compiler used to build and type-check the package.
pub(crate) const TYPESCRIPT_RANGE: &str = "~5.9.3";

const README: &str = include_str!("../../../templates/ts/README.md.j2");
const BUILD_CJS: &str = include_str!("../../../templates/ts/build-cjs.mjs.j2");
const LICENSE_MIT: &str = include_str!("../../../templates/ts/LICENSE-MIT");
const LICENSE_APACHE: &str = include_str!("../../../templates/ts/LICENSE-APACHE");

/// Where the builds go, as `package.json` names them.
const ESM_MAIN: &str = "./dist/index.js";
const CJS_TYPES: &str = "./dist/cjs/index.d.cts";
const CJS_MAIN: &str = "./dist/cjs/index.cjs";

/// The `exports` entry of one module of both builds (`"./dist/NAME.js"` and `"./dist/cjs/NAME.cjs"`, with types).
fn entry(module: &str) -> serde_json::Value {
    json!({
        "import": { "types": format!("./dist/{module}.d.ts"), "default": format!("./dist/{module}.js") },
        "require": { "types": format!("./dist/cjs/{module}.d.cts"), "default": format!("./dist/cjs/{module}.cjs") },
        "default": format!("./dist/{module}.js")
    })
}

/// The package's files besides `src/`.
///
/// # Errors
/// [`EmitError::Template`] for a template bug; a located error for a type name the standalone validator cannot
/// take (already refused by the code emitters).
pub(crate) fn files(m: &Model, opts: &EmitOptions, header: &Code) -> Result<Vec<OutFile>, EmitError> {
    let mut env = markdown_environment();
    env.add_template("README.md", README)?;
    let readme = env.get_template("README.md")?.render(readme_view(m, opts)?)?;
    let build = BUILD_CJS.replace("{{ header }}", header.as_str());
    Ok([
        OutFile::new("package.json", package_json(m, opts)),
        OutFile::new("tsconfig.json", tsconfig_json()),
        OutFile::new("tsconfig.cjs.json", tsconfig_cjs_json()),
        OutFile::new("build-cjs.mjs", build),
        OutFile::new("README.md", readme),
    ]
    .into_iter()
    // Another licence's text is the package's authors' to add (`LICENSE` beside the generated files).
    .chain(m.package.default_license().then(|| OutFile::new("LICENSE", license(&m.package.npm_name))))
    .collect())
}

/// The build's first step: `dist/` from an earlier build goes, so a module the package no longer has is not packed
/// from it (`tsc` only adds and overwrites).
const CLEAN_DIST: &str = "node -e \"require('node:fs').rmSync('dist', { recursive: true, force: true })\"";

fn package_json(m: &Model, opts: &EmitOptions) -> String {
    let mut v = json!({
        "//": opts.generated_by(),
        "name": m.package.npm_name,
        "version": m.package.version,
        "description": format!("{}: Zod 4 schemas, TypeScript types and checkers generated from the JSON Schema", m.title),
        "license": m.package.license,
        "type": "module",
        "main": CJS_MAIN,
        "module": ESM_MAIN,
        "types": CJS_TYPES,
        // TypeScript's `moduleResolution: node10` (the default of `module: commonjs`) reads no `exports`: the
        // subpath's types are found through this map instead (helper 89: `session-wire/standalone` was TS2307).
        "typesVersions": { "*": { "standalone": ["./dist/cjs/standalone.d.cts"] } },
        "exports": {
            ".": entry("index"),
            // The standalone validators alone: the module imports nothing at run time, so an application that
            // imports only this entry never loads Zod (the root entry loads the schemas, hence Zod).
            "./standalone": entry("standalone"),
            "./package.json": "./package.json"
        },
        "files": ["dist", "src", "README.md", "LICENSE"],
        "sideEffects": false,
        "engines": { "node": ">=20" },
        "scripts": {
            "build": CLEAN_DIST.to_string() + " && tsc -p tsconfig.json && tsc -p tsconfig.cjs.json && node build-cjs.mjs",
            "typecheck": "tsc -p tsconfig.json --noEmit",
            "prepack": "npm run build"
        },
        "peerDependencies": { "zod": ZOD_PEER_RANGE },
        "devDependencies": { "typescript": TYPESCRIPT_RANGE, "zod": ZOD_DEV_RANGE }
    });
    if m.package.npm_name.starts_with('@') {
        // npm publishes a scoped package as restricted (paid, private) unless told otherwise.
        v["publishConfig"] = json!({ "access": "public" });
    }
    pretty(&v)
}

fn pretty(v: &serde_json::Value) -> String {
    let mut s = serde_json::to_string_pretty(v).unwrap_or_default();
    s.push('\n');
    s
}

fn tsconfig_json() -> String {
    pretty(&json!({
        "compilerOptions": {
            "target": "ES2022",
            "lib": ["ES2022"],
            "module": "NodeNext",
            "moduleResolution": "NodeNext",
            "strict": true,
            "declaration": true,
            "declarationMap": true,
            "sourceMap": true,
            "rootDir": "src",
            "outDir": "dist",
            "skipLibCheck": true,
            "forceConsistentCasingInFileNames": true
        },
        "include": ["src"]
    }))
}

/// The CommonJS build: the same sources and checks, CommonJS output without maps into `dist/cjs/`
/// (`build-cjs.mjs` then names the files `.cjs`/`.d.cts`).
fn tsconfig_cjs_json() -> String {
    pretty(&json!({
        "extends": "./tsconfig.json",
        "compilerOptions": {
            "module": "CommonJS",
            "moduleResolution": "Node10",
            "declarationMap": false,
            "sourceMap": false,
            "outDir": "dist/cjs"
        }
    }))
}

fn license(name: &str) -> String {
    format!(
        "`{name}` is licensed under either of the MIT license or the Apache License, Version 2.0, at your option\n\
         (SPDX: {}). Both texts follow.\n\n\
         --------------------------------------------------------------------------------\n\n\
         MIT License\n\n{LICENSE_MIT}\n\
         --------------------------------------------------------------------------------\n\n\
         {LICENSE_APACHE}",
        Package::DEFAULT_LICENSE
    )
}

#[derive(Serialize)]
struct ReadmeView {
    generated_by: String,
    name: String,
    /// The name as a JavaScript string literal.
    name_json: String,
    /// The standalone validators' entry (`NAME/standalone`) as a JavaScript string literal.
    standalone_json: String,
    title: String,
    description: String,
    zod_range: &'static str,
    example: String,
    aliases: bool,
    types: Vec<TypeRow>,
    protocol: Option<ProtocolRow>,
    /// Whether the package has the upcaster (`src/upgrade.ts`).
    upgrade: bool,
    /// The licence (SPDX), and whether it is the default one, whose texts are in `LICENSE`.
    license: String,
    default_license: bool,
}

#[derive(Serialize)]
struct TypeRow {
    ts: String,
    zod: String,
    validate: String,
    guard: String,
    aliases: Vec<String>,
    description: String,
}

#[derive(Serialize)]
struct ProtocolRow {
    check: &'static str,
    line: &'static str,
    line_standalone: &'static str,
    create: &'static str,
    error: &'static str,
    auto: String,
    tags: String,
    roles: String,
    removed: String,
    for_role: String,
    options: String,
}

/// The first sentence of a description, on one line.
fn first_sentence(s: &str) -> String {
    let flat = s.split_whitespace().collect::<Vec<_>>().join(" ");
    match flat.find(". ") {
        Some(i) => flat[..=i].to_string(),
        None => flat,
    }
}

fn readme_view(m: &Model, opts: &EmitOptions) -> Result<ReadmeView, EmitError> {
    let mut types = Vec::new();
    for t in &m.types {
        let (validate, guard) = standalone::names(&t.names)?;
        let mut aliases = Vec::new();
        for a in &t.aliases {
            aliases.push(a.zod.clone());
            aliases.push(a.ts.clone());
        }
        types.push(TypeRow {
            ts: t.names.ts.clone(),
            zod: t.names.zod.clone(),
            validate: validate.to_string(),
            guard: guard.to_string(),
            aliases,
            description: t.description.as_deref().map(first_sentence).unwrap_or_default(),
        });
    }
    let protocol = match &m.protocol {
        None => None,
        Some(p) => {
            let names = super::protocol_names(m, p);
            let auto: Vec<String> = p
                .auto
                .iter()
                .map(|(name, what)| match what {
                    AutoValue::Id => format!("{} (a fresh cuid2-shaped id)", code(name.clone())),
                    AutoValue::Now => format!("{} (`Date.now()`)", code(name.clone())),
                })
                .collect();
            Some(ProtocolRow {
                check: "checkEnvelope",
                line: "validateSessionLine",
                line_standalone: "validateSessionLineStandalone",
                create: "createEnvelope",
                error: "SessionWireError",
                auto: if auto.is_empty() { "nothing".into() } else { auto.join(" and ") },
                tags: names.tags.to_string(),
                roles: names.roles.to_string(),
                removed: names.removed.to_string(),
                for_role: names.for_role.to_string(),
                options: names.options.to_string(),
            })
        }
    };
    Ok(ReadmeView {
        generated_by: opts.generated_by(),
        name: m.package.npm_name.clone(),
        license: m.package.license.clone(),
        default_license: m.package.default_license(),
        name_json: json!(m.package.npm_name).to_string(),
        standalone_json: json!(format!("{}/standalone", m.package.npm_name)).to_string(),
        title: m.title.clone(),
        description: if m.description == m.title { String::new() } else { m.description.clone() },
        zod_range: ZOD_PEER_RANGE,
        example: example(m)?,
        aliases: m.types.iter().any(|t| !t.aliases.is_empty()),
        types,
        protocol,
        upgrade: crate::upgrade::Plan::of(m).is_some_and(|p| !p.is_empty()),
    })
}

/// A role and an event it may send, from the schema's examples: the first event (in schema order) with an example
/// that some role (in role order) may send as it is.
fn protocol_example(m: &Model, p: &Protocol) -> Option<(String, serde_json::Value)> {
    for e in &p.events {
        for x in &m.ty(e.ty).examples {
            for role in e.roles.iter().filter(|r| p.roles.contains(r)) {
                let forbidden = e.field_roles.iter().any(|(f, allowed)| x.get(f).is_some() && !allowed.contains(role));
                if !forbidden {
                    return Some((role.clone(), x.clone()));
                }
            }
        }
    }
    None
}

/// The README's example: for a protocol, build a message from a schema example and check it as a line and as a
/// stream; otherwise check a value against the root type with Zod and with the standalone validator.
fn example(m: &Model) -> Result<String, EmitError> {
    let name = &m.package.npm_name;
    if let Some(p) = &m.protocol {
        let (role, ev) = protocol_example(m, p)
            .unwrap_or_else(|| (p.roles.first().cloned().unwrap_or_default(), json!({ p.discriminator(m): "" })));
        let filled: Vec<&str> = p.auto.iter().map(|(n, _)| n.as_str()).collect();
        return Ok(format!(
            "import {{ createEnvelope, validateSessionLine, checkSessionStream, rollupSession }} from {pkg};\n\
             \n\
             // Build a message ({filled} filled in); the event and the options are typed per role.\n\
             const message = createEnvelope({role}, {ev});\n\
             \n\
             // Check one line of a JSONL log exactly like `wiregen validate`.\n\
             console.log(validateSessionLine(JSON.stringify(message)).valid); // true\n\
             console.log(validateSessionLine(\"{{}}\").errors[0]); // {{ pointer, rule, message }}: the first error\n\
             \n\
             // Check a stream of messages and fold it into the session state.\n\
             console.log(checkSessionStream([message])[0].valid); // true\n\
             console.log(rollupSession([message]).messages); // {{ accepted: 1, rejected: 0 }}\n",
            pkg = json!(name),
            filled = if filled.is_empty() { "nothing".to_string() } else { filled.join(" and ") },
            role = json!(role),
            ev = serde_json::to_string(&ev).unwrap_or_default(),
        ));
    }
    let Some(root) = m.root.or(if m.types.is_empty() { None } else { Some(TypeId(0)) }) else {
        return Ok(format!("import {{ RULES }} from {};\n", json!(name)));
    };
    let t = m.ty(root);
    let (validate, _) = standalone::names(&t.names)?;
    let value = t.examples.first().map_or_else(|| "JSON.parse(text)".to_string(), |x| x.to_string());
    Ok(format!(
        "import {{ {zod}, {validate} }} from {pkg};\n\
         \n\
         const value = {value};\n\
         const r = {zod}.safeParse(value); // r.error.issues: each message ends in its [rule]\n\
         const errors = {validate}(value); // [] when valid, else [{{ pointer, rule, message }}, ...] (no Zod)\n",
        zod = t.names.zod,
        pkg = json!(name),
    ))
}
