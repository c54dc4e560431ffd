#![doc = include_str!("../README.md")]

pub use bulwark_core as core;
pub use bulwark_data as data;
