//! Tool call ids as a compact message keeps them: in place, without an allocation each.
//!
//! Every assistant's tool call and every tool result holds one, so a tool-heavy whale holds two
//! for each of its calls (288,000 entries: 408,000 ids). The ids models write are 29 bytes
//! (`call_…`) or 30 (`toolu_01…`), one byte past what a `CompactString` holds inline; boxed, each
//! took a 48-byte chunk of its own. Held here they take the 32 bytes of the field itself.

use serde_json::Value;

/// Bytes of a key held in place: the longest call id the providers write (`toolu_01…`).
pub const INLINE: usize = 30;

/// A string of at most [`INLINE`] bytes, held in place.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct InlineStr {
    len: u8,
    bytes: [u8; INLINE],
}

impl InlineStr {
    /// `None` when `s` is longer than [`INLINE`] bytes.
    pub fn new(s: &str) -> Option<InlineStr> {
        let mut bytes = [0; INLINE];
        bytes.get_mut(..s.len())?.copy_from_slice(s.as_bytes());
        Some(InlineStr {
            len: s.len() as u8,
            bytes,
        })
    }

    pub fn as_str(&self) -> &str {
        // Only `new` writes the bytes, from a whole `str`.
        std::str::from_utf8(&self.bytes[..usize::from(self.len)])
            .expect("an inline key holds a whole str")
    }
}

impl std::fmt::Debug for InlineStr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.as_str().fmt(f)
    }
}

/// A JavaScript key value (a tool call's `id`, a result's `toolCallId`) as a compact message keeps
/// it: a string without a `Value` around it (in place up to [`INLINE`] bytes), anything else
/// (damaged rows) as stored.
#[derive(Debug, Clone, PartialEq)]
pub enum JsKey {
    Inline(InlineStr),
    Str(Box<str>),
    Other(Box<Value>),
}

impl JsKey {
    pub fn new(v: Value) -> JsKey {
        match v {
            Value::String(s) => match InlineStr::new(&s) {
                Some(i) => JsKey::Inline(i),
                None => JsKey::Str(s.into_boxed_str()),
            },
            other => JsKey::Other(Box::new(other)),
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            JsKey::Inline(s) => Some(s.as_str()),
            JsKey::Str(s) => Some(s),
            JsKey::Other(_) => None,
        }
    }

    pub fn to_value(&self) -> Value {
        match self {
            JsKey::Other(v) => (**v).clone(),
            key => Value::String(key.as_str().unwrap_or_default().to_string()),
        }
    }
}

bitflags::bitflags! {
    /// The flags of a compact message, kept in the byte its call slot has to spare.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
    pub struct MessageFlags: u8 {
        /// `isError` is `true`.
        const IS_ERROR = 1;
        /// The preview was not kept (`core::compact::Previews::Drop`).
        const PREVIEW_DROPPED = 2;
        /// `content` has an image block whose data is a chunk marker (`core::journal::images`):
        /// a listing reads the entry's stored text for the ids only where this is set.
        const IMAGE_MARKERS = 4;
    }
}

/// What a [`CallSlot`] holds of its message's `toolCallId`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SlotId<'a> {
    /// No `toolCallId` (JS `undefined`).
    Absent,
    Here(&'a str),
    /// Not a string of up to [`INLINE`] bytes: kept beside the slot.
    Elsewhere,
}

/// A compact message's `toolCallId` when it is absent or a string of up to [`INLINE`] bytes, and
/// its flags, in 32 bytes: the field a tool result reads most, without a tag or a pointer of its
/// own (a message stays a 120-byte allocation). Any other id is kept beside it
/// ([`SlotId::Elsewhere`]).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct CallSlot {
    /// The message's flags, and where its id is (`NO_ID`, `ID_ELSEWHERE`, or neither: here).
    bits: u8,
    /// Empty unless the id is here.
    id: InlineStr,
}

impl CallSlot {
    const NO_ID: u8 = 0x80;
    const ID_ELSEWHERE: u8 = 0x40;

