//! `ground key`'s arguments, actions and key names.

use std::path::PathBuf;

use clap::{Args, Subcommand, ValueEnum};

/// `ground key`.
#[derive(Debug, Args)]
pub struct KeyArgs {
    /// What to do.
    #[command(subcommand)]
    pub action: KeyAction,
}

/// What `ground key` does.
#[derive(Debug, Subcommand)]
pub enum KeyAction {
    /// Check a key's format and store it in the OS keyring. The key is read from a
    /// prompt without echo, or from stdin when stdin is not a terminal; never from
    /// the command line.
    Set {
        /// Which key.
        #[arg(value_enum)]
        name: KeyNameArg,
    },
    /// Delete a key from the OS keyring.
    Delete {
        /// Which key.
        #[arg(value_enum)]
        name: KeyNameArg,
    },
    /// Which keys are set and where each comes from (flag > env > config > keyring);
    /// never the keys themselves.
    #[command(visible_alias = "list")]
    Status {
        /// Config file [default: $XDG_CONFIG_HOME/ground/config.toml; env: GROUND_CONFIG].
        #[arg(long, value_name = "PATH")]
        config: Option<PathBuf>,
    },
}

/// The keys `ground key` knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum KeyNameArg {
    /// The Brave Search API key.
    Brave,
    /// The Tavily API key.
    Tavily,
    /// The Bearer key of a hosted OpenAI-compatible server (`[llm] api_key`).
    Llm,
    /// The password of the Redis replicas share, when `[state] redis_url` holds none.
    Redis,
}

impl From<KeyNameArg> for ground::keystore::KeyName {
    fn from(name: KeyNameArg) -> Self {
        match name {
            KeyNameArg::Brave => Self::Brave,
            KeyNameArg::Tavily => Self::Tavily,
            KeyNameArg::Llm => Self::Llm,
            KeyNameArg::Redis => Self::Redis,
        }
    }
}
