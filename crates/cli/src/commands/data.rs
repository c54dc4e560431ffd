use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

use bulwark_core::Features;
use bulwark_data::{Loaded, MissingPolicy, Origin};
use serde::Serialize;

use crate::args::DataInfoArgs;

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
