//! Tests of [`super`]: kept apart so the module reads as its one concern.
use super::*;

#[test]
fn catalogue_names_are_unique_and_pinned() {
    for (i, m) in CATALOGUE.iter().enumerate() {
        assert_eq!(m.sha256.len(), 64, "{}", m.name);
        assert!(m.sha256.bytes().all(|b| b.is_ascii_hexdigit()));
        assert!(m.file.ends_with(".gguf"));
        assert!(CATALOGUE[i + 1..].iter().all(|o| o.name != m.name));
        // R4 finding 5: a model without a pinned size had no cap on its download.
        let size = m
            .size
            .unwrap_or_else(|| panic!("{}: no pinned size", m.name));
        assert!(
            size.abs_diff(m.approx_bytes) < m.approx_bytes / 10,
            "{}",
            m.name
        );
        if let Some(smaller) = m.smaller {
            assert!(find(smaller).unwrap().approx_bytes < m.approx_bytes);
        }
    }
    assert_eq!(
        find(DEFAULT_EMBEDDED_MODEL).unwrap().size,
        Some(1_107_409_472)
    );
    assert_eq!(find(" Qwen3-4B ").unwrap().name, "qwen3-4b");
    assert!(find("llama3.2").is_none());
}

#[test]
fn urls_follow_the_hub_layout() {
    let file = find("qwen3-1.7b").unwrap().model_file();
    let hub = Url::parse("https://huggingface.co").unwrap();
    assert_eq!(
        file_url(&hub, &file).unwrap().as_str(),
        "https://huggingface.co/unsloth/Qwen3-1.7B-GGUF/resolve/main/Qwen3-1.7B-Q4_K_M.gguf"
    );
    let mirror = Url::parse("http://127.0.0.1:9/mirror/").unwrap();
    assert_eq!(
        file_url(&mirror, &file).unwrap().as_str(),
        "http://127.0.0.1:9/mirror/unsloth/Qwen3-1.7B-GGUF/resolve/main/Qwen3-1.7B-Q4_K_M.gguf"
    );
}

#[test]
fn content_ranges_and_suffixes() {
    assert_eq!(
        content_range("bytes 100-199/200"),
        Some((100, 199, Some(200)))
    );
    assert_eq!(content_range("bytes 100-199/*"), Some((100, 199, None)));
    assert_eq!(content_range("bytes */200"), None);
    // R4 finding 5: the range's end and total are checked, not only its start.
    assert_eq!(
        check_range(Some("bytes 100-199/200"), 100, Some(200)),
        Ok(200)
    );
    assert_eq!(check_range(Some("bytes 100-149/*"), 100, None), Ok(150));
    assert!(check_range(Some("bytes 100-109/110"), 100, Some(200)).is_err());
    assert!(check_range(Some("bytes 100-199/300"), 100, Some(200)).is_err());
    assert!(check_range(Some("bytes 0-199/200"), 100, Some(200)).is_err());
    assert!(check_range(None, 100, Some(200)).is_err());
    assert_eq!(
        part_path(Path::new("/m/a.gguf")),
        PathBuf::from("/m/a.gguf.part")
    );
    assert_eq!(
        lock_path(Path::new("/m/a.gguf")),
        PathBuf::from("/m/a.gguf.lock")
    );
    assert!(free_space(Path::new("/")).is_some());
}

#[test]
fn list_and_remove_see_files_and_parts() {
    let dir = tempfile::tempdir().unwrap();
    let model = find("qwen3-0.6b").unwrap();
    std::fs::write(dir.path().join(model.file), b"x").unwrap();
    std::fs::write(part_path(&dir.path().join("Qwen3-4B-Q4_K_M.gguf")), b"xy").unwrap();
    let listed = list(dir.path());
    let get = |n: &str| listed.iter().find(|i| i.model.name == n).unwrap();
    assert_eq!(get("qwen3-0.6b").bytes, Some(1));
    assert_eq!(get("qwen3-4b").partial, Some(2));
    assert_eq!(get("qwen3-1.7b").bytes, None);
    assert!(remove(dir.path(), model).unwrap());
    assert!(!remove(dir.path(), model).unwrap());
    assert!(remove(dir.path(), find("qwen3-4b").unwrap()).unwrap());
}
