//! `ground extract`: local HTML (or PDF) to main text, without any network.
//!
//! Three ways in, one engine ([`ground::extract_files`]):
//! - `ground extract FILE...` prints the main text of each file (a blank line between
//!   files); a PDF (by its `%PDF-` start) is read with [`ground::pdf`], bounded like a
//!   fetched one;
//! - `ground extract` with no file reads one page from stdin;
//! - `ground extract --input-dir D --output-dir O` writes `O/<stem>.txt` for every
//!   `D/*.html` ([`ground::extract_files::extract_dir`]). The summed in-process
//!   extraction time (file I/O excluded) is printed on stderr as
//!   `extract_seconds=<float>`.
//!
//! This file checks the arguments and prints; the file handling is the library's.
//! Every failure is one line, `error: MESSAGE; HINT`, and exit code 2.

use std::io::{self, IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use ground::error::Error;
use ground::extract_files::{self, FileText};

use crate::cli::ExtractArgs;
use crate::output::code;

/// Runs `ground extract`: exit 0, or the error's code (2) with the error on stderr.
pub fn run_command(args: ExtractArgs) -> ExitCode {
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{}", one_line(&e));
            code(e.exit_code())
        }
    }
}

/// The error and its hint on one line, as `ground extract` has always said them.
fn one_line(error: &Error) -> String {
    ground::error::report_line(&error.to_string(), error.hint().as_deref())
}

/// A usage error of `ground extract`'s arguments.
fn usage(message: String, hint: &str) -> Error {
    Error::Usage {
        message,
        hint: hint.to_string(),
    }
}

/// Runs `ground extract` (see the module docs for the three modes).
pub fn run(args: &ExtractArgs) -> Result<(), Error> {
    let base_url = match &args.url {
        Some(raw) => Some(url::Url::parse(raw).map_err(|reason| {
            usage(
                format!("--url {raw:?} is not an absolute URL ({reason})"),
                "give e.g. https://example.com/page",
            )
        })?),
        None => None,
    };
    match (&args.input_dir, &args.output_dir) {
        (Some(input), Some(output)) => {
            if !args.files.is_empty() {
                return Err(usage(
                    "FILE arguments cannot be combined with --input-dir".into(),
                    "use one or the other",
                ));
            }
            let stats = extract_files::extract_dir(input, output, base_url.as_ref())?;
            for (path, reason) in &stats.skipped {
                eprintln!(
                    "ground extract: skipped {}: {reason}",
                    ground::text::sanitize_line(&path.to_string_lossy())
                );
            }
            eprintln!("extract_seconds={:.6}", stats.extract_time.as_secs_f64());
            Ok(())
        }
        (None, None) => print_pages(&args.files, base_url.as_ref()),
        _ => Err(usage(
            "--input-dir needs --output-dir (and the other way round)".into(),
            "give both folders",
        )),
    }
}

/// File/stdin mode: prints each page's main text, a blank line between pages.
fn print_pages(files: &[PathBuf], base_url: Option<&url::Url>) -> Result<(), Error> {
    let mut texts = Vec::with_capacity(files.len().max(1));
    if files.is_empty() {
        let mut bytes = Vec::new();
        io::stdin().lock().read_to_end(&mut bytes).map_err(|e| {
            usage(
                format!("cannot read the page from stdin: {e}"),
                "pass a FILE argument instead",
            )
        })?;
        let path = Path::new("-");
        texts.push(warned(
            extract_files::extract_bytes(bytes, path, base_url)?,
            path,
        ));
    }
    for path in files {
        texts.push(warned(extract_files::extract_path(path, base_url)?, path));
    }
    let stdout = io::stdout();
    let to_terminal = stdout.is_terminal();
    let mut out = stdout.lock();
    let closed = |e: io::Error| Error::WriteStdout {
        reason: e.to_string(),
    };
    for (i, extracted) in texts.iter().enumerate() {
        let mut block = String::new();
        if i > 0 {
            block.push('\n');
        }
        block.push_str(extracted);
        block.push('\n');
        if to_terminal {
            block = ground::text::sanitize_text(&block);
        }
        out.write_all(block.as_bytes()).map_err(closed)?;
    }
    out.flush().map_err(closed)
}

/// The file's text, after a warning on stderr when it is a PDF with no text layer.
fn warned(file: FileText, path: &Path) -> String {
    if let Some(pages) = file.textless_pdf_pages {
        eprintln!(
            "{}",
            ground::error::warning(&format!(
                "{} has no text layer ({} pages, no text: a scan or images only)",
                path.display(),
                pages
            ))
        );
    }
    file.text
}
