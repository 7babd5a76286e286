//! Not published: the scale journal generator (`turnscope-scale`, the bench's data), the benches
//! (`benches/`) and the developer examples (`examples/`). Kept out of the operator's binary.

pub mod scale;
mod scale_flue2;
mod scale_flue2_records;
mod scale_flue2_schema;
mod scale_history;
mod scale_options;
mod scale_profiles;
mod scale_runtime;
mod scale_runtime_whale;
mod scale_stuck;
mod scale_text;
mod scale_whale;
#[cfg(test)]
mod tests_scale_runtime;
