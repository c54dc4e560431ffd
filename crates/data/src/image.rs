//! Images stored one per row (row-major pixels, as IDX and USPS give them): block mean pooling.

use bulwark_core::{Dataset, DenseMatrix, Error, Features, Result};

/// Each `factor × factor` block of every `width × height` image replaced by its mean: the
/// images become `(width / factor) × (height / factor)`, still row-major (feature `r·w' + c` is
/// block row `r`, block column `c`). Labels, class names, weights and the data set's name are
/// kept; the feature names become `pool_r_c`. `width` and `height` must be multiples of `factor`
/// and their product the number of features; missing cells are refused (a block's mean would
/// silently count them as zeros).
pub fn mean_pool(data: &Dataset, width: usize, height: usize, factor: usize) -> Result<Dataset> {
    if factor == 0 {
        return Err(Error::param("factor", 0, "at least 1"));
    }
    for (name, side) in [("width", width), ("height", height)] {
        if side == 0 || side % factor != 0 {
            return Err(Error::param(
                name,
                side,
                format!("a positive multiple of the pooling factor {factor}"),
            ));
        }
    }
    if width * height != data.n_features() {
        return Err(Error::shape(
            format!("{}: features of {width} × {height} images", data.name()),
            width * height,
            data.n_features(),
        ));
    }
    if data.n_missing() > 0 {
        return Err(Error::param(
            "data",
            format!("{} missing cells", data.n_missing()),
            "complete images (pooling would count a missing pixel as 0)",
        ));
    }
    let (w2, h2) = (width / factor, height / factor);
    let p = w2 * h2;
    let scale = 1.0 / (factor * factor) as f64;
    let mut out = vec![0.0; data.len() * p];
    let mut row = vec![0.0; width * height];
    for (i, dst) in out.chunks_exact_mut(p).enumerate() {
        data.row(i).to_dense_into(&mut row);
        for (y, line) in row.chunks_exact(width).enumerate() {
            let block_row = &mut dst[(y / factor) * w2..(y / factor + 1) * w2];
            for (x, v) in line.iter().enumerate() {
                block_row[x / factor] += v;
            }
        }
        dst.iter_mut().for_each(|v| *v *= scale);
    }
    let names: Vec<String> = (0..h2)
        .flat_map(|r| (0..w2).map(move |c| format!("pool_{r}_{c}")))
        .collect();
    let pooled = Dataset::try_new(
        data.name(),
        Features::Dense(DenseMatrix::try_new(data.len(), p, out)?),
        data.targets().clone(),
        names,
        data.class_names().to_vec(),
    )?;
    match data.weights() {
        Some(w) => pooled.with_weights(w.to_vec()),
        None => Ok(pooled),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bulwark_core::Sign;

    fn images() -> Dataset {
        // two 4 × 2 images (width 4, height 2), row-major
        let x = vec![
            1.0, 2.0, 3.0, 4.0, //
            5.0, 6.0, 7.0, 8.0, //
            0.0, 0.0, 8.0, 0.0, //
            0.0, 4.0, 0.0, 0.0,
        ];
        Dataset::binary(
            "img",
            DenseMatrix::try_new(2, 8, x).unwrap(),
            vec![Sign::Pos, Sign::Neg],
        )
        .unwrap()
    }

    #[test]
    fn block_means_by_hand() {
        let d = mean_pool(&images(), 4, 2, 2).unwrap();
        assert_eq!(d.n_features(), 2);
        let mut r = vec![0.0; 2];
        d.row(0).to_dense_into(&mut r);
        assert_eq!(
            r,
            [(1.0 + 2.0 + 5.0 + 6.0) / 4.0, (3.0 + 4.0 + 7.0 + 8.0) / 4.0]
        );
        d.row(1).to_dense_into(&mut r);
        assert_eq!(r, [1.0, 2.0]);
        assert_eq!(d.binary_labels().unwrap(), [Sign::Pos, Sign::Neg]);
        assert_eq!(d.feature_names().to_vec(), ["pool_0_0", "pool_0_1"]);
        // factor 1 is the identity
        let same = mean_pool(&images(), 4, 2, 1).unwrap();
        let (mut a, mut b) = (vec![0.0; 8], vec![0.0; 8]);
        same.row(0).to_dense_into(&mut a);
        images().row(0).to_dense_into(&mut b);
        assert_eq!(a, b);
    }

    #[test]
    fn bad_shapes_are_typed_errors() {
        let d = images();
        assert!(matches!(
            mean_pool(&d, 4, 2, 3),
            Err(Error::InvalidParameter { .. })
        ));
        assert!(matches!(
            mean_pool(&d, 2, 2, 2),
            Err(Error::ShapeMismatch { .. })
        ));
        assert!(matches!(
            mean_pool(&d, 4, 2, 0),
            Err(Error::InvalidParameter { .. })
        ));
    }
}
