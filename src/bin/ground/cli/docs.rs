//! The options that bring local documents into a run (`--docs`, `--no-web`), shared by
//! every command that answers (flattened into [`super::RunArgs`]).

use clap::Args;

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
