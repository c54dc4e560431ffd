//! API behaviour: settings validation, problem validation, limits, callback,
//! cancellation, logging, custom backends and the serialised summary.

mod common;

use bulwark_lp::kkt::{DenseBackend, Regularization};
use bulwark_lp::{
    BackendChoice, IpmSettings, IpmSolver, KktBackend, KktError, KktInfo, KktProblem, LpBuilder,
    LpError, ProblemError, Sense, SettingsError, Status, solve,
};
use common::{random_feasible_lp, rel_err};
use std::ops::ControlFlow;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

#[test]
fn settings_builder_validates_each_field() {
    let e = IpmSettings::builder().tol_feas(-1.0).build().unwrap_err();
    assert!(matches!(
        e,
        SettingsError::BadFieldValue {
            field: "tol_feas",
            ..
        }
    ));
    let e = IpmSettings::builder()
        .step_fraction(1.0)
        .build()
        .unwrap_err();
    assert!(matches!(
        e,
        SettingsError::BadFieldValue {
            field: "step_fraction",
            ..
        }
    ));
    let e = IpmSettings::builder().max_iter(0).build().unwrap_err();
    assert!(matches!(
        e,
        SettingsError::BadFieldValue {
            field: "max_iter",
            ..
        }
    ));
    let e = IpmSettings::builder()
        .time_limit(f64::NAN)
        .build()
        .unwrap_err();
    assert!(matches!(
        e,
        SettingsError::BadFieldValue {
            field: "time_limit",
            ..
        }
    ));
    assert_eq!(
        IpmSettings::builder().build().unwrap(),
        IpmSettings::default()
    );
}

#[test]
fn problem_validation_names_the_culprit() {
    let mut b = LpBuilder::new(Sense::Minimize);
    b.add_named_var("speed", f64::NAN, 0.0, 1.0);
    assert!(matches!(b.build(), Err(ProblemError::NonFinite { name, .. }) if name == "speed"));
    let mut b = LpBuilder::new(Sense::Minimize);
    b.add_named_var("w", 1.0, 2.0, 1.0);
    assert!(matches!(b.build(), Err(ProblemError::CrossedBounds { name, .. }) if name == "w"));
    let mut b = LpBuilder::new(Sense::Minimize);
    let x = b.add_var(1.0, 0.0, 1.0);
    b.add_named_row("cap", 3.0, 1.0, &[(x, 1.0)]);
    assert!(matches!(b.build(), Err(ProblemError::CrossedBounds { name, .. }) if name == "cap"));
    let mut b = LpBuilder::new(Sense::Minimize);
    b.add_var(1.0, 0.0, 1.0);
    b.add_named_row("r", 0.0, 1.0, &[(3, 1.0)]);
    assert!(matches!(
        b.build(),
        Err(ProblemError::UnknownVariable { col: 3, .. })
    ));
    let mut b = LpBuilder::new(Sense::Minimize);
    b.add_var(1.0, f64::INFINITY, f64::INFINITY);
    assert!(matches!(b.build(), Err(ProblemError::BadBound { .. })));
}

