//! Tests of [`super`]: kept apart so the module reads as its one concern.
use super::*;
use crate::config::tests::{env_of, resolve};

#[test]
fn the_answer_reserve_scales_with_a_small_window() {
    for (window, reserve) in [
        (1024, 256),
        (2048, 512),
        (3000, 750),
        (4096, 1024),
        (32768, 1024),
    ] {
        let flags = Overrides {
            context_tokens: Some(window),
            ..Default::default()
        };
        let s = resolve(&flags, &env_of(&[])).unwrap();
        assert_eq!(s.llm.max_answer_tokens, reserve, "window {window}");
        assert!(reserve <= window / 2 && reserve >= 64);
    }
}

#[test]
fn an_explicit_reserve_too_big_for_the_window_names_both_numbers() {
    let flags = Overrides {
        context_tokens: Some(1024),
        max_answer_tokens: Some(1024),
        ..Default::default()
    };
    let e = resolve(&flags, &env_of(&[])).unwrap_err();
    let (message, hint) = (e.to_string(), e.hint().unwrap());
    assert!(
        message.contains("1024") && message.contains("1024-token"),
        "{message}"
    );
    assert!(
        hint.contains("at most 512") && hint.contains("--context-tokens 1024"),
        "{hint}"
    );
    assert!(hint.contains("at least 2048"), "{hint}");
    // The environment counts as explicit too.
    let flags = Overrides {
        context_tokens: Some(1024),
        ..Default::default()
    };
    let e = resolve(&flags, &env_of(&[("GROUND_MAX_ANSWER_TOKENS", "600")])).unwrap_err();
    assert!(e.hint().unwrap().contains("at most 512"), "{e:?}");
}

#[test]
fn ollama_host_forms() {
    assert_eq!(ollama_host_to_url("0.0.0.0"), "http://0.0.0.0:11434");
    assert_eq!(
        ollama_host_to_url("example.com:1234"),
        "http://example.com:1234"
    );
    assert_eq!(ollama_host_to_url(":5000"), "http://127.0.0.1:5000");
    assert_eq!(
        ollama_host_to_url("https://ollama.internal"),
        "https://ollama.internal:443"
    );
    assert_eq!(ollama_host_to_url("http://h:1/"), "http://h:1");
    let s = resolve(
        &Overrides::default(),
        &env_of(&[("OLLAMA_HOST", "10.0.0.2")]),
    )
    .unwrap();
    assert_eq!(s.llm.url.as_str(), "http://10.0.0.2:11434/");
}

#[test]
fn openai_backend_and_secret_key() {
    let flags = Overrides {
        llm_backend: Some(LlmBackend::OpenAi),
        ..Default::default()
    };
    let s = resolve(
        &flags,
        &env_of(&[
            ("OLLAMA_HOST", "x:1"),
            ("GROUND_LLM_API_KEY", "sk-secret-123"),
        ]),
    )
    .unwrap();
    assert_eq!(s.llm.backend, LlmBackend::OpenAi);
    assert_eq!(
        s.llm.url.as_str(),
        "http://localhost:8080/v1",
        "OLLAMA_HOST is Ollama's only"
    );
    assert_eq!(s.llm.api_key.as_ref().unwrap().expose(), "sk-secret-123");
    assert!(
        !format!("{s:?}").contains("sk-secret-123"),
        "keys never appear in Debug output"
    );
    // A bad flag value cannot reach here (the command line's enum refuses it); a bad
    // environment value is a configuration error naming its origin.
    assert!(matches!(
        resolve(&Overrides::default(), &env_of(&[("GROUND_LLM", "gpt")])),
        Err(Error::Config { .. })
    ));
}
