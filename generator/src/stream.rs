//! Stream validation (STUB: the stream-validation work replaces this file).
//!
//! API contract used by `validate --stream` and `serve`: feed records in order to a [`StreamChecker`]; each
//! call returns that record's verdict (message-level errors, or the first stream-rule violation); at any point
//! [`StreamChecker::rollup`] gives the session rollup so far.

use serde::Serialize;

use crate::engine::Engine;
use crate::validate::Record;

/// Checks the protocol's ordering rules over a stream of messages.
pub struct StreamChecker<'e, 'p> {
    engine: &'e Engine<'p>,
}

/// The session state folded from a stream (STUB).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Rollup {}

impl<'e, 'p> StreamChecker<'e, 'p> {
    /// A checker at the start of a stream.
    pub fn new(engine: &'e Engine<'p>) -> Self {
        StreamChecker { engine }
    }

    /// Checks the next record (`line` is 1-based; `bytes` is the line without its newline).
    pub fn check(&mut self, line: usize, bytes: &[u8]) -> Record {
        let (_, errors) = self.engine.check_line(bytes);
        Record::new(line, errors)
    }

    /// The rollup of everything checked so far.
    pub fn rollup(&self) -> Rollup {
        Rollup::default()
    }
}
