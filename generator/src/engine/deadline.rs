//! A deadline for the precise engine's work on one thread, so that a caller with a time limit (the service's
//! `--timeout-ms`) can stop a check that would run far past it.
//!
//! The loader bounds what one value node may cost (the subschemas applied at one place), but not how many nodes a
//! value has: a schema that applies close to that bound at each item of an array takes milliseconds an item, and a
//! 16 MiB body of such items hours. The fast path is linear in the line's bytes (it leaves combinators to the
//! precise path), so the precise engine is where a check can run long. It calls `tick` once for every
//! (schema node, value) pair it checks; every [`POLL_EVERY`] ticks, the clock is read and a passed deadline
//! unwinds the thread to [`within`], which answers [`Expired`]. The unwind uses `resume_unwind`, which runs no
//! panic hook: nothing is printed, and nothing is left behind but the state the abandoned check was building,
//! which its caller drops. Without a deadline (the CLI) a tick is a counter and, every [`POLL_EVERY`] ticks, one
//! more comparison.

use std::cell::Cell;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::time::Instant;

/// How many ticks pass between two readings of the clock (~0.1 ms of engine work).
pub const POLL_EVERY: u32 = 1 << 12;

thread_local! {
    static DEADLINE: Cell<Option<Instant>> = const { Cell::new(None) };
    static COUNTDOWN: Cell<u32> = const { Cell::new(POLL_EVERY) };
}

/// The deadline passed before the work ended; the work was abandoned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Expired;

impl std::fmt::Display for Expired {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the deadline passed before the check ended")
    }
}

impl std::error::Error for Expired {}

/// Runs `f` on this thread with the engine's work bounded by `deadline`: `Err(Expired)` when the deadline passed
/// while the engine was checking (within ~[`POLL_EVERY`] ticks of it), `f`'s result otherwise. A panic of `f`
/// goes on unwinding. Calls may nest; the inner deadline holds inside the inner call.
pub fn within<R>(deadline: Instant, f: impl FnOnce() -> R) -> Result<R, Expired> {
    struct Restore(Option<Instant>);
    impl Drop for Restore {
        fn drop(&mut self) {
            DEADLINE.with(|d| d.set(self.0));
        }
    }
    let _restore = Restore(DEADLINE.with(|d| d.replace(Some(deadline))));
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => Ok(r),
        Err(payload) if payload.is::<Expired>() => Err(Expired),
        Err(payload) => resume_unwind(payload),
    }
}

/// One unit of engine work: every [`POLL_EVERY`] of them, unwinds to [`within`] if its deadline has passed.
#[inline]
pub(crate) fn tick() {
    COUNTDOWN.with(|c| match c.get() {
        0 => poll(c),
        n => c.set(n - 1),
    });
}

#[cold]
#[inline(never)]
fn poll(countdown: &Cell<u32>) {
    countdown.set(POLL_EVERY);
    if DEADLINE.with(Cell::get).is_some_and(|d| Instant::now() >= d) {
        resume_unwind(Box::new(Expired));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn work_past_the_deadline_is_abandoned_and_work_within_it_is_not() {
        let spin = || loop {
            tick();
        };
        let started = Instant::now();
        assert_eq!(within(Instant::now() + Duration::from_millis(30), spin), Err(Expired));
        assert!(started.elapsed() < Duration::from_secs(5));
        assert_eq!(
            within(Instant::now() + Duration::from_secs(60), || (0..100_000).map(|_| tick()).count()),
            Ok(100_000)
        );
        // The deadline is gone after the call: ticks outside it never unwind.
        for _ in 0..3 * POLL_EVERY {
            tick();
        }
    }

    #[test]
    fn an_inner_deadline_does_not_outlive_its_call_and_other_panics_pass_through() {
        let outer = within(Instant::now() + Duration::from_secs(60), || {
            let inner = within(Instant::now(), || loop {
                tick();
            });
            assert_eq!(inner, Err(Expired));
            (0..3 * POLL_EVERY).for_each(|_| tick());
            7
        });
        assert_eq!(outer, Ok(7));
        let other = catch_unwind(|| within(Instant::now() + Duration::from_secs(60), || resume_unwind(Box::new(42u8))));
        assert_eq!(other.err().and_then(|p| p.downcast::<u8>().ok()).map(|b| *b), Some(42));
    }
}
