//! SVG plots of the reproduction (plotters, SVG backend only, its built-in naive text layout —
//! no system fonts, no font-kit).
//!
//! - [`LinePlot`]: error against budget `N`, one [`Curve`] per learner, optional error bars
//!   (the DSX figures 1–4 and 6 show mean ± standard error);
//! - [`ScatterPlot`]: one point per task (digit pair), e.g. LP error against SVM error, with the
//!   diagonal `y = x` — points above it are pairs where the x-axis learner wins (DSX Figs. 5, 7
//!   summarised as one scatter).
//!
//! Both validate their input (non-empty, equal lengths, finite values) with typed
//! [`bulwark_core::Error`]s and write atomically (temporary file + rename).

use std::path::Path;

use bulwark_core::{Error, Location};
use plotters::prelude::*;

use crate::io::write_atomic;

/// Width and height of every plot, in SVG pixels.
const SIZE: (u32, u32) = (720, 480);

/// A fixed, colour-blind-friendly palette (Okabe–Ito); cycles after eight curves.
const PALETTE: [RGBColor; 8] = [
    RGBColor(0, 114, 178),
    RGBColor(213, 94, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(230, 159, 0),
    RGBColor(86, 180, 233),
    RGBColor(0, 0, 0),
    RGBColor(240, 228, 66),
];

/// One labelled series of `(x, y)` points, optionally with a symmetric error bar per point.
#[derive(Debug, Clone, PartialEq)]
pub struct Curve {
    /// Legend label.
    pub label: String,
    /// Abscissae.
    pub x: Vec<f64>,
    /// Ordinates, one per abscissa.
    pub y: Vec<f64>,
    /// Half-length of the error bar at each point (e.g. the standard error), `≥ 0`.
    pub err: Option<Vec<f64>>,
}

impl Curve {
    /// A curve without error bars.
    pub fn new(label: impl Into<String>, x: Vec<f64>, y: Vec<f64>) -> Self {
        Self {
            label: label.into(),
            x,
            y,
            err: None,
        }
    }
    /// Adds error bars.
    pub fn with_err(mut self, err: Vec<f64>) -> Self {
        self.err = Some(err);
        self
    }

    fn validate(&self, plot: &str, log_x: bool, log_y: bool) -> Result<(), Error> {
        let ctx = format!("plot `{plot}`, curve `{}`", self.label);
        if self.x.is_empty() {
            return Err(Error::input(
                Location::source(ctx),
                "a curve needs at least one point",
            ));
        }
        if self.y.len() != self.x.len() {
            return Err(Error::shape(
                format!("{ctx}: y vs x"),
                self.x.len(),
                self.y.len(),
            ));
        }
        if let Some(e) = &self.err
            && e.len() != self.x.len()
        {
            return Err(Error::shape(
                format!("{ctx}: err vs x"),
                self.x.len(),
                e.len(),
            ));
        }
        let fields: [(&str, &[f64]); 3] = [
            ("x", &self.x),
            ("y", &self.y),
            ("err", self.err.as_deref().unwrap_or(&[])),
        ];
        for (field, values) in fields {
            if let Some((i, v)) = values.iter().enumerate().find(|(_, v)| !v.is_finite()) {
                return Err(Error::NonFinite {
                    location: Location::source(ctx.clone()).line(i + 1).field(field),
                    value: v.to_string(),
                });
            }
        }
        if let Some((i, v)) = self
            .err
            .iter()
            .flatten()
            .enumerate()
            .find(|(_, v)| **v < 0.0)
        {
            return Err(Error::param(
                format!("{ctx}: err[{i}]"),
                v,
                "an error-bar half-length >= 0",
            ));
        }
        if log_x && let Some((i, v)) = self.x.iter().enumerate().find(|(_, v)| **v <= 0.0) {
            return Err(Error::param(
                format!("{ctx}: x[{i}]"),
                v,
                "x > 0 on a logarithmic x-axis",
            ));
        }
        if log_y && let Some((i, v)) = self.y.iter().enumerate().find(|(_, v)| **v <= 0.0) {
            return Err(Error::param(
                format!("{ctx}: y[{i}]"),
                v,
                "y > 0 on a logarithmic y-axis",
            ));
        }
        Ok(())
    }
}

/// A line plot: one or more [`Curve`]s on shared axes, a legend, optional error bars, an
/// optional fixed y-range and an optional logarithmic x-axis.
#[derive(Debug, Clone, PartialEq)]
pub struct LinePlot {
    title: String,
    x_label: String,
    y_label: String,
    curves: Vec<Curve>,
    y_range: Option<(f64, f64)>,
    log_x: bool,
    log_y: bool,
}

impl LinePlot {
    /// An empty plot with a title and axis labels.
    pub fn new(
        title: impl Into<String>,
        x_label: impl Into<String>,
        y_label: impl Into<String>,
    ) -> Self {
        Self {
            title: title.into(),
            x_label: x_label.into(),
            y_label: y_label.into(),
            curves: Vec::new(),
            y_range: None,
            log_x: false,
            log_y: false,
        }
    }
    /// Adds a curve.
    pub fn curve(mut self, c: Curve) -> Self {
        self.curves.push(c);
        self
    }
    /// Logarithmic x-axis (every x must then be `> 0`).
    pub fn log_x(mut self, yes: bool) -> Self {
        self.log_x = yes;
        self
    }
    /// Logarithmic y-axis (every y must then be `> 0`; error bars are drawn on it clipped to
    /// positive values; a fixed y-range is given in the data's units).
    pub fn log_y(mut self, yes: bool) -> Self {
        self.log_y = yes;
        self
    }
    /// Fixes the y-range (otherwise it is fitted to the data, error bars included).
    pub fn y_range(mut self, lo: f64, hi: f64) -> Self {
        self.y_range = Some((lo, hi));
        self
    }
    /// The curves.
    pub fn curves(&self) -> &[Curve] {
        &self.curves
    }

    fn validate(&self) -> Result<(), Error> {
        if self.curves.is_empty() {
            return Err(Error::input(
                Location::source(format!("plot `{}`", self.title)),
                "a plot needs at least one curve",
            ));
        }
        for c in &self.curves {
            c.validate(&self.title, self.log_x, self.log_y)?;
        }
        if let Some((lo, hi)) = self.y_range
            && !(lo.is_finite() && hi.is_finite() && lo < hi)
        {
            return Err(Error::param(
                "y_range",
                format!("({lo}, {hi})"),
                "finite bounds with lo < hi",
            ));
        }
        Ok(())
    }

    /// Renders the plot as an SVG document.
    pub fn render_svg(&self) -> Result<String, Error> {
        self.validate()?;
        let tx = |x: f64| if self.log_x { x.log10() } else { x };
        // on a log y-axis an error bar's lower end is clipped to half its point
        let ty = |y: f64, floor: f64| {
            if self.log_y { y.max(floor).log10() } else { y }
        };
        let (mut x0, mut x1) = (f64::INFINITY, f64::NEG_INFINITY);
        let (mut y0, mut y1) = (f64::INFINITY, f64::NEG_INFINITY);
        for c in &self.curves {
            for (i, (&x, &y)) in c.x.iter().zip(&c.y).enumerate() {
                let e = c.err.as_ref().map_or(0.0, |e| e[i]);
                x0 = x0.min(tx(x));
                x1 = x1.max(tx(x));
                y0 = y0.min(ty(y - e, 0.5 * y));
                y1 = y1.max(ty(y + e, 0.5 * y));
            }
        }
        let (x0, x1) = pad(x0, x1, 0.03);
        let (y0, y1) = match self.y_range {
            Some((lo, hi)) if self.log_y => (lo.log10(), hi.log10()),
            Some(r) => r,
            None if self.log_y => pad(y0, y1, 0.08),
            None => pad(y0.min(0.0), y1, 0.08),
        };
        let (log_x, log_y) = (self.log_x, self.log_y);
        let mut svg = String::new();
        {
            let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
            root.fill(&WHITE).map_err(plot_err)?;
            let mut chart = ChartBuilder::on(&root)
                .caption(&self.title, ("sans-serif", 20))
                .margin(12)
                .x_label_area_size(44)
                .y_label_area_size(56)
                .build_cartesian_2d(x0..x1, y0..y1)
                .map_err(plot_err)?;
            chart
                .configure_mesh()
                .x_desc(&self.x_label)
                .y_desc(&self.y_label)
                .x_label_formatter(&|v| {
                    if log_x {
                        fmt_tick(10f64.powf(*v))
                    } else {
                        fmt_tick(*v)
                    }
                })
                .y_label_formatter(&|v| {
                    if log_y {
                        fmt_tick(10f64.powf(*v))
                    } else {
                        fmt_tick(*v)
                    }
                })
                .light_line_style(RGBColor(235, 235, 235))
                .draw()
                .map_err(plot_err)?;
            for (k, c) in self.curves.iter().enumerate() {
                let color = PALETTE[k % PALETTE.len()];
                let pts: Vec<(f64, f64)> =
                    c.x.iter()
                        .zip(&c.y)
                        .map(|(&x, &y)| (tx(x), ty(y, y)))
                        .collect();
                chart
                    .draw_series(LineSeries::new(pts.clone(), color.stroke_width(2)))
                    .map_err(plot_err)?
                    .label(c.label.clone())
                    .legend(move |(x, y)| {
                        PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(2))
                    });
                chart
                    .draw_series(
                        pts.iter()
                            .map(|&p| Circle::new(p, 3, color.filled()).into_dyn()),
                    )
                    .map_err(plot_err)?;
                if let Some(err) = &c.err {
                    let cap = (x1 - x0) * 0.006;
                    chart
                        .draw_series(pts.iter().zip(&c.y).zip(err).flat_map(
                            |((&(x, _), &y), &e)| {
                                let (lo, hi) = (ty(y - e, 0.5 * y), ty(y + e, 0.5 * y));
                                [
                                    PathElement::new(vec![(x, lo), (x, hi)], color),
                                    PathElement::new(vec![(x - cap, lo), (x + cap, lo)], color),
                                    PathElement::new(vec![(x - cap, hi), (x + cap, hi)], color),
                                ]
                            },
                        ))
                        .map_err(plot_err)?;
                }
            }
            chart
                .configure_series_labels()
                .background_style(WHITE.mix(0.85))
                .border_style(BLACK)
                .position(SeriesLabelPosition::UpperLeft)
                .draw()
                .map_err(plot_err)?;
            root.present().map_err(plot_err)?;
        }
        Ok(svg)
    }

    /// Renders and writes the SVG atomically (temporary file in the same directory + rename).
    pub fn write_svg(&self, path: &Path) -> Result<(), Error> {
        let svg = self.render_svg()?;
        write_atomic(path, svg.as_bytes())
    }
}

