//! The LP problem type: `min/max cᵀx + c₀  s.t.  rl ≤ A x ≤ ru,  l ≤ x ≤ u`.

use crate::error::ProblemError;
use serde::{Deserialize, Serialize};

/// Objective sense.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Sense {
    /// Minimise the objective (default).
    #[default]
    Minimize,
    /// Maximise the objective.
    Maximize,
}

/// A sparse matrix in compressed sparse column form (`f64` values, `usize` indices,
/// row indices sorted and unique within each column).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CscMatrix {
    /// Number of rows.
    pub nrows: usize,
    /// Number of columns.
    pub ncols: usize,
    /// Column pointers, length `ncols + 1`.
    pub col_ptr: Vec<usize>,
    /// Row indices, length `nnz`.
    pub row_idx: Vec<usize>,
    /// Values, length `nnz`.
    pub values: Vec<f64>,
}

impl CscMatrix {
    /// An all-zero matrix.
    pub fn zeros(nrows: usize, ncols: usize) -> Self {
        Self {
            nrows,
            ncols,
            col_ptr: vec![0; ncols + 1],
            row_idx: Vec::new(),
            values: Vec::new(),
        }
    }

    /// Builds a CSC matrix from `(row, col, value)` triplets. Duplicates are an error;
    /// explicit zeros are dropped.
    pub fn from_triplets(
        nrows: usize,
        ncols: usize,
        triplets: &[(usize, usize, f64)],
    ) -> Result<Self, ProblemError> {
        let mut count = vec![0usize; ncols + 1];
        for &(i, j, _) in triplets {
            if j >= ncols || i >= nrows {
                return Err(ProblemError::BadCsc(format!(
                    "triplet ({i}, {j}) out of range for {nrows}x{ncols}"
                )));
            }
            count[j + 1] += 1;
        }
        for j in 0..ncols {
            count[j + 1] += count[j];
        }
        let nnz = count[ncols];
        let mut row_idx = vec![0usize; nnz];
        let mut values = vec![0.0; nnz];
        let mut next = count.clone();
        for &(i, j, v) in triplets {
            row_idx[next[j]] = i;
            values[next[j]] = v;
            next[j] += 1;
        }
        // sort within columns, reject duplicates, drop zeros
        let mut out = Self {
            nrows,
            ncols,
            col_ptr: vec![0; ncols + 1],
            row_idx: Vec::new(),
            values: Vec::new(),
        };
        let mut buf: Vec<(usize, f64)> = Vec::new();
        for j in 0..ncols {
            buf.clear();
            buf.extend((count[j]..count[j + 1]).map(|p| (row_idx[p], values[p])));
            buf.sort_by_key(|e| e.0);
            for w in buf.windows(2) {
                if w[0].0 == w[1].0 {
                    return Err(ProblemError::DuplicateEntry {
                        row: w[0].0.to_string(),
                        col: j.to_string(),
                    });
                }
            }
            for &(i, v) in &buf {
                if v != 0.0 {
                    out.row_idx.push(i);
                    out.values.push(v);
                }
            }
            out.col_ptr[j + 1] = out.row_idx.len();
        }
        Ok(out)
    }

    /// Number of stored entries.
    pub fn nnz(&self) -> usize {
        self.values.len()
    }

    /// Checks the CSC invariants.
    pub fn check(&self) -> Result<(), ProblemError> {
        if self.col_ptr.len() != self.ncols + 1 {
            return Err(ProblemError::BadCsc(format!(
                "col_ptr has length {}, expected {}",
                self.col_ptr.len(),
                self.ncols + 1
            )));
        }
        if self.col_ptr[0] != 0
            || self.row_idx.len() != self.values.len()
            || self.col_ptr[self.ncols] != self.row_idx.len()
        {
            return Err(ProblemError::BadCsc(
                "inconsistent col_ptr / row_idx / values lengths".into(),
            ));
        }
        for j in 0..self.ncols {
            let (a, b) = (self.col_ptr[j], self.col_ptr[j + 1]);
            if a > b {
                return Err(ProblemError::BadCsc(format!(
                    "col_ptr decreases at column {j}"
                )));
            }
            for p in a..b {
                if self.row_idx[p] >= self.nrows {
                    return Err(ProblemError::BadCsc(format!(
                        "row index {} out of range in column {j}",
                        self.row_idx[p]
                    )));
                }
                if p > a && self.row_idx[p] <= self.row_idx[p - 1] {
                    return Err(ProblemError::BadCsc(format!(
                        "row indices unsorted or duplicated in column {j}"
                    )));
                }
            }
        }
        Ok(())
    }

