//! `ground index`'s arguments: the local document index (add, list, remove, search).

use std::path::PathBuf;

use clap::{Args, Subcommand};

/// `ground index`.
#[derive(Debug, Args)]
pub struct IndexArgs {
    /// What to do.
    #[command(subcommand)]
    pub action: IndexAction,
}

/// `ground index` actions. The index lives in $GROUND_INDEX_DIR, else
/// $XDG_DATA_HOME/ground/index (~/.local/share/ground/index).
#[derive(Debug, Subcommand)]
pub enum IndexAction {
    /// Index folders or files (Markdown, text, reStructuredText, HTML, PDF): only
    /// what is new or changed is read again, and files gone are dropped. With no
    /// PATH, reads the collection's folders again (and rebuilds a damaged index).
    Add {
        /// Folders or files. `.gitignore`, `.ignore` and hidden files are honoured.
        #[arg(value_name = "PATH")]
        paths: Vec<PathBuf>,
        /// The collection [default: default].
        #[arg(long, value_name = "NAME", default_value = ground::docs::DEFAULT_COLLECTION)]
        collection: String,
        /// Read hidden files and folders too.
        #[arg(long)]
        hidden: bool,
        /// Print one JSON object on stdout.
        #[arg(long)]
        json: bool,
    },
    /// The collections: their folders, files, size on disk and last update.
    List {
        /// Print one JSON object on stdout.
        #[arg(long)]
        json: bool,
    },
    /// Drop folders or files from a collection (the files themselves are untouched).
    Remove {
        /// Folders or files, as given to `add` (they need not exist any more).
        #[arg(value_name = "PATH", required = true)]
        paths: Vec<PathBuf>,
        /// The collection [default: default].
        #[arg(long, value_name = "NAME", default_value = ground::docs::DEFAULT_COLLECTION)]
        collection: String,
        /// Print one JSON object on stdout.
        #[arg(long)]
        json: bool,
    },
    /// Search the index: the best passages with their file and lines.
    Search {
        /// The query. Use `-` or leave it out to read it from stdin.
        query: Vec<String>,
        /// The collection; give it again for more [default: default].
        #[arg(long, value_name = "NAME")]
        collection: Vec<String>,
        /// How many passages to print (1-100).
        #[arg(short = 'n', long = "limit", default_value_t = 10, value_parser = clap::value_parser!(u16).range(1..=100))]
        n: u16,
        /// Print one JSON object on stdout.
        #[arg(long)]
        json: bool,
    },
}
