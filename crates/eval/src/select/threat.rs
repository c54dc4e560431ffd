//! What a model selection scores every fold under: the test-time attack on the validation fold
//! (after the data's own pattern of missing cells, when asked) or the contamination of the
//! training fold.

use std::fmt;
use std::str::FromStr;

use bulwark_adversary::{
    Attack, AttackKind, CorruptionStats, LabelNoise, LabelNoiseMode, MaliciousAdversary,
    MaliciousNoise, evaluate_model,
};
use bulwark_core::{
    AnyModel, Classifier, Contamination, Dataset, Error, Features, MissingMask, Result, Rng,
};
use rand::Rng as _;

const THREATS: &str = "none, missing, greedy-delete:N, random-delete:N, greedy-corrupt:N, \
uniform-noise:X, or a contamination of the training folds at a rate in [0, 1) \
(label-random:R, label-far:R, label-near:R, label-halfspace:R, flipped-labels:R, \
random-points:R, coordinated-pull:R); `missing` may be joined to one attack by + \
(missing+greedy-delete:2)";

/// A test-time attack on every validation fold; `N` counts features (uniform values) and is
/// spent on top of the cells already missing.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum TestAttack {
    /// DSX §4 greedy deletion of up to `N` features per record.
    GreedyDelete(f64),
    /// `N` non-zero features per record deleted at random.
    RandomDelete(f64),
    /// DSX §4 greedy corruption of up to `N` features (Gaussian with the training fold's
    /// moments).
    GreedyCorrupt(f64),
    /// i.i.d. `U(−x, x)` on every feature (in the scaled units).
    UniformNoise(f64),
}

impl TestAttack {
    fn kind(self) -> (AttackKind, f64) {
        match self {
            TestAttack::GreedyDelete(n) => (AttackKind::GreedyDelete, n),
            TestAttack::RandomDelete(n) => (AttackKind::RandomDelete, n),
            TestAttack::GreedyCorrupt(n) => (AttackKind::GreedyCorrupt, n),
            TestAttack::UniformNoise(x) => (AttackKind::UniformNoise, x),
        }
    }
}

/// A contamination model of `bulwark-adversary` applied to every training fold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Contaminant {
    /// Each label flipped with probability `R`.
    LabelRandom,
    /// The `R m` labels farthest from the boundary `Σ y x` flipped.
    LabelFar,
    /// The `R m` positive examples nearest that boundary flipped.
    LabelNear,
    /// The `R m` examples of largest `z·x`, `z ⟂` the boundary, flipped.
    LabelHalfspace,
    /// KLS malicious noise: each example's label flipped with probability `R`.
    FlippedLabels,
    /// KLS malicious noise: each example replaced with probability `R` by a random point.
    RandomPoints,
    /// KLS malicious noise: each example replaced with probability `R` by the coordinated pull
    /// (a point orthogonal to the boundary at the fold's median norm, label +1).
    CoordinatedPull,
}

const CONTAMINANTS: [(&str, Contaminant); 7] = [
    ("label-random", Contaminant::LabelRandom),
    ("label-far", Contaminant::LabelFar),
    ("label-near", Contaminant::LabelNear),
    ("label-halfspace", Contaminant::LabelHalfspace),
    ("flipped-labels", Contaminant::FlippedLabels),
    ("random-points", Contaminant::RandomPoints),
    ("coordinated-pull", Contaminant::CoordinatedPull),
];

/// What every fold is scored under. Parsed from and printed as the command line's `--threat`.
///
/// ```
/// use bulwark_eval::select::{TestAttack, Threat};
/// let t: Threat = "missing+greedy-delete:2".parse()?;
/// assert!(t.missing);
/// assert_eq!(t.attack, Some(TestAttack::GreedyDelete(2.0)));
/// assert_eq!(t.to_string(), "missing+greedy-delete:2");
/// assert!("greedy-delete:-1".parse::<Threat>().is_err());
/// # Ok::<(), bulwark_core::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Threat {
    /// Validation records lose the cells of a pattern drawn from the data's records with
    /// missing cells (or from a pool given), besides their own.
    pub missing: bool,
    /// The attack on the validation folds.
    pub attack: Option<TestAttack>,
    /// The contamination of the training folds, with its rate.
    pub contamination: Option<(Contaminant, f64)>,
}

