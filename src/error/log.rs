//! Diagnostic lines on stderr from code that must outlive its reader: a server's
//! access log, a session's notes. Rust's `eprintln!` panics when the write fails,
//! and a stderr that nobody reads any more (a `| tee` that died, a log shipper that
//! stopped) fails every write with EPIPE: in a server that panic dropped every
//! request while the process stayed up. A log line is worth less than the request
//! that wrote it, so its write errors are ignored here, once for every caller.

use std::io::Write as _;

/// Writes `line` and a line break to stderr in one write, ignoring any error
/// (a closed or full stderr loses the line, never the caller).
pub fn log_line(line: &str) {
    let mut out = String::with_capacity(line.len() + 1);
    out.push_str(line);
    out.push('\n');
    let _ = std::io::stderr().lock().write_all(out.as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_is_written_whatever_stderr_is() {
        // Under the test harness stderr is captured or open; the call must simply
        // return. (A closed stderr is checked on the real server: tests/it/serve.rs.)
        log_line("ground test: a log line");
    }
}
