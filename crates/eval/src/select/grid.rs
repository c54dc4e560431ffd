//! A learner's search space: its tunable parameters with the user's grids or the defaults it
//! declares, the points ordered from the most regular model to the least.

use bulwark_core::{Error, HyperParams, Learner, MoreRegular, ParamKind, ParamValue, Result};

/// One searched parameter and its values, the most regular first.
#[derive(Debug, Clone, PartialEq)]
pub struct Axis {
    /// The parameter's name.
    pub name: String,
    /// Its values, parsed by the parameter's kind, the most regular first.
    pub values: Vec<ParamValue>,
    /// Which end is more regular, as the learner declares it.
    pub more_regular: MoreRegular,
}

/// The grid of a model selection: one [`Axis`] per searched parameter, in the order the learner
/// declares its tunables (the first axis breaks ties first).
#[derive(Debug, Clone, PartialEq)]
pub struct Grid {
    /// The searched parameters.
    pub axes: Vec<Axis>,
}

fn numeric(v: &ParamValue) -> Option<f64> {
    match v {
        ParamValue::Float(x) => Some(*x),
        ParamValue::Count(k) => Some(*k as f64),
        _ => None,
    }
}

impl Grid {
    /// The grid of `learner`: each `(name, values)` of `given` (the user's `--grid
    /// NAME=v1,v2,…`) replaces the default grid of that parameter; every other parameter the
    /// learner declares tunable is searched over its default grid, unless `fixed` sets it (then
    /// it is not searched). An unknown parameter, a parameter the learner does not declare
    /// tunable, one both fixed and gridded or given twice, an empty grid, a repeated value or
    /// a value that does not parse as the parameter's kind is a typed error naming it.
    pub fn for_learner(
        learner: &dyn Learner,
        given: &[(String, Vec<String>)],
        fixed: &HyperParams,
    ) -> Result<Self> {
        let tunable = learner.tunable();
        let names: Vec<&str> = tunable.iter().map(|t| t.name).collect();
        let list = if names.is_empty() {
            "none".to_string()
        } else {
            names.join(", ")
        };
        for (k, (name, values)) in given.iter().enumerate() {
            let grid = format!("grid {name}");
            if !learner.params().iter().any(|p| p.name == name) {
                return Err(Error::param(
                    grid,
                    values.join(","),
                    format!(
                        "a parameter of `{}` (its tunable parameters: {list})",
                        learner.name()
                    ),
                ));
            }
            if !names.contains(&name.as_str()) {
                return Err(Error::param(
                    grid,
                    values.join(","),
                    format!(
                        "a tunable parameter of `{}` ({list}); `{name}` can only be fixed",
                        learner.name()
                    ),
                ));
            }
            if given[..k].iter().any(|(n, _)| n == name) {
                return Err(Error::param(
                    grid,
                    values.join(","),
                    "one grid per parameter",
                ));
            }
            if fixed.get(name).is_some() {
                return Err(Error::param(
                    grid,
                    values.join(","),
                    format!("a parameter not also fixed (`--{name}` is given)"),
                ));
            }
        }
        let mut axes = Vec::new();
        for t in tunable {
            if fixed.get(t.name).is_some() {
                continue;
            }
            let raw: Vec<String> = match given.iter().find(|(n, _)| n == t.name) {
                Some((_, v)) => v.clone(),
                None => t.grid.iter().map(|s| s.to_string()).collect(),
            };
            let spec = learner
                .params()
                .iter()
                .find(|p| p.name == t.name)
                .ok_or_else(|| {
                    Error::param(
                        format!("grid {}", t.name),
                        learner.name(),
                        "a tunable the learner takes (its declaration names no parameter)",
                    )
                })?;
            if raw.is_empty() || raw.iter().any(|v| v.trim().is_empty()) {
                return Err(Error::param(
                    format!("grid {}", t.name),
                    raw.join(","),
                    "values separated by commas, none empty",
                ));
            }
            let mut values = Vec::with_capacity(raw.len());
            for r in &raw {
                let v = HyperParams::parse(spec, r.trim())?;
                if values.contains(&v) {
                    return Err(Error::param(
                        format!("grid {}", t.name),
                        raw.join(","),
                        format!("distinct values ({} is repeated)", r.trim()),
                    ));
                }
                values.push(v);
            }
            let numeric_kind = matches!(spec.kind, ParamKind::Float | ParamKind::Count);
            match (t.more_regular, numeric_kind) {
                (MoreRegular::Smaller, true) => values.sort_by(|a, b| {
                    numeric(a)
                        .unwrap_or(f64::NAN)
                        .total_cmp(&numeric(b).unwrap_or(f64::NAN))
                }),
                (MoreRegular::Larger, true) => values.sort_by(|a, b| {
                    numeric(b)
                        .unwrap_or(f64::NAN)
                        .total_cmp(&numeric(a).unwrap_or(f64::NAN))
                }),
                _ => {}
            }
            axes.push(Axis {
                name: t.name.to_string(),
                values,
                more_regular: t.more_regular,
            });
        }
        Ok(Self { axes })
    }