    /// `y += A x` (see [`CscRef::mul_add`]).
    pub fn mul_add(&self, x: &[f64], y: &mut [f64]) {
        self.as_ref().mul_add(x, y);
    }

    /// `y += Aᵀ x` (see [`CscRef::mul_t_add`]).
    pub fn mul_t_add(&self, x: &[f64], y: &mut [f64]) {
        self.as_ref().mul_t_add(x, y);
    }

    /// A borrowed view.
    pub fn as_ref(&self) -> CscRef<'_> {
        CscRef {
            nrows: self.nrows,
            ncols: self.ncols,
            col_ptr: &self.col_ptr,
            row_idx: &self.row_idx,
            values: &self.values,
        }
    }
}

/// A borrowed CSC matrix (same invariants as [`CscMatrix`]).
#[derive(Debug, Clone, Copy)]
pub struct CscRef<'a> {
    /// Number of rows.
    pub nrows: usize,
    /// Number of columns.
    pub ncols: usize,
    /// Column pointers.
    pub col_ptr: &'a [usize],
    /// Row indices.
    pub row_idx: &'a [usize],
    /// Values.
    pub values: &'a [f64],
}

impl CscRef<'_> {
    /// `y += A x`.
    pub fn mul_add(&self, x: &[f64], y: &mut [f64]) {
        for j in 0..self.ncols {
            let xj = x[j];
            if xj != 0.0 {
                for p in self.col_ptr[j]..self.col_ptr[j + 1] {
                    y[self.row_idx[p]] += self.values[p] * xj;
                }
            }
        }
    }

    /// `y += Aᵀ x`.
    pub fn mul_t_add(&self, x: &[f64], y: &mut [f64]) {
        for j in 0..self.ncols {
            let mut s = 0.0;
            for p in self.col_ptr[j]..self.col_ptr[j + 1] {
                s += self.values[p] * x[self.row_idx[p]];
            }
            y[j] += s;
        }
    }
}

/// A linear program
///
/// ```text
/// min (or max)  cᵀx + c₀
/// s.t.          rl ≤ A x ≤ ru
///               l  ≤ x   ≤ u
/// ```
///
/// Bounds may be infinite (`f64::NEG_INFINITY` / `f64::INFINITY`); `rl = ru` is an
/// equality row, `l = u` a fixed variable. Build one with [`LpBuilder`],
/// [`LpProblem::new`] or [`crate::read_mps`].
#[derive(Debug, Clone, PartialEq)]
pub struct LpProblem {
    pub(crate) name: Option<String>,
    pub(crate) sense: Sense,
    pub(crate) c: Vec<f64>,
    pub(crate) offset: f64,
    pub(crate) a: CscMatrix,
    pub(crate) row_lower: Vec<f64>,
    pub(crate) row_upper: Vec<f64>,
    pub(crate) col_lower: Vec<f64>,
    pub(crate) col_upper: Vec<f64>,
    pub(crate) col_names: Option<Vec<String>>,
    pub(crate) row_names: Option<Vec<String>>,
}

impl LpProblem {
    /// Builds and validates a problem from its parts.
    pub fn new(
        sense: Sense,
        c: Vec<f64>,
        offset: f64,
        a: CscMatrix,
        row_lower: Vec<f64>,
        row_upper: Vec<f64>,
        col_lower: Vec<f64>,
        col_upper: Vec<f64>,
    ) -> Result<Self, ProblemError> {
        let p = Self {
            name: None,
            sense,
            c,
            offset,
            a,
            row_lower,
            row_upper,
            col_lower,
            col_upper,
            col_names: None,
            row_names: None,
        };
        p.validate()?;
        Ok(p)
    }

    /// Attaches a problem name.
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// Attaches variable and row names (lengths are validated).
    pub fn with_names(
        mut self,
        col_names: Vec<String>,
        row_names: Vec<String>,
    ) -> Result<Self, ProblemError> {
        if col_names.len() != self.num_vars() {
            return Err(ProblemError::Shape {
                what: "col_names",
                got: col_names.len(),
                expected: self.num_vars(),
            });
        }
        if row_names.len() != self.num_rows() {
            return Err(ProblemError::Shape {
                what: "row_names",
                got: row_names.len(),
                expected: self.num_rows(),
            });
        }
        self.col_names = Some(col_names);
        self.row_names = Some(row_names);
        Ok(self)
    }

    /// Name of variable `j` (its index when unnamed).
    pub fn col_name(&self, j: usize) -> String {
        self.col_names
            .as_ref()
            .map_or_else(|| format!("x{j}"), |v| v[j].clone())
    }

    /// Name of row `i` (its index when unnamed).
    pub fn row_name(&self, i: usize) -> String {
        self.row_names
            .as_ref()
            .map_or_else(|| format!("r{i}"), |v| v[i].clone())
    }

