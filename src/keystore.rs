//! API keys, and the password of the Redis that replicas share, in the OS keyring
//! (Secret Service on Linux, Keychain on macOS, Credential Manager on Windows): the
//! names that may be stored, the format check
//! made before a key is stored, and lookups bounded by a short timeout so that a
//! missing, locked or hung keyring never blocks a run.

use std::sync::mpsc;
use std::time::Duration;

/// The keyring service name under which every key of `ground` is stored.
pub const SERVICE: &str = "ground";

/// How long one keyring call may take before it counts as "no keyring".
pub const TIMEOUT: Duration = Duration::from_secs(2);

/// A key `ground` can keep in the keyring.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyName {
    /// The Brave Search API key.
    Brave,
    /// The Tavily API key.
    Tavily,
    /// The Bearer key of a hosted OpenAI-compatible server (`[llm] api_key`).
    Llm,
    /// The password of the Redis replicas share (`[state] redis_url`), used when
    /// the URL holds none.
    Redis,
}

impl KeyName {
    /// Every name, in the order `ground key status` lists them.
    pub const ALL: [KeyName; 4] = [
        KeyName::Brave,
        KeyName::Tavily,
        KeyName::Llm,
        KeyName::Redis,
    ];

    /// The name as typed on the command line and stored in the keyring.
    pub fn as_str(self) -> &'static str {
        match self {
            KeyName::Brave => "brave",
            KeyName::Tavily => "tavily",
            KeyName::Llm => "llm",
            KeyName::Redis => "redis",
        }
    }

    /// What the secret is, for prompts and messages: "API key", or "password".
    pub fn what(self) -> &'static str {
        match self {
            KeyName::Redis => "password",
            KeyName::Brave | KeyName::Tavily | KeyName::Llm => "API key",
        }
    }
}

impl std::fmt::Display for KeyName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a keyring lookup found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lookup {
    /// The stored key.
    Found(String),
    /// The keyring works and holds no key of this name.
    Absent,
    /// There is no usable keyring (none running, locked, or too slow): the reason.
    Unavailable(String),
}

/// Why a key could not be checked, stored or deleted.
#[derive(Debug, thiserror::Error)]
pub enum KeystoreError {
    /// The key does not have the service's format.
    #[error("this does not look like a {name} {}: {reason}", .name.what())]
    Format {
        /// The key's name.
        name: KeyName,
        /// What is wrong with it (never the key itself).
        reason: String,
    },
    /// The keyring is missing, locked, refused the call or did not answer in time.
    #[error("the OS keyring is not available: {reason}")]
    Unavailable {
        /// What the keyring said.
        reason: String,
    },
    /// There is no key of this name to delete.
    #[error("no {name} key is stored in the OS keyring")]
    NotStored {
        /// The key's name.
        name: KeyName,
    },
}

impl KeystoreError {
    /// How to fix it.
    pub fn hint(&self) -> String {
        match self {
            KeystoreError::Format { name, .. } => format!(
                "paste the whole key as the service shows it: `ground key set {name}` reads it from stdin or a prompt"
            ),
            KeystoreError::Unavailable { .. } => "start and unlock your keyring (on Linux a Secret Service such as gnome-keyring or KeePassXC), or set the key in an environment variable or the config file instead".into(),
            KeystoreError::NotStored { .. } => "`ground key status` shows which keys are stored and where each key comes from".into(),
        }
    }
}

/// Checks a key's format before it is stored and returns it without surrounding
/// whitespace (a pasted or piped key often ends in a newline).
pub fn check_format(name: KeyName, key: &str) -> Result<String, KeystoreError> {
    let key = key.trim();
    let bad = |reason: &str| KeystoreError::Format {
        name,
        reason: reason.to_string(),
    };
    if key.is_empty() {
        return Err(bad("it is empty"));
    }
    if key.chars().any(char::is_whitespace) {
        return Err(bad("it contains spaces or line breaks"));
    }
    if !key.chars().all(|c| c.is_ascii_graphic()) {
        return Err(bad("it contains characters other than printable ASCII"));
    }
    let token = |s: &str| {
        s.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    };
    match name {
        KeyName::Brave => {
            if !token(key) {
                return Err(bad("Brave keys are letters and digits only"));
            }
            if !(20..=64).contains(&key.len()) {
                return Err(bad("Brave keys are 20 to 64 characters long"));
            }
        }
        KeyName::Tavily => {
            let Some(rest) = key.strip_prefix("tvly-") else {
                return Err(bad("Tavily keys start with tvly-"));
            };
            if !token(rest) || !(16..=80).contains(&rest.len()) {
                return Err(bad("after tvly- come 16 to 80 letters, digits, - or _"));
            }
        }
        KeyName::Llm => {
            if !(8..=512).contains(&key.len()) {
                return Err(bad("API keys are 8 to 512 characters long"));
            }
        }
        KeyName::Redis => {
            if key.len() > 512 {
                return Err(bad("passwords here are at most 512 characters long"));
            }
        }
    }
    Ok(key.to_string())
}

