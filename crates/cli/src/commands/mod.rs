use std::io::Write;

use crate::args::{Cli, Command, DataCommand};

mod data;
mod demo;

pub(crate) fn dispatch(cli: Cli, out: &mut dyn Write) -> anyhow::Result<()> {
    let dir = cli.data_dir.as_deref();
    match cli.command {
        Command::Data(DataCommand::Info(a)) => data::info(&a, dir, out),
        Command::Demo(a) => demo::run(&a, out),
    }
}
