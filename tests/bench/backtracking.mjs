// Measurement (not a test): how long JavaScript's backtracking `RegExp` takes on strings that fail to match, for
// the patterns the README's "Refused, always located" list quotes. The Zod and standalone outputs compile a
// schema's `pattern` as `new RegExp(source, "u")`, as done here; the engine and the Rust crate use Rust's `regex`
// crate, which is linear in the string.
//
//   node tests/bench/backtracking.mjs [seconds per pattern, default 3]
//
// For each pattern the length grows until one match takes more than the budget, and each length is timed once
// (wall clock, after a warm-up on a short string). The exponential patterns are the ones the loader refuses
// (`generator/src/pattern/backtracking.rs`); the polynomial ones load, which is the README's known limit.
const budget = Number(process.argv[2] ?? 3) * 1000;

const CASES = [
  // [pattern, what repeats, what ends the string so that it fails, lengths to try, refused by the loader]
  ["^(a+)+$", "a", "!", [16, 20, 22, 24, 25, 26, 27, 28], true],
  ["^(\\w|\\d)+$", "1", "!", [16, 20, 22, 24, 25, 26, 27, 28], true],
  ["^(ab|a|b)*c$", "ab", "!", [16, 20, 22, 24, 25, 26, 27], true],
  ["^a*a*$", "a", "!", [5000, 10000, 20000, 40000], false],
  ["a*b", "a", "", [5000, 10000, 20000, 40000], false],
  ["^.*a.*b.*c$", "abc", "!", [500, 1000, 2000, 5000], false],
  ["^\\S+@\\S+\\.\\S+$", "@.", " ", [500, 1000, 2000, 4000], false],
];

console.log(`node ${process.version}; budget ${budget / 1000} s per match`);
console.log("| pattern | refused | characters | ms |");
console.log("|---|---|---:|---:|");
for (const [source, unit, end, counts, refused] of CASES) {
  const re = new RegExp(source, "u");
  re.test(unit.repeat(4) + end);
  for (const n of counts) {
    const s = unit.repeat(n) + end;
    const t = process.hrtime.bigint();
    const matched = re.test(s);
    const ms = Number(process.hrtime.bigint() - t) / 1e6;
    if (matched) throw new Error(`${source} matched ${JSON.stringify(s.slice(0, 20))}...: the string must fail`);
    const shown = source.replaceAll("|", "\\|");
    console.log(`| \`${shown}\` | ${refused ? "yes" : "no"} | ${s.length} | ${ms.toFixed(1)} |`);
    if (ms > budget) break;
  }
}
