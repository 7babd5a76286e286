//! Deterministic identifiers and time formatting for the demo database.
//!
//! Nothing here reads the clock or the OS random source: every id comes from [`Rng`], a
//! splitmix64 generator with a fixed seed, so the same `now_ms` always yields the same file.

/// splitmix64: tiny, fast, good enough to make ids look random.
#[derive(Debug, Clone)]
pub struct Rng(u64);

const CROCKFORD: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";
const BASE62: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const HEX: &[u8; 16] = b"0123456789abcdef";

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform-ish integer in `lo..=hi`.
    pub fn range(&mut self, lo: i64, hi: i64) -> i64 {
        debug_assert!(lo <= hi);
        let span = (hi - lo) as u64 + 1;
        lo + (self.next_u64() % span) as i64
    }

    fn chars(&mut self, alphabet: &[u8], n: usize) -> String {
        (0..n)
            .map(|_| alphabet[(self.next_u64() % alphabet.len() as u64) as usize] as char)
            .collect()
    }

    /// `n` lowercase hex characters.
    pub fn hex(&mut self, n: usize) -> String {
        self.chars(HEX, n)
    }

    /// `n` base62 characters (Anthropic-style message and tool-call id tails).
    pub fn base62(&mut self, n: usize) -> String {
        self.chars(BASE62, n)
    }

    /// A UUID formatted like `crypto.randomUUID()` (version 4, RFC 4122 variant).
    pub fn uuid(&mut self) -> String {
        let a = self.next_u64();
        let b = self.next_u64();
        let mut bytes = [0u8; 16];
        bytes[..8].copy_from_slice(&a.to_be_bytes());
        bytes[8..].copy_from_slice(&b.to_be_bytes());
        bytes[6] = (bytes[6] & 0x0f) | 0x40;
        bytes[8] = (bytes[8] & 0x3f) | 0x80;
        let h: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        format!(
            "{}-{}-{}-{}-{}",
            &h[0..8],
            &h[8..12],
            &h[12..16],
            &h[16..20],
            &h[20..32]
        )
    }

    /// A ULID (26 Crockford base32 characters) whose time part encodes `ms`.
    pub fn ulid(&mut self, ms: i64) -> String {
        let mut out = String::with_capacity(26);
        let t = (ms.max(0) as u64) & ((1u64 << 48) - 1);
        for i in (0..10).rev() {
            out.push(CROCKFORD[((t >> (i * 5)) & 31) as usize] as char);
        }
        out.push_str(&self.chars(CROCKFORD, 16));
        out
    }
}

/// JavaScript `new Date(ms).toISOString()`.
pub use turnscope_core::journal::time::iso_from_ms as iso;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_have_runtime_shapes() {
        let mut r = Rng::new(7);
        let u = r.uuid();
        assert_eq!(u.len(), 36);
        assert_eq!(&u[14..15], "4");
        assert!("89ab".contains(&u[19..20]));
        let ul = r.ulid(1_796_014_375_640);
        assert_eq!(ul.len(), 26);
        assert!(ul.starts_with("01M8NCS0"), "{ul}");
        assert!(ul.chars().all(|c| CROCKFORD.contains(&(c as u8))));
        let h = r.hex(8);
        assert!(
            h.len() == 8
                && h.chars()
                    .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
        );
    }
}
