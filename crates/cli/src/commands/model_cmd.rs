//! `bulwark model info` and `bulwark model convert`.

use std::io::Write;

use crate::args::{ModelConvertArgs, ModelInfoArgs};
use bulwark_models::{Encoding, ModelFile, write_atomic};

pub(crate) fn info(args: &ModelInfoArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let (file, model) = ModelFile::read(&args.model)?;
    if args.json {
        serde_json::to_writer_pretty(&mut *out, &file)?;
        writeln!(out)?;
        return Ok(());
    }
    let t = &file.training;
    writeln!(out, "model file      {}", args.model.display())?;
    writeln!(
        out,
        "format          {} version {} (written by bulwark {})",
        file.format, file.format_version, file.crate_version
    )?;
    writeln!(
        out,
        "algorithm       {} ({})",
        file.algorithm,
        file.model.name()
    )?;
    writeln!(out, "features        {}", file.n_features)?;
    if let Some(m) = model.as_linear() {
        writeln!(
            out,
            "weights         |w|max {:.6}, bias {:.6}",
            m.max_abs_weight(),
            m.bias()
        )?;
    }
    if !file.report.solver.is_empty() {
        writeln!(out, "solver          {}", file.report.summary())?;
    }
    writeln!(
        out,
        "hyper-params    {}",
        summary(&serde_json::to_value(&file.hyper_parameters)?)
    )?;
    writeln!(
        out,
        "trained on      {} ({} rows, classes {}, scale {})",
        t.data,
        t.rows,
        match t.classes.as_slice() {
            [neg, pos] => format!("-1 = {neg}, +1 = {pos}"),
            all => all.join(", "),
        },
        t.scale
            .map_or("none".to_string(), |s| format!("{s:?}").to_lowercase())
    )?;
    writeln!(out, "training error  {:.4}", t.training_error)?;
    writeln!(out, "fingerprint     {}", t.fingerprint)?;
    if let Some(s) = &file.selection {
        let c = s.chosen();
        let point: Vec<String> = c.params.iter().map(|(k, v)| format!("{k}={v}")).collect();
        writeln!(
            out,
            "selected by     tune: {}-fold CV under {} (seed {}), {} of {} points, mean error {}",
            s.folds,
            s.threat,
            s.seed,
            point.join(" "),
            s.cv.len(),
            match (c.mean_error, c.std_error) {
                (Some(m), Some(e)) => format!("{m:.4} +- {e:.4}"),
                (Some(m), None) => format!("{m:.4}"),
                _ => "-".into(),
            }
        )?;
    }
    Ok(())
}

pub(crate) fn convert(args: &ModelConvertArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let encoding = Encoding::for_output(&args.out)?;
    let (file, _) = ModelFile::read(&args.input)?;
    let bytes = file.encode(encoding)?;
    write_atomic(&args.out, &bytes)?;
    let from = std::fs::metadata(&args.input).map_or(0, |m| m.len());
    if args.json {
        let o = serde_json::json!({
            "input": args.input.display().to_string(), "input_bytes": from,
            "output": args.out.display().to_string(), "output_bytes": bytes.len(),
        });
        serde_json::to_writer_pretty(&mut *out, &o)?;
        writeln!(out)?;
    } else {
        writeln!(
            out,
            "wrote {} ({} bytes; {} was {} bytes)",
            args.out.display(),
            bytes.len(),
            args.input.display(),
            from
        )?;
    }
    Ok(())
}

/// `k=v` pairs of the hyper-parameters (`{"lp": {…}}`), arrays shortened to their length.
fn summary(hyper: &serde_json::Value) -> String {
    let Some(fields) = hyper.as_object() else {
        return hyper.to_string();
    };
    fields
        .iter()
        .map(|(k, v)| match v {
            serde_json::Value::Array(a) => format!("{k}=[{} values]", a.len()),
            serde_json::Value::String(s) => format!("{k}={s}"),
            v => format!("{k}={v}"),
        })
        .collect::<Vec<_>>()
        .join(" ")
}
