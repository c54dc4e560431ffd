//! The cases of `cargo xtask bench smo` (examples/smo_bench.rs) and of the LIBSVM reference
//! test (tests/smo_libsvm.rs): data, task, kernel and C, min-max scaled as
//! `bulwark train --scale minmax` does. Shared by `#[path]` so both read the same definitions.
#![allow(dead_code)]

use bulwark_core::{Dataset, DenseMatrix, Kernel, Sign, rng_from_seed};
use bulwark_data::{BinaryTask, Scaler, ScalingKind, binary_task, load};
use rand::Rng as _;

/// A binary task of a data set.
#[derive(Debug, Clone, Copy)]
pub enum Task {
    Natural,
    Pair(&'static str, &'static str),
    Positive(&'static str),
}

/// `(name, data, task, kernel, C)`; data `synthetic` is two Gaussian classes (see [`synthetic`]).
pub const CASES: &[(&str, &str, Task, Kernel, f64)] = &[
    (
        "ionosphere-rbf",
        "ionosphere",
        Task::Natural,
        Kernel::Rbf { gamma: 0.1 },
        10.0,
    ),
    (
        "ionosphere-poly",
        "ionosphere",
        Task::Natural,
        Kernel::Polynomial {
            degree: 3,
            gamma: 0.1,
            coef0: 1.0,
        },
        1.0,
    ),
    (
        "usps-3v5-rbf",
        "usps",
        Task::Pair("3", "5"),
        Kernel::Rbf { gamma: 0.01 },
        10.0,
    ),
    (
        "usps-3v5-poly",
        "usps",
        Task::Pair("3", "5"),
        Kernel::Polynomial {
            degree: 2,
            gamma: 0.01,
            coef0: 1.0,
        },
        1.0,
    ),
    (
        "mnist-0-vs-rest-rbf",
        "data/mnist/t10k-images-idx3-ubyte.gz",
        Task::Positive("0"),
        Kernel::Rbf { gamma: 0.01 },
        10.0,
    ),
    (
        "synthetic-4000x50-rbf",
        "synthetic",
        Task::Natural,
        Kernel::Rbf { gamma: 0.02 },
        1.0,
    ),
];

/// 4000 × 50, two overlapping Gaussian classes (means ±0.3 on every feature), seed 2026.
pub fn synthetic() -> Result<Dataset, Box<dyn std::error::Error>> {
    let (m, n) = (4000, 50);
    let mut rng = rng_from_seed(2026);
    let mut x = Vec::with_capacity(m * n);
    let mut y = Vec::with_capacity(m);
    for i in 0..m {
        let s = if i % 2 == 0 { Sign::Pos } else { Sign::Neg };
        for _ in 0..n {
            // Box–Muller
            let (u, v): (f64, f64) = (rng.random::<f64>().max(1e-300), rng.random());
            let z = (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos();
            x.push(z + 0.3 * s.as_f64());
        }
        y.push(s);
    }
    Ok(Dataset::binary(
        "synthetic",
        DenseMatrix::try_new(m, n, x)?,
        y,
    )?)
}

/// The case's data, scaled onto [−1, 1] by min-max on itself.
pub fn load_case(source: &str, task: Task) -> Result<Dataset, Box<dyn std::error::Error>> {
    let data = if source == "synthetic" {
        synthetic()?
    } else {
        let (raw, _) = load(source, None)?;
        let task = match task {
            Task::Natural => BinaryTask::Natural,
            Task::Pair(a, b) => BinaryTask::Pair(a.into(), b.into()),
            Task::Positive(p) => BinaryTask::Positive(p.into()),
        };
        binary_task(&raw, &task)?
    };
    Ok(Scaler::fit(&data, ScalingKind::MinMax)?.transform(&data)?)
}
