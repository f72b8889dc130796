//! `ground extract`'s arguments.

use std::path::PathBuf;

use clap::Args;

/// `ground extract`.
#[derive(Debug, Default, Args)]
pub struct ExtractArgs {
    /// HTML files to read; none means stdin.
    pub files: Vec<PathBuf>,
    /// Read every *.html in this folder (with --output-dir).
    #[arg(long, value_name = "DIR", requires = "output_dir")]
    pub input_dir: Option<PathBuf>,
    /// Write one .txt per input page into this folder.
    #[arg(long, value_name = "DIR", requires = "input_dir")]
    pub output_dir: Option<PathBuf>,
    /// The page's address, as a hint for extraction.
    #[arg(long)]
    pub url: Option<String>,
}
