//! `ground doctor`'s checks of the embedded model: whether this `ground` has the
//! engine at all, whether the model file is there and is the right file (the
//! catalogue's SHA-256, or a readable GGUF header for `--model-file` that llama.cpp
//! can run), and whether this machine has the memory to load it with the configured
//! window. What the file says is quoted only made safe and short ([`gguf::shown`]).
//!
//! Apart from the server checks ([`super::model`]) because they share nothing with
//! them: no URL, no HTTP, only files and memory.

use super::{Area, Check};
use crate::llm::embedded::{gguf, models};
use crate::settings::LlmSettings;

/// The embedded model's checks, and its trained context when the file says.
pub(super) async fn embedded_checks(llm: &LlmSettings) -> (Vec<Check>, Option<u64>) {
    let mut checks = Vec::new();
    if cfg!(feature = "embedded") {
        checks.push(Check::ok(
            "model.embedded",
            Area::Model,
            "the embedded engine (llama.cpp) is built in",
        ));
        #[cfg(feature = "embedded")]
        checks.push(device_check(llm).await);
    } else {
        checks.push(Check::from_error(
            "model.embedded",
            Area::Model,
            &crate::error::Error::EmbeddedNotBuilt,
        ));
        return (checks, None);
    }
    let catalogue = match &llm.embedded.model_file {
        Some(_) => None,
        None => match models::find(&llm.model) {
            Some(m) => Some(m),
            None => {
                checks.push(Check::fail(
                    "model.file",
                    Area::Model,
                    format!(
                        "{:?} is not in the embedded catalogue ({})",
                        llm.model,
                        models::names()
                    ),
                    "choose one with --model (`ground model list`), or a local file with --model-file PATH.gguf".into(),
                ));
                return (checks, None);
            }
        },
    };
    let path = match (
        &llm.embedded.model_file,
        catalogue,
        &llm.embedded.models_dir,
    ) {
        (Some(file), _, _) => file.clone(),
        (None, Some(m), Some(dir)) => dir.join(m.file),
        (None, _, _) => {
            checks.push(Check::fail(
                "model.file",
                Area::Model,
                "there is no folder for the embedded model: neither XDG_DATA_HOME nor HOME is set",
                "set HOME (or XDG_DATA_HOME), or use --model-file PATH.gguf".into(),
            ));
            return (checks, None);
        }
    };
    if !path.is_file() {
        let check = match catalogue {
            Some(m) if llm.embedded.download => Check::warn(
                "model.file",
                Area::Model,
                format!(
                    "{} is not downloaded yet ({} is missing)",
                    m.name,
                    path.display()
                ),
                format!(
                    "the first answer downloads it, or run `ground model pull {}` now",
                    m.name
                ),
            ),
            Some(m) => Check::fail(
                "model.file",
                Area::Model,
                format!(
                    "{} is not downloaded ({} is missing) and downloads are off",
                    m.name,
                    path.display()
                ),
                format!("run `ground model pull {}`", m.name),
            ),
            None => Check::fail(
                "model.file",
                Area::Model,
                format!("the model file {} does not exist", path.display()),
                "check --model-file (or [llm] model_file)".into(),
            ),
        };
        checks.push(check);
        return (checks, None);
    }
    let header = {
        let path = path.clone();
        tokio::task::spawn_blocking(move || gguf::read(&path)).await
    };
    let info = match header {
        Ok(Ok(info)) => info,
        Ok(Err(e)) => {
            checks.push(Check::fail(
                "model.file",
                Area::Model,
                format!("{} is not a usable model file: {e}", path.display()),
                "download it again (`ground model rm` then `ground model pull`), or use another --model-file".into(),
            ));
            return (checks, None);
        }
        Err(e) => {
            checks.push(Check::fail(
                "model.file",
                Area::Model,
                e.to_string(),
                String::new(),
            ));
            return (checks, None);
        }
    };
    // A file llama.cpp would abort on is not ok, whatever its header says.
    if let Err(e) = gguf::check_runnable(&info) {
        checks.push(Check::fail(
            "model.file",
            Area::Model,
            format!("{} is not a usable model file: {e}", path.display()),
            "use another GGUF file (--model-file), or a catalogue model with --model (`ground model list`)".into(),
        ));
        return (checks, None);
    }
    let size = format!("{:.2} GB", info.file_bytes as f64 / 1e9);
    match catalogue {
        Some(m) => {
            let (file, sha) = (path.clone(), m.sha256);
            let verified = tokio::task::spawn_blocking(move || models::verify(&file, sha)).await;
            checks.push(match verified {
                Ok(Ok(true)) => Check::ok(
                    "model.file",
                    Area::Model,
                    format!("{} at {} ({size}), SHA-256 as pinned", m.name, path.display()),
                ),
                Ok(Ok(false)) => Check::fail(
                    "model.file",
                    Area::Model,
                    format!("{} at {} does not have the pinned SHA-256", m.name, path.display()),
                    format!("delete it and download it again: `ground model rm {0}` then `ground model pull {0}`", m.name),
                ),
                Ok(Err(e)) => Check::fail(
                    "model.file",
                    Area::Model,
                    format!("cannot read {}: {e}", path.display()),
                    "check the file's permissions".into(),
                ),
                Err(e) => Check::fail("model.file", Area::Model, e.to_string(), String::new()),
            });
        }
        None => checks.push(Check::ok(
            "model.file",
            Area::Model,
            format!(
                "{} ({size}, GGUF v{}, {})",
                path.display(),
                info.version,
                info.architecture()
                    .map(gguf::shown)
                    .unwrap_or_else(|| "unknown architecture".into())
            ),
        )),
    }
    let needed = gguf::memory_needed(&info, llm.context_tokens);
    let gb = |n: u64| format!("{:.1} GB", n as f64 / 1e9);
    // Each reply written at once beyond the first holds a window of its own.
    let per_reply = info
        .kv_bytes_per_token()
        .map(|per| {
            let window =
                u64::from(llm.context_tokens).min(info.trained_context().unwrap_or(u64::MAX));
            format!(
                "; each more answer written at once (`serve --concurrency`, `batch -j`) adds {}",
                gb(per.saturating_mul(window))
            )
        })
        .unwrap_or_default();
    checks.push(
        match llm
            .embedded
            .memory_available
            .or_else(gguf::memory_available)
        {
            Some(available) if available < needed => Check::fail(
                "model.memory",
                Area::Model,
                format!(
                    "the model needs about {} of memory and {} is available",
                    gb(needed),
                    gb(available)
                ),
                match catalogue.and_then(|m| m.smaller) {
                    Some(smaller) => {
                        format!("use --model {smaller}, or close programs to free memory")
                    }
                    None => "close programs to free memory, or use a smaller model".into(),
                },
            ),
            Some(available) => Check::ok(
                "model.memory",
                Area::Model,
                format!(
                    "the model needs about {} of memory; {} is available{per_reply}",
                    gb(needed),
                    gb(available)
                ),
            ),
            None => Check::ok(
                "model.memory",
                Area::Model,
                format!(
                    "the model needs about {} of memory (free memory unknown here){per_reply}",
                    gb(needed)
                ),
            ),
        },
    );
    (checks, info.trained_context())
}

