//! One-line log records on stderr: `2026-01-01T00:00:00.123Z LEVEL msg`.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::SystemTime;

static QUIET: AtomicBool = AtomicBool::new(false);

/// No log lines at all (the fuzzers: millions of rejected inputs).
pub fn set_quiet(quiet: bool) {
    QUIET.store(quiet, Ordering::Relaxed)
}

fn emit(level: &str, msg: &str) {
    if QUIET.load(Ordering::Relaxed) {
        return;
    }
    let now = humantime::format_rfc3339_millis(SystemTime::now());
    let line = format!("{} {} {}\n", now, level, msg);
    let _ = std::io::stderr().write_all(line.as_bytes());
}

pub fn info(msg: &str) {
    emit("INFO", msg)
}

pub fn warn(msg: &str) {
    emit("WARNING", msg)
}

pub fn error(msg: &str) {
    emit("ERROR", msg)
}
