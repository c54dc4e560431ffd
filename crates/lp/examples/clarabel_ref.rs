//! Reference solve of an MPS file with Clarabel (dev-dependency), for cross-checking:
//! `cargo run --release -p bulwark-lp --example clarabel_ref -- FILE.mps`.
#![allow(clippy::print_stdout)]

#[path = "../tests/common/mod.rs"]
mod common;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args()
        .nth(1)
        .ok_or("usage: clarabel_ref FILE.mps")?;
    let lp = bulwark_lp::read_mps(&path)?;
    let t = std::time::Instant::now();
    let out = common::clarabel_solve(&lp);
    println!("{out:?} in {:.3}s", t.elapsed().as_secs_f64());
    Ok(())
}