/// Where the embedded model runs: the GPU backend of this build and the device
/// llama.cpp found for it, or the CPU.
#[cfg(feature = "embedded")]
async fn device_check(llm: &LlmSettings) -> Check {
    use crate::llm::embedded::engine;
    const NAME: &str = "model.device";
    // Starting llama.cpp looks for devices: CPU work, off the runtime.
    let devices = match tokio::task::spawn_blocking(engine::devices).await {
        Ok(Ok(devices)) => devices,
        Ok(Err(e)) => return Check::from_error(NAME, Area::Model, &e),
        Err(e) => {
            return Check::fail(
                NAME,
                Area::Model,
                format!("llama.cpp's device listing stopped: {e}"),
                "run `ground doctor --verbose` to see llama.cpp's log".into(),
            );
        }
    };
    let cpu = devices
        .iter()
        .find(|d| !d.gpu)
        .map(|d| d.description.clone())
        .unwrap_or_else(|| "no CPU device listed".into());
    let Some(backend) = engine::GPU_BACKEND else {
        return Check::ok(
            NAME,
            Area::Model,
            format!(
                "runs on the CPU ({cpu}): this build has no GPU backend (cargo features `cuda`, `vulkan`; Metal on macOS)"
            ),
        );
    };
    let gpu = devices.iter().find(|d| d.gpu);
    match (gpu, llm.embedded.gpu_layers) {
        (Some(_), Some(0)) => Check::ok(
            NAME,
            Area::Model,
            format!(
                "runs on the CPU ({cpu}): --gpu-layers 0 keeps every layer off the {backend} GPU"
            ),
        ),
        (Some(gpu), layers) => {
            let layers = match layers {
                Some(n) => format!("{n} layers"),
                None => "every layer".into(),
            };
            let free = gpu
                .memory_free
                .map(|b| format!(", {:.1} GB free", b as f64 / 1e9))
                .unwrap_or_default();
            Check::ok(
                NAME,
                Area::Model,
                format!(
                    "{backend}: {layers} on {} ({}){free}",
                    gpu.name, gpu.description
                ),
            )
        }
        (None, _) => Check::warn(
            NAME,
            Area::Model,
            format!(
                "built with {backend}, but llama.cpp found no {backend} device: runs on the CPU ({cpu})"
            ),
            match backend {
                // ggml-vulkan takes a device of type CPU (Mesa's lavapipe) only when named.
                "Vulkan" => "check the Vulkan driver (`vulkaninfo --summary`), or build without the `vulkan` feature; a software device (Mesa's lavapipe) is used only when GGML_VK_VISIBLE_DEVICES names its index (0 for vulkaninfo's GPU0)".into(),
                "CUDA" => "check the CUDA driver (`nvidia-smi`), or build without the `cuda` feature".into(),
                _ => format!("check the {backend} driver"),
            },
        ),
    }
}
