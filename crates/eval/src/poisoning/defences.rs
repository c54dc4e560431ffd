//! Every defence with its hyper-parameter chosen on the contaminated validation part, and one
//! unit: one set, repetition, contamination model and rate.

use std::time::Instant;

use bulwark_contamination::{
    AmuParams, AveragingParams, NormFilter, NormThreshold, RolrParams, SmoothBoostParams,
    WeakLearner,
};
use bulwark_core::{
    Dataset, DecisionFunction, Ensemble, Error, Features, Fit, LinearModel, RowFilter, Sign,
    rng_for_stream,
};
use bulwark_gaussian::{GuruParams, Solver};
use bulwark_online::{LogregParams, SvmParams};

use super::contaminate::{BALL, Reference, contaminate};
use super::protocol::draw;
use super::{
    DEFENCES, DefenceOut, GAMMA, KAPPA, MODELS, Protocol, ROLR_TOLERANCE, SetSpec, UnitOut,
};
use crate::guru::with_constant;
use crate::learner::Learner;

/// The error of `h` on `d` (0 → the negative class).
fn error_of(h: &impl DecisionFunction, d: &Dataset) -> Result<f64, Error> {
    let y = d.binary_labels()?;
    let wrong = (0..d.len())
        .filter(|&i| Sign::of_score(h.decision(d.row(i))) != y[i])
        .count();
    Ok(wrong as f64 / d.len().max(1) as f64)
}

/// A fitted hypothesis and whether its solver met its tolerance (with why not).
type Fitted<H> = (H, Option<String>);

/// Fits every grid value, picks the smallest validation error (ties: the first), and returns
/// its test error. A grid point whose fit fails is skipped and noted.
fn select<H: DecisionFunction>(
    grid: &[f64],
    (val, test): (&Dataset, &Dataset),
    what: &str,
    notes: &mut Vec<String>,
    mut fit: impl FnMut(f64) -> Result<Fitted<H>, Error>,
) -> DefenceOut {
    let clock = Instant::now();
    let mut out = DefenceOut::default();
    let mut fitted: Vec<(f64, H)> = Vec::new();
    let mut scores: Vec<Option<f64>> = Vec::new();
    for &g in grid {
        out.tally.fits += 1;
        let (h, unconverged) = match fit(g) {
            Ok(f) => f,
            Err(e) => {
                out.tally.not_converged += 1;
                notes.push(format!("{what} ({g}): failed: {e}"));
                continue;
            }
        };
        if let Some(why) = unconverged {
            out.tally.not_converged += 1;
            notes.push(format!("{what} ({g}): {why}"));
        }
        scores.push(error_of(&h, val).ok());
        fitted.push((g, h));
    }
    // the shared rule: the smallest validation error, ties to the first (most regularised)
    if let Some(k) = crate::select::best(&scores, crate::select::Ties::First) {
        let (g, h) = &fitted[k];
        out.error = error_of(h, test).ok();
        out.chosen = g.is_finite().then_some(*g);
    }
    out.seconds = clock.elapsed().as_secs_f64();
    out
}

fn report_note(r: &bulwark_core::FitReport) -> Option<String> {
    (!r.converged).then(|| r.summary())
}

/// The data divided by `s` (A_mu's unit ball).
pub(super) fn shrunk(d: &Dataset, s: f64) -> Result<Dataset, Error> {
    let mut x = d.features().to_dense();
    x.as_mut_slice().iter_mut().for_each(|v| *v /= s);
    d.with_features(Features::Dense(x))
}

