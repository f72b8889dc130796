//! `ground model pull|list|rm`: the embedded models on this machine. The catalogue,
//! the download (resumable, checked, locked) and the deletion are the library's
//! (`ground::llm::embedded::models`); this screen only prints.

use std::process::ExitCode;

use ground::error::Error;
use ground::llm::embedded::models::{self, CatalogueModel, Download};
use ground::settings::{DEFAULT_EMBEDDED_MODEL, Settings};
use serde_json::json;

use crate::cli::{self, ModelAction, ModelArgs};
use crate::output::{code, print_json};
use crate::progress::DownloadProgress;
use crate::runtime::{block_on, settings};

/// Runs `ground model`.
pub fn run(args: ModelArgs) -> ExitCode {
    let overrides = cli::overrides(&args.config, None, None, None, None);
    let outcome = settings(&overrides).and_then(|settings| match args.action {
        ModelAction::Pull { name, quiet } => pull(&settings, name.as_deref(), quiet),
        ModelAction::List { json } => list(&settings, json),
        ModelAction::Rm { name } => remove(&settings, &name),
    });
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{}", e.report());
            code(e.exit_code())
        }
    }
}

/// The catalogue model called `name`, or a usage error listing the names.
fn named(name: &str) -> Result<&'static CatalogueModel, Error> {
    models::find(name).ok_or_else(|| Error::Usage {
        message: format!("{name:?} is not a model of the catalogue"),
        hint: format!("use one of: {} (`ground model list`)", models::names()),
    })
}

/// The models folder, or why there is none.
fn dir(settings: &Settings) -> Result<std::path::PathBuf, Error> {
    settings
        .llm
        .embedded
        .models_dir
        .clone()
        .ok_or_else(|| Error::Usage {
            message: "there is no folder for models: neither XDG_DATA_HOME nor HOME is set".into(),
            hint: "set HOME or XDG_DATA_HOME".into(),
        })
}

fn pull(settings: &Settings, name: Option<&str>, quiet: bool) -> Result<(), Error> {
    let model = named(name.unwrap_or(DEFAULT_EMBEDDED_MODEL))?;
    let dir = dir(settings)?;
    let path = dir.join(model.file);
    if path.is_file() {
        println!("{} is already downloaded: {}", model.name, path.display());
        return Ok(());
    }
    let mut progress = DownloadProgress::new(model.name, quiet);
    let mut report = |p| progress.update(p);
    let mut download = Download {
        hub: settings.llm.embedded.hub_url.clone(),
        dir,
        stall: settings.llm.embedded.stall,
        free_space: None,
        progress: &mut report,
        name: model.name.into(),
    };
    let result = block_on(models::fetch(&model.model_file(), &mut download));
    progress.finish();
    let path = result?;
    println!("{} downloaded and checked: {}", model.name, path.display());
    Ok(())
}

fn list(settings: &Settings, as_json: bool) -> Result<(), Error> {
    let dir = dir(settings)?;
    let listed = models::list(&dir);
    if as_json {
        let models: Vec<_> = listed
            .iter()
            .map(|i| {
                json!({
                    "name": i.model.name,
                    "default": i.model.name == DEFAULT_EMBEDDED_MODEL,
                    "file": i.path.display().to_string(),
                    "downloaded": i.bytes.is_some(),
                    "bytes": i.bytes,
                    "partial_bytes": i.partial,
                    "about": i.model.about,
                })
            })
            .collect();
        let _ = print_json(&json!({"dir": dir.display().to_string(), "models": models}));
        return Ok(());
    }
    println!("models in {}", dir.display());
    for i in &listed {
        let state = match (i.bytes, i.partial) {
            (Some(b), _) => format!("downloaded ({:.2} GB)", b as f64 / 1e9),
            (None, Some(p)) => format!("partly downloaded ({} MB; `pull` resumes)", p / 1_000_000),
            (None, None) => "not downloaded".into(),
        };
        let default = if i.model.name == DEFAULT_EMBEDDED_MODEL {
            " (default)"
        } else {
            ""
        };
        println!(
            "  {:<11} {state:<40} {}{default}",
            i.model.name, i.model.about
        );
    }
    Ok(())
}

fn remove(settings: &Settings, name: &str) -> Result<(), Error> {
    let model = named(name)?;
    if models::remove(&dir(settings)?, model)? {
        println!("deleted {}", model.name);
    } else {
        println!("{} was not downloaded", model.name);
    }
    Ok(())
}
