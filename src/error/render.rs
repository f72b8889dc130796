//! The one renderer of the lines a person reads about a failure or a warning:
//! `error: ...`, the input it was about, `hint: ...`, and `warning: ...`. Every line
//! is sanitised (a message may quote what a page or a client sent). Nothing else in
//! the crate writes these prefixes.

use std::fmt::Write as _;

use crate::text::sanitize_line;

/// The one renderer of an error for a person: `error: MESSAGE` (one sanitised line)
/// and, when there is one, `hint: HINT` on the next. [`super::Error::report`] goes through
/// it, and so does every failure that is no [`super::Error`] (a chat line that cannot be
/// used, a page that cannot be read).
pub fn report(message: &str, hint: Option<&str>) -> String {
    report_about(message, None, hint)
}

/// [`report`] with a line naming the input the failure was about between the error
/// and the hint (`query: tardigrades`). Every line is sanitised: the input and even a
/// hint may quote what a client sent.
pub fn report_about(message: &str, about: Option<(&str, &str)>, hint: Option<&str>) -> String {
    let mut out = format!("error: {}", sanitize_line(message));
    if let Some((name, input)) = about {
        let _ = write!(out, "\n{name}: {}", sanitize_line(input));
    }
    if let Some(hint) = hint {
        let _ = write!(out, "\nhint: {}", sanitize_line(hint));
    }
    out
}

/// [`report`] on one line, `error: MESSAGE; HINT`, for a command whose stderr is
/// read a line a failure (`ground extract`).
pub fn report_line(message: &str, hint: Option<&str>) -> String {
    match hint {
        Some(hint) => format!("error: {}; {}", sanitize_line(message), sanitize_line(hint)),
        None => format!("error: {}", sanitize_line(message)),
    }
}

/// The one renderer of a warning for a person: `warning: MESSAGE`, one sanitised line.
pub fn warning(message: &str) -> String {
    format!("warning: {}", sanitize_line(message))
}
