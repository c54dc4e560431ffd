//! The error-versus-budget protocol shared by DSX §4.1 (second experiment) and §4.2 and the
//! ICML 2008 random-deletion experiment.
//!
//! For each task (a binary data set) and each seeded split:
//! 1. split into train / validation / test (the validation part is taken from the data that
//!    would otherwise train — DSX §4.2 "a held-out validation set taken from the training
//!    data"), optionally subsampled (stratified) to caps;
//! 2. fit the scaling on the training part only, drop features that are zero on the whole
//!    training part (their weight would be 0 or arbitrary), optionally store sparse;
//! 3. feature values `v`: uniform, or the mutual-information values of DSX §4.2 computed on
//!    the training part;
//! 4. for every learner, budget `N` (training budget = attack budget, DSX §4 "the appropriate
//!    level of N") and `C` of the logarithmic grid: train on the training part; pick the `C`
//!    with the lowest validation error — under the same attack at the same `N` for the robust
//!    learners, on clean validation data for the SVM baseline (ties: the smaller `C`);
//! 5. attack the test part with that model (greedy deletion / greedy corruption of DSX §4,
//!    or random deletion of `N` non-zero features, ICML 2008 §5) and record the error.
//!
//! The model tested is the one trained on the training part without the validation part (no
//! refit), so every number is one trained model's error.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use bulwark_adversary::{Attack, AttackKind, CorruptionStats, evaluate};
use bulwark_core::{Classifier, Dataset, Error, Features, LinearModel, Sign, rng_for_stream};
use bulwark_data::{Scaler, ScalingKind, mutual_information_values, train_val_test};
use rand::seq::SliceRandom;
use serde::{Deserialize, Serialize};

use crate::learner::{FitOutcome, Learner, SolverTally};
use crate::select::{self, Ties};
use crate::stats::MeanSe;

/// The test-time attack of a curve.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AttackMode {
    /// DSX §4 greedy deletion (features set to 0).
    Deletion,
    /// DSX §4 greedy corruption (chosen features replaced by `N(mean_j, var_j)` of the training
    /// part).
    Corruption,
    /// ICML 2008 §5 / Globerson–Roweis: `N` non-zero features per example deleted uniformly at
    /// random.
    RandomDeletion,
}

impl AttackMode {
    /// Table name.
    pub fn name(self) -> &'static str {
        match self {
            AttackMode::Deletion => "deletion",
            AttackMode::Corruption => "corruption",
            AttackMode::RandomDeletion => "random-deletion",
        }
    }
    fn kind(self) -> AttackKind {
        match self {
            AttackMode::Deletion => AttackKind::GreedyDelete,
            AttackMode::Corruption => AttackKind::GreedyCorrupt,
            AttackMode::RandomDeletion => AttackKind::RandomDelete,
        }
    }
}

/// Feature scaling fitted on the training part.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Scaling {
    /// None (synthetic data).
    None,
    /// Zero mean, unit variance (dense, low-dimensional data: deletion = mean imputation, the
    /// zero-mean setting of DSX Theorem 3).
    Standard,
    /// `x / max|x|` per feature: keeps zeros at zero (counts, pixels), so a deleted feature
    /// reads like an absent word or a blank pixel.
    MaxAbs,
}

/// Feature values `v`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Values {
    /// `v_j = 1`.
    Uniform,
    /// DSX §4.2 mutual-information values, on the training part.
    MutualInformation,
}

/// The protocol of one error-versus-budget study.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CurveSpec {
    /// Learners compared.
    pub learners: Vec<Learner>,
    /// Attacks applied to the test part.
    pub attacks: Vec<AttackMode>,
    /// Budgets `N`.
    pub budgets: Vec<f64>,
    /// Logarithmic `C` grid.
    pub grid: Vec<f64>,
    /// Seeded splits per task.
    pub splits: usize,
    /// Validation fraction (of the whole task).
    pub validation: f64,
    /// Test fraction (of the whole task).
    pub test: f64,
    /// Caps on the training / validation / test parts (stratified subsamples).
    pub caps: [Option<usize>; 3],
    /// Keep only the features non-zero in at least this many examples of the training part (a
    /// word's document frequency: the vocabulary of a text task); `None` keeps every feature
    /// non-zero somewhere in the training part. Features zero on the whole training part are
    /// dropped either way.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_df: Option<usize>,
    /// Scaling.
    pub scaling: Scaling,
    /// Feature values.
    pub values: Values,
    /// Store the features sparse (CSR) after scaling.
    pub sparse: bool,
}

