// Shared by the TypeScript benchmarks: throughput in CPU time, and the child side of a one-contender-per-process
// measurement.

/** CPU time (user + system) of this process in seconds: a busy machine disturbs it far less than wall time. */
export function cpuSeconds() {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
}

/** Checks per CPU-second of `check` over `msgs`, measured for about `budget` CPU-seconds. */
export function opsPerSecond(check, msgs, budget) {
  let ops = 0;
  let sink = 0;
  const start = cpuSeconds();
  let used = 0;
  while (used < budget) {
    for (let k = 0; k < 20; k++) {
      for (const m of msgs) {
        if (check(m)) sink++;
      }
      ops += msgs.length;
    }
    used = cpuSeconds() - start;
  }
  if (sink < 0) console.log(sink);
  return ops / used;
}

/** A child run: `check` must give every fixture its verdict; then warm up and print `{valid, invalid}` ops/s. */
export function measureChild(name, check, valid, invalid, seconds) {
  const bad = valid.filter((m) => !check(m)).length + invalid.filter((m) => check(m)).length;
  if (bad) throw new Error(`${name} disagrees with the fixtures on ${bad} message(s)`);
  opsPerSecond(check, valid, seconds / 2);
  opsPerSecond(check, invalid, seconds / 2);
  console.log(JSON.stringify({ valid: opsPerSecond(check, valid, seconds), invalid: opsPerSecond(check, invalid, seconds) }));
}

/** The median of a list of numbers. */
export const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
