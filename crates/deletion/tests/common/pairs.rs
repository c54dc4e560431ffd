//! Binary tasks of real data for the structured IPM's real-data checks (shared by tests and
//! examples).

use bulwark_core::Dataset;
use bulwark_data::{BinaryTask, Scaler, ScalingKind, binary_task};

/// The first `per_class` examples of each class of `task` on `raw` (all when `None`), min-max
/// scaled.
pub fn first_per_class(raw: &Dataset, task: &BinaryTask, per_class: Option<usize>) -> Dataset {
    let task = binary_task(raw, task).expect("binary task");
    let d = match per_class {
        None => task,
        Some(k) => {
            let y = task.binary_labels().expect("binary");
            let (mut pos, mut neg) = (0, 0);
            let idx: Vec<usize> = (0..task.len())
                .filter(|&i| {
                    let c = if y[i].as_f64() > 0.0 {
                        &mut pos
                    } else {
                        &mut neg
                    };
                    *c += 1;
                    *c <= k
                })
                .collect();
            task.select(&idx)
        }
    };
    Scaler::fit(&d, ScalingKind::MinMax)
        .and_then(|s| s.transform(&d))
        .expect("scaling")
}