/// One test error of one split.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cell {
    /// Learner.
    pub learner: Learner,
    /// Attack.
    pub attack: AttackMode,
    /// Budget.
    pub budget: f64,
    /// Test error under the attack.
    pub error: f64,
    /// The `C` chosen on the validation split.
    pub c: f64,
    /// How the grid's fits behind this cell were solved.
    #[serde(default)]
    pub solver: SolverTally,
}

/// What one split of one task produced.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct SplitOutcome {
    /// The test errors.
    pub cells: Vec<Cell>,
    /// Fits that failed (skipped in the grid search).
    pub failures: Vec<String>,
    /// How every fit of the split was solved.
    pub solver: SolverTally,
    /// One line per fit not answered cleanly by its first solver.
    pub solver_notes: Vec<String>,
    /// The learners (registry names) whose cells were computed again after the rest of the
    /// split ([`SplitOutcome::refit`]), or that a run with `--refit` computed with the rest.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub refits: Vec<String>,
    /// The features the learners saw: those kept on the training part (non-zero there, in at
    /// least [`CurveSpec::min_df`] examples); `None` in units cached before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub features: Option<usize>,
}

impl SplitOutcome {
    /// `learner`'s share of [`SplitOutcome::solver`], from its cells: each of its training runs
    /// (one per budget for a learner trained with the budget, else one) tallies its grid into
    /// every cell it produced.
    fn tally_of(&self, learner: Learner) -> SolverTally {
        let mut seen: Vec<u64> = Vec::new();
        let mut t = SolverTally::default();
        for cell in self.cells.iter().filter(|c| c.learner == learner) {
            let run = if learner.uses_budget() {
                cell.budget.to_bits()
            } else {
                0
            };
            if !seen.contains(&run) {
                seen.push(run);
                t.add(&cell.solver);
            }
        }
        t
    }

    /// Replaces `learner`'s cells, failed fits, notes and share of the tally by those of `new`
    /// (the same split run with `learner` alone) and records the refit; the other learners'
    /// results stay as they were.
    pub fn refit(&mut self, learner: Learner, new: SplitOutcome) {
        let prefix = format!("{} C=", learner.name());
        self.features = self.features.or(new.features);
        self.solver.sub(&self.tally_of(learner));
        self.solver.add(&new.solver);
        self.cells.retain(|c| c.learner != learner);
        self.cells.extend(new.cells);
        self.failures.retain(|f| !f.starts_with(&prefix));
        self.failures.extend(new.failures);
        self.solver_notes.retain(|f| !f.starts_with(&prefix));
        self.solver_notes.extend(new.solver_notes);
        let name = learner.registry_name().to_string();
        if !self.refits.contains(&name) {
            self.refits.push(name);
        }
    }
}

/// A stratified subsample of at most `k` of `idx` (class proportions kept, order sorted).
fn cap(
    data: &Dataset,
    idx: Vec<usize>,
    k: Option<usize>,
    rng: &mut bulwark_core::Rng,
) -> Vec<usize> {
    let Some(k) = k else { return idx };
    if idx.len() <= k {
        return idx;
    }
    let y = data.targets();
    let mut by_class: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for i in idx.iter().copied() {
        by_class.entry(y.class_index(i)).or_default().push(i);
    }
    let total = idx.len() as f64;
    let mut out = Vec::with_capacity(k);
    for (_, mut g) in by_class {
        g.shuffle(rng);
        let take = ((g.len() as f64 / total) * k as f64).round().max(1.0) as usize;
        out.extend(g.into_iter().take(take));
    }
    out.sort_unstable();
    out
}

fn max_abs_scale(train: &Dataset, parts: [&Dataset; 3]) -> Result<[Dataset; 3], Error> {
    let n = train.n_features();
    let mut m = vec![0.0f64; n];
    for i in 0..train.len() {
        for (j, v) in train.row(i).nonzeros() {
            m[j] = m[j].max(v.abs());
        }
    }
    let f: Vec<f64> = m
        .iter()
        .map(|&a| if a > 0.0 { 1.0 / a } else { 1.0 })
        .collect();
    let mut out = Vec::with_capacity(3);
    for p in parts {
        let mut d = p.clone();
        d.features_mut().map_in_place(|j, x| x * f[j])?;
        out.push(d);
    }
    Ok([out[0].clone(), out[1].clone(), out[2].clone()])
}

