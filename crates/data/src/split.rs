//! Seeded splits: train/test, train/validation/test, k-fold; optionally stratified by class.
//! The same seed gives the same indices.

use bulwark_core::{Dataset, Error, Result, rng_from_seed};
use rand::seq::SliceRandom;

/// Index sets of one split.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Split {
    /// Training indices.
    pub train: Vec<usize>,
    /// Validation indices (empty for a two-way split).
    pub validation: Vec<usize>,
    /// Test indices.
    pub test: Vec<usize>,
}

fn check_fraction(name: &str, f: f64) -> Result<()> {
    if f.is_finite() && (0.0..1.0).contains(&f) {
        Ok(())
    } else {
        Err(Error::param(name, f, "a fraction in [0, 1)"))
    }
}

/// Groups of indices to split separately: one per class when stratified, else one group.
fn groups(data: &Dataset, stratify: bool) -> Vec<Vec<usize>> {
    if stratify {
        let mut g = vec![Vec::new(); data.n_classes()];
        for i in 0..data.len() {
            g[data.targets().class_index(i)].push(i);
        }
        g.retain(|v| !v.is_empty());
        g
    } else {
        vec![(0..data.len()).collect()]
    }
}

/// A seeded train/validation/test split. With `stratify`, every class is split in the same
/// proportions. Each part is returned sorted.
pub fn train_val_test(
    data: &Dataset,
    validation: f64,
    test: f64,
    stratify: bool,
    seed: u64,
) -> Result<Split> {
    check_fraction("validation", validation)?;
    check_fraction("test", test)?;
    if validation + test >= 1.0 {
        return Err(Error::param(
            "validation + test",
            validation + test,
            "< 1 so that training data remain",
        ));
    }
    let mut rng = rng_from_seed(seed);
    let mut split = Split {
        train: Vec::new(),
        validation: Vec::new(),
        test: Vec::new(),
    };
    for mut g in groups(data, stratify) {
        g.shuffle(&mut rng);
        let n_test = (test * g.len() as f64).round() as usize;
        let n_val = (validation * g.len() as f64).round() as usize;
        split.test.extend_from_slice(&g[..n_test]);
        split
            .validation
            .extend_from_slice(&g[n_test..n_test + n_val]);
        split.train.extend_from_slice(&g[n_test + n_val..]);
    }
    if split.train.is_empty() {
        return Err(Error::param(
            "test/validation fractions",
            test + validation,
            "leaving at least one training example",
        ));
    }
    split.train.sort_unstable();
    split.validation.sort_unstable();
    split.test.sort_unstable();
    Ok(split)
}

/// A seeded train/test split.
pub fn train_test(data: &Dataset, test: f64, stratify: bool, seed: u64) -> Result<Split> {
    train_val_test(data, 0.0, test, stratify, seed)
}

/// `k` seeded folds: fold `f` is the test part of split `f`, the rest its training part.
pub fn k_fold(data: &Dataset, k: usize, stratify: bool, seed: u64) -> Result<Vec<Split>> {
    if k < 2 || k > data.len() {
        return Err(Error::param(
            "k",
            k,
            format!("between 2 and the number of examples ({})", data.len()),
        ));
    }
    let mut rng = rng_from_seed(seed);
    let mut fold_of = vec![0usize; data.len()];
    let mut next = 0usize;
    for mut g in groups(data, stratify) {
        g.shuffle(&mut rng);
        for i in g {
            fold_of[i] = next % k;
            next += 1;
        }
    }
    Ok((0..k)
        .map(|f| Split {
            train: (0..data.len()).filter(|&i| fold_of[i] != f).collect(),
            validation: Vec::new(),
            test: (0..data.len()).filter(|&i| fold_of[i] == f).collect(),
        })
        .collect())
}

/// Applies a split: `(train, validation, test)` data sets.
pub fn apply(data: &Dataset, split: &Split) -> (Dataset, Dataset, Dataset) {
    (
        data.select(&split.train),
        data.select(&split.validation),
        data.select(&split.test),
    )
}