    /// Checks shapes, NaN/∞ and crossed bounds, naming the variable or row.
    pub fn validate(&self) -> Result<(), ProblemError> {
        let n = self.a.ncols;
        let m = self.a.nrows;
        for (what, got, expected) in [
            ("objective", self.c.len(), n),
            ("col_lower", self.col_lower.len(), n),
            ("col_upper", self.col_upper.len(), n),
            ("row_lower", self.row_lower.len(), m),
            ("row_upper", self.row_upper.len(), m),
        ] {
            if got != expected {
                return Err(ProblemError::Shape {
                    what,
                    got,
                    expected,
                });
            }
        }
        self.a.check()?;
        if !self.offset.is_finite() {
            return Err(ProblemError::NonFinite {
                what: "objective offset",
                name: "offset".into(),
                value: self.offset,
            });
        }
        for j in 0..n {
            if !self.c[j].is_finite() {
                return Err(ProblemError::NonFinite {
                    what: "objective",
                    name: self.col_name(j),
                    value: self.c[j],
                });
            }
            for p in self.a.col_ptr[j]..self.a.col_ptr[j + 1] {
                if !self.a.values[p].is_finite() {
                    return Err(ProblemError::NonFinite {
                        what: "matrix entry",
                        name: self.col_name(j),
                        value: self.a.values[p],
                    });
                }
            }
            check_bounds(
                "variable",
                self.col_name(j),
                self.col_lower[j],
                self.col_upper[j],
            )?;
        }
        for i in 0..m {
            check_bounds(
                "row",
                self.row_name(i),
                self.row_lower[i],
                self.row_upper[i],
            )?;
        }
        Ok(())
    }

    /// Problem name, if any.
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }
    /// Objective sense.
    pub fn sense(&self) -> Sense {
        self.sense
    }
    /// Number of variables.
    pub fn num_vars(&self) -> usize {
        self.a.ncols
    }
    /// Number of rows.
    pub fn num_rows(&self) -> usize {
        self.a.nrows
    }
    /// Number of non-zeros of `A`.
    pub fn nnz(&self) -> usize {
        self.a.nnz()
    }
    /// Objective coefficients `c`.
    pub fn objective(&self) -> &[f64] {
        &self.c
    }
    /// Constant objective offset `c₀`.
    pub fn offset(&self) -> f64 {
        self.offset
    }
    /// The constraint matrix.
    pub fn matrix(&self) -> &CscMatrix {
        &self.a
    }
    /// Row lower bounds `rl`.
    pub fn row_lower(&self) -> &[f64] {
        &self.row_lower
    }
    /// Row upper bounds `ru`.
    pub fn row_upper(&self) -> &[f64] {
        &self.row_upper
    }
    /// Variable lower bounds `l`.
    pub fn col_lower(&self) -> &[f64] {
        &self.col_lower
    }
    /// Variable upper bounds `u`.
    pub fn col_upper(&self) -> &[f64] {
        &self.col_upper
    }
    /// Objective value `cᵀx + c₀` of a point (in the problem's own sense).
    pub fn objective_value(&self, x: &[f64]) -> f64 {
        self.offset + self.c.iter().zip(x).map(|(c, x)| c * x).sum::<f64>()
    }
    /// Largest violation of the row and variable bounds at `x` (absolute).
    pub fn max_violation(&self, x: &[f64]) -> f64 {
        let mut ax = vec![0.0; self.num_rows()];
        self.a.mul_add(x, &mut ax);
        let mut v: f64 = 0.0;
        for i in 0..self.num_rows() {
            v = v
                .max(self.row_lower[i] - ax[i])
                .max(ax[i] - self.row_upper[i]);
        }
        for j in 0..self.num_vars() {
            v = v
                .max(self.col_lower[j] - x[j])
                .max(x[j] - self.col_upper[j]);
        }
        v
    }
}

fn check_bounds(what: &'static str, name: String, lo: f64, up: f64) -> Result<(), ProblemError> {
    let (wl, wu) = if what == "row" {
        ("row lower", "row upper")
    } else {
        ("variable lower", "variable upper")
    };
    if lo.is_nan() || lo == f64::INFINITY {
        return Err(ProblemError::BadBound {
            what: wl,
            name,
            value: lo,
        });
    }
    if up.is_nan() || up == f64::NEG_INFINITY {
        return Err(ProblemError::BadBound {
            what: wu,
            name,
            value: up,
        });
    }
    if lo > up {
        return Err(ProblemError::CrossedBounds {
            what,
            name,
            lower: lo,
            upper: up,
        });
    }
    Ok(())
}

