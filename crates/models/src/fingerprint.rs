//! A stable SHA-256 fingerprint of a data set as loaded, recorded in model files.

use std::fmt::Write as _;

use bulwark_core::{Dataset, RowView};
use sha2::{Digest, Sha256};

/// A stable SHA-256 fingerprint of a data set as loaded: its shape, feature and class names,
/// labels, non-zero values (so the dense and the sparse copy of the same numbers agree) and
/// missing cells.
/// Returned as `sha256:<64 hex digits>`.
pub fn fingerprint(data: &Dataset) -> String {
    let mut h = Sha256::new();
    let len = |h: &mut Sha256, n: usize| h.update((n as u64).to_le_bytes());
    let text = |h: &mut Sha256, s: &str| {
        len(h, s.len());
        h.update(s.as_bytes());
    };
    h.update(b"bulwark-data-fingerprint-v1");
    len(&mut h, data.len());
    len(&mut h, data.n_features());
    for name in data.feature_names().iter() {
        text(&mut h, &name);
    }
    len(&mut h, data.n_classes());
    for name in data.class_names() {
        text(&mut h, name);
    }
    let mut nz = Vec::new();
    for i in 0..data.len() {
        len(&mut h, data.targets().class_index(i));
        nz.clear();
        let row: RowView<'_> = data.row(i);
        nz.extend(row.nonzeros().filter(|&(_, x)| x != 0.0));
        len(&mut h, nz.len());
        for &(j, x) in &nz {
            len(&mut h, j);
            h.update(x.to_bits().to_le_bytes());
        }
    }
    // missing cells (absent from complete data, so their fingerprints are unchanged)
    if let Some(mask) = data.missing() {
        h.update(b"missing");
        for i in 0..data.len() {
            let row = mask.row(i);
            len(&mut h, row.len());
            for &j in row {
                len(&mut h, j);
            }
        }
    }
    let mut s = String::from("sha256:");
    for b in h.finalize() {
        let _ = write!(s, "{b:02x}");
    }
    s
}