/// Every defence on one contaminated training / validation pair, judged on the clean test part.
fn defences(
    proto: &Protocol,
    train: &Dataset,
    filtered: &Dataset,
    val: &Dataset,
    test: &Dataset,
    seed: u64,
    what: &str,
    out: &mut UnitOut,
) -> Result<(), Error> {
    let parts = (val, test);
    let m = train.len();
    let d = train.n_features();
    let notes = &mut out.notes;
    let mut res = Vec::with_capacity(DEFENCES.len());
    for (key, title) in DEFENCES {
        let what = format!("{what} {title}");
        let o = match key {
            "rolr" => select(&proto.rolr_frac, parts, &what, notes, |f| {
                let n1 = ((f * m as f64).round() as usize).clamp(1, m - 1);
                let r = RolrParams::new()
                    .outliers(n1)
                    .threshold(NormThreshold::mad())
                    .tolerance(ROLR_TOLERANCE)
                    .max_iter(5000)
                    .fit(train)?;
                Ok((r.model, report_note(&r.report)))
            }),
            "lr_p" => select(&proto.lr_l2, parts, &what, notes, |l2| {
                let r = LogregParams::new().l2(l2).intercept(false).fit(filtered)?;
                Ok((r.model, report_note(&r.report)))
            }),
            "average" => select(&[f64::NAN], parts, &what, notes, |_| {
                let r = AveragingParams::new().fit(train)?;
                Ok((r.model, report_note(&r.report)))
            }),
            "amu" => {
                let ball = shrunk(train, BALL * (d as f64).sqrt())?;
                select(&proto.amu_c, parts, &what, notes, |c| {
                    let r = AmuParams::new().constant(c).fit(&ball)?;
                    Ok((r.model, report_note(&r.report)))
                })
            }
            "amlc" => select(&proto.amlc_c0, parts, &what, notes, |c0| {
                let r = match SmoothBoostParams::new()
                    .kappa(KAPPA)
                    .gamma(GAMMA)
                    .weak(WeakLearner::OutlierRemoval { c0 })
                    .max_rounds(proto.amlc_rounds)
                    .fit(train)
                {
                    Ok(r) => r,
                    // no weak hypothesis reached γ: A_mlc has no hypothesis, scored as the
                    // zero one (every point negative), like RoLR's certified breakdown
                    Err(Error::InvalidParameter { name, expected, .. }) if name == "gamma" => {
                        let zero = LinearModel::try_new(vec![0.0; d], 0.0)?;
                        let h = Ensemble::try_new(vec![zero], vec![1.0])?;
                        return Ok((
                            h,
                            Some(format!("broke down, the zero hypothesis: {expected}")),
                        ));
                    }
                    Err(e) => return Err(e),
                };
                // a run the weak learner ended is the algorithm's normal end under noise
                let limit = r.report.details.get("stopped_by_round_limit").copied() == Some(1.0);
                Ok((
                    r.model,
                    limit.then(|| format!("stopped at the {}-round limit", proto.amlc_rounds)),
                ))
            }),
            "guru" => {
                // the σ path from the largest σ down, warm-started
                let mut start: Option<Vec<f64>> = None;
                select(&proto.guru_sigma, parts, &what, notes, |s| {
                    let (f, _) = GuruParams::new()
                        .sigma(s)
                        .solver(Solver::Batch)
                        .tolerance(1e-6)
                        .max_iter(1000)
                        .fit_certified_from(train, start.as_deref())?;
                    start = Some(f.model.weights().to_vec());
                    let why = (!f.converged).then(|| {
                        format!(
                            "stopped at relative gap {:.1e} ({})",
                            f.certificate.relative_gap,
                            f.stopped.as_deref().unwrap_or("")
                        )
                    });
                    Ok((f.model, why))
                })
            }
            "lr" => select(&proto.lr_l2, parts, &what, notes, |l2| {
                let r = LogregParams::new().l2(l2).intercept(false).fit(train)?;
                Ok((r.model, report_note(&r.report)))
            }),
            "svm" => select(&proto.svm_c, parts, &what, notes, |c| {
                let r = SvmParams::new()
                    .c(c)
                    .bias(false)
                    .tolerance(1e-3)
                    .max_passes(proto.svm_passes)
                    .seed(seed)
                    .fit(train)?;
                Ok((r.model, report_note(&r.report)))
            }),
            _ => {
                let lp = Learner::named("lp")?;
                // the feature values do not enter the LP at N = 0
                let ones = vec![1.0; d];
                select(&proto.lp_c, parts, &what, notes, |c| {
                    let f = lp.fit(train, c, 0.0, &ones, seed)?;
                    Ok((f.model, f.note))
                })
            }
        };
        res.push(o);
    }
    out.defences = res;
    Ok(())
}

/// One unit: set `spec`, repetition seed `seed`, model `model` at rate `rates[e]` (`e = 0`: clean).
pub(super) fn unit(
    proto: &Protocol,
    spec: &SetSpec,
    task: Option<&Dataset>,
    (model, e): (usize, usize),
    seed: u64,
    sklearn: Option<&crate::sklearn::Sklearn>,
) -> Result<UnitOut, Error> {
    let (train, val, test) = draw(spec, task, seed)?;
    let eps = proto.rates[e];
    let test = with_constant(&test)?;
    let mut out = UnitOut::default();
    let (train, val) = if e == 0 {
        (with_constant(&train)?, with_constant(&val)?)
    } else {
        let r = Reference::of(&train)?;
        let smallest = (
            proto.amu_c.iter().copied().fold(f64::INFINITY, f64::min),
            proto.amlc_c0.iter().copied().fold(f64::INFINITY, f64::min),
        );
        let stream = ((model as u64) << 8) | e as u64;
        let mut rng = rng_for_stream(seed ^ (stream << 32), 2);
        let t = contaminate(model, eps, &train, &r, smallest, &mut rng)?;
        let mut rng = rng_for_stream(seed ^ (stream << 32), 3);
        let v = contaminate(model, eps, &val, &r, smallest, &mut rng)?;
        (t, v)
    };
    // the MAD filter, once: LR+P trains on what it keeps, and what it removes is reported (rows
    // past the clean part are appended outliers)
    let kept = NormFilter::new(NormThreshold::mad(), 0).filter(&train.view())?;
    let m_clean = spec.sizes[0];
    let dirty = kept.removed.iter().filter(|&&i| i >= m_clean).count();
    out.filter_removed = [dirty, kept.removed.len() - dirty];
    let filtered = kept.kept.to_dataset();
    let what = if e == 0 {
        format!("{} clean", spec.name)
    } else {
        format!("{} {} eps={eps}", spec.name, MODELS[model].0)
    };
    defences(proto, &train, &filtered, &val, &test, seed, &what, &mut out)?;
    if let Some(sk) = sklearn {
        match sk.run(&train, &val, &test, seed) {
            Ok(r) => out.sklearn = Some(r),
            Err(e) => out.notes.push(format!("{what} scikit-learn: {e}")),
        }
    }
    Ok(out)
}
