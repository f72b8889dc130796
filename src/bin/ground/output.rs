//! Writing to stdout and stderr: JSON lines, error reports with their exit codes, and
//! whether colour is wanted.

use std::io::{IsTerminal, Write};
use std::process::ExitCode;

use ground::error::Error;

/// The process exit code for a numeric code of [`ground::error::exit`].
pub fn code(code: i32) -> ExitCode {
    ExitCode::from(u8::try_from(code).unwrap_or(1))
}

/// Whether stdout is a terminal that wants colour (`NO_COLOR` unset or empty).
pub fn colour_stdout() -> bool {
    std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

/// One JSON value on its own line on stdout.
pub fn print_json(value: &serde_json::Value) -> std::io::Result<()> {
    writeln!(
        std::io::stdout().lock(),
        "{}",
        ground::text::json_line(value)
    )
}

/// Prints an error (and, with `--json`, an error object naming the input on stdout)
/// and returns its exit code.
pub fn fail(json: bool, input_name: &str, input: &str, error: &Error) -> ExitCode {
    if json {
        let _ = print_json(&ground::render::json_error(input_name, input, error));
    }
    eprintln!("{}", error.report());
    code(error.exit_code())
}
