//! Memory bounded by what the input contains: every allocation sized by a number the input
//! declares or implies (a feature index, an IDX dimension, a learner's per-feature state) is
//! checked against a limit before it is made, and refused with [`Error::TooLarge`], which names
//! the number, where it came from and what it would cost.
//!
//! The limit ([`MemoryLimit::current`]) is `BULWARK_MEMORY_LIMIT` when set (bytes, or with a
//! `K`, `M`, `G` or `T` suffix: powers of 1024), else the memory the process can still have: the
//! smallest of the system's available memory (`MemAvailable`), the cgroup's room
//! (`memory.max − memory.current`) and the address-space limit (`ulimit -v`) less what is already
//! mapped. State sized by the feature count of sparse data (where a single index can declare
//! billions of features) is further held to [`per_feature_limit`]: at least 1 GiB, at most 64
//! times the data's own size.

use std::fmt;

use crate::error::{Error, Location, Result};

/// The environment variable that sets the memory limit (`2G`, `512M`, `1073741824`).
pub const MEMORY_ENV: &str = "BULWARK_MEMORY_LIMIT";

/// State sized by a declared dimension may take this many times the data's size ...
pub const PER_FEATURE_RATIO: u64 = 64;
/// ... and at least this much (1 GiB).
pub const PER_FEATURE_FLOOR: u64 = 1 << 30;

/// Where a memory limit comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LimitSource {
    /// [`MEMORY_ENV`], as written.
    Env(String),
    /// The system's available memory (`MemAvailable` of `/proc/meminfo`).
    Available,
    /// The cgroup's `memory.max` less its `memory.current`.
    Cgroup,
    /// The address-space limit (`ulimit -v`) less what the process has mapped.
    AddressSpace,
    /// Nothing could be read (not Linux): an assumed 8 GiB.
    Assumed,
    /// The per-feature rule ([`per_feature_limit`]) for data of this many bytes.
    DataSize(u64),
}

/// A limit on memory and where it comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryLimit {
    /// Bytes.
    pub bytes: u64,
    /// Where the number comes from.
    pub source: LimitSource,
}

impl fmt::Display for MemoryLimit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = Bytes(self.bytes);
        match &self.source {
            LimitSource::Env(v) => write!(f, "the {b} of {MEMORY_ENV}={v}"),
            LimitSource::Available => write!(f, "the {b} of memory available"),
            LimitSource::Cgroup => write!(f, "the {b} left in this cgroup"),
            LimitSource::AddressSpace => write!(f, "the {b} left under the address-space limit"),
            LimitSource::Assumed => write!(f, "an assumed {b}"),
            LimitSource::DataSize(d) => write!(
                f,
                "the {b} allowed for data of {} ({PER_FEATURE_RATIO} times their size, at least {}; {MEMORY_ENV} sets another limit)",
                Bytes(*d),
                Bytes(PER_FEATURE_FLOOR)
            ),
        }
    }
}

impl MemoryLimit {
    /// [`MEMORY_ENV`] when set, else the memory the process can still have (see the module
    /// documentation). An unreadable [`MEMORY_ENV`] is an [`Error::InvalidParameter`].
    pub fn current() -> Result<Self> {
        if let Some(v) = std::env::var_os(MEMORY_ENV).filter(|v| !v.is_empty()) {
            let text = v.to_string_lossy().into_owned();
            let bytes = parse_bytes(&text).ok_or_else(|| {
                Error::param(
                    MEMORY_ENV,
                    &text,
                    "a number of bytes, optionally with a K, M, G or T suffix (powers of 1024)",
                )
            })?;
            return Ok(Self {
                bytes,
                source: LimitSource::Env(text),
            });
        }
        Ok(Self::available())
    }

    /// The memory the process can still have, from the system (never [`MEMORY_ENV`]).
    pub fn available() -> Self {
        let mut best: Option<Self> = None;
        let mut consider = |bytes: Option<u64>, source: LimitSource| {
            if let Some(bytes) = bytes
                && best.as_ref().is_none_or(|b| bytes < b.bytes)
            {
                best = Some(Self { bytes, source });
            }
        };
        consider(meminfo_available(), LimitSource::Available);
        consider(cgroup_room(), LimitSource::Cgroup);
        consider(address_space_room(), LimitSource::AddressSpace);
        best.unwrap_or(Self {
            bytes: 8 << 30,
            source: LimitSource::Assumed,
        })
    }

    /// Refuses `bytes` for `purpose` when over this limit: an [`Error::TooLarge`] at `location`
    /// naming `what` (the number and what it is).
    pub fn check(&self, bytes: u64, location: &Location, what: &str, purpose: &str) -> Result<()> {
        if bytes <= self.bytes {
            return Ok(());
        }
        Err(Error::TooLarge {
            location: Box::new(location.clone()),
            what: what.to_string(),
            bytes,
            purpose: purpose.to_string(),
            limit: self.to_string(),
        })
    }
}

/// The limit for state sized by the feature count of data whose features and labels take
/// `data_bytes`: [`MEMORY_ENV`] when set, else the smaller of the memory available and
/// `max(PER_FEATURE_FLOOR, PER_FEATURE_RATIO × data_bytes)`.
pub fn per_feature_limit(data_bytes: u64) -> Result<MemoryLimit> {
    let current = MemoryLimit::current()?;
    if matches!(current.source, LimitSource::Env(_)) {
        return Ok(current);
    }
    let rule = PER_FEATURE_FLOOR.max(PER_FEATURE_RATIO.saturating_mul(data_bytes));
    Ok(if rule < current.bytes {
        MemoryLimit {
            bytes: rule,
            source: LimitSource::DataSize(data_bytes),
        }
    } else {
        current
    })
}

