//! One line of an IPM iteration log (shared by the development examples).

/// `iter pobj dobj pres dres gap mu sigma step t` of one iteration.
pub fn log_line(it: &bulwark_lp::IterationInfo) -> String {
    format!(
        "{:3} pobj {:+.10e} dobj {:+.10e} pres {:.2e} dres {:.2e} gap {:.2e} mu {:.2e} sigma {:.2e} step {:.3} t {:.2}s",
        it.iter, it.pobj, it.dobj, it.pres, it.dres, it.gap, it.mu, it.sigma, it.step, it.seconds
    )
}