    /// Every point (the values of the searched parameters), the most regular first: the first
    /// axis varies slowest.
    pub fn points(&self) -> Vec<HyperParams> {
        let mut out = vec![HyperParams::new()];
        for axis in &self.axes {
            let mut next = Vec::with_capacity(out.len() * axis.values.len());
            for p in &out {
                for v in &axis.values {
                    next.push(p.clone().with(&axis.name, v.clone()));
                }
            }
            out = next;
        }
        out
    }

    /// The tie rule in words: "the smaller C, then the larger budget, …".
    pub fn tie_rule(&self) -> String {
        if self.axes.is_empty() {
            return "one point (nothing searched)".into();
        }
        let parts: Vec<String> = self
            .axes
            .iter()
            .map(|a| match a.more_regular {
                MoreRegular::Smaller => format!("the smaller {}", a.name),
                MoreRegular::Larger => format!("the larger {}", a.name),
                MoreRegular::First => format!("the {} listed first", a.name),
            })
            .collect();
        format!(
            "the smallest mean validation error; ties to the more regular model: {}",
            parts.join(", then ")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lp() -> &'static dyn Learner {
        bulwark_models::registry::find("lp").unwrap()
    }

    fn g(name: &str, values: &[&str]) -> (String, Vec<String>) {
        (
            name.to_string(),
            values.iter().map(|s| s.to_string()).collect(),
        )
    }

    #[test]
    fn the_points_run_from_the_most_regular_model() {
        let grid = Grid::for_learner(
            lp(),
            &[g("budget", &["1", "0", "2"]), g("C", &["10", "0.1"])],
            &HyperParams::new(),
        )
        .unwrap();
        let names: Vec<&str> = grid.axes.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(names, ["C", "budget", "values"]);
        let pts = grid.points();
        assert_eq!(pts.len(), 2 * 3);
        let first = &pts[0];
        assert_eq!(first.float("C").unwrap(), 0.1);
        assert_eq!(first.float("budget").unwrap(), 2.0);
        assert_eq!(first.text("values").unwrap(), "uniform");
        assert_eq!(pts[1].float("budget").unwrap(), 1.0);
        assert_eq!(pts[5].float("C").unwrap(), 10.0);
        assert_eq!(pts[5].float("budget").unwrap(), 0.0);
        assert!(
            grid.tie_rule()
                .contains("the smaller C, then the larger budget")
        );
        // a fixed parameter is not searched; the defaults fill the rest
        let fixed = HyperParams::new().with("budget", ParamValue::Float(1.0));
        let grid = Grid::for_learner(lp(), &[], &fixed).unwrap();
        assert_eq!(grid.points().len(), 4);
    }

    #[test]
    fn bad_grids_are_typed_errors_naming_the_parameter() {
        let none = HyperParams::new();
        let text = |given: &[(String, Vec<String>)], fixed: &HyperParams| {
            Grid::for_learner(lp(), given, fixed)
                .unwrap_err()
                .to_string()
        };
        assert!(text(&[g("gamma", &["1"])], &none).contains("a parameter of `lp`"));
        assert!(text(&[g("tolerance", &["1e-6"])], &none).contains("can only be fixed"));
        assert!(text(&[g("C", &["1", "x"])], &none).contains("invalid parameter `C` = x"));
        assert!(text(&[g("C", &["1", "1"])], &none).contains("repeated"));
        assert!(text(&[g("C", &["1"]), g("C", &["2"])], &none).contains("one grid"));
        let fixed = HyperParams::new().with("C", ParamValue::Float(1.0));
        assert!(text(&[g("C", &["1"])], &fixed).contains("not also fixed"));
        assert!(text(&[g("C", &[""])], &none).contains("none empty"));
    }
}
