//! MNIST IDX files (the original format of LeCun et al.): unsigned-byte images (magic 2051,
//! dimensions count × rows × cols) and labels (magic 2049, dimension count), gzip or raw.

use bulwark_core::{Dataset, DenseMatrix, Error, Features, Location, Result, Targets};

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

/// Parses an IDX image file and an IDX label file into a 10-class (or however many labels
/// occur) data set with pixel values 0–255 as features, row-major per image.
pub fn parse_idx(
    images: &[u8],
    images_source: &str,
    labels: &[u8],
    labels_source: &str,
) -> Result<Dataset> {
    let dims = header(images, images_source, 0x0000_0803, 3)?;
    let (count, rows, cols) = (dims[0], dims[1], dims[2]);
    let n = rows * cols;
    let expected = 16 + count * n;
    if images.len() != expected {
        return Err(Error::input(
            Location::source(images_source),
            format!(
                "IDX shape mismatch: header says {count} × {rows} × {cols} = {expected} bytes, file has {}",
                images.len()
            ),
        ));
    }
    let lcount = header(labels, labels_source, 0x0000_0801, 1)?[0];
    if labels.len() != 8 + lcount {
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
