use std::io::Write;

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

pub(crate) fn dispatch(cli: Cli, out: &mut dyn Write) -> anyhow::Result<()> {
    let dir = cli.data_dir.as_deref();
    let ui = Ui { quiet: cli.quiet };
    match cli.command {
        Command::Data(DataCommand::Info(a)) => data::info(&a, dir, out),
        Command::Demo(a) => demo::run(&a, ui, out),
        Command::Lp(LpCommand::Solve(a)) => lp::solve(&a, ui, out),
        Command::Train(a) => train::run(&a, dir, ui, out),
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
    })
}