fn amount(part: &str, s: &str, integer: bool) -> Result<f64> {
    let x: f64 = s
        .trim()
        .parse()
        .map_err(|_| Error::param("threat", part, format!("a number after `:` ({THREATS})")))?;
    if !(x.is_finite() && x >= 0.0) || (integer && x.fract() != 0.0) {
        let what = if integer {
            "a whole number of features >= 0"
        } else {
            "a finite number >= 0"
        };
        return Err(Error::param("threat", part, what));
    }
    Ok(x)
}

impl FromStr for Threat {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        let mut t = Threat::default();
        if s.trim() == "none" {
            return Ok(t);
        }
        let unknown = |part: &str| Error::param("threat", part, format!("one of {THREATS}"));
        for part in s.split('+').map(str::trim) {
            let (name, arg) = match part.split_once(':') {
                Some((n, a)) => (n.trim(), Some(a)),
                None => (part, None),
            };
            let twice = || Error::param("threat", s, "each kind of threat at most once");
            match (name, arg) {
                ("missing", None) => {
                    if t.missing {
                        return Err(twice());
                    }
                    t.missing = true;
                }
                (
                    "greedy-delete" | "random-delete" | "greedy-corrupt" | "uniform-noise",
                    Some(a),
                ) => {
                    if t.attack.is_some() {
                        return Err(Error::param("threat", s, "at most one test-time attack"));
                    }
                    let x = amount(part, a, name == "random-delete")?;
                    t.attack = Some(match name {
                        "greedy-delete" => TestAttack::GreedyDelete(x),
                        "random-delete" => TestAttack::RandomDelete(x),
                        "greedy-corrupt" => TestAttack::GreedyCorrupt(x),
                        _ => TestAttack::UniformNoise(x),
                    });
                }
                (n, Some(a)) if CONTAMINANTS.iter().any(|(k, _)| *k == n) => {
                    if t.contamination.is_some() {
                        return Err(twice());
                    }
                    let r = amount(part, a, false)?;
                    if r >= 1.0 {
                        return Err(Error::param("threat", part, "a rate in [0, 1)"));
                    }
                    let c = CONTAMINANTS.iter().find(|(k, _)| *k == n).map(|p| p.1);
                    t.contamination = c.map(|c| (c, r));
                }
                (n, None) if n != "missing" && n != "none" && !n.is_empty() => {
                    return Err(Error::param(
                        "threat",
                        part,
                        format!("`{n}:VALUE` ({THREATS})"),
                    ));
                }
                _ => return Err(unknown(part)),
            }
        }
        Ok(t)
    }
}

impl fmt::Display for Threat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = Vec::new();
        if self.missing {
            parts.push("missing".to_string());
        }
        if let Some(a) = self.attack {
            let (kind, x) = a.kind();
            parts.push(format!("{}:{x}", kind.as_str()));
        }
        if let Some((c, r)) = self.contamination {
            let name = CONTAMINANTS
                .iter()
                .find(|(_, k)| *k == c)
                .map_or("?", |p| p.0);
            parts.push(format!("{name}:{r}"));
        }
        if parts.is_empty() {
            f.write_str("none")
        } else {
            f.write_str(&parts.join("+"))
        }
    }
}

impl Threat {
    /// Whether scoring reads a binary linear model's weights (the greedy attacks).
    pub fn needs_weights(&self) -> bool {
        matches!(
            self.attack,
            Some(TestAttack::GreedyDelete(_) | TestAttack::GreedyCorrupt(_))
        )
    }

    /// The training fold as the threat leaves it: contaminated (seeded by `rng`) when it says
    /// so. Missing cells stay 0 (the learners see deleted features either way).
    pub(crate) fn training(&self, train: &Dataset, rng: &mut Rng) -> Result<Dataset> {
        let Some((c, eta)) = self.contamination else {
            return Ok(train.clone());
        };
        let clean = train.clone().forget_missing();
        let label = |mode| LabelNoise {
            eta,
            mode,
            target: None,
        };
        let malicious = |adversary| MaliciousNoise {
            eta,
            adversary,
            target: None,
        };
        let out = match c {
            Contaminant::LabelRandom => label(LabelNoiseMode::Random).contaminate(&clean, rng),
            Contaminant::LabelFar => {
                label(LabelNoiseMode::FarFromBoundary).contaminate(&clean, rng)
            }
            Contaminant::LabelNear => label(LabelNoiseMode::NearBoundary).contaminate(&clean, rng),
            Contaminant::LabelHalfspace => {
                label(LabelNoiseMode::Halfspace).contaminate(&clean, rng)
            }
            Contaminant::FlippedLabels => {
                malicious(MaliciousAdversary::FlippedLabels).contaminate(&clean, rng)
            }
            Contaminant::RandomPoints => {
                malicious(MaliciousAdversary::RandomPoints).contaminate(&clean, rng)
            }
            Contaminant::CoordinatedPull => {
                let mut norms: Vec<f64> = (0..clean.len())
                    .map(|i| {
                        clean
                            .row(i)
                            .nonzeros()
                            .map(|(_, v)| v * v)
                            .sum::<f64>()
                            .sqrt()
                    })
                    .collect();
                norms.sort_by(f64::total_cmp);
                let radius = norms.get(norms.len() / 2).copied().unwrap_or(1.0);
                malicious(MaliciousAdversary::CoordinatedPull { angle: 0.0, radius })
                    .contaminate(&clean, rng)
            }
        }?;
        Ok(out.0)
    }

