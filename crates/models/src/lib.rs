#![doc = include_str!("../README.md")]

pub mod file;
pub mod fingerprint;
mod legacy;
pub mod registry;
pub mod selection;
pub mod values;

pub use file::{
    Encoding, FORMAT, FORMAT_VERSION, MAGIC, ModelFile, Training, check_output_dir, write_atomic,
};
pub use fingerprint::fingerprint;
pub use registry::{find, learners, resolve, train};
pub use selection::{CvRow, Selection};
pub use values::feature_values;