/// Keeps the columns `keep` (increasing; dense or sparse input), optionally storing the result
/// sparse. Sparse input stored sparse is never densified (a text task's vocabulary times its
/// documents would not fit); explicit zeros are dropped, as from a dense matrix.
fn select_columns(d: &Dataset, keep: &[usize], sparse: bool) -> Result<Dataset, Error> {
    let features = match d.features() {
        Features::Sparse(x) if sparse => {
            let mut to = vec![usize::MAX; x.cols()];
            for (k, &j) in keep.iter().enumerate() {
                to[j] = k;
            }
            let mut indptr = Vec::with_capacity(x.rows() + 1);
            let (mut indices, mut values) = (Vec::new(), Vec::new());
            indptr.push(0);
            for i in 0..x.rows() {
                let (idx, val) = x.row(i);
                for (&j, &v) in idx.iter().zip(val) {
                    if to[j] != usize::MAX && v != 0.0 {
                        indices.push(to[j]);
                        values.push(v);
                    }
                }
                indptr.push(indices.len());
            }
            Features::Sparse(bulwark_core::CsrMatrix::try_new(
                x.rows(),
                keep.len(),
                indptr,
                indices,
                values,
            )?)
        }
        f => {
            let cols = f.to_dense().select_cols(keep);
            if sparse {
                Features::Sparse(bulwark_core::CsrMatrix::from_dense(&cols))
            } else {
                Features::Dense(cols)
            }
        }
    };
    let labels: Vec<Sign> = d.binary_labels()?.to_vec();
    Dataset::binary(d.name(), features, labels)
}

/// The parts of one split: train, validation, test, feature values, corruption stats.
pub(crate) type Prepared = (Dataset, Dataset, Dataset, Vec<f64>, CorruptionStats);

/// Prepares one split: (train, validation, test, values, corruption stats).
fn prepare(task: &Dataset, spec: &CurveSpec, seed: u64) -> Result<Prepared, Error> {
    let split = train_val_test(task, spec.validation, spec.test, true, seed)?;
    prepare_split(task, split, spec, seed)
}

/// Prepares the split `split` of `task` (its parts capped, scaled and valued by `spec`, seeded
/// by `seed`).
pub(crate) fn prepare_split(
    task: &Dataset,
    split: bulwark_data::split::Split,
    spec: &CurveSpec,
    seed: u64,
) -> Result<Prepared, Error> {
    let mut rng = rng_for_stream(seed, 1);
    let tr = cap(task, split.train, spec.caps[0], &mut rng);
    let va = cap(task, split.validation, spec.caps[1], &mut rng);
    let te = cap(task, split.test, spec.caps[2], &mut rng);
    let (train, val, test) = (task.select(&tr), task.select(&va), task.select(&te));
    let [train, val, test] = match spec.scaling {
        Scaling::None => [train, val, test],
        Scaling::Standard => {
            let s = Scaler::fit(&train, ScalingKind::Standard)?;
            [
                s.transform(&train)?,
                s.transform(&val)?,
                s.transform(&test)?,
            ]
        }
        Scaling::MaxAbs => max_abs_scale(&train, [&train, &val, &test])?,
    };
    // drop features that are zero on the whole training part (or non-zero in fewer than
    // `min_df` of its examples)
    let mut df = vec![0usize; train.n_features()];
    for i in 0..train.len() {
        for (j, v) in train.row(i).nonzeros() {
            if v != 0.0 {
                df[j] += 1;
            }
        }
    }
    let min_df = spec.min_df.unwrap_or(1).max(1);
    let keep: Vec<usize> = (0..df.len()).filter(|&j| df[j] >= min_df).collect();
    let (train, val, test) = if keep.len() < df.len() || spec.sparse {
        (
            select_columns(&train, &keep, spec.sparse)?,
            select_columns(&val, &keep, spec.sparse)?,
            select_columns(&test, &keep, spec.sparse)?,
        )
    } else {
        (train, val, test)
    };
    let values = match spec.values {
        Values::Uniform => vec![1.0; train.n_features()],
        Values::MutualInformation => mutual_information_values(&train)?,
    };
    let stats = CorruptionStats::fit(&train)?;
    Ok((train, val, test, values, stats))
}

fn attack_error(
    model: &LinearModel,
    data: &Dataset,
    mode: AttackMode,
    budget: f64,
    values: &[f64],
    stats: &CorruptionStats,
    seed: u64,
) -> Result<f64, Error> {
    let attack = Attack::new(mode.kind())
        .with_values(values.to_vec())?
        .with_corruption(stats.clone());
    let budget = match mode {
        // random deletion counts features; budgets beyond the feature count delete everything
        AttackMode::RandomDeletion => budget.round().min(data.n_features() as f64),
        _ => budget,
    };
    Ok(evaluate(model, data, &attack, budget, seed)?.error)
}