/// `count × unit` bytes, saturating (an overflow is over any limit anyway).
pub fn bytes_for(count: u64, unit: u64) -> u64 {
    count.saturating_mul(unit)
}

/// A byte count for messages: `512 B`, `3.0 KiB`, `1.5 GiB`, `16.0 EiB`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bytes(pub u64);

impl fmt::Display for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const UNITS: [&str; 6] = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
        if self.0 < 1024 {
            return write!(f, "{} B", self.0);
        }
        let mut x = self.0 as f64 / 1024.0;
        let mut k = 0;
        while x >= 1024.0 && k + 1 < UNITS.len() {
            x /= 1024.0;
            k += 1;
        }
        write!(f, "{x:.1} {}", UNITS[k])
    }
}

/// `123`, `64K`, `512M`, `2G`, `1.5G`, `1T` (also `2GiB`, `2GB`, any case; powers of 1024).
pub fn parse_bytes(text: &str) -> Option<u64> {
    let t = text.trim();
    let lower = t.to_ascii_lowercase();
    let t = lower
        .strip_suffix("ib")
        .or_else(|| lower.strip_suffix('b'))
        .unwrap_or(&lower);
    let (number, shift) = match t.chars().last()? {
        'k' => (&t[..t.len() - 1], 10),
        'm' => (&t[..t.len() - 1], 20),
        'g' => (&t[..t.len() - 1], 30),
        't' => (&t[..t.len() - 1], 40),
        _ => (t, 0),
    };
    let x: f64 = number.trim().parse().ok()?;
    let bytes = x * (1u64 << shift) as f64;
    (bytes.is_finite() && bytes >= 0.0 && bytes < u64::MAX as f64).then_some(bytes as u64)
}

fn read(path: &str) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

/// `MemAvailable` of `/proc/meminfo`, in bytes.
fn meminfo_available() -> Option<u64> {
    let text = read("/proc/meminfo")?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb.saturating_mul(1024))
}

/// The cgroup (v2) limit less what the cgroup uses; `None` without a limit.
fn cgroup_room() -> Option<u64> {
    let max: u64 = read("/sys/fs/cgroup/memory.max")?.trim().parse().ok()?;
    let current: u64 = read("/sys/fs/cgroup/memory.current")
        .and_then(|t| t.trim().parse().ok())
        .unwrap_or(0);
    Some(max.saturating_sub(current))
}

/// The soft address-space limit (`ulimit -v`) less the process's mapped size; `None` when
/// unlimited.
fn address_space_room() -> Option<u64> {
    let limits = read("/proc/self/limits")?;
    let line = limits
        .lines()
        .find(|l| l.starts_with("Max address space"))?;
    let soft: u64 = line
        .trim_start_matches("Max address space")
        .split_whitespace()
        .next()?
        .parse()
        .ok()?;
    let status = read("/proc/self/status").unwrap_or_default();
    let mapped_kb: u64 = status
        .lines()
        .find(|l| l.starts_with("VmSize:"))
        .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        .unwrap_or(0);
    Some(soft.saturating_sub(mapped_kb.saturating_mul(1024)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_counts_parse_and_print() {
        assert_eq!(parse_bytes("123"), Some(123));
        assert_eq!(parse_bytes("64K"), Some(64 << 10));
        assert_eq!(parse_bytes("2g"), Some(2 << 30));
        assert_eq!(parse_bytes("2GiB"), Some(2 << 30));
        assert_eq!(parse_bytes("1.5G"), Some(3 << 29));
        assert_eq!(parse_bytes(" 512 MB "), Some(512 << 20));
        assert_eq!(parse_bytes("lots"), None);
        assert_eq!(parse_bytes("-1G"), None);
        assert_eq!(parse_bytes(""), None);
        assert_eq!(Bytes(512).to_string(), "512 B");
        assert_eq!(Bytes(3 << 29).to_string(), "1.5 GiB");
        assert_eq!(Bytes(u64::MAX).to_string(), "16.0 EiB");
    }

    #[test]
    fn the_check_names_the_number_its_origin_and_the_cost() {
        let limit = MemoryLimit {
            bytes: 1 << 30,
            source: LimitSource::DataSize(27),
        };
        assert!(
            limit
                .check(1 << 30, &Location::source("f"), "n", "p")
                .is_ok()
        );
        let e = limit
            .check(
                16_000_000_000,
                &Location::source("big.svm").line(1).column(10),
                "2000000000 features (the largest feature index)",
                "svm's per-feature state",
            )
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "big.svm:1:10: 2000000000 features (the largest feature index) would need 14.9 GiB \
             for svm's per-feature state, more than the 1.0 GiB allowed for data of 27 B (64 \
             times their size, at least 1.0 GiB; BULWARK_MEMORY_LIMIT sets another limit)"
        );
    }

    #[test]
    fn the_system_reports_some_memory() {
        let a = MemoryLimit::available();
        assert!(a.bytes > 0, "{a:?}");
    }
}
