//! JavaScript compatibility: what the runtime's engine does differently from Rust, reproduced so
//! turnscope writes the bytes the runtime writes and reads its rules as it does.

pub mod lone_surrogates;
pub mod overflow_patterns;
pub mod parse_error;
pub mod regexp;
pub mod stringify;
