use std::io::Write;

use crate::args::{Cli, Command, DataCommand, LpCommand};

mod data;
mod demo;
mod eval;
mod lp;
pub(crate) mod model;
mod train;

pub(crate) fn dispatch(cli: Cli, out: &mut dyn Write) -> anyhow::Result<()> {
    let dir = cli.data_dir.as_deref();
    match cli.command {
        Command::Data(DataCommand::Info(a)) => data::info(&a, dir, out),
        Command::Demo(a) => demo::run(&a, out),
        Command::Lp(LpCommand::Solve(a)) => lp::solve(&a, out),
        Command::Train(a) => train::run(&a, dir, out),
        Command::Eval(a) => eval::eval(&a, dir, out),
        Command::Certify(a) => eval::certify(&a, dir, out),
        Command::Attack(a) => eval::attack(&a, dir, out),
    }
}
