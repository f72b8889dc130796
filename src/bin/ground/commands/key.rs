//! `ground key set|delete|status`: API keys in the OS keyring. A key is read from a
//! prompt without echo or from stdin, never from the command line, and never printed.

use std::io::{IsTerminal, Read};
use std::process::ExitCode;

use ground::config::{self, KeySource, Overrides};
use ground::error::Error;
use ground::keystore::{self, KeyName, KeystoreError};

use crate::cli::{KeyAction, KeyArgs};
use crate::output::fail;

/// The most a key read from stdin may take; real keys are far shorter.
const MAX_KEY_BYTES: u64 = 4096;

/// Runs `ground key`.
pub fn run(args: KeyArgs) -> ExitCode {
    match args.action {
        KeyAction::Set { name } => set(name.into()),
        KeyAction::Delete { name } => {
            let name: KeyName = name.into();
            match keystore::delete(name) {
                Ok(()) => {
                    println!("deleted the {name} key from the OS keyring");
                    ExitCode::SUCCESS
                }
                Err(e) => failed(&e),
            }
        }
        KeyAction::Status { config } => status(Overrides {
            config_path: config,
            ..Overrides::default()
        }),
    }
}

/// Reads, checks and stores one key.
fn set(name: KeyName) -> ExitCode {
    let key = if std::io::stdin().is_terminal() {
        match rpassword::prompt_password(format!("{name} {} (not shown): ", name.what())) {
            Ok(key) => key,
            Err(e) => return read_failed(&e),
        }
    } else {
        let mut key = String::new();
        match std::io::stdin()
            .lock()
            .take(MAX_KEY_BYTES)
            .read_to_string(&mut key)
        {
            Ok(_) => key,
            Err(e) => return read_failed(&e),
        }
    };
    match keystore::set(name, &key) {
        Ok(()) => {
            println!("stored the {name} {} in the OS keyring", name.what());
            ExitCode::SUCCESS
        }
        Err(e) => failed(&e),
    }
}

/// Lists where each key comes from.
fn status(overrides: Overrides) -> ExitCode {
    let env = |name: &str| std::env::var(name).ok();
    let sources = match config::key_sources(&overrides, &env, &keystore::get) {
        Ok(sources) => sources,
        Err(e) => return fail(false, "key", "", &e),
    };
    let mut warned = false;
    for (name, source) in sources {
        let from = match source {
            KeySource::Env(var) => format!("set by {var}"),
            KeySource::File(setting) => format!("set by {setting} in the config file"),
            KeySource::Keyring => "set in the OS keyring".to_string(),
            KeySource::None(None) => "not set".to_string(),
            KeySource::None(Some(reason)) => {
                if !warned {
                    eprintln!(
                        "{}",
                        ground::error::warning(&format!(
                            "the OS keyring is not available: {reason}"
                        ))
                    );
                    warned = true;
                }
                "not set (the OS keyring could not be asked)".to_string()
            }
        };
        println!("{:<7} {from}", name.as_str());
    }
    ExitCode::SUCCESS
}

/// Prints a keyring error with its hint; exit 2 like other usage errors.
fn failed(e: &KeystoreError) -> ExitCode {
    fail(
        false,
        "key",
        "",
        &Error::Usage {
            message: e.to_string(),
            hint: e.hint(),
        },
    )
}

/// Prints why the key could not be read.
fn read_failed(e: &std::io::Error) -> ExitCode {
    fail(
        false,
        "key",
        "",
        &Error::Usage {
            message: format!("cannot read the key: {e}"),
            hint: "type or paste the key at the prompt, or pipe it: `printf %s \"$KEY\" | ground key set NAME`".into(),
        },
    )
}
