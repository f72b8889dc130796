//! The options that bring local documents into a run (`--docs`, `--no-web`), shared by
//! every command that answers (flattened into [`super::RunArgs`]).

use clap::Args;
use clap::error::{ContextKind, ContextValue, ErrorKind};

/// Local documents as sources beside the web.
#[derive(Debug, Clone, Default, Args)]
pub struct DocsOpts {
    /// Also search the local collection NAME (made with `ground index add`): its best
    /// passages join the web pages as sources, cited as path:line. Bare `--docs` is
    /// the collection `default`; give it again for more; name it as `--docs=NAME`
    /// [default: none, [docs] collections].
    #[arg(
        long = "docs",
        value_name = "NAME",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = ground::docs::DEFAULT_COLLECTION
    )]
    pub docs: Vec<String>,

    /// Answer from the local documents alone: no search request at all, nothing
    /// leaves the machine but the model request (needs --docs or [docs] collections).
    #[arg(long)]
    pub no_web: bool,
}

/// The collection a person meant when they wrote `ground answer --docs NAME QUESTION`:
/// clap reads the bare `--docs` as `default` and NAME as the question's first word, so
/// the run would search the wrong collection with the wrong question. Only when NAME
/// is a collection that `exists`: a question that merely begins after a bare `--docs`
/// is left alone. (A one-word question that is also a collection's name is asked as
/// `--docs -- WORD`.)
pub fn collection_read_as_a_word(args: &[String], exists: impl Fn(&str) -> bool) -> Option<String> {
    let end = args.iter().position(|a| a == "--").unwrap_or(args.len());
    let args = &args[..end];
    (0..args.len().saturating_sub(1)).find_map(|i| {
        let name = &args[i + 1];
        (args[i] == "--docs" && !name.starts_with('-') && exists(name)).then(|| name.clone())
    })
}

/// The collection a person meant when they wrote `--docs NAME` (with a space) and clap
/// refused an argument for it: NAME itself (`ground serve --docs NAME`, `ground mcp
/// --docs NAME`: commands that take no question) or the word after it (`ground batch
/// --docs NAME FILE`, NAME taken for the FILE). `None` for any other refusal. A bare
/// `--docs` is `default`, so the name must follow an equals sign.
pub fn spaced_collection(
    error: &clap::Error,
    args: impl IntoIterator<Item = String>,
) -> Option<String> {
    if error.kind() != ErrorKind::UnknownArgument {
        return None;
    }
    let Some(ContextValue::String(unexpected)) = error.get(ContextKind::InvalidArg) else {
        return None;
    };
    let args: Vec<String> = args.into_iter().collect();
    (0..args.len()).find_map(|i| {
        let name = args.get(i + 1).filter(|_| args[i] == "--docs")?;
        // `serve --docs NAME`: NAME is the word refused. `batch --docs NAME FILE`:
        // NAME was taken for the FILE, and the FILE is the word refused.
        let refused = name == unexpected || args.get(i + 2) == Some(unexpected);
        (refused && !name.starts_with('-')).then(|| name.clone())
    })
}