    /// The validation fold as the threat scores it: with `missing`, every record also loses the
    /// cells of a pattern drawn uniformly (by `rng`) from the non-empty patterns of `pool`;
    /// the lost cells hold 0 (the deleted value of the scaled data) and join its mask.
    pub(crate) fn validation(
        &self,
        val: &Dataset,
        pool: &Patterns,
        rng: &mut Rng,
    ) -> Result<Dataset> {
        if !self.missing {
            return Ok(val.clone());
        }
        let drawn = pool.incomplete();
        if drawn.is_empty() {
            return Err(Error::param(
                "threat",
                "missing",
                "records with missing cells to draw the pattern from (none here: read the data with --missing delete, or give --missing-from FILE)",
            ));
        }
        let n = val.n_features();
        if pool.n_features != n {
            return Err(Error::shape(
                "missing-cell patterns vs data features",
                n,
                pool.n_features,
            ));
        }
        let mut x = val.features().to_dense();
        let mut rows = Vec::with_capacity(val.len());
        for i in 0..val.len() {
            let pattern = &drawn[rng.random_range(0..drawn.len())];
            let mut cols: Vec<usize> = val.missing().map_or_else(Vec::new, |m| m.row(i).to_vec());
            cols.extend_from_slice(pattern);
            cols.sort_unstable();
            cols.dedup();
            for &j in &cols {
                x.row_mut(i)[j] = 0.0;
            }
            rows.push(cols);
        }
        let features = match val.features() {
            Features::Dense(_) => Features::Dense(x),
            Features::Sparse(_) => Features::Sparse(bulwark_core::CsrMatrix::from_dense(&x)),
        };
        val.clone()
            .forget_missing()
            .with_features(features)?
            .with_missing(MissingMask::from_rows(n, &rows)?)
    }

    /// The error of `model` on the validation fold `val` (as [`Threat::validation`] left it)
    /// under the attack: the deletion and corruption budgets count features (uniform values)
    /// and are spent on top of the cells already missing; `stats` are the training fold's
    /// moments (greedy corruption).
    pub(crate) fn score(
        &self,
        model: &AnyModel,
        val: &Dataset,
        stats: &CorruptionStats,
        seed: u64,
    ) -> Result<f64> {
        let Some(a) = self.attack else {
            return model.error_rate(val);
        };
        let (kind, x) = a.kind();
        let data = if kind == AttackKind::UniformNoise {
            val.clone()
        } else {
            val.clone().forget_missing()
        };
        let mut attack = Attack::new(kind);
        if kind == AttackKind::GreedyCorrupt {
            attack = attack.with_corruption(stats.clone());
        }
        Ok(evaluate_model(model, &data, &attack, x, seed)?.error)
    }
}

/// A pool of missing-cell patterns: the missing columns of each record of a data set (empty for
/// a complete record). The threat `missing` draws from its non-empty patterns; the feature
/// values `missingness` follow its missing rates.
#[derive(Debug, Clone, PartialEq)]
pub struct Patterns {
    rows: Vec<Vec<usize>>,
    n_features: usize,
}

