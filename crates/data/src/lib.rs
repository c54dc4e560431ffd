#![doc = include_str!("../README.md")]

pub mod csvfile;
pub mod idx;
pub mod image;
mod labels;
pub mod libsvm;
pub mod mi;
pub mod missingness;
pub mod options;
pub mod read;
pub mod registry;
pub mod scale;
pub mod split;
pub mod tasks;

pub use csvfile::{parse_csv, parse_csv_with};
pub use idx::parse_idx;
pub use image::mean_pool;
pub use libsvm::parse_libsvm;
pub use mi::{max_threshold_mi, mutual_information_values};
pub use missingness::{missingness_values, missingness_values_of};
pub use options::{MISSING_TOKENS, MissingPolicy, ReadOptions};
pub use registry::{
    BUILTINS, Builtin, DATA_ENV, DataDir, DirSource, Format, Loaded, Origin, builtin, data_dir,
    data_file, load, load_bytes, load_path, load_path_with, load_with, repository_data_dir,
    resolve_data_dir,
};
pub use scale::{Scaler, ScalingKind};
pub use split::{Split, k_fold, train_test, train_val_test};
pub use tasks::{BinaryTask, all_pairs, binary_task, class_subset, one_vs_rest};
