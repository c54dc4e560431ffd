//! MNIST IDX files (the original format of LeCun et al.): unsigned-byte images (magic 2051,
//! dimensions count × rows × cols) and labels (magic 2049, dimension count), gzip or raw.

use std::io::Read;

use bulwark_core::{Dataset, DenseMatrix, Error, Features, Location, Result, Targets};

use crate::read::to_error;

/// The magic of an images file (unsigned bytes, 3 dimensions).
pub const IMAGES_MAGIC: u32 = 0x0000_0803;
/// The magic of a labels file (unsigned bytes, 1 dimension).
pub const LABELS_MAGIC: u32 = 0x0000_0801;

fn be_u32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

fn header(bytes: &[u8], source: &str, magic: u32, dims: usize) -> Result<Vec<usize>> {
    let need = 4 + 4 * dims;
    if bytes.len() < need {
        return Err(Error::input(
            Location::source(source),
            format!("IDX header truncated: {} bytes, need {need}", bytes.len()),
        ));
    }
    let found = be_u32(bytes, 0);
    if found != magic {
        return Err(Error::input(
            Location::source(source),
            format!(
                "IDX magic {found:#010x}, expected {magic:#010x} (unsigned bytes, {dims} dimension(s))"
            ),
        ));
    }
    Ok((0..dims)
        .map(|d| be_u32(bytes, 4 + 4 * d) as usize)
        .collect())
}

/// The bytes an IDX file of unsigned bytes with `dims` declares (header included), or `None`
/// when the product overflows.
fn declared_size(dims: &[usize]) -> Option<u64> {
    let body = dims
        .iter()
        .try_fold(1u64, |acc, &d| acc.checked_mul(d as u64))?;
    body.checked_add(4 + 4 * dims.len() as u64)
}

/// Reads an IDX file of unsigned bytes with `n_dims` dimensions from a stream, never more than
/// its header declares plus one byte (so a header that declares more than the file holds costs
/// only what the file holds, and [`parse_idx`] reports the mismatch). Errors name `source`.
pub fn read_idx_bytes(mut input: impl Read, source: &str, n_dims: usize) -> Result<Vec<u8>> {
    let mut bytes = Vec::new();
    let header_len = 4 + 4 * n_dims as u64;
    (&mut input)
        .take(header_len)
        .read_to_end(&mut bytes)
        .map_err(|e| to_error(e, source))?;
    if bytes.len() as u64 == header_len {
        let dims: Vec<usize> = (0..n_dims)
            .map(|d| be_u32(&bytes, 4 + 4 * d) as usize)
            .collect();
        // one byte beyond the declared size shows a file longer than its header says
        let wanted = declared_size(&dims).map_or(u64::MAX, |s| s.saturating_add(1));
        input
            .take(wanted.saturating_sub(header_len))
            .read_to_end(&mut bytes)
            .map_err(|e| to_error(e, source))?;
    }
    Ok(bytes)
}

/// Parses an IDX image file and an IDX label file into a 10-class (or however many labels
/// occur) data set with pixel values 0–255 as features, row-major per image. The sizes the
/// headers declare must match the bytes that follow (an overflowing product is a mismatch too)
/// and there must be at least one image, so every allocation is bounded by the files' size.
pub fn parse_idx(
    images: &[u8],
    images_source: &str,
    labels: &[u8],
    labels_source: &str,
) -> Result<Dataset> {
    let dims = header(images, images_source, IMAGES_MAGIC, 3)?;
    let (count, rows, cols) = (dims[0], dims[1], dims[2]);
    let expected = declared_size(&dims);
    if expected != Some(images.len() as u64) {
        return Err(Error::input(
            Location::source(images_source),
            format!(
                "IDX shape mismatch: header says {count} × {rows} × {cols} = {} bytes, file has {}",
                expected.map_or("more than 2^64".to_string(), |e| e.to_string()),
                images.len()
            ),
        ));
    }
    if count == 0 {
        return Err(Error::input(
            Location::source(images_source),
            "IDX header says 0 images: no examples",
        ));
    }
    // count ≥ 1 images of rows × cols bytes fit in the file, so this does not overflow
    let n = rows * cols;
    let lcount = header(labels, labels_source, LABELS_MAGIC, 1)?[0];
    if labels.len() as u64 != 8 + lcount as u64 {
        return Err(Error::input(
            Location::source(labels_source),
            format!(
                "IDX shape mismatch: header says {lcount} labels, file has {} bytes of labels",
                labels.len() - 8
            ),
        ));
    }
    if lcount != count {
        return Err(Error::input(
            Location::source(labels_source),
            format!("{lcount} labels for {count} images in {images_source}"),
        ));
    }
    let raw = &labels[8..];
    let n_classes = raw
        .iter()
        .copied()
        .max()
        .map_or(0, |m| usize::from(m) + 1)
        .max(2);
    let data: Vec<f64> = images[16..].iter().map(|&p| f64::from(p)).collect();
    let x = DenseMatrix::try_new(count, n, data)?;
    let names: Vec<String> = (0..n)
        .map(|k| format!("px{}_{}", k / cols, k % cols))
        .collect();
    Dataset::try_new(
        images_source,
        Features::Dense(x),
        Targets::Multiclass(raw.iter().map(|&c| usize::from(c)).collect()),
        names,
        (0..n_classes).map(|c| c.to_string()).collect(),
    )
}