#[test]
fn iteration_limit_callback_and_cancellation() {
    let lp = random_feasible_lp(7);
    let s = IpmSettings::builder().max_iter(2).build().unwrap();
    let sol = solve(&lp, &s).unwrap();
    assert_eq!((sol.status, sol.iterations), (Status::IterationLimit, 2));

    let mut seen = Vec::new();
    let sol = IpmSolver::new(&lp, IpmSettings::default())
        .unwrap()
        .with_callback(|info| {
            seen.push(info.iter);
            if info.iter == 3 {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        })
        .solve()
        .unwrap();
    assert_eq!(sol.status, Status::TimeLimit);
    assert_eq!(seen, vec![0, 1, 2, 3]);

    let s = IpmSettings::builder().time_limit(1e-12).build().unwrap();
    assert_eq!(solve(&lp, &s).unwrap().status, Status::TimeLimit);

    let flag = Arc::new(AtomicBool::new(true));
    let sol = IpmSolver::new(&lp, IpmSettings::default())
        .unwrap()
        .with_cancel_flag(flag)
        .solve()
        .unwrap();
    assert_eq!((sol.status, sol.iterations), (Status::TimeLimit, 0));
}

#[test]
fn verbose_log_goes_to_the_given_writer() {
    let lp = random_feasible_lp(3);
    let mut buf = Vec::new();
    let s = IpmSettings::builder()
        .verbose(true)
        .record_history(true)
        .build()
        .unwrap();
    let sol = IpmSolver::new(&lp, s)
        .unwrap()
        .with_log(&mut buf)
        .solve()
        .unwrap();
    let text = String::from_utf8(buf).unwrap();
    assert!(
        text.contains("iter") && text.contains("pobj") && text.contains("status optimal"),
        "{text}"
    );
    assert_eq!(sol.history.len() as u32, sol.iterations + 1);
    // quiet by default
    let mut buf = Vec::new();
    IpmSolver::new(&lp, IpmSettings::default())
        .unwrap()
        .with_log(&mut buf)
        .solve()
        .unwrap();
    assert!(buf.is_empty());
}

#[test]
fn summary_serialises_with_snake_case_status() {
    let lp = random_feasible_lp(11);
    let sol = solve(&lp, &IpmSettings::default()).unwrap();
    let json = serde_json::to_value(sol.summary(&lp)).unwrap();
    assert_eq!(json["status"], "optimal");
    assert!(json["objective"].is_f64() && json["iterations"].is_u64() && json["seconds"].is_f64());
    for (s, name) in [
        (Status::PrimalInfeasible, "primal_infeasible"),
        (Status::DualInfeasible, "dual_infeasible"),
        (Status::IterationLimit, "iteration_limit"),
        (Status::TimeLimit, "time_limit"),
        (Status::NumericalError, "numerical_error"),
    ] {
        assert_eq!(serde_json::to_value(s).unwrap(), name);
        assert_eq!(s.as_str(), name);
    }
}

#[test]
fn duals_satisfy_stationarity_and_complementarity() {
    for seed in [1u64, 5, 9, 13] {
        let lp = random_feasible_lp(seed);
        let sol = solve(&lp, &IpmSettings::default()).unwrap();
        assert_eq!(sol.status, Status::Optimal);
        let sgn = if lp.sense() == Sense::Maximize {
            -1.0
        } else {
            1.0
        };
        for j in 0..lp.num_vars() {
            let z = sgn * sol.reduced_costs[j];
            let (l, u, x) = (lp.col_lower()[j], lp.col_upper()[j], sol.x[j]);
            // z > 0 only at the lower bound, z < 0 only at the upper bound (minimisation form)
            if z > 1e-5 {
                assert!(
                    (x - l).abs() < 1e-5,
                    "seed {seed} var {j}: z {z} x {x} l {l}"
                );
            }
            if z < -1e-5 {
                assert!(
                    (u - x).abs() < 1e-5,
                    "seed {seed} var {j}: z {z} x {x} u {u}"
                );
            }
        }
    }
}

/// A wrapper that requires the original layout and counts calls, delegating to the
/// dense backend: shows the seam a structured backend plugs into.
#[derive(Debug)]
struct Counting {
    inner: DenseBackend,
    calls: Arc<AtomicUsize>,
    dims: (usize, usize),
}

impl KktBackend for Counting {
    fn name(&self) -> &'static str {
        "counting"
    }
    fn requires_original_layout(&self) -> bool {
        true
    }
    fn analyze(&mut self, p: KktProblem<'_>) -> Result<(), KktError> {
        self.dims = (p.a.nrows, p.a.ncols);
        self.inner.analyze(p)
    }
    fn factor(&mut self, d: &[f64], e: &[f64]) -> Result<(), KktError> {
        self.calls.fetch_add(1, Ordering::Relaxed);
        assert!(d.iter().chain(e).all(|v| *v >= 0.0));
        self.inner.factor(d, e)
    }
    fn solve(&mut self, x: &mut [f64], y: &mut [f64]) -> Result<(), KktError> {
        self.inner.solve(x, y)
    }
    fn info(&self) -> KktInfo {
        KktInfo {
            name: "counting",
            ..self.inner.info()
        }
    }
}