/// A scatter plot of labelled points with the diagonal `y = x` — e.g. one point per digit pair,
/// LP error (y) against SVM error (x): points below the diagonal are pairs where the LP wins.
#[derive(Debug, Clone, PartialEq)]
pub struct ScatterPlot {
    title: String,
    x_label: String,
    y_label: String,
    series: Vec<Curve>,
}

impl ScatterPlot {
    /// An empty scatter plot.
    pub fn new(
        title: impl Into<String>,
        x_label: impl Into<String>,
        y_label: impl Into<String>,
    ) -> Self {
        Self {
            title: title.into(),
            x_label: x_label.into(),
            y_label: y_label.into(),
            series: Vec::new(),
        }
    }
    /// Adds a labelled series of points (`err` is ignored).
    pub fn series(mut self, c: Curve) -> Self {
        self.series.push(c);
        self
    }

    /// Renders the plot as an SVG document; both axes share one range so the diagonal is `y = x`.
    pub fn render_svg(&self) -> Result<String, Error> {
        if self.series.is_empty() {
            return Err(Error::input(
                Location::source(format!("plot `{}`", self.title)),
                "a scatter plot needs at least one series",
            ));
        }
        for c in &self.series {
            c.validate(&self.title, false, false)?;
        }
        let all = self.series.iter().flat_map(|c| c.x.iter().chain(&c.y));
        let (lo, hi) = all.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| {
            (a.min(v), b.max(v))
        });
        let (lo, hi) = pad(lo.min(0.0), hi, 0.05);
        let mut svg = String::new();
        {
            let root = SVGBackend::with_string(&mut svg, (560, 560)).into_drawing_area();
            root.fill(&WHITE).map_err(plot_err)?;
            let mut chart = ChartBuilder::on(&root)
                .caption(&self.title, ("sans-serif", 18))
                .margin(12)
                .x_label_area_size(44)
                .y_label_area_size(56)
                .build_cartesian_2d(lo..hi, lo..hi)
                .map_err(plot_err)?;
            chart
                .configure_mesh()
                .x_desc(&self.x_label)
                .y_desc(&self.y_label)
                .x_label_formatter(&|v| fmt_tick(*v))
                .y_label_formatter(&|v| fmt_tick(*v))
                .light_line_style(RGBColor(235, 235, 235))
                .draw()
                .map_err(plot_err)?;
            chart
                .draw_series(LineSeries::new(
                    vec![(lo, lo), (hi, hi)],
                    RGBColor(150, 150, 150),
                ))
                .map_err(plot_err)?;
            for (k, c) in self.series.iter().enumerate() {
                let color = PALETTE[k % PALETTE.len()];
                chart
                    .draw_series(
                        c.x.iter()
                            .zip(&c.y)
                            .map(|(&x, &y)| Circle::new((x, y), 4, color.filled())),
                    )
                    .map_err(plot_err)?
                    .label(c.label.clone())
                    .legend(move |(x, y)| Circle::new((x + 8, y), 4, color.filled()));
            }
            chart
                .configure_series_labels()
                .background_style(WHITE.mix(0.85))
                .border_style(BLACK)
                .position(SeriesLabelPosition::UpperLeft)
                .draw()
                .map_err(plot_err)?;
            root.present().map_err(plot_err)?;
        }
        Ok(svg)
    }

    /// Renders and writes the SVG atomically.
    pub fn write_svg(&self, path: &Path) -> Result<(), Error> {
        let svg = self.render_svg()?;
        write_atomic(path, svg.as_bytes())
    }
}

