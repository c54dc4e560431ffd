use std::io::Write;
use std::path::Path;

use bulwark_core::{Communicator, Dataset, Sign};
use bulwark_models::write_atomic;

use bulwark_data::{Format, MissingPolicy, ReadOptions};

use crate::args::{Cli, Command, DataCommand, LpCommand, ModelCommand, ReadArgs};
use crate::ui::Ui;

mod data;
mod demo;
mod eval;
mod lp;
mod model_cmd;
mod plot;
mod predict;
mod train;
mod tune;

pub(crate) fn dispatch(
    cli: Cli,
    out: &mut dyn Write,
    comm: &dyn Communicator,
) -> anyhow::Result<()> {
    let dir = cli.data_dir.as_deref();
    // over several ranks, only rank 0 shows progress and warnings
    let ui = Ui {
        quiet: cli.quiet || !comm.is_root(),
    };
    if comm.size() > 1 && !matches!(cli.command, Command::Train(_)) {
        return Err(bulwark_core::Error::Distributed {
            ranks: comm.size(),
            message:
                "only `bulwark train` runs over several ranks; run this command as one process"
                    .into(),
        }
        .into());
    }
    match cli.command {
        Command::Data(DataCommand::Info(a)) => data::info(&a, dir, out),
        Command::Data(DataCommand::Sample(a)) => data::sample(&a, out),
        Command::Demo(a) => demo::run(&a, ui, out),
        Command::Lp(LpCommand::Solve(a)) => lp::solve(&a, ui, out),
        Command::Train(a) => train::run(&a, dir, ui, out, comm),
        Command::Tune(a) => tune::run(&a, dir, ui, out),
        Command::Predict(a) => predict::run(&a, dir, ui, out),
        Command::Eval(a) => eval::eval(&a, dir, ui, out),
        Command::Certify(a) => eval::certify(&a, dir, ui, out),
        Command::Attack(a) => eval::attack(&a, dir, ui, out),
        Command::Plot(a) => plot::run(&a, out),
        Command::Model(ModelCommand::Info(a)) => model_cmd::info(&a, out),
        Command::Model(ModelCommand::Convert(a)) => model_cmd::convert(&a, out),
    }
}

/// The reading options of `--format` and `--missing-token`, with the missing-value `policy`.
pub(crate) fn read_options(read: &ReadArgs, policy: MissingPolicy) -> anyhow::Result<ReadOptions> {
    let format = read
        .format
        .as_deref()
        .map(str::parse::<Format>)
        .transpose()?;
    Ok(ReadOptions {
        format,
        missing_tokens: read.missing_tokens.clone(),
        missing: policy,
        max_line_bytes: bulwark_core::memory::parse_bytes(&read.max_line)
            .filter(|&b| b > 0)
            .ok_or_else(|| {
                bulwark_core::Error::param(
                    "max-line",
                    &read.max_line,
                    "a number of bytes > 0, optionally with a K, M or G suffix",
                )
            })?,
    })
}

/// Writes the binary `data` as CSV (a `label` column of class names, then the features) to
/// `path`, gzip-compressed when it ends in `.gz`; `cell(i, j, x)` is the value written for
/// feature `j` of example `i` (`None`: an empty, missing cell).
pub(crate) fn write_csv(
    path: &Path,
    data: &Dataset,
    cell: impl Fn(usize, usize, f64) -> Option<f64>,
) -> anyhow::Result<()> {
    let dense = data.features().to_dense();
    let mut body = Vec::new();
    {
        let mut w = csv::Writer::from_writer(&mut body);
        let mut header = vec!["label".to_string()];
        header.extend(data.feature_names().iter().map(String::from));
        w.write_record(&header)?;
        let y = data.binary_labels()?;
        for i in 0..data.len() {
            let mut rec = vec![data.class_names()[usize::from(y[i] == Sign::Pos)].clone()];
            for (j, &x) in dense.row(i).iter().enumerate() {
                rec.push(cell(i, j, x).map_or_else(String::new, |v| format!("{v}")));
            }
            w.write_record(&rec)?;
        }
        w.flush()?;
    }
    let bytes = if path.extension().is_some_and(|e| e == "gz") {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(&body)?;
        e.finish()?
    } else {
        body
    };
    write_atomic(path, &bytes)?;
    Ok(())
}
