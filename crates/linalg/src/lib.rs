#![doc = include_str!("../README.md")]

pub mod arrow;
pub mod dsx;
pub mod error;

pub use arrow::{ArrowCholesky, ArrowMatrix, ArrowPlusRankOne};
pub use dsx::{
    DsxScalings, DsxSettings, DsxSystem, DynamicRegularization, FactorInfo, MethodEstimate,
    NormalEquations, NormalEquationsPlan, PairScaling, RefineInfo, RowsRef, SchurKernel,
    human_bytes,
};
pub use error::{Block, LinalgError, Result};
/// Re-export of faer's parallelism setting used in [`DsxSettings::par`].
pub use faer::Par;