/// Runs one split of one task (seeded by `seed`; deterministic).
pub fn run_split(task: &Dataset, spec: &CurveSpec, seed: u64) -> Result<SplitOutcome, Error> {
    run_prepared(
        prepare(task, spec, seed)?,
        spec,
        seed,
        &|l, d, c, n, v, s| l.fit(d, c, n, v, s),
    )
}

/// How a study fits a learner at one grid point: `(learner, train, C, N, values, seed)`, as
/// [`Learner::fit`] takes them.
pub(crate) type FitFn<'a> =
    &'a dyn Fn(Learner, &Dataset, f64, f64, &[f64], u64) -> Result<FitOutcome, Error>;

/// The grid search, tuning and attacks of one prepared split ([`prepare_split`]), every learner
/// fitted by `fit`.
pub(crate) fn run_prepared(
    (train, val, test, values, stats): Prepared,
    spec: &CurveSpec,
    seed: u64,
    fit: FitFn<'_>,
) -> Result<SplitOutcome, Error> {
    let total: f64 = values.iter().sum();
    let mut out = SplitOutcome {
        features: Some(train.n_features()),
        ..SplitOutcome::default()
    };
    let attack_seed = seed ^ 0x5eed_a77a;
    for &learner in &spec.learners {
        let train_budgets: Vec<f64> = if learner.uses_budget() {
            spec.budgets.clone()
        } else {
            vec![0.0]
        };
        for &nb in &train_budgets {
            // LP (4) needs N < V([n]); clamp the training budget (the attack keeps its N)
            let n_train = nb.min(0.95 * total);
            let mut models: Vec<(f64, LinearModel)> = Vec::new();
            let mut tally = SolverTally::default();
            for &c in &spec.grid {
                match fit(learner, &train, c, n_train, &values, seed) {
                    Ok(f) => {
                        tally.add(&f.tally);
                        out.solver_notes.extend(f.note);
                        models.push((c, f.model));
                    }
                    Err(e) => out
                        .failures
                        .push(format!("{} C={c} N={nb}: {e}", learner.name())),
                }
            }
            out.solver.add(&tally);
            if models.is_empty() {
                return Err(Error::Numerical {
                    algorithm: learner.name().into(),
                    message: format!("every fit of the C grid failed at N = {nb}"),
                });
            }
            let eval_budgets: Vec<f64> = if learner.uses_budget() {
                vec![nb]
            } else {
                spec.budgets.clone()
            };
            let clean_val: Vec<f64> = models
                .iter()
                .map(|(_, m)| m.error_rate(&val))
                .collect::<Result<_, _>>()?;
            for &mode in &spec.attacks {
                for &n in &eval_budgets {
                    let val_err: Vec<f64> = if learner.tuned_under_attack() {
                        models
                            .iter()
                            .map(|(_, m)| {
                                attack_error(m, &val, mode, n, &values, &stats, attack_seed)
                            })
                            .collect::<Result<_, _>>()?
                    } else {
                        clean_val.clone()
                    };
                    // the shared rule: the smallest validation error, ties to the smaller C
                    let scores: Vec<Option<f64>> = val_err.iter().copied().map(Some).collect();
                    let best = select::best(&scores, Ties::First).expect("non-empty");
                    let (c, model) = &models[best];
                    let error = attack_error(model, &test, mode, n, &values, &stats, attack_seed)?;
                    out.cells.push(Cell {
                        learner,
                        attack: mode,
                        budget: n,
                        error,
                        c: *c,
                        solver: tally,
                    });
                }
            }
        }
    }
    Ok(out)
}

/// Test errors and chosen `C`s per `(learner, attack, budget bits)`.
pub type Aggregated = BTreeMap<(Learner, AttackMode, u64), (Vec<f64>, Vec<f64>, SolverTally)>;

/// Aggregates cells over splits: `(learner, attack, budget) → (errors, chosen Cs)`.
pub fn aggregate<'a>(cells: impl IntoIterator<Item = &'a Cell>) -> Aggregated {
    let mut map = Aggregated::new();
    for c in cells {
        let e = map
            .entry((c.learner, c.attack, c.budget.to_bits()))
            .or_default();
        e.0.push(c.error);
        e.1.push(c.c);
        e.2.add(&c.solver);
    }
    map
}

/// Median of a non-empty slice.
pub fn median(v: &[f64]) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    Some(s[s.len() / 2])
}

