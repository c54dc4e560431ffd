//! What the adversary knows (its reference model and the clean norms) and the ten contamination
//! models applied to a clean part.

use bulwark_adversary::{
    AimedOutliers, LabelNoise, LabelNoiseMode, MaliciousAdversary, MaliciousNoise,
    NormMatchedOutliers, RolrOutliers,
};
use bulwark_contamination::NormThreshold;
use bulwark_core::{Contamination, Dataset, Error, Fit};
use bulwark_online::LogregParams;

use super::{AMU_PAPER_C, KAPPA, MODELS};
use crate::guru::with_constant;

/// What the adversary knows: the reference model on the clean training part, and the norms
/// its aimed points are placed at.
pub(super) struct Reference {
    /// `β̂` (without the intercept) and the intercept.
    w: Vec<f64>,
    b: f64,
    median_norm: f64,
    max_norm: f64,
    /// The MAD norm threshold on the clean training part with the constant feature.
    mad_threshold: f64,
}

fn norms(d: &Dataset) -> Vec<f64> {
    (0..d.len())
        .map(|i| d.row(i).nonzeros().map(|(_, v)| v * v).sum::<f64>().sqrt())
        .collect()
}

impl Reference {
    pub(super) fn of(train: &Dataset) -> Result<Self, Error> {
        let f = LogregParams::new().l2(1e-4).fit(train)?;
        let mut n = norms(train);
        n.sort_by(f64::total_cmp);
        let aug = with_constant(train)?;
        let t = NormThreshold::mad()
            .value(&aug.view(), 0)?
            .unwrap_or(f64::INFINITY);
        Ok(Self {
            w: f.model.weights().to_vec(),
            b: f.model.bias(),
            median_norm: n[n.len() / 2],
            max_norm: *n.last().unwrap_or(&1.0),
            mad_threshold: t,
        })
    }
}

/// A_mu runs on `x/S`, `S = BALL·√d` (centred coordinates lie in `[−2, 2]`, so every clean
/// point is in the unit ball).
pub(super) const BALL: f64 = 2.0;

/// A_mu's removal cut `(w·x)² ≥ c ln m / d` on `x/S` (KLS A_mu step 3), on the data as the
/// adversary sees it: `(w·x)² ≥ c ln m · BALL²`.
fn amu_cut(c: f64, m: f64) -> f64 {
    c * m.ln() * BALL * BALL
}

/// The radius of an aimed point whose norm with the constant feature (which adds 1 to `‖x‖²`)
/// is just below `bound`.
fn inside(bound: f64) -> f64 {
    (bound * bound * (1.0 - 1e-6) - 1.0).max(0.0).sqrt()
}

/// `model` at rate `eps` applied to the clean part `clean` (scaled, no constant); the result with
/// the constant feature. `smallest` are the smallest A_mu and A_mlc constants of the grids.
pub(super) fn contaminate(
    model: usize,
    eps: f64,
    clean: &Dataset,
    r: &Reference,
    smallest: (f64, f64),
    rng: &mut bulwark_core::Rng,
) -> Result<Dataset, Error> {
    let m = clean.len();
    let n = clean.n_features();
    let d = (n + 1) as f64;
    let appended = ((eps * m as f64) / (1.0 - eps)).round() as usize;
    let total = (m + appended) as f64;
    let aimed = |radius: f64| AimedOutliers {
        n_outliers: appended,
        estimate: r.w.clone(),
        bias: r.b,
        radius,
        jitter: 0.1,
    };
    let mut flips = |mode: LabelNoiseMode| -> Result<Dataset, Error> {
        let mut target = r.w.clone();
        target.push(r.b);
        Ok(LabelNoise {
            eta: eps,
            mode,
            target: Some(target),
        }
        .contaminate(&with_constant(clean)?, rng)?
        .0)
    };
    let out = match MODELS[model].0 {
        "random_flips" => return flips(LabelNoiseMode::Random),
        "boundary_flips" => return flips(LabelNoiseMode::NearBoundary),
        "coordinated" | "evasive" => {
            let adversary = if MODELS[model].0 == "coordinated" {
                MaliciousAdversary::CoordinatedPull {
                    angle: 0.0,
                    radius: r.median_norm,
                }
            } else {
                // the constant feature adds 1 to ‖x‖²
                MaliciousAdversary::EvasivePull {
                    threshold: (amu_cut(AMU_PAPER_C, m as f64) - 1.0).max(1e-12),
                    directions: 1,
                }
            };
            MaliciousNoise {
                eta: eps,
                adversary,
                target: Some(r.w.clone()),
            }
            .contaminate(clean, rng)?
            .0
        }
        "rolr_outliers" => {
            RolrOutliers {
                n_outliers: appended,
                beta: r.w.clone(),
                scale: 10.0,
            }
            .contaminate(clean, rng)?
            .0
        }
        "norm_matched" => {
            NormMatchedOutliers {
                n_outliers: appended,
                estimate: r.w.clone(),
                jitter: 0.5,
            }
            .contaminate(clean, rng)?
            .0
        }
        "adaptive_far" => aimed(10.0 * r.max_norm).contaminate(clean, rng)?.0,
        "adaptive_norm" => {
            aimed(inside(0.98 * r.mad_threshold))
                .contaminate(clean, rng)?
                .0
        }
        // A_mu's cut at the grid's smallest c
        "adaptive_amu" => {
            aimed(inside(amu_cut(smallest.0, total).sqrt()))
                .contaminate(clean, rng)?
                .0
        }
        // A_mlcw's cut c₀ ln(n/κ) on the data as given (n = d with the constant)
        _ => {
            aimed(inside((smallest.1 * (d / KAPPA).ln()).sqrt()))
                .contaminate(clean, rng)?
                .0
        }
    };
    with_constant(&out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::poisoning::defences::shrunk;
    use crate::poisoning::protocol::draw;
    use crate::poisoning::tests::tiny;
    use bulwark_contamination::{AmuParams, NormFilter};
    use bulwark_core::{RowFilter, rng_for_stream};

    /// The adaptive points sit where their defences cannot see them: inside the MAD threshold
    /// (the filter keeps them) and below A_mu's smallest cut (A_mu removes none of them).
    #[test]
    fn adaptive_points_evade_their_filters() {
        let proto = tiny();
        let spec = &proto.sets[1];
        let (train, ..) = draw(spec, None, 5).unwrap();
        let r = Reference::of(&train).unwrap();
        let m = train.len();
        let smallest = (0.5, 1.0);
        let mut rng = rng_for_stream(1, 2);
        let t = contaminate(7, 0.2, &train, &r, smallest, &mut rng).unwrap();
        let kept = NormFilter::new(NormThreshold::mad(), 0)
            .filter(&t.view())
            .unwrap();
        assert!(kept.removed.iter().all(|&i| i < m), "{:?}", kept.removed);
        let t = contaminate(8, 0.2, &train, &r, smallest, &mut rng).unwrap();
        assert!(t.len() > m);
        let d = t.n_features() as f64;
        let fit = AmuParams::new()
            .constant(0.5)
            .run(&shrunk(&t, BALL * d.sqrt()).unwrap().view())
            .unwrap();
        assert!(fit.removed.iter().all(|&i| i < m), "{:?}", fit.removed);
        // the far points are far
        let t = contaminate(6, 0.2, &train, &r, smallest, &mut rng).unwrap();
        let n = norms(&t);
        assert!(n[m..].iter().all(|&v| v > 9.0 * r.max_norm));
    }
}
