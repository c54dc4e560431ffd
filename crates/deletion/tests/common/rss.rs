//! The process's peak resident memory (Linux `/proc`; shared by the development examples).

/// Resets the high-water mark, so [`peak_mib`] measures from here on (Linux: `5` to
/// `/proc/self/clear_refs`; a no-op elsewhere).
pub fn reset_peak() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// Peak RSS (`VmHWM`) in MiB since the start or the last [`reset_peak`]; NaN where unknown.
pub fn peak_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<f64>().ok())
        })
        .map_or(f64::NAN, |kb| kb / 1024.0)
}