impl Patterns {
    /// The patterns of `data`'s records.
    pub fn of(data: &Dataset) -> Self {
        let rows = (0..data.len())
            .map(|i| data.missing().map_or_else(Vec::new, |m| m.row(i).to_vec()))
            .collect();
        Self {
            rows,
            n_features: data.n_features(),
        }
    }
    /// Records in the pool.
    pub fn len(&self) -> usize {
        self.rows.len()
    }
    /// Whether the pool has no record.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }
    /// The features of the records.
    pub fn n_features(&self) -> usize {
        self.n_features
    }
    /// The non-empty patterns, in record order.
    pub fn incomplete(&self) -> Vec<&[usize]> {
        self.rows
            .iter()
            .filter(|r| !r.is_empty())
            .map(Vec::as_slice)
            .collect()
    }
    /// The patterns as a mask (one row per record).
    pub fn mask(&self) -> Result<MissingMask> {
        MissingMask::from_rows(self.n_features, &self.rows)
    }
    /// The feature values `missingness` of these records (`bulwark_data::missingness`).
    pub fn missingness_values(&self) -> Result<Vec<f64>> {
        let mask = self.mask()?;
        bulwark_data::missingness_values_of(Some(&mask), self.rows.len(), self.n_features)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bulwark_core::{DenseMatrix, Sign, rng_from_seed};

    fn dense(d: &Dataset) -> DenseMatrix {
        d.features().to_dense()
    }

    #[test]
    fn threats_parse_print_and_refuse_what_they_should() {
        for s in [
            "none",
            "missing",
            "greedy-delete:2",
            "random-delete:3",
            "greedy-corrupt:1.5",
            "uniform-noise:0.5",
            "label-random:0.1",
            "coordinated-pull:0.2",
            "missing+greedy-delete:1",
        ] {
            let t: Threat = s.parse().unwrap();
            assert_eq!(t.to_string(), s);
        }
        for (bad, says) in [
            ("greedy-delete", "`greedy-delete:VALUE`"),
            ("greedy-delete:x", "a number after"),
            ("greedy-delete:-1", "a finite number >= 0"),
            ("random-delete:1.5", "a whole number"),
            ("label-random:1", "a rate in [0, 1)"),
            ("exact-delete:1", "one of none"),
            ("missing+missing", "at most once"),
            (
                "greedy-delete:1+random-delete:1",
                "at most one test-time attack",
            ),
            ("", "one of none"),
        ] {
            let e = bad.parse::<Threat>().unwrap_err().to_string();
            assert!(
                e.contains("invalid parameter `threat`") && e.contains(says),
                "{bad}: {e}"
            );
        }
        assert!(
            "greedy-corrupt:1"
                .parse::<Threat>()
                .unwrap()
                .needs_weights()
        );
        assert!(!"random-delete:1".parse::<Threat>().unwrap().needs_weights());
    }

    #[test]
    fn missing_draws_a_pattern_from_the_pool_for_every_validation_record() {
        let x = DenseMatrix::from_rows(&[vec![1.0, 2.0, 3.0], vec![4.0, 5.0, 6.0]]).unwrap();
        let val = Dataset::binary("v", x, vec![Sign::Pos, Sign::Neg]).unwrap();
        let px = DenseMatrix::from_rows(&[vec![0.0, 1.0, 1.0], vec![1.0, 1.0, 1.0]]).unwrap();
        let pool = Dataset::binary("p", px, vec![Sign::Pos, Sign::Neg])
            .unwrap()
            .with_missing(MissingMask::from_rows(3, &[vec![0], vec![]]).unwrap())
            .unwrap();
        let pool = Patterns::of(&pool);
        assert_eq!(pool.incomplete(), [&[0usize][..]]);
        let t: Threat = "missing".parse().unwrap();
        let out = t.validation(&val, &pool, &mut rng_from_seed(1)).unwrap();
        // the one non-empty pattern deletes feature 0 of both records
        assert_eq!(dense(&out).row(0), [0.0, 2.0, 3.0]);
        assert_eq!(dense(&out).row(1), [0.0, 5.0, 6.0]);
        assert_eq!(out.n_missing(), 2);
        // rates over the pool's two records: feature 0 missing in one
        let v = pool.missingness_values().unwrap();
        assert_eq!(
            v,
            [
                -(2.0f64 / 4.0).ln(),
                -(1.0f64 / 4.0).ln(),
                -(1.0f64 / 4.0).ln()
            ]
        );
        // a pool without missing cells is refused by name
        let none = Patterns::of(&val);
        let e = t
            .validation(&val, &none, &mut rng_from_seed(1))
            .unwrap_err();
        assert!(e.to_string().contains("--missing-from"), "{e}");
        // no threat: the fold as it is
        let plain = Threat::default()
            .validation(&val, &none, &mut rng_from_seed(1))
            .unwrap();
        assert_eq!(plain.features(), val.features());
    }
}
