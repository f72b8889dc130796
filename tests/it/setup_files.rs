//! The fresh-machine setup (issue 13): `compose.yaml` and the SearXNG `settings.yml`
//! it mounts parse, and say what the README promises: SearXNG on 8080 with JSON on
//! and the limiter out of ground's way, Ollama on 11434 with a volume for models.

use std::path::Path;

use yaml_rust2::{Yaml, YamlLoader};

fn load(rel: &str) -> Yaml {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(rel);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{rel}: {e}"));
    let mut docs = YamlLoader::load_from_str(&text).unwrap_or_else(|e| panic!("{rel}: {e}"));
    assert_eq!(docs.len(), 1, "{rel}: one document");
    docs.remove(0)
}

fn strings(list: &Yaml) -> Vec<&str> {
    list.as_vec()
        .unwrap_or_else(|| panic!("not a list: {list:?}"))
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect()
}

#[test]
fn compose_runs_searxng_and_ollama_on_the_default_ports() {
    let compose = load("compose.yaml");
    let services = &compose["services"];
    let searxng = &services["searxng"];
    assert!(
        searxng["image"]
            .as_str()
            .unwrap()
            .contains("searxng/searxng")
    );
    assert_eq!(strings(&searxng["ports"]), ["127.0.0.1:8080:8080"]);
    let mount = strings(&searxng["volumes"])[0];
    let (host, container) = mount.split_once(':').unwrap();
    assert_eq!(container, "/etc/searxng");
    // The mounted folder holds the settings tested below.
    assert!(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join(host)
            .join("settings.yml")
            .is_file()
    );

    let ollama = &services["ollama"];
    assert!(ollama["image"].as_str().unwrap().contains("ollama/ollama"));
    assert_eq!(strings(&ollama["ports"]), ["127.0.0.1:11434:11434"]);
    assert!(strings(&ollama["volumes"])[0].ends_with(":/root/.ollama"));
    assert!(!compose["volumes"]["ollama"].is_badvalue());
}

#[test]
fn the_searxng_settings_enable_json_and_keep_the_limiter_out_of_the_way() {
    let settings = load("docker/searxng/settings.yml");
    assert_eq!(settings["use_default_settings"].as_bool(), Some(true));
    let formats = strings(&settings["search"]["formats"]);
    assert!(formats.contains(&"json"), "{formats:?}");
    assert!(formats.contains(&"html"), "{formats:?}");
    assert_eq!(settings["server"]["limiter"].as_bool(), Some(false));
    let key = settings["server"]["secret_key"].as_str().unwrap();
    assert_ne!(
        key, "ultrasecretkey",
        "SearXNG refuses to start with its placeholder"
    );
}

#[test]
fn the_compose_file_matches_grounds_defaults() {
    // ground's defaults point at exactly these two servers.
    let defaults = ground::config::resolve(&Default::default(), &|_| None).unwrap();
    assert_eq!(defaults.search.url.as_str(), "http://localhost:8080/");
    assert_eq!(defaults.llm.url.as_str(), "http://localhost:11434/");
    assert_eq!(defaults.llm.model, "llama3.2");
    let compose =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("compose.yaml"))
            .unwrap();
    assert!(compose.contains("ollama pull llama3.2"));
}
