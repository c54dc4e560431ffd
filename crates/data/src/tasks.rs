//! Binary tasks carved out of (multiclass) data sets: a named positive class (one-vs-rest), a
//! pair of classes (one-vs-one, e.g. digit pairs) and all pairs.

use bulwark_core::{Dataset, Error, Location, Result, Sign, Targets};

/// How to turn a data set into a binary task.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BinaryTask {
    /// Use the data as they are; a two-class data set becomes binary with its second class
    /// (in sorted order, e.g. `malignant`, `spam`) as +1.
    Natural,
    /// `class` is +1, every other class −1 (one-vs-rest).
    Positive(String),
    /// Keep only the two classes: the first is +1, the second −1 (one-vs-one).
    Pair(String, String),
}

fn class_id(data: &Dataset, name: &str) -> Result<usize> {
    data.class_names()
        .iter()
        .position(|c| c == name)
        .ok_or_else(|| {
            Error::param(
                "class",
                name,
                format!(
                    "one of the classes of {}: {}",
                    data.name(),
                    data.class_names().join(", ")
                ),
            )
        })
}

/// Applies `task`; the result always has both classes (a single class is a typed error).
pub fn binary_task(data: &Dataset, task: &BinaryTask) -> Result<Dataset> {
    let out = match task {
        BinaryTask::Natural => match data.targets() {
            Targets::Binary(_) => data.clone(),
            Targets::Multiclass(y) if data.n_classes() == 2 => {
                let labels = y
                    .iter()
                    .map(|&c| if c == 1 { Sign::Pos } else { Sign::Neg })
                    .collect();
                data.with_targets(Targets::Binary(labels), data.class_names().to_vec())?
            }
            Targets::Multiclass(_) => {
                return Err(Error::input(
                    Location::source(data.name()),
                    format!(
                        "{} classes ({}): choose a binary task with a pair (--pair A,B) or a positive class (--positive C)",
                        data.n_classes(),
                        data.class_names().join(", ")
                    ),
                ));
            }
        },
        BinaryTask::Positive(c) => {
            let k = class_id(data, c)?;
            let labels = (0..data.len())
                .map(|i| {
                    if data.targets().class_index(i) == k {
                        Sign::Pos
                    } else {
                        Sign::Neg
                    }
                })
                .collect();
            data.with_targets(Targets::Binary(labels), vec![format!("not-{c}"), c.clone()])?
                .with_name(format!("{}[{c} vs rest]", data.name()))
        }
        BinaryTask::Pair(a, b) => {
            if a == b {
                return Err(Error::param(
                    "pair",
                    format!("{a},{b}"),
                    "two different classes",
                ));
            }
            let (ka, kb) = (class_id(data, a)?, class_id(data, b)?);
            let idx: Vec<usize> = (0..data.len())
                .filter(|&i| {
                    let k = data.targets().class_index(i);
                    k == ka || k == kb
                })
                .collect();
            let sub = data.select(&idx);
            let labels = (0..sub.len())
                .map(|i| {
                    if sub.targets().class_index(i) == ka {
                        Sign::Pos
                    } else {
                        Sign::Neg
                    }
                })
                .collect();
            sub.with_targets(Targets::Binary(labels), vec![b.clone(), a.clone()])?
                .with_name(format!("{}[{a} vs {b}]", data.name()))
        }
    };
    out.require_two_classes()?;
    Ok(out)
}

/// The multiclass task of the examples of `classes` (at least two different names), in that
/// class order: `class_subset(usps, ["3", "5", "8"])` is the three-digit problem with class
/// indices 0, 1, 2 for 3, 5, 8.
pub fn class_subset(data: &Dataset, classes: &[String]) -> Result<Dataset> {
    let ids = classes
        .iter()
        .map(|c| class_id(data, c))
        .collect::<Result<Vec<usize>>>()?;
    for (i, c) in classes.iter().enumerate() {
        if classes[..i].contains(c) {
            return Err(Error::param(
                "classes",
                classes.join(","),
                "at least two different classes",
            ));
        }
    }
    if classes.len() < 2 {
        return Err(Error::param(
            "classes",
            classes.join(","),
            "at least two different classes",
        ));
    }
    let mut new_id = vec![None; data.n_classes()];
    for (k, &id) in ids.iter().enumerate() {
        new_id[id] = Some(k);
    }
    let idx: Vec<usize> = (0..data.len())
        .filter(|&i| new_id[data.targets().class_index(i)].is_some())
        .collect();
    let sub = data.select(&idx);
    let labels = (0..sub.len())
        .filter_map(|i| new_id[sub.targets().class_index(i)])
        .collect();
    Ok(sub
        .with_targets(Targets::Multiclass(labels), classes.to_vec())?
        .with_name(format!("{}[{}]", data.name(), classes.join(","))))
}

/// Every one-vs-one task `(a, b)` with `a < b` in class order (45 for ten digits).
pub fn all_pairs(data: &Dataset) -> Result<Vec<((String, String), Dataset)>> {
    let names = data.class_names().to_vec();
    let mut out = Vec::new();
    for i in 0..names.len() {
        for j in i + 1..names.len() {
            let task = BinaryTask::Pair(names[i].clone(), names[j].clone());
            out.push((
                (names[i].clone(), names[j].clone()),
                binary_task(data, &task)?,
            ));
        }
    }
    Ok(out)
}

/// Every one-vs-rest task.
pub fn one_vs_rest(data: &Dataset) -> Result<Vec<(String, Dataset)>> {
    data.class_names()
        .iter()
        .map(|c| {
            Ok((
                c.clone(),
                binary_task(data, &BinaryTask::Positive(c.clone()))?,
            ))
        })
        .collect()
}
