// Puts happy-wire's sources at the commit named in happy-wire/SOURCE.json into happy-wire/ (next to SOURCE.json).
// They are third-party code and are not committed; check.mjs loads them and verifies every file again.
//
//   node fetch-happy-wire.mjs                 download from GitHub (raw.githubusercontent.com, at the commit)
//   node fetch-happy-wire.mjs ~/src/happy     a local clone of slopus/happy: `git show <commit>:packages/happy-wire/...`
//   node fetch-happy-wire.mjs DIR             a directory holding the files (packages/happy-wire at the commit, or
//                                             a slopus/happy checkout at the commit, or a previous copy)
//
// Every file must have the git blob id SOURCE.json lists, or nothing is written and the script exits 1.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const dest = join(dirname(fileURLToPath(import.meta.url)), 'happy-wire');
const source = JSON.parse(readFileSync(join(dest, 'SOURCE.json'), 'utf8'));
const repo = source.repository.replace(/^https:\/\/github\.com\//, ''); // slopus/happy
const gitBlob = (bytes) => createHash('sha1').update(`blob ${bytes.length}\0`).update(bytes).digest('hex');

/** Where the files come from: a function from a path inside the package folder to its bytes, and a label. */
async function from(arg) {
  if (arg === undefined) {
    const base = `https://raw.githubusercontent.com/${repo}/${source.commit}/${source.folder}`;
    return {
      label: base,
      read: async (p) => {
        const r = await fetch(`${base}/${p}`);
        if (!r.ok) throw new Error(`GET ${base}/${p}: HTTP ${r.status}`);
        return Buffer.from(await r.arrayBuffer());
      },
    };
  }
  const dir = resolve(arg);
  if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new Error(`${arg} is not a directory`);
  // A git repository that has the commit (a clone of slopus/happy): read the files out of the commit.
  let hasCommit = false;
  try {
    execFileSync('git', ['-C', dir, 'cat-file', '-e', `${source.commit}^{commit}`], { stdio: 'ignore' });
    hasCommit = true;
  } catch { /* not a git repository, or one without the commit */ }
  if (hasCommit) {
    return {
      label: `${arg} (git show ${source.commit.slice(0, 8)}:${source.folder}/...)`,
      read: async (p) => execFileSync('git', ['-C', dir, 'show', `${source.commit}:${source.folder}/${p}`], { maxBuffer: 1 << 28, stdio: ['ignore', 'pipe', 'pipe'] }),
    };
  }
  // A plain directory: the package folder itself, or a checkout holding it.
  const pkg = existsSync(join(dir, source.folder)) ? join(dir, source.folder) : dir;
  return { label: pkg, read: async (p) => readFileSync(join(pkg, p)) };
}

let label, read;
try {
  ({ label, read } = await from(process.argv[2]));
} catch (e) {
  console.error(`fetch-happy-wire: ${e.message}`);
  process.exit(1);
}
const got = new Map();
const bad = [];
for (const [p, sha] of Object.entries(source.files)) {
  let bytes;
  try { bytes = await read(p); } catch (e) { bad.push(`${p}: ${e.message.split('\n')[0]}${e.cause ? ` (${e.cause.code ?? e.cause.message})` : ''}`); continue; }
  const blob = gitBlob(bytes);
  if (blob !== sha) bad.push(`${p}: git blob ${blob}, SOURCE.json expects ${sha}`);
  else got.set(p, bytes);
}
if (bad.length === Object.keys(source.files).length && bad.every((b) => b.includes('ENOENT'))) {
  console.error(`fetch-happy-wire: ${label} holds none of happy-wire's files (package.json, src/*.ts, tsconfig.json) and is not a`
    + ` git clone containing ${source.commit}`);
  process.exit(1);
}
if (bad.length) {
  console.error(`fetch-happy-wire: from ${label}:\n  ${bad.join('\n  ')}\nnothing written`
    + (process.argv[2] === undefined ? '' : `\n(a clone of ${source.repository} must contain commit ${source.commit}; \`git fetch\` it)`));
  process.exit(1);
}
for (const [p, bytes] of got) {
  mkdirSync(dirname(join(dest, p)), { recursive: true });
  writeFileSync(join(dest, p), bytes);
}
console.log(`fetch-happy-wire: ${got.size} files of ${source.repository} at ${source.commit} (${source.folder}) from ${label} -> happy-wire/`);
