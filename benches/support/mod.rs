//! Helpers the benchmarks share (each bench is its own crate and includes
//! this module with `mod support;`).

#![allow(dead_code)]

use std::time::Duration;

/// User + system CPU time of this process so far.
pub fn process_cpu() -> Duration {
    let text = std::fs::read_to_string("/proc/self/stat").unwrap();
    let fields: Vec<&str> = text
        .rsplit_once(')')
        .unwrap()
        .1
        .split_whitespace()
        .collect();
    // utime and stime are fields 14 and 15 (1-based), here 11 and 12.
    let ticks: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
    Duration::from_millis(ticks * 10)
}

/// A field of `/proc/self/status`, in kB.
pub fn status_kb(field: &str) -> u64 {
    let text = std::fs::read_to_string("/proc/self/status").unwrap();
    text.lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}
