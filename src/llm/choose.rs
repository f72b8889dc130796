//! `--llm auto`, the default: Ollama when it runs here and has the model, else the
//! embedded model, so that a first `ground answer` works on a machine with nothing
//! but `ground` on it, and a machine with Ollama keeps using it.
//!
//! The look at Ollama is one `GET /api/tags` bounded by [`PROBE`]: a missing server
//! costs at most a second. A model named on the command line that is a catalogue
//! name, or a `--model-file`, means the embedded model without asking Ollama. The
//! choice comes with one line saying which model answers and why, for the binary to
//! print on stderr (not with `-q`).

use std::time::Duration;

use crate::settings::{DEFAULT_EMBEDDED_MODEL, LlmBackend, LlmSettings};

use super::embedded::models;

/// How long Ollama may take to answer the look at its models.
pub const PROBE: Duration = Duration::from_secs(1);

/// The settings with `--llm auto` resolved.
#[derive(Debug, Clone)]
pub struct Chosen {
    /// The same settings with a concrete backend (and, for the embedded model, a
    /// catalogue model name).
    pub settings: LlmSettings,
    /// Which model answers and why, one line; `None` when nothing was chosen
    /// (an explicit `--llm`).
    pub note: Option<String>,
}

/// Resolves `--llm auto` in `settings`; any other backend comes back as it is.
pub async fn choose(settings: &LlmSettings) -> Chosen {
    let mut chosen = settings.clone();
    if settings.backend != LlmBackend::Auto {
        return Chosen {
            settings: chosen,
            note: None,
        };
    }
    if !cfg!(feature = "embedded") {
        // Without the engine built in, auto is Ollama, as it always was.
        chosen.backend = LlmBackend::Ollama;
        return Chosen {
            settings: chosen,
            note: None,
        };
    }
    let url = crate::http::display_url(&settings.url);
    let embedded = |mut s: LlmSettings, why: String| {
        s.backend = LlmBackend::Embedded;
        if !(s.model_explicit && models::find(&s.model).is_some()) {
            s.model = DEFAULT_EMBEDDED_MODEL.into();
        }
        let which = match &s.embedded.model_file {
            Some(file) => format!(
                "the embedded model {}",
                file.file_name().unwrap_or_default().to_string_lossy()
            ),
            None => format!("the embedded {}", s.model),
        };
        Chosen {
            note: Some(format!("{why}: using {which}")),
            settings: s,
        }
    };
    if settings.embedded.model_file.is_some() {
        return embedded(chosen, "--model-file names a GGUF file".into());
    }
    if settings.model_explicit && models::find(&settings.model).is_some() {
        let why = format!("{} is an embedded model", settings.model);
        return embedded(chosen, why);
    }
    match super::ollama::installed_models(settings, PROBE).await {
        Ok(installed) if installed.iter().any(|m| same_model(m, &settings.model)) => {
            chosen.backend = LlmBackend::Ollama;
            Chosen {
                note: Some(format!("Ollama at {url} has {}: using it", settings.model)),
                settings: chosen,
            }
        }
        Ok(_) => {
            let why = format!("Ollama at {url} does not have {}", settings.model);
            embedded(chosen, why)
        }
        Err(_) => embedded(chosen, format!("no Ollama at {url}")),
    }
}

/// Whether Ollama's `installed` name is `wanted` (`llama3.2` is `llama3.2:latest`).
fn same_model(installed: &str, wanted: &str) -> bool {
    let base = |n: &str| n.strip_suffix(":latest").unwrap_or(n).to_ascii_lowercase();
    base(installed) == base(wanted)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_match_with_or_without_latest() {
        assert!(same_model("llama3.2:latest", "llama3.2"));
        assert!(same_model("qwen2.5:7b", "qwen2.5:7b"));
        assert!(!same_model("qwen2.5:7b", "qwen2.5"));
    }
}