/// Incremental builder for [`LpProblem`].
///
/// ```
/// use bulwark_lp::{LpBuilder, Sense};
/// let mut b = LpBuilder::new(Sense::Maximize);
/// let x = b.add_var(1.0, 0.0, f64::INFINITY);
/// let y = b.add_var(2.0, 0.0, 3.0);
/// b.add_row(f64::NEG_INFINITY, 4.0, &[(x, 1.0), (y, 1.0)]);
/// let lp = b.build().unwrap();
/// assert_eq!((lp.num_vars(), lp.num_rows()), (2, 1));
/// ```
#[derive(Debug, Clone, Default)]
pub struct LpBuilder {
    sense: Sense,
    name: Option<String>,
    offset: f64,
    c: Vec<f64>,
    col_lower: Vec<f64>,
    col_upper: Vec<f64>,
    row_lower: Vec<f64>,
    row_upper: Vec<f64>,
    triplets: Vec<(usize, usize, f64)>,
    col_names: Vec<Option<String>>,
    row_names: Vec<Option<String>>,
}

impl LpBuilder {
    /// A new empty problem with the given sense.
    pub fn new(sense: Sense) -> Self {
        Self {
            sense,
            ..Self::default()
        }
    }
    /// Sets the problem name.
    pub fn name(&mut self, name: impl Into<String>) -> &mut Self {
        self.name = Some(name.into());
        self
    }
    /// Sets the constant objective offset.
    pub fn offset(&mut self, offset: f64) -> &mut Self {
        self.offset = offset;
        self
    }
    /// Adds a variable with cost and bounds; returns its index.
    pub fn add_var(&mut self, cost: f64, lower: f64, upper: f64) -> usize {
        self.c.push(cost);
        self.col_lower.push(lower);
        self.col_upper.push(upper);
        self.col_names.push(None);
        self.c.len() - 1
    }
    /// Adds a named variable; returns its index.
    pub fn add_named_var(
        &mut self,
        name: impl Into<String>,
        cost: f64,
        lower: f64,
        upper: f64,
    ) -> usize {
        let j = self.add_var(cost, lower, upper);
        self.col_names[j] = Some(name.into());
        j
    }
    /// Adds a row `lower ≤ Σ a_j x_j ≤ upper`; returns its index.
    pub fn add_row(&mut self, lower: f64, upper: f64, coeffs: &[(usize, f64)]) -> usize {
        let i = self.row_lower.len();
        self.row_lower.push(lower);
        self.row_upper.push(upper);
        self.row_names.push(None);
        self.triplets.extend(coeffs.iter().map(|&(j, v)| (i, j, v)));
        i
    }
    /// Adds a named row; returns its index.
    pub fn add_named_row(
        &mut self,
        name: impl Into<String>,
        lower: f64,
        upper: f64,
        coeffs: &[(usize, f64)],
    ) -> usize {
        let i = self.add_row(lower, upper, coeffs);
        self.row_names[i] = Some(name.into());
        i
    }
    /// Validates and builds the problem.
    pub fn build(&self) -> Result<LpProblem, ProblemError> {
        let n = self.c.len();
        let m = self.row_lower.len();
        let row_names: Vec<String> = self
            .row_names
            .iter()
            .enumerate()
            .map(|(i, s)| s.clone().unwrap_or_else(|| format!("r{i}")))
            .collect();
        let col_names: Vec<String> = self
            .col_names
            .iter()
            .enumerate()
            .map(|(j, s)| s.clone().unwrap_or_else(|| format!("x{j}")))
            .collect();
        for &(i, j, _) in &self.triplets {
            if j >= n {
                return Err(ProblemError::UnknownVariable {
                    row: row_names[i].clone(),
                    col: j,
                    ncols: n,
                });
            }
        }
        let a = CscMatrix::from_triplets(m, n, &self.triplets).map_err(|e| match e {
            ProblemError::DuplicateEntry { row, col } => ProblemError::DuplicateEntry {
                row: row_names[row.parse::<usize>().unwrap_or(0)].clone(),
                col: col_names[col.parse::<usize>().unwrap_or(0)].clone(),
            },
            e => e,
        })?;
        let mut p = LpProblem {
            name: self.name.clone(),
            sense: self.sense,
            c: self.c.clone(),
            offset: self.offset,
            a,
            row_lower: self.row_lower.clone(),
            row_upper: self.row_upper.clone(),
            col_lower: self.col_lower.clone(),
            col_upper: self.col_upper.clone(),
            col_names: None,
            row_names: None,
        };
        if self.col_names.iter().any(Option::is_some) || self.row_names.iter().any(Option::is_some)
        {
            p.col_names = Some(col_names);
            p.row_names = Some(row_names);
        }
        p.validate()?;
        Ok(p)
    }
}