/// Widens `[lo, hi]` by `frac` of its length on each side (a unit interval around a single value).
fn pad(lo: f64, hi: f64, frac: f64) -> (f64, f64) {
    if hi - lo <= f64::EPSILON * hi.abs().max(1.0) {
        (lo - 0.5, hi + 0.5)
    } else {
        let d = (hi - lo) * frac;
        (lo - d, hi + d)
    }
}

fn fmt_tick(v: f64) -> String {
    let a = v.abs();
    if a != 0.0 && !(1e-3..1e5).contains(&a) {
        format!("{v:.0e}")
    } else if a >= 100.0 || (v.fract() == 0.0) {
        format!("{v:.0}")
    } else {
        let s = format!("{v:.3}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

fn plot_err<E: std::error::Error + Send + Sync>(e: DrawingAreaErrorKind<E>) -> Error {
    Error::Numerical {
        algorithm: "plot".into(),
        message: e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn curve(label: &str) -> Curve {
        Curve::new(label, vec![0.0, 1.0, 2.0], vec![0.1, 0.2, 0.15]).with_err(vec![0.01; 3])
    }

    #[test]
    fn renders_a_line_plot_with_legend_and_labels() {
        let svg = LinePlot::new("spam: deletion", "N", "test error")
            .curve(curve("LP"))
            .curve(curve("SVM"))
            .render_svg()
            .unwrap();
        assert!(svg.starts_with("<svg"), "{}", &svg[..40]);
        for text in ["spam: deletion", "test error", "LP", "SVM"] {
            assert!(svg.contains(text), "missing {text}");
        }
    }

    #[test]
    fn log_x_rejects_non_positive_x_and_labels_powers() {
        let bad = LinePlot::new("t", "C", "err").curve(curve("a")).log_x(true);
        assert!(matches!(
            bad.render_svg(),
            Err(Error::InvalidParameter { .. })
        ));
        let ok = LinePlot::new("t", "C", "err")
            .curve(Curve::new(
                "a",
                vec![0.01, 1.0, 100.0],
                vec![0.3, 0.2, 0.25],
            ))
            .log_x(true)
            .render_svg()
            .unwrap();
        assert!(ok.contains("100"));
    }

    #[test]
    fn typed_errors_for_bad_input() {
        let empty = LinePlot::new("t", "x", "y");
        assert!(matches!(empty.render_svg(), Err(Error::Input { .. })));
        let short = LinePlot::new("t", "x", "y").curve(Curve::new("a", vec![1.0, 2.0], vec![1.0]));
        assert!(matches!(
            short.render_svg(),
            Err(Error::ShapeMismatch {
                expected: 2,
                found: 1,
                ..
            })
        ));
        let nan = LinePlot::new("t", "x", "y").curve(Curve::new("a", vec![1.0], vec![f64::NAN]));
        assert!(matches!(nan.render_svg(), Err(Error::NonFinite { .. })));
        let neg = LinePlot::new("t", "x", "y")
            .curve(Curve::new("a", vec![1.0], vec![1.0]).with_err(vec![-1.0]));
        assert!(matches!(
            neg.render_svg(),
            Err(Error::InvalidParameter { .. })
        ));
    }

    #[test]
    fn scatter_and_atomic_write() {
        let dir = std::env::temp_dir().join(format!("bulwark-eval-plot-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("pairs.svg");
        ScatterPlot::new("usps pairs", "SVM error", "LP error")
            .series(Curve::new("pairs", vec![0.1, 0.3], vec![0.05, 0.1]))
            .write_svg(&path)
            .unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains("usps pairs") && text.contains("<circle"));
        let leftovers: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .flatten()
            .filter(|e| e.file_name() != "pairs.svg")
            .collect();
        assert!(leftovers.is_empty(), "temporary files left behind");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
