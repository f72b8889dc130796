//! What the on-disk cache holds, for a person (`ground cache stats`): entries, sizes,
//! ages and the folder.

use crate::cache::{CacheStats, KindStats};

/// The stats as a few lines for a person.
pub fn describe(stats: &CacheStats) -> String {
    let mut out = format!("Cache folder: {}\n", display_dir(&stats.dir));
    match &stats.disabled_reason {
        None => out.push_str(&format!("Mode: {}\n", mode_name(stats))),
        Some(reason) => out.push_str(&format!("Mode: not used ({reason})\n")),
    }
    let line = |name: &str, kind: &KindStats| {
        format!(
            "{name:<9} {} entries, {}, {} expired (fresh for {})\n",
            kind.entries,
            human_bytes(kind.bytes),
            kind.expired,
            human_age(kind.ttl_secs)
        )
    };
    out.push_str(&line("Searches:", &stats.searches));
    out.push_str(&line("Pages:", &stats.pages));
    out.push_str(&format!(
        "Total:    {} of {} allowed\n",
        human_bytes(stats.bytes),
        human_bytes(stats.max_bytes)
    ));
    if let (Some(oldest), Some(newest)) = (stats.oldest_age_secs, stats.newest_age_secs) {
        out.push_str(&format!(
            "Oldest entry {} ago, newest {} ago\n",
            human_age(oldest),
            human_age(newest)
        ));
    }
    out
}

fn mode_name(stats: &CacheStats) -> &'static str {
    match stats.mode {
        crate::settings::CacheMode::Use => "read and write",
        crate::settings::CacheMode::Refresh => "write only (--refresh)",
        crate::settings::CacheMode::Off => "off",
    }
}

/// A folder for people (sanitised), or what to set when there is none.
pub fn display_dir(dir: &Option<std::path::PathBuf>) -> String {
    dir.as_ref()
        .map(|d| crate::text::sanitize_line(&d.display().to_string()))
        .unwrap_or_else(|| "(none: set GROUND_CACHE_DIR or HOME)".into())
}

/// `512 B`, `3.4 KiB`, `12.0 MiB`.
pub fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

/// `45 s`, `12 min`, `5 h`, `3 d`.
fn human_age(secs: u64) -> String {
    match secs {
        0..60 => format!("{secs} s"),
        60..3600 => format!("{} min", secs / 60),
        3600..86_400 => format!("{} h", secs / 3600),
        _ => format!("{} d", secs / 86_400),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_ages_read_naturally() {
        assert_eq!(human_bytes(0), "0 B");
        assert_eq!(human_bytes(1536), "1.5 KiB");
        assert_eq!(human_bytes(200 * 1024 * 1024), "200.0 MiB");
        assert_eq!(human_age(59), "59 s");
        assert_eq!(human_age(86_400), "1 d");
        assert_eq!(human_age(7200), "2 h");
    }
}
