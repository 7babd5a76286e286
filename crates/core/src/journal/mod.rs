//! The runtime's stored format: session entries and their active path, the compact form a
//! listing reads (with its byte scanner and the serde reference it is proven against), the rows
//! of a submission as plain data, and interrupted provider streams.

pub mod call_id;
pub mod compact;
mod compact_de;
// The reference of the compact parser: its tests, and the fuzz targets (`fuzzing` feature).
#[cfg(any(test, feature = "fuzzing"))]
mod compact_oracle;
pub(crate) mod compact_scan;
pub mod cost;
pub mod entry;
pub mod entry_slice;
#[cfg(feature = "fuzzing")]
pub(crate) mod fuzzing;
pub mod history;
pub mod images;
pub mod payload;
pub mod records;
mod scan_string;
pub mod search;
pub mod status;
pub mod stream;
pub mod submission_rows;
mod text_preview;
pub mod time;
