//! Feature names: the ones a file gives (a CSV header), or the defaults `x1, …, xn`, computed
//! when shown and never stored one per feature, so a data set whose dimension is declared (the
//! largest index of a LIBSVM file) costs no memory per declared feature.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

/// The names of a data set's `n` features.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum FeatureNames {
    /// `x1, …, xn`: `n` features without names of their own.
    Default(usize),
    /// One name per feature, as the input gave them.
    Given(Vec<String>),
}

impl FeatureNames {
    /// The names stored in a model file: an empty list for `n > 0` features means the defaults
    /// (what [`FeatureNames::stored`] writes for them).
    pub fn from_stored(names: Vec<String>, n: usize) -> Self {
        if names.is_empty() {
            FeatureNames::Default(n)
        } else {
            FeatureNames::Given(names)
        }
    }

    /// The names as a model file stores them: the given ones, or an empty list for the
    /// defaults (read back by [`FeatureNames::from_stored`]).
    pub fn stored(&self) -> Vec<String> {
        self.given().map(<[String]>::to_vec).unwrap_or_default()
    }

    /// Number of features.
    pub fn len(&self) -> usize {
        match self {
            FeatureNames::Default(n) => *n,
            FeatureNames::Given(v) => v.len(),
        }
    }

    /// Whether there are no features.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The names the input gave, if it gave any.
    pub fn given(&self) -> Option<&[String]> {
        match self {
            FeatureNames::Default(_) => None,
            FeatureNames::Given(v) => Some(v),
        }
    }

    /// The name of feature `j` (0-based): `x{j+1}` for the defaults.
    ///
    /// # Panics
    /// When `j` is not below [`FeatureNames::len`].
    pub fn get(&self, j: usize) -> Cow<'_, str> {
        match self {
            FeatureNames::Default(n) => {
                assert!(j < *n, "feature {j} of {n}");
                Cow::Owned(format!("x{}", j + 1))
            }
            FeatureNames::Given(v) => Cow::Borrowed(&v[j]),
        }
    }

    /// Every name, in column order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = Cow<'_, str>> + '_ {
        (0..self.len()).map(|j| self.get(j))
    }

    /// Every name as an owned list (one string per feature: for small data and tests).
    pub fn to_vec(&self) -> Vec<String> {
        self.iter().map(Cow::into_owned).collect()
    }

    /// The first feature (0-based) whose name differs from `other`'s, when both have the same
    /// length; `None` when every name agrees (the defaults agree with `x1, …, xn` spelled out).
    pub fn first_difference(&self, other: &FeatureNames) -> Option<usize> {
        match (self, other) {
            (FeatureNames::Default(a), FeatureNames::Default(b)) if a == b => None,
            _ => (0..self.len().min(other.len())).find(|&j| self.get(j) != other.get(j)),
        }
    }
}

impl PartialEq for FeatureNames {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.first_difference(other).is_none()
    }
}

impl From<Vec<String>> for FeatureNames {
    fn from(names: Vec<String>) -> Self {
        FeatureNames::Given(names)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_computed_and_equal_to_spelled_out_names() {
        let d = FeatureNames::Default(3);
        assert_eq!(d.get(2), "x3");
        assert_eq!(d.to_vec(), ["x1", "x2", "x3"]);
        let spelled = FeatureNames::from(vec!["x1".into(), "x2".into(), "x3".into()]);
        assert_eq!(d, spelled);
        assert_ne!(d, FeatureNames::Default(2));
        let other = FeatureNames::from(vec!["x1".into(), "y".into(), "x3".into()]);
        assert_eq!(d.first_difference(&other), Some(1));
        assert!(d.given().is_none() && d.stored().is_empty());
        assert_eq!(FeatureNames::from_stored(Vec::new(), 3), d);
        assert_eq!(FeatureNames::from_stored(other.stored(), 3), other);
    }

    #[test]
    fn a_huge_default_dimension_costs_nothing() {
        let d = FeatureNames::Default(2_000_000_000);
        assert_eq!(d.len(), 2_000_000_000);
        assert_eq!(d.get(1_999_999_999), "x2000000000");
        assert_eq!(d, FeatureNames::Default(2_000_000_000));
    }
}