#[test]
fn custom_backend_with_original_layout() {
    // all-inequality rows, no fixed variables: the dense backend uses normal equations
    let mut b = LpBuilder::new(Sense::Maximize);
    let x = b.add_var(1.0, 0.0, f64::INFINITY);
    let y = b.add_var(2.0, f64::NEG_INFINITY, 3.0);
    let z = b.add_var(-1.0, -1.0, 1.0);
    b.add_row(f64::NEG_INFINITY, 4.0, &[(x, 1.0), (y, 1.0)]);
    b.add_row(-2.0, 5.0, &[(x, 1.0), (z, -1.0)]);
    b.add_row(0.0, f64::INFINITY, &[(y, 1.0), (z, 1.0)]);
    let lp = b.build().unwrap();
    let calls = Arc::new(AtomicUsize::new(0));
    let backend = Counting {
        inner: DenseBackend::new(Regularization::default()),
        calls: calls.clone(),
        dims: (0, 0),
    };
    let sol = IpmSolver::new(&lp, IpmSettings::default())
        .unwrap()
        .with_backend(backend)
        .solve()
        .unwrap();
    assert_eq!(sol.status, Status::Optimal);
    assert!((sol.objective - 8.0).abs() < 1e-7, "{}", sol.objective); // x = 1, y = 3, z = -1 ⇒ 1 + 6 + 1
    assert!(calls.load(Ordering::Relaxed) >= sol.iterations as usize);
    assert_eq!(sol.kkt.name, "counting");
}

#[test]
fn layout_conflict_is_a_typed_error() {
    let mut b = LpBuilder::new(Sense::Minimize);
    let x = b.add_named_var("fixed", 1.0, 2.0, 2.0);
    b.add_row(0.0, 5.0, &[(x, 1.0)]);
    let lp = b.build().unwrap();
    let backend = Counting {
        inner: DenseBackend::default(),
        calls: Arc::default(),
        dims: (0, 0),
    };
    let e = IpmSolver::new(&lp, IpmSettings::default())
        .unwrap()
        .with_backend(backend)
        .solve()
        .unwrap_err();
    assert!(
        matches!(e, LpError::LayoutConflict { ref reason, .. } if reason.contains("fixed")),
        "{e}"
    );
}

#[test]
fn backends_agree() {
    for seed in 300..330u64 {
        let lp = random_feasible_lp(seed);
        let a = solve(
            &lp,
            &IpmSettings::builder()
                .backend(BackendChoice::Dense)
                .build()
                .unwrap(),
        )
        .unwrap();
        let b = solve(
            &lp,
            &IpmSettings::builder()
                .backend(BackendChoice::SparseLdl)
                .build()
                .unwrap(),
        )
        .unwrap();
        assert_eq!(
            (a.status, b.status),
            (Status::Optimal, Status::Optimal),
            "seed {seed}"
        );
        assert!(rel_err(a.objective, b.objective) < 1e-7, "seed {seed}");
    }
}

#[test]
fn presolve_decides_trivial_cases() {
    // empty row with an impossible range
    let mut b = LpBuilder::new(Sense::Minimize);
    b.add_var(1.0, 0.0, 1.0);
    b.add_row(1.0, 2.0, &[]);
    let sol = solve(&b.build().unwrap(), &IpmSettings::default()).unwrap();
    assert_eq!(sol.status, Status::PrimalInfeasible);
    // empty column pushed to an infinite bound
    let mut b = LpBuilder::new(Sense::Maximize);
    b.add_var(1.0, 0.0, f64::INFINITY);
    let sol = solve(&b.build().unwrap(), &IpmSettings::default()).unwrap();
    assert_eq!(sol.status, Status::DualInfeasible);
    // … and the same without presolve: the IPM itself must find the certificates
    let s = IpmSettings::builder().presolve(false).build().unwrap();
    let mut b = LpBuilder::new(Sense::Maximize);
    let x = b.add_var(1.0, 0.0, f64::INFINITY);
    b.add_row(0.0, f64::INFINITY, &[(x, 1.0)]);
    assert_eq!(
        solve(&b.build().unwrap(), &s).unwrap().status,
        Status::DualInfeasible
    );
}

#[test]
fn cancellation_from_another_thread() {
    let lp = random_feasible_lp(21);
    let flag = Arc::new(AtomicBool::new(false));
    let (tx, rx) = std::sync::mpsc::channel::<u32>();
    let sol = std::thread::scope(|scope| {
        let f = flag.clone();
        scope.spawn(move || {
            // cancel as soon as the solver reports iteration 2
            while let Ok(it) = rx.recv() {
                if it >= 2 {
                    f.store(true, Ordering::Relaxed);
                    break;
                }
            }
        });
        IpmSolver::new(&lp, IpmSettings::default())
            .unwrap()
            .with_cancel_flag(flag.clone())
            .with_callback(move |info| {
                let _ = tx.send(info.iter);
                if info.iter >= 2 {
                    // give the other thread time to set the flag
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
                ControlFlow::Continue(())
            })
            .solve()
            .unwrap()
    });
    assert_eq!(sol.status, Status::TimeLimit);
    assert!(
        sol.iterations >= 2 && sol.iterations <= 4,
        "{}",
        sol.iterations
    );
}
