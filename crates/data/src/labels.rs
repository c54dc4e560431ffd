//! Class-name bookkeeping shared by the loaders.

use std::collections::BTreeMap;

/// Sorted class names and the name → index map. Names that all parse as numbers sort
/// numerically (`2 < 10`), otherwise lexicographically.
#[derive(Debug, Clone)]
pub(crate) struct ClassIndex {
    names: Vec<String>,
    index: BTreeMap<String, usize>,
}

impl ClassIndex {
    pub(crate) fn from_names(labels: &[String]) -> Self {
        let mut names: Vec<String> = labels
            .iter()
            .cloned()
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
        let numeric: Option<Vec<f64>> = names.iter().map(|s| s.parse::<f64>().ok()).collect();
        if let Some(vals) = numeric {
            let mut pairs: Vec<(f64, String)> = vals.into_iter().zip(names).collect();
            pairs.sort_by(|a, b| a.0.total_cmp(&b.0));
            names = pairs.into_iter().map(|(_, s)| s).collect();
        }
        let index = names
            .iter()
            .enumerate()
            .map(|(k, s)| (s.clone(), k))
            .collect();
        Self { names, index }
    }
    pub(crate) fn index(&self, name: &str) -> usize {
        self.index[name]
    }
    pub(crate) fn names(&self) -> Vec<String> {
        self.names.clone()
    }
}