/// Turns aggregated cells into table rows.
pub fn rows_of(map: &Aggregated, task: Option<&str>) -> Vec<crate::experiment::Row> {
    map.iter()
        .map(|((l, a, b), (errs, cs, solver))| crate::experiment::Row {
            task: task.map(str::to_string),
            learner: l.name().to_string(),
            attack: a.name().to_string(),
            budget: f64::from_bits(*b),
            error: MeanSe::of(errs),
            chosen_c: median(cs),
            paper: None,
            paper_pm: None,
            solver: *solver,
        })
        .collect()
}

/// Runs `f` on every job with `threads` workers; results come back in job order, so the output
/// does not depend on the thread count.
pub fn run_jobs<J: Sync, R: Send>(
    jobs: &[J],
    threads: usize,
    f: impl Fn(&J) -> R + Sync,
) -> Vec<R> {
    let next = AtomicUsize::new(0);
    let slots: Mutex<Vec<Option<R>>> = Mutex::new((0..jobs.len()).map(|_| None).collect());
    std::thread::scope(|s| {
        for _ in 0..threads.max(1).min(jobs.len().max(1)) {
            s.spawn(|| {
                loop {
                    let k = next.fetch_add(1, Ordering::Relaxed);
                    if k >= jobs.len() {
                        break;
                    }
                    let r = f(&jobs[k]);
                    slots.lock().expect("no worker panicked")[k] = Some(r);
                }
            });
        }
    });
    slots
        .into_inner()
        .expect("no worker panicked")
        .into_iter()
        .map(|r| r.expect("every job ran"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use bulwark_core::CsrMatrix;

    /// 100 documents over 4 words: word 0 in every one, word 1 in the even ones, word 2 in
    /// documents 0-4, word 3 in none; every third document is +1.
    fn documents() -> Dataset {
        let mut indptr = vec![0];
        let (mut indices, mut values) = (Vec::new(), Vec::new());
        for i in 0..100 {
            for (j, present) in [true, i % 2 == 0, i < 5, false].into_iter().enumerate() {
                if present {
                    indices.push(j);
                    values.push(1.0);
                }
            }
            indptr.push(indices.len());
        }
        let x = CsrMatrix::try_new(100, 4, indptr, indices, values).unwrap();
        let y = (0..100)
            .map(|i| if i % 3 == 0 { Sign::Pos } else { Sign::Neg })
            .collect();
        Dataset::binary("documents", Features::Sparse(x), y).unwrap()
    }

    fn spec(min_df: Option<usize>) -> CurveSpec {
        CurveSpec {
            learners: Vec::new(),
            attacks: vec![AttackMode::Deletion],
            budgets: vec![0.0],
            grid: vec![1.0],
            splits: 1,
            validation: 0.2,
            test: 0.2,
            caps: [None; 3],
            min_df,
            scaling: Scaling::None,
            values: Values::Uniform,
            sparse: true,
        }
    }

    /// Sparse input keeps its CSR storage and gives the matrix the dense path gives.
    #[test]
    fn sparse_columns_stay_sparse_and_match_the_dense_path() {
        let d = documents();
        let dense = d
            .with_features(Features::Dense(d.features().to_dense()))
            .unwrap();
        let keep = [0, 2, 3];
        let a = select_columns(&d, &keep, true).unwrap();
        let b = select_columns(&dense, &keep, true).unwrap();
        assert!(matches!(a.features(), Features::Sparse(_)));
        assert_eq!(a.features(), b.features());
        assert_eq!(a.n_features(), 3);
        assert_eq!(a.features().nnz(), 100 + 5);
    }

    /// `min_df` keeps the words in at least that many training documents; without it a word in
    /// a single training document stays, a word in none goes.
    #[test]
    fn min_df_keeps_the_words_of_enough_training_documents() {
        let d = documents();
        let (train, val, test, values, _) = prepare(&d, &spec(Some(10)), 3).unwrap();
        assert_eq!(train.n_features(), 2, "words 0 and 1");
        for part in [&train, &val, &test] {
            assert!(matches!(part.features(), Features::Sparse(_)));
            assert_eq!(part.n_features(), 2);
        }
        assert_eq!(values, vec![1.0, 1.0]);
        // the training part has 60 documents, about 30 of them even: word 1 is in each of them
        let df1 = (0..train.len())
            .filter(|&i| train.row(i).get(1) != 0.0)
            .count();
        assert!(df1 >= 10, "{df1}");
        let (train, ..) = prepare(&d, &spec(None), 3).unwrap();
        let in_training = (0..train.len()).any(|i| train.row(i).nonzeros().count() == 3);
        assert_eq!(train.n_features(), if in_training { 3 } else { 2 });
        assert!(train.n_features() >= 2);
    }
}
