//! `ground doctor`'s report for a person (one line per check, each fix under it, a
//! summary) and for scripts (one JSON object).
//!
//! The checks themselves are [`crate::doctor`]'s and come back as plain [`Check`]s;
//! only how they are shown lives here, beside the other faces' printing, so that
//! doctor's probes can be read without its layout and its layout tested without a
//! network.

use serde::Serialize;

use crate::doctor::{Check, Status};

/// `{"version":1,"ok":bool,"checks":[{"name","status","detail","hint"}]}`, keys in
/// that order.
pub fn to_json(checks: &[Check]) -> String {
    #[derive(Serialize)]
    struct Report<'a> {
        version: u32,
        ok: bool,
        checks: &'a [Check],
    }
    serde_json::to_string(&Report {
        version: 1,
        ok: checks.iter().all(|c| c.status != Status::Fail),
        checks,
    })
    .unwrap_or_default()
}

/// One line per check (`ok`/`warn`/`fail`, the topic, what was found), each fix
/// under its check, then a summary line.
pub fn person(checks: &[Check], colour: bool) -> String {
    let paint = |status: Status| {
        let (word, code) = match status {
            Status::Ok => ("ok", "32"),
            Status::Warn => ("warn", "33"),
            Status::Fail => ("fail", "31"),
        };
        let padded = format!("{word:<4}");
        if colour {
            format!("\x1b[{code}m{padded}\x1b[0m")
        } else {
            padded
        }
    };
    let mut out = String::new();
    for check in checks {
        let topic = check.name.split('.').next().unwrap_or(check.name);
        out.push_str(&format!(
            "{}  {topic}: {}\n",
            paint(check.status),
            check.detail
        ));
        if let Some(hint) = &check.hint {
            for (i, line) in hint.lines().enumerate() {
                let lead = if i == 0 { "fix: " } else { "     " };
                out.push_str(&format!("      {lead}{line}\n"));
            }
        }
    }
    let fails = checks.iter().filter(|c| c.status == Status::Fail).count();
    let warns = checks.iter().filter(|c| c.status == Status::Warn).count();
    let plural = |n: usize, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
    out.push_str(&match (fails, warns) {
        (0, 0) => "all checks passed\n".to_string(),
        (0, w) => format!("all checks passed, with {}\n", plural(w, "warning")),
        (f, 0) => format!("{} failed\n", plural(f, "check")),
        (f, w) => format!("{} failed, {}\n", plural(f, "check"), plural(w, "warning")),
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doctor::Area;

    #[test]
    fn colour_only_paints_the_status_word() {
        let checks = [
            Check::ok("config", Area::Config, "fine"),
            Check::fail("search.json", Area::Search, "off", "add\n  json".into()),
        ];
        assert_eq!(
            person(&checks, true),
            "\x1b[32mok  \x1b[0m  config: fine\n\
             \x1b[31mfail\x1b[0m  search: off\n      fix: add\n             json\n\
             1 check failed\n"
        );
        assert!(!person(&checks, false).contains('\x1b'));
    }
}
