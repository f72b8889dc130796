//! PDF pages to text, read in a sandbox: the PDF counterpart of [`crate::extract`].
//!
//! A PDF is a program as much as a document, and a hostile one can make a parser
//! recurse forever, inflate gigabytes or loop. So no PDF from the web is parsed in
//! the `ground` process: [`read`] hands the bytes to a worker process (`ground
//! pdf-worker`, the same binary) that runs under operating-system limits and is
//! killed at the page's deadline; a crash, an abort, a limit or a kill is that
//! page's `ERROR` or `TIMEOUT` with the reason, and the run (or the MCP server) goes
//! on. Inside the worker, a pre-scan refuses what it can recognise before the parser
//! starts, so the limits are a backstop and not the usual way out.
//!
//! - [`sandbox`]: the parent side (start, limits, deadline, read back);
//! - [`worker`]: the child side (`ground pdf-worker`);
//! - [`protocol`]: the bytes between them, versioned and bounded;
//! - `scan` (structure limits, with lopdf), `inflate` (filter chains decoded with a
//!   cap, as lopdf decodes them), `lex` (content streams counted in constant
//!   memory) and `parse` (the scan, then `pdf-extract`, then tidying): the worker's
//!   work.
//!
//! Bounds, all together:
//! - **bytes**: the fetch reads at most [`MAX_PDF_BYTES`]; a PDF cut there is not read;
//! - **decompression**: every stream's filter chain is measured, and a file whose
//!   streams would inflate past [`MAX_INFLATED_BYTES`] in all is refused, as is a
//!   page whose drawing (content and the XObjects it draws, each time drawn) would;
//! - **structure**: drawing objects drawn inside themselves or nested too deep, page
//!   trees that loop, floods of operators or `q`, and ToUnicode ranges of millions
//!   of codes are refused (see `scan`);
//! - **pages**: at most [`MAX_PAGES`] are read;
//! - **process**: memory, CPU time, files and lifetime of the worker (see [`sandbox`]);
//! - **time**: [`EXTRACT_TIMEOUT`] per PDF, waiting for a free worker included.
//!
//! A PDF with no text at all (a scan) is not an error but an empty result, which the
//! page stage reports as `EMPTY` with the reason.

use std::time::Duration;

mod inflate;
mod lex;
mod parse;
pub mod protocol;
pub mod sandbox;
mod scan;
pub mod worker;

pub use sandbox::Sandbox;

/// Largest PDF body fetched and read (PDFs run larger than HTML pages).
pub const MAX_PDF_BYTES: usize = 16 * 1024 * 1024;

/// Most bytes all of a PDF's streams may inflate to, together (and one page's
/// drawing, counting each drawing object each time it is drawn).
pub const MAX_INFLATED_BYTES: usize = 64 * 1024 * 1024;

/// Most pages read from one PDF; the rest are left out (and said so).
pub const MAX_PAGES: u32 = 100;

/// Deadline for reading one PDF (the page's budget for it).
pub const EXTRACT_TIMEOUT: Duration = Duration::from_secs(20);

/// What a PDF holds.
#[derive(Debug, Clone, PartialEq)]
pub struct PdfText {
    /// `/Title` from the document information, if it has a usable one.
    pub title: Option<String>,
    /// The text of the pages read, pages separated by a blank line, whitespace tidied.
    pub text: String,
    /// Pages in the document.
    pub pages: u32,
    /// Pages read (at most [`MAX_PAGES`]; pages the pre-scan refused are not).
    pub pages_read: u32,
}

/// Why a PDF could not be read: a one-line reason for the page's `error`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PdfError {
    /// The worker read the file and refused it: damaged, encrypted, or built to
    /// exhaust a parser (the reason says which).
    #[error("{0}")]
    Refused(String),
    /// The worker was still at it at the deadline, and was killed.
    #[error("the PDF parser was killed at the {} s page deadline", .0.as_secs())]
    Deadline(Duration),
    /// Every worker was busy with other PDFs until the deadline.
    #[error("no PDF parser was free within the {} s page deadline (other PDFs were being read)", .0.as_secs())]
    Busy(Duration),
    /// The worker hit its address-space limit.
    #[error("the PDF parser ran out of its {} MiB memory limit", .0 / 1024 / 1024)]
    Memory(u64),
    /// The worker hit its CPU-time limit.
    #[error("the PDF parser ran out of its {0} s CPU time limit")]
    Cpu(u64),
    /// The worker's stack overflowed.
    #[error("the PDF parser overflowed its stack (drawing objects nested too deep)")]
    Stack,
    /// The worker died some other way (a signal, an unexpected exit code).
    #[error("the PDF parser crashed ({0})")]
    Crashed(String),
    /// No worker could be started.
    #[error(
        "the PDF parser could not be started: {reason}; set {} to the path of the ground binary",
        sandbox::WORKER_ENV
    )]
    Worker { reason: String },
    /// The worker's reply is not in the protocol.
    #[error(
        "the PDF parser's reply could not be read ({0}); if {env} is set, it must name a ground binary of this version",
        env = sandbox::WORKER_ENV
    )]
    Protocol(#[from] protocol::ProtocolError),
}

/// How every reason of the pre-scan's refusals starts (a file built to exhaust a
/// reader, as opposed to a damaged one).
pub const REFUSED: &str = "the PDF was refused: ";

impl PdfError {
    /// Whether the page ran out of time (status `TIMEOUT`) rather than failed
    /// (`ERROR`).
    pub fn is_timeout(&self) -> bool {
        matches!(self, PdfError::Deadline(_) | PdfError::Busy(_))
    }

    /// What a person holding the file can do, when there is something: a file that
    /// could not be followed may be incomplete. (A refused or sandbox-stopped one
    /// is the file's doing, and the worker errors name their own fix.)
    pub fn hint(&self) -> Option<&'static str> {
        match self {
            PdfError::Refused(reason) if !reason.starts_with(REFUSED) => {
                Some("check that the file is complete")
            }
            _ => None,
        }
    }
}

/// Whether `bytes` start like a PDF (`%PDF-`, after any leading whitespace).
pub fn looks_like_pdf(bytes: &[u8]) -> bool {
    let start = &bytes[..bytes.len().min(1024)];
    let skipped = start
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(start.len());
    start[skipped..].starts_with(b"%PDF-")
}

/// Reads a PDF's text and title in a sandboxed worker ([`Sandbox::from_env`]),
/// within [`EXTRACT_TIMEOUT`].
pub async fn read(bytes: Vec<u8>) -> Result<PdfText, PdfError> {
    Sandbox::from_env().read(bytes).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pdf_signatures() {
        assert!(looks_like_pdf(b"%PDF-1.7\n..."));
        assert!(looks_like_pdf(b"\r\n %PDF-1.3"));
        assert!(!looks_like_pdf(b"<html>%PDF-"));
        assert!(!looks_like_pdf(b""));
    }

    #[test]
    fn errors_say_what_ended_the_parser() {
        assert_eq!(
            PdfError::Memory(256 * 1024 * 1024).to_string(),
            "the PDF parser ran out of its 256 MiB memory limit"
        );
        assert_eq!(
            PdfError::Deadline(EXTRACT_TIMEOUT).to_string(),
            "the PDF parser was killed at the 20 s page deadline"
        );
        assert_eq!(
            PdfError::Crashed("signal 11: segmentation fault".into()).to_string(),
            "the PDF parser crashed (signal 11: segmentation fault)"
        );
        assert!(PdfError::Busy(EXTRACT_TIMEOUT).is_timeout());
        assert!(!PdfError::Stack.is_timeout());
    }
}
