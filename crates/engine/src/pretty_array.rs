//! The pretty-printed array of a `show --json` document (`following`: a whale's 100,000 entries),
//! written byte for byte as `serde_json::to_writer_pretty` writes it inside the top-level object,
//! without building it: formatted in chunks, on two threads for a long array, written in order.
//! Both formats' `show --json` write their `following` with it.
//!
//! Why: formatting them was a fifth of a whale's `show --json` (80 of 450 ms on the runtime-shaped
//! whale), on one thread while the other core was idle; and a 2.x whale's `following` built as a
//! JSON tree was most of that `show`'s peak memory.

use std::io::{self, Write};

use serde::Serialize;
use serde_json::ser::{Formatter, PrettyFormatter, Serializer};

use crate::in_order::{in_order, Flow, Work};

/// Write `items` as the pretty-printed array that `serde_json::to_writer_pretty` writes for it
/// as the value of a key of the top-level object, byte for byte, each item serialised as
/// `as_json` has it: formatted in chunks of `chunk`, on two threads from `two_threads_from`
/// chunks on, and written in order (never held whole).
pub fn write_nested_array<T: Sync, S: Serialize>(
    items: &[T],
    w: &mut dyn Write,
    chunk: usize,
    two_threads_from: usize,
    as_json: impl Fn(&T) -> S + Sync,
) -> io::Result<()> {
    if items.is_empty() {
        return w.write_all(b"[]");
    }
    w.write_all(b"[")?;
    let chunks = items.len().div_ceil(chunk);
    let format = |i: usize| -> io::Result<Vec<u8>> {
        let from = i * chunk;
        let part = &items[from..(from + chunk).min(items.len())];
        let mut buf = Vec::with_capacity(part.len() * 384);
        for (k, e) in part.iter().enumerate() {
            // What `PrettyFormatter::begin_array_value` writes two levels deep.
            buf.extend_from_slice(if from + k == 0 { b"\n    " } else { b",\n    " });
            as_json(e).serialize(&mut Serializer::with_formatter(&mut buf, nested()))?;
        }
        Ok(buf)
    };
    // The same work on both threads: each claims the next chunk.
    let (mut own, mut other) = (|i| format(i), |i| format(i));
    let helper: Option<&mut Work<'_, Vec<u8>, io::Error>> =
        (chunks >= two_threads_from).then_some(&mut other as _);
    let mut failed = None;
    in_order(
        chunks,
        &mut own,
        helper,
        &mut |buf| match w.write_all(buf) {
            Ok(()) => Flow::Continue,
            Err(e) => {
                failed = Some(e);
                Flow::Stop
            }
        },
    )?;
    if let Some(e) = failed {
        return Err(e);
    }
    w.write_all(b"\n  ]")
}

/// A pretty formatter at the depth of `following`'s elements (inside the top-level object and
/// the array): what it writes for an element is what the whole document's formatter writes there.
pub fn nested() -> PrettyFormatter<'static> {
    let mut f = PrettyFormatter::new();
    let mut sink = io::sink();
    // Opening an object and an array is how the formatter counts depth; the sink takes the
    // brackets (it cannot fail).
    let _ = f.begin_object(&mut sink);
    let _ = f.begin_array(&mut sink);
    f
}
