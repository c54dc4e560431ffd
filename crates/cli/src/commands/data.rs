use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

use bulwark_adversary::{
    Distribution, LabelNoise, LabelNoiseMode, MaliciousAdversary, MaliciousNoise, halfspace_data,
    random_unit_vector,
};
use bulwark_core::{Contamination, Error, Features, rng_from_seed};
use bulwark_data::{Loaded, MissingPolicy, Origin};
use bulwark_models::check_output_dir;
use serde::Serialize;

use crate::args::{DataInfoArgs, DataSampleArgs};

#[derive(Debug, Serialize)]
struct DataInfo {
    name: String,
    source: String,
    rows: usize,
    features: usize,
    classes: BTreeMap<String, usize>,
    storage: &'static str,
    nnz: usize,
    density: f64,
    /// Missing cells (read as deleted features).
    missing_cells: usize,
    /// Records with at least one missing cell.
    missing_records: usize,
}

pub(crate) fn info(
    args: &DataInfoArgs,
    data_dir: Option<&Path>,
    out: &mut dyn Write,
) -> anyhow::Result<()> {
    let options = super::read_options(&args.read, MissingPolicy::Delete)?;
    let Loaded {
        data: d, origin, ..
    } = bulwark_data::load_with(&args.data, data_dir, &options)?;
    let nnz = d.features().nnz();
    let cells = (d.len() * d.n_features()).max(1);
    let info = DataInfo {
        name: d.name().to_string(),
        source: match origin {
            Origin::Embedded => "embedded".to_string(),
            Origin::File(p) => p.display().to_string(),
        },
        rows: d.len(),
        features: d.n_features(),
        classes: d.class_counts(),
        storage: match d.features() {
            Features::Dense(_) => "dense",
            Features::Sparse(_) => "sparse",
        },
        nnz,
        density: nnz as f64 / cells as f64,
        missing_cells: d.n_missing(),
        missing_records: d.incomplete_records(),
    };
    if args.json {
        serde_json::to_writer_pretty(&mut *out, &info)?;
        writeln!(out)?;
    } else {
        writeln!(out, "data set  {}", info.name)?;
        writeln!(out, "source    {}", info.source)?;
        writeln!(out, "examples  {}", info.rows)?;
        writeln!(
            out,
            "features  {} ({}, {:.1}% non-zero)",
            info.features,
            info.storage,
            100.0 * info.density
        )?;
        if info.missing_cells > 0 {
            writeln!(
                out,
                "missing   {} cells in {} records (read as deleted features)",
                info.missing_cells, info.missing_records
            )?;
        }
        writeln!(out, "classes   {}", info.classes.len())?;
        let width = info.classes.keys().map(String::len).max().unwrap_or(0);
        for (c, k) in &info.classes {
            writeln!(
                out,
                "  {c:<width$}  {k:>6}  ({:.1}%)",
                100.0 * *k as f64 / info.rows.max(1) as f64
            )?;
        }
    }
    Ok(())
}

/// The noise of `bulwark data sample`.
fn noise_of(args: &DataSampleArgs, u: &[f64]) -> anyhow::Result<Box<dyn Contamination>> {
    let target = Some(u.to_vec());
    let eta = args.eta;
    let malicious = |adversary| -> Box<dyn Contamination> {
        Box::new(MaliciousNoise {
            eta,
            adversary,
            target: target.clone(),
        })
    };
    let label = |mode| -> Box<dyn Contamination> {
        Box::new(LabelNoise {
            eta,
            mode,
            target: target.clone(),
        })
    };
    let (m, n) = (args.examples as f64, args.dim as f64);
    Ok(match args.noise.as_str() {
        "coordinated-pull" => malicious(MaliciousAdversary::CoordinatedPull {
            angle: 0.0,
            radius: 1.0,
        }),
        "evasive-pull" => {
            let threshold = args.evasive_threshold.unwrap_or(10.0 * m.ln() / n); // KLS A_mu step 3
            if !(threshold.is_finite() && threshold > 0.0) {
                return Err(
                    Error::param("evasive-threshold", threshold, "a finite number > 0").into(),
                );
            }
            malicious(MaliciousAdversary::EvasivePull {
                threshold,
                directions: args.directions,
            })
        }
        "flipped-labels" => malicious(MaliciousAdversary::FlippedLabels),
        "random-points" => malicious(MaliciousAdversary::RandomPoints),
        "label-random" => label(LabelNoiseMode::Random),
        "label-far" => label(LabelNoiseMode::FarFromBoundary),
        "label-near" => label(LabelNoiseMode::NearBoundary),
        "label-halfspace" => label(LabelNoiseMode::Halfspace),
        other => {
            return Err(Error::param(
                "noise",
                other,
                "one of coordinated-pull, evasive-pull, flipped-labels, random-points, label-random, label-far, label-near, label-halfspace",
            )
            .into());
        }
    })
}

pub(crate) fn sample(args: &DataSampleArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let dist = match args.dist.as_str() {
        "ball" => Distribution::UnitBall,
        "gaussian" => Distribution::Gaussian,
        "cube" => Distribution::Cube,
        "laplace" => Distribution::Laplace,
        "isotropic-ball" => Distribution::IsotropicBall,
        "centered-exponential" => Distribution::CenteredExponential,
        other => {
            return Err(Error::param(
                "dist",
                other,
                "one of ball, gaussian, cube, laplace, isotropic-ball, centered-exponential",
            )
            .into());
        }
    };
    if args.dim < 2 {
        return Err(Error::param("dim", args.dim, "at least 2").into());
    }
    if args.examples == 0 {
        return Err(Error::param("examples", 0, "at least 1").into());
    }
    if !(args.eta.is_finite() && (0.0..1.0).contains(&args.eta)) {
        return Err(Error::param("eta", args.eta, "a rate in [0, 1)").into());
    }
    if args.noise != "evasive-pull" && args.evasive_threshold.is_some() {
        return Err(Error::param(
            "evasive-threshold",
            "given",
            "no value: only --noise evasive-pull takes it",
        )
        .into());
    }
    check_output_dir(&args.out)?;
    let mut rng = rng_from_seed(args.seed);
    let u = random_unit_vector(args.dim, &mut rng)?;
    let noise = noise_of(args, &u)?;
    let clean = halfspace_data(dist, &u, args.examples, &mut rng)?;
    let (data, touched) = noise.contaminate(&clean, &mut rng)?;
    super::write_csv(&args.out, &data, |_, _, x| Some(x))?;
    if args.json {
        let o = serde_json::json!({
            "dist": args.dist, "dim": args.dim, "examples": args.examples, "eta": args.eta,
            "noise": args.noise, "seed": args.seed, "corrupted": touched.len(),
            "target": u, "out": args.out.display().to_string(),
        });
        serde_json::to_writer_pretty(&mut *out, &o)?;
        writeln!(out)?;
    } else {
        writeln!(
            out,
            "wrote {} examples ({} corrupted by {}) to {}",
            data.len(),
            touched.len(),
            args.noise,
            args.out.display()
        )?;
        let shown: Vec<String> = u.iter().map(|v| format!("{v:.6}")).collect();
        writeln!(out, "target u  [{}]", shown.join(", "))?;
    }
    Ok(())
}
