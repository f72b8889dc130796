//! The process exit codes `ground` uses, and the one table that `--help` and the
//! book's exit-code page (docs/src/exit-codes.md) are written from. Stable: scripts
//! and CI smoke checks depend on them.

use std::fmt::Write as _;

/// The answer was produced (and, with `--strict`, is fully grounded).
pub const SUCCESS: i32 = 0;
/// An unexpected internal error (a bug: please report it).
pub const INTERNAL: i32 = 1;
/// Bad command line, bad configuration file or value.
pub const USAGE: i32 = 2;
/// The search backend failed (unreachable, refused, rate-limited, engines down).
pub const SEARCH: i32 = 3;
/// Search worked but no page could be used (no results, every fetch failed).
pub const NO_SOURCES: i32 = 4;
/// The model server failed or its replies could not be used.
pub const MODEL: i32 = 5;
/// The answer is not grounded: no citation at all, or with `--strict` any unsupported
/// statement (neither a verified quote that agrees with it nor ground's own match) or a
/// "the sources do not answer" reply; with `--strict-quotes` also a statement that only
/// ground's match supports.
pub const NOT_GROUNDED: i32 = 6;
/// `--fallback offline`: search failed, so the answer is the model's alone and
/// not grounded.
pub const OFFLINE: i32 = 7;
/// The local search rate limit (`[search] max_per_minute`, shared by every `ground`
/// process of the user) is reached and its next free slot is past the run's
/// deadline (within it, a search waits for the slot): nothing was sent; retry
/// after the time the message names, or give the run a longer `--timeout`.
pub const RATE_LIMITED: i32 = 8;
/// `ground batch`: every question has a record, and some of them are failures (each
/// failure record says why). No other code fits: the batch itself did not fail.
pub const SOME_FAILED: i32 = 9;
/// Interrupted by Ctrl-C (SIGINT).
pub const INTERRUPTED: i32 = 130;

/// Every exit code with what it means: the one table that `--help` and the book
/// (docs/src/exit-codes.md) are written from.
pub const EXIT_CODE_TABLE: &[(i32, &str)] = &[
    (
        SUCCESS,
        "success (with --strict: every statement is supported, by a verified quote or ground's match; --strict-quotes: by a verified quote)",
    ),
    (
        INTERNAL,
        "internal error (a bug, or a machine out of threads or memory)",
    ),
    (USAGE, "usage or configuration error"),
    (
        SEARCH,
        "search backend failure (unreachable, 403, 429, 400, 5xx, bad key, quota, engines failing)",
    ),
    (
        NO_SOURCES,
        "no usable sources (no results, or every page failed)",
    ),
    (
        MODEL,
        "model failure (unreachable, model missing, invalid or cut-off reply)",
    ),
    (
        NOT_GROUNDED,
        "not grounded: nothing cited (--strict: also any unsupported statement or unanswered question; --strict-quotes: also a statement only ground's own match supports)",
    ),
    (
        OFFLINE,
        "--fallback offline: search failed; the answer is the model's alone (not grounded)",
    ),
    (
        RATE_LIMITED,
        "local search rate limit ([search] max_per_minute): the next free slot is past --timeout; nothing sent",
    ),
    (
        SOME_FAILED,
        "ground batch: some questions failed (each has its error record in the output)",
    ),
    (INTERRUPTED, "interrupted (Ctrl-C)"),
];

/// The exit codes in `codes` as the `Exit codes:` block of `--help`, from
/// [`EXIT_CODE_TABLE`] (or, for a command with its own meanings, from `table`).
pub fn exit_codes_help(table: &[(i32, &str)]) -> String {
    let mut out = String::from("Exit codes:");
    for (code, meaning) in table {
        let _ = write!(out, "\n  {code:<3} {meaning}");
    }
    out
}
