//! The memory the system reports available, for the limits of the structured IPM and of the
//! fallback engines.

/// `MemAvailable` of `/proc/meminfo` in bytes (Linux), or `None` where the system does not
/// say.
pub(crate) fn available() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}
