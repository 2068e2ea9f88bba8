//! xorshift64*: the deterministic generator shared by the fuzz tests, the suite harness and the benchmark's corpus (no
//! dependency, the same sequence on every machine).

/// The generator state (any non-zero seed).
pub struct Rng(pub u64);

impl Rng {
    /// The next 64 random bits.
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A number in `0..n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    /// One element of `v`.
    pub fn pick<'a, T>(&mut self, v: &'a [T]) -> &'a T {
        &v[self.below(v.len() as u64) as usize]
    }
}

/// A soak's count or seed from the environment variable `name` (decimal or `0x` hex, `_` allowed), `default`
/// when it is not set; a value that is not a number fails the test rather than running the default quietly.
#[allow(dead_code)] // The benchmark, which includes this file too, reads no variable.
pub fn env_number(name: &str, default: u64) -> u64 {
    match std::env::var(name) {
        Err(_) => default,
        Ok(s) => {
            let s = s.trim().replace('_', "");
            let parsed = match s.strip_prefix("0x") {
                Some(hex) => u64::from_str_radix(hex, 16),
                None => s.parse(),
            };
            parsed.unwrap_or_else(|e| panic!("{name}={s}: {e}"))
        }
    }
}