    /// The slot for `id`, and the id when it does not fit (kept elsewhere).
    pub fn new(id: Option<Value>, flags: MessageFlags) -> (CallSlot, Option<JsKey>) {
        let empty = InlineStr {
            len: 0,
            bytes: [0; INLINE],
        };
        let (bits, id, elsewhere) = match id.map(JsKey::new) {
            None => (Self::NO_ID, empty, None),
            Some(JsKey::Inline(i)) => (0, i, None),
            Some(other) => (Self::ID_ELSEWHERE, empty, Some(other)),
        };
        let slot = CallSlot {
            bits: bits | flags.bits(),
            id,
        };
        (slot, elsewhere)
    }

    pub fn flags(&self) -> MessageFlags {
        MessageFlags::from_bits_truncate(self.bits)
    }

    pub fn set_flags(&mut self, flags: MessageFlags) {
        self.bits = (self.bits & (Self::NO_ID | Self::ID_ELSEWHERE)) | flags.bits();
    }

    /// The id, if it is held here.
    pub fn id(&self) -> SlotId<'_> {
        if self.bits & Self::NO_ID != 0 {
            SlotId::Absent
        } else if self.bits & Self::ID_ELSEWHERE != 0 {
            SlotId::Elsewhere
        } else {
            SlotId::Here(self.id.as_str())
        }
    }
}

// The message's flags leave the slot's two id bits free.
const _: () = assert!(MessageFlags::all().bits() & (CallSlot::NO_ID | CallSlot::ID_ELSEWHERE) == 0);

impl std::fmt::Debug for CallSlot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallSlot")
            .field("id", &self.id())
            .field("flags", &self.flags())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn keys_up_to_thirty_bytes_are_held_in_place_and_longer_ones_boxed() {
        for (s, inline) in [
            ("", true),
            ("toolu_01bIAoSCFbH8lsEpYiPloNTB", true),
            ("call_abcdefghijklmnopqrstuvwx", true),
            ("ünïcødé_ïd_☃☃☃", true),
            ("toolu_01bIAoSCFbH8lsEpYiPloNTBx", false),
        ] {
            let k = JsKey::new(json!(s));
            assert_eq!(matches!(k, JsKey::Inline(_)), inline, "{s}");
            assert_eq!(k.as_str(), Some(s));
            assert_eq!(k.to_value(), json!(s));
        }
        let other = JsKey::new(json!(7));
        assert_eq!(other.as_str(), None);
        assert_eq!(other.to_value(), json!(7));
        // Equal ids are equal keys, however they were built.
        assert_eq!(JsKey::new(json!("t1")), JsKey::new(json!("t1")));
        assert_ne!(JsKey::new(json!("t1")), JsKey::new(json!("t10")));
    }

    #[test]
    fn a_call_slot_holds_an_inline_id_and_hands_back_any_other() {
        let f = MessageFlags::IS_ERROR;
        let (s, rest) = CallSlot::new(None, f);
        assert_eq!((s.id(), rest, s.flags()), (SlotId::Absent, None, f));
        let (s, rest) = CallSlot::new(Some(json!("toolu_01bIAoSCFbH8lsEpYiPloNTB")), f);
        assert_eq!(s.id(), SlotId::Here("toolu_01bIAoSCFbH8lsEpYiPloNTB"));
        assert_eq!((rest, s.flags()), (None, f));
        for long in [json!("x".repeat(31)), json!(null), json!({"a": 1})] {
            let (s, rest) = CallSlot::new(Some(long.clone()), MessageFlags::empty());
            assert_eq!(s.id(), SlotId::Elsewhere);
            assert_eq!(rest.map(|k| k.to_value()), Some(long));
        }
        let mut s = CallSlot::new(Some(json!("a")), MessageFlags::empty()).0;
        s.set_flags(MessageFlags::all());
        assert_eq!(
            (s.id(), s.flags()),
            (SlotId::Here("a"), MessageFlags::all())
        );
    }

    /// The slot is what lets a compact message keep its id in place within its size budget.
    #[test]
    fn keys_and_slots_take_thirty_two_bytes() {
        assert_eq!(std::mem::size_of::<CallSlot>(), 32);
        assert_eq!(std::mem::size_of::<Option<JsKey>>(), 32);
    }
}