/// The outcome of one bounded keyring call: the keyring's own answer, or why there
/// was none (no thread, no runtime, no answer in time).
type Bounded<T> = Result<keyring::Result<T>, String>;

/// Runs one keyring call on its own thread, giving up after [`TIMEOUT`].
fn bounded<T: Send + 'static>(
    call: impl FnOnce(keyring::Entry) -> keyring::Result<T> + Send + 'static,
    name: KeyName,
) -> Bounded<T> {
    let (tx, rx) = mpsc::channel::<Bounded<T>>();
    std::thread::Builder::new()
        .name("keyring".into())
        .spawn(move || {
            let runtime = match tokio::runtime::Builder::new_multi_thread()
                .worker_threads(1)
                .enable_all()
                .build()
            {
                Ok(r) => r,
                Err(e) => {
                    let _ = tx.send(Err(format!("cannot start a runtime for it: {e}")));
                    return;
                }
            };
            let outcome = {
                let _context = runtime.enter();
                keyring::Entry::new(SERVICE, name.as_str()).and_then(call)
            };
            let _ = tx.send(Ok(outcome));
            runtime.shutdown_background();
        })
        .map_err(|e| format!("cannot start a thread for it: {e}"))?;
    match rx.recv_timeout(TIMEOUT) {
        Ok(outcome) => outcome,
        Err(_) => Err(format!("it did not answer within {} s", TIMEOUT.as_secs())),
    }
}

/// One short line for a keyring failure; keyring errors never contain a key.
fn reason(e: &keyring::Error) -> String {
    let message = e.to_string();
    let line = message.lines().next().unwrap_or("").trim();
    line.chars().take(200).collect()
}

/// Reads a key from the OS keyring; never fails, never takes longer than [`TIMEOUT`].
pub fn get(name: KeyName) -> Lookup {
    match bounded(|entry| entry.get_password(), name) {
        Ok(Ok(key)) if !key.trim().is_empty() => Lookup::Found(key),
        Ok(Ok(_)) | Ok(Err(keyring::Error::NoEntry)) => Lookup::Absent,
        Ok(Err(e)) => Lookup::Unavailable(reason(&e)),
        Err(why) => Lookup::Unavailable(why),
    }
}

/// Checks the key's format and stores it under `name`, replacing any earlier key.
pub fn set(name: KeyName, key: &str) -> Result<(), KeystoreError> {
    let key = check_format(name, key)?;
    match bounded(move |entry| entry.set_password(&key), name) {
        Ok(Ok(())) => Ok(()),
        Ok(Err(e)) => Err(KeystoreError::Unavailable { reason: reason(&e) }),
        Err(reason) => Err(KeystoreError::Unavailable { reason }),
    }
}

/// Deletes the key stored under `name`.
pub fn delete(name: KeyName) -> Result<(), KeystoreError> {
    match bounded(|entry| entry.delete_credential(), name) {
        Ok(Ok(())) => Ok(()),
        Ok(Err(keyring::Error::NoEntry)) => Err(KeystoreError::NotStored { name }),
        Ok(Err(e)) => Err(KeystoreError::Unavailable { reason: reason(&e) }),
        Err(reason) => Err(KeystoreError::Unavailable { reason }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn brave_keys_are_letters_and_digits_of_a_sane_length() {
        assert_eq!(
            check_format(KeyName::Brave, "BSAabcdefghijklmnopqrstuvwxyz12\n").unwrap(),
            "BSAabcdefghijklmnopqrstuvwxyz12"
        );
        assert!(check_format(KeyName::Brave, "short").is_err());
        assert!(check_format(KeyName::Brave, "BSA abcdefghijklmnopqrstuvwxyz").is_err());
        assert!(check_format(KeyName::Brave, "BSA/abcdefghijklmnopqrstuvwxyz").is_err());
        assert!(check_format(KeyName::Brave, "").is_err());
    }

    #[test]
    fn tavily_keys_start_with_tvly() {
        assert!(check_format(KeyName::Tavily, "tvly-dev-abcdefghijklmnop1234").is_ok());
        assert!(check_format(KeyName::Tavily, "abcdefghijklmnopqrstuvwxyz").is_err());
        assert!(check_format(KeyName::Tavily, "tvly-short").is_err());
    }

    #[test]
    fn llm_keys_are_printable_without_spaces() {
        assert!(check_format(KeyName::Llm, "sk-proj-abc123/+=").is_ok());
        assert!(check_format(KeyName::Llm, "sk").is_err());
        assert!(check_format(KeyName::Llm, "sk-abc\u{e9}defgh").is_err());
        assert!(check_format(KeyName::Llm, "sk-abc def-ghi").is_err());
    }

    #[test]
    fn a_format_error_never_contains_the_key() {
        let key = "tvly-secret secret secret";
        let e = check_format(KeyName::Tavily, key).unwrap_err();
        assert!(!e.to_string().contains("secret"));
        assert!(e.hint().contains("ground key set tavily"));
    }
}
