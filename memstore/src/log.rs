//! One-line log records on stderr: `2026-01-01T00:00:00.123Z LEVEL msg`.

use std::io::Write;
use std::time::{SystemTime, UNIX_EPOCH};

fn timestamp() -> String {
    let d = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = d.as_secs() as i64;
    let (days, rem) = (secs.div_euclid(86400), secs.rem_euclid(86400));
    // civil-from-days (proleptic Gregorian calendar)
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + if month <= 2 { 1 } else { 0 };
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
        year,
        month,
        day,
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        d.subsec_millis()
    )
}

fn emit(level: &str, msg: &str) {
    let line = format!("{} {} {}\n", timestamp(), level, msg);
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
