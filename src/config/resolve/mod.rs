//! The resolvers: one function per section of [`Settings`] ([`search`], [`llm`],
//! [`fetch`], [`run`], [`cache`]), each taking every setting of its section from the
//! flags, else the environment, else the config file, else the default, and checking
//! it.
//!
//! The first value that is wrong is the error, named by where it came from
//! (`GROUND_PAGES="many"`, `[search] time_range`, `--llm-url`), so the user knows
//! which of the places to fix. Sections do not depend on one another: where a setting
//! depends on another (the answer reserve on the window, the model key on whether the
//! server is on this machine), both are in the same section, so each resolver reads
//! only its own section of the file (`search` also `[privacy]`, whose one key is
//! about searches) and can be read, and changed, alone. The helpers at the end turn
//! one raw value into a checked one.
//!
//! Every resolver takes the environment with blank values already counted as unset
//! (`GROUND_MODEL=` is "not given", not "the model named nothing").

use std::path::{Path, PathBuf};
use std::time::Duration;

use url::Url;

use super::file::FileConfig;
use super::keys::{hosted_keys, llm_key, search_key};
use super::overrides::Overrides;
use crate::error::Error;
use crate::keystore::{KeyName, Lookup};
use crate::settings::*;

/// `[search]` (and `[privacy]`): the backend, its URLs and key, SearXNG's parameters,
/// the limits and the state folder of the rate limit and the search log.
pub(super) fn search(
    flags: &Overrides,
    env: &dyn Fn(&str) -> Option<String>,
    file: &FileConfig,
    keyring: &dyn Fn(KeyName) -> Lookup,
) -> Result<SearchSettings, Error> {
    let backend = choose(
        flags.search_backend,
        [
            ("GROUND_SEARCH", env("GROUND_SEARCH")),
            ("[search] backend", file.search.backend.clone()),
        ],
        SearchBackend::parse,
        "not auto, searxng, brave, tavily, wikipedia or duckduckgo",
        "use auto (the default: your SearXNG when it answers, else Brave or Tavily when you have a key, else Wikipedia), searxng, brave or tavily (hosted, with an API key), wikipedia or duckduckgo",
    )?
    .unwrap_or(SearchBackend::Auto);
    let (urls, source): (Vec<String>, &str) = match backend {
        SearchBackend::Auto | SearchBackend::Searxng if !flags.searxng_urls.is_empty() => {
            (flags.searxng_urls.clone(), "--searxng-url")
        }
        SearchBackend::Auto | SearchBackend::Searxng if env("GROUND_SEARXNG_URL").is_some() => (
            env("GROUND_SEARXNG_URL")
                .unwrap_or_default()
                .split(',')
                .map(|u| u.trim().to_string())
                .filter(|u| !u.is_empty())
                .collect(),
            "GROUND_SEARXNG_URL",
        ),
        SearchBackend::Auto | SearchBackend::Searxng => (
            file.search
                .url
                .iter()
                .chain(file.search.urls.iter().flatten())
                .cloned()
                .collect(),
            "[search] url / urls",
        ),
        other => {
            let (url, origin) = service_url(other, env, file, true);
            (vec![url], origin)
        }
    };
    let mut parsed_urls = Vec::new();
    for url in &urls {
        let url = match backend {
            SearchBackend::Wikipedia => parse_wikipedia_url(url, source)?.1,
            _ => parse_base_url(url, source)?,
        };
        if !parsed_urls.contains(&url) {
            parsed_urls.push(url);
        }
    }
    if parsed_urls.is_empty() {
        parsed_urls.push(parse_base_url(backend.default_url(), "the default")?);
    }
    let url = parsed_urls.remove(0);
    let (wikipedia_url, origin) = service_url(
        SearchBackend::Wikipedia,
        env,
        file,
        backend == SearchBackend::Wikipedia,
    );
    let wikipedia_url = parse_wikipedia_url(&wikipedia_url, origin)?.0;
    let (duckduckgo_url, origin) = service_url(
        SearchBackend::DuckDuckGo,
        env,
        file,
        backend == SearchBackend::DuckDuckGo,
    );
    let duckduckgo_url = parse_base_url(&duckduckgo_url, origin)?;
    let mut hosted = Vec::new();
    if backend == SearchBackend::Auto {
        for (service, api_key) in hosted_keys(env, &file.search) {
            let (url, origin) = service_url(service, env, file, false);
            hosted.push(HostedService {
                backend: service,
                api_key,
                url: parse_base_url(&url, origin)?,
            });
        }
    }
    let api_key = search_key(backend, env, &file.search, keyring)?;

    let time_range = choose(
        flags.time_range,
        [("[search] time_range", file.search.time_range.clone())],
        TimeRange::parse,
        "not one of day, week, month, year",
        "use --time-range day|week|month|year",
    )?;
    let sites = crate::sites::SiteFilter::resolve(
        [&flags.sites, &flags.exclude_sites],
        env,
        [&file.search.sites, &file.search.exclude_sites],
    )?;
    sites.check_service(backend == SearchBackend::Wikipedia, url.host_str())?;
    let safesearch = flags.safesearch.or(file.search.safesearch);
    if let Some(level) = safesearch.filter(|l| *l > 2) {
        return Err(Error::Config {
            message: format!("safesearch level {level} is not 0, 1 or 2"),
            hint: "use --safesearch 0 (off), 1 (moderate) or 2 (strict)".into(),
        });
    }
    let state_dir = env("GROUND_STATE_DIR")
        .map(PathBuf::from)
        .or_else(|| env("XDG_STATE_HOME").map(|d| Path::new(&d).join("ground")))
        .or_else(|| env("HOME").map(|h| Path::new(&h).join(".local").join("state").join("ground")));
    let max_per_minute = pick_number(
        flags.max_per_minute,
        env("GROUND_MAX_PER_MINUTE"),
        "GROUND_MAX_PER_MINUTE",
        file.search.max_per_minute,
    )?;
    check_range(
        "--max-per-minute / [search] max_per_minute",
        u64::from(max_per_minute.unwrap_or(0)),
        0,
        10_000,
    )?;
    // Only the tests shorten the window, to see minutes of pacing in seconds.
    let rate_window = pick_number(
        None,
        env("GROUND_TEST_RATE_WINDOW_MS"),
        "GROUND_TEST_RATE_WINDOW_MS",
        None,
    )?
    .map_or(RATE_WINDOW, Duration::from_millis);
    check_range(
        "GROUND_TEST_RATE_WINDOW_MS",
        rate_window.as_millis() as u64,
        1,
        3_600_000,
    )?;
    Ok(SearchSettings {
        backend,
        api_key,
        url,
        fallback_urls: parsed_urls,
        language: flags.language.clone().or(file.search.language.clone()),
        categories: flags.categories.clone().or(file.search.categories.clone()),
        engines: flags.engines.clone().or(file.search.engines.clone()),
        time_range,
        safesearch,
        timeout: secs(file.search.timeout_secs, 20, "[search] timeout_secs")?,
        max_results: file.search.max_results.unwrap_or(20).clamp(1, 100),
        max_per_minute,
        rate_window,
        monthly_quota: file.search.monthly_quota,
        state_dir,
        shared: None,
        log_searches: flags.log_searches || file.privacy.log_searches.unwrap_or(false),
        hosted,
        wikipedia_url,
        duckduckgo_url,
        contact: env("GROUND_CONTACT").or(file.search.contact.clone()),
        sites,
        images: flags.images || file.search.images.unwrap_or(false),
    })
}

/// The base URL of `backend` (not SearXNG's) and where it came from: its environment
/// variable (Wikipedia's and DuckDuckGo's), else `[search] url` when the backend is
/// the one chosen (`chosen`), else its own key (`[search] brave_url`, ...), else its
/// own address.
fn service_url(
    backend: SearchBackend,
    env: &dyn Fn(&str) -> Option<String>,
    file: &FileConfig,
    chosen: bool,
) -> (String, &'static str) {
    let search = &file.search;
    let (env_name, own, key) = match backend {
        SearchBackend::Brave => (None, &search.brave_url, "[search] brave_url"),
        SearchBackend::Tavily => (None, &search.tavily_url, "[search] tavily_url"),
        SearchBackend::Wikipedia => (
            Some("GROUND_WIKIPEDIA_URL"),
            &search.wikipedia_url,
            "[search] wikipedia_url",
        ),
        SearchBackend::DuckDuckGo => (
            Some("GROUND_DUCKDUCKGO_URL"),
            &search.duckduckgo_url,
            "[search] duckduckgo_url",
        ),
        SearchBackend::Auto | SearchBackend::Searxng => (None, &search.url, "[search] url"),
    };
    if let Some(name) = env_name
        && let Some(value) = env(name)
    {
        return (value, name);
    }
    match (&search.url, own) {
        (Some(url), _) if chosen => (url.clone(), "[search] url"),
        (_, Some(url)) => (url.clone(), key),
        _ => (backend.default_url().to_string(), "the default"),
    }
}

/// Wikipedia's base URL: `{lang}` stands for the wiki's language code (in the host,
/// `https://{lang}.wikipedia.org`, or the path of a stand-in); with `en` in its place
/// it must be an http(s) URL with a host. Returns the pattern and the URL for `en`.
fn parse_wikipedia_url(value: &str, origin: &str) -> Result<(String, Url), Error> {
    let pattern = value.trim().trim_end_matches('/').to_string();
    let english = parse_base_url(&pattern.replace("{lang}", "en"), origin)?;
    Ok((pattern, english))
}

/// `[llm]`: the backend, the server's URL and key, the window and the answer reserve
/// within it, the answer's language, the model and its time limit.
pub(super) fn llm(
    flags: &Overrides,
    env: &dyn Fn(&str) -> Option<String>,
    file: &FileConfig,
    keyring: &dyn Fn(KeyName) -> Lookup,
) -> Result<LlmSettings, Error> {
    let backend = choose(
        flags.llm_backend,
        [
            ("GROUND_LLM", env("GROUND_LLM")),
            ("[llm] backend", file.llm.backend.clone()),
        ],
        LlmBackend::parse,
        "not auto, ollama, openai or embedded",
        "use auto (Ollama when it runs, else the embedded model), ollama (Ollama's own API), openai (llama.cpp, vLLM, LM Studio, hosted) or embedded (llama.cpp inside ground)",
    )?
    .unwrap_or(LlmBackend::Auto);
    let url = match flags
        .llm_url
        .clone()
        .map(|v| (v, "--llm-url"))
        .or_else(|| env("GROUND_LLM_URL").map(|v| (v, "GROUND_LLM_URL")))
    {
        Some((v, origin)) => parse_base_url(&v, origin)?,
        None => match (backend, env("OLLAMA_HOST"), file.llm.url.as_deref()) {
            (LlmBackend::Ollama | LlmBackend::Embedded | LlmBackend::Auto, Some(host), _) => {
                parse_base_url(&ollama_host_to_url(&host), "OLLAMA_HOST")?
            }
            (_, _, Some(url)) => parse_base_url(url, "[llm] url")?,
            (LlmBackend::Ollama | LlmBackend::Embedded | LlmBackend::Auto, None, None) => {
                parse_base_url(DEFAULT_OLLAMA_URL, "the default")?
            }
            (LlmBackend::OpenAi, _, None) => parse_base_url(DEFAULT_OPENAI_URL, "the default")?,
        },
    };
    let api_key = llm_key(backend, &url, env, &file.llm, keyring);

    let context_tokens = pick_number(
        flags.context_tokens,
        env("GROUND_CONTEXT_TOKENS"),
        "GROUND_CONTEXT_TOKENS",
        file.llm.context_tokens,
    )?
    .unwrap_or(DEFAULT_CONTEXT_TOKENS);
    check_range("context tokens", context_tokens.into(), 1024, 1_048_576)?;
    let max_answer_tokens = pick_number(
        flags.max_answer_tokens,
        env("GROUND_MAX_ANSWER_TOKENS"),
        "GROUND_MAX_ANSWER_TOKENS",
        file.llm.max_answer_tokens,
    )?;
    let max_answer_tokens = match max_answer_tokens {
        None => default_answer_tokens(context_tokens),
        Some(set) => {
            check_answer_tokens(set, context_tokens)?;
            set
        }
    };

    let answer_language = flags
        .answer_language
        .clone()
        .map(|v| (v, "--answer-language"))
        .or_else(|| env("GROUND_ANSWER_LANGUAGE").map(|v| (v, "GROUND_ANSWER_LANGUAGE")))
        .or_else(|| {
            file.llm
                .answer_language
                .clone()
                .map(|v| (v, "[llm] answer_language"))
        });
    let answer_language = match answer_language {
        Some((code, _)) if code.trim().eq_ignore_ascii_case("auto") => None,
        Some((code, origin)) if !crate::language::valid_code(code.trim()) => {
            return Err(Error::Config {
                message: format!("{origin} {code:?} is not a language code"),
                hint: format!(
                    "give {origin} a code such as de, fr or pt-BR, or auto for the question's language"
                ),
            });
        }
        Some((code, _)) => Some(code.trim().to_string()),
        None => None,
    };
    let given = flags
        .model
        .clone()
        .or_else(|| env("GROUND_MODEL"))
        .or_else(|| file.llm.model.clone());
    let model_explicit = given.is_some();
    let model = given.unwrap_or_else(|| match backend {
        LlmBackend::Embedded => DEFAULT_EMBEDDED_MODEL.into(),
        _ => DEFAULT_MODEL.into(),
    });
    let embedded = embedded(flags, env, file)?;
    if embedded.model_file.is_some() && matches!(backend, LlmBackend::Ollama | LlmBackend::OpenAi) {
        return Err(Error::Config {
            message: format!(
                "--model-file (or [llm] model_file) runs the embedded model, but the backend is {backend}"
            ),
            hint: "use --llm embedded (or auto) with --model-file, or drop --model-file".into(),
        });
    }
    Ok(LlmSettings {
        backend,
        api_key,
        url,
        model,
        model_explicit,
        context_tokens,
        max_answer_tokens,
        answer_language,
        timeout: secs(file.llm.timeout_secs, 300, "[llm] timeout_secs")?,
        embedded,
    })
}

/// The embedded model's part of `[llm]`: its file (`--model-file`), where catalogue
/// models are kept and fetched from, whether they may be fetched, and threads.
fn embedded(
    flags: &Overrides,
    env: &dyn Fn(&str) -> Option<String>,
    file: &FileConfig,
) -> Result<EmbeddedSettings, Error> {
    let model_file = flags
        .model_file
        .clone()
        .or_else(|| env("GROUND_MODEL_FILE").map(PathBuf::from))
        .or_else(|| file.llm.model_file.clone());
    let models_dir = env("XDG_DATA_HOME")
        .map(|d| Path::new(&d).join("ground").join("models"))
        .or_else(|| env("HOME").map(|h| Path::new(&h).join(".local/share/ground/models")));
    let hub_url = match env("GROUND_MODEL_HUB")
        .map(|v| (v, "GROUND_MODEL_HUB"))
        .or_else(|| file.llm.hub_url.clone().map(|v| (v, "[llm] hub_url")))
    {
        Some((v, origin)) => parse_base_url(&v, origin)?,
        None => parse_base_url(DEFAULT_MODEL_HUB, "the default")?,
    };
    let download = !flags.no_download
        && match env("GROUND_NO_DOWNLOAD") {
            Some(v) => !parse_bool(&v, "GROUND_NO_DOWNLOAD")?,
            None => file.llm.download.unwrap_or(true),
        };
    let threads = file.llm.threads.unwrap_or(0);
    check_range("[llm] threads", threads as u64, 0, 1024)?;
    let gpu_layers = match (flags.gpu_layers, env("GROUND_GPU_LAYERS")) {
        (Some(n), _) => Some(n),
        (None, Some(v)) => {
            Some(
                v.trim().parse::<u32>().map_err(|_| Error::Config {
                    message: format!("GROUND_GPU_LAYERS={v:?} is not a number of layers"),
                    hint: "set it to 0 (the CPU only) or more, or unset it (all layers on the GPU)"
                        .into(),
                })?,
            )
        }
        (None, None) => file.llm.gpu_layers,
    };
    Ok(EmbeddedSettings {
        model_file,
        models_dir,
        hub_url,
        download,
        threads,
        gpu_layers,
        verbose: flags.verbose,
        ..EmbeddedSettings::default()
    })
}

/// `[fetch]`: how many pages, their limits, private addresses and robots.txt (which
/// the fetches obey under the default policy only when an agent starts them).
pub(super) fn fetch(
    flags: &Overrides,
    env: &dyn Fn(&str) -> Option<String>,
    file: &FileConfig,
) -> Result<FetchSettings, Error> {
    let pages = pick_number(
        flags.pages,
        env("GROUND_PAGES"),
        "GROUND_PAGES",
        file.fetch.pages,
    )?
    .unwrap_or(3);
    check_range("pages", pages as u64, 1, 20)?;
    let allow_private_addresses = flags.allow_private_addresses
        || match env("GROUND_ALLOW_PRIVATE_ADDRESSES") {
            Some(v) => parse_bool(&v, "GROUND_ALLOW_PRIVATE_ADDRESSES")?,
            None => file.fetch.allow_private_addresses.unwrap_or(false),
        };
    let robots = match (flags.robots, &file.fetch.robots) {
        (Some(policy), _) => policy,
        (None, Some(value)) => RobotsPolicy::parse(value).ok_or_else(|| Error::Config {
            message: format!("[fetch] robots = {value:?} is not agents, always or never"),
            hint: "set [fetch] robots to \"agents\" (the default), \"always\" or \"never\"".into(),
        })?,
        (None, None) => RobotsPolicy::Agents,
    };
    let obey_robots = match robots {
        RobotsPolicy::Always => true,
        RobotsPolicy::Never => false,
        RobotsPolicy::Agents => flags.agent,
    };
    Ok(FetchSettings {
        pages,
        connect_timeout: secs(
            file.fetch.connect_timeout_secs,
            5,
            "[fetch] connect_timeout_secs",
        )?,
        timeout: secs(file.fetch.timeout_secs, 15, "[fetch] timeout_secs")?,
        max_bytes: file
            .fetch
            .max_bytes
            .unwrap_or(2 * 1024 * 1024)
            .clamp(1024, 64 * 1024 * 1024),
        max_redirects: file.fetch.max_redirects.unwrap_or(5).min(20),
        allow_private_addresses,
        obey_robots,
    })
}

/// `[run]`: the deadline, the search budget, planning and `ground mcp`'s session
/// limits. Flags and the file only: the run has no environment variables.
pub(super) fn run(flags: &Overrides, file: &FileConfig) -> Result<RunSettings, Error> {
    let queries = flags.queries.or(file.run.queries).unwrap_or(1);
    check_range("queries", queries as u64, 1, 3)?;
    let max_searches = flags.max_searches.or(file.run.max_searches).unwrap_or(3);
    check_range("max searches", max_searches as u64, 1, 100)?;
    let fallback_offline = choose(
        flags.fallback,
        [("[run] fallback", file.run.fallback.clone())],
        Fallback::parse,
        "not fail or offline",
        "use --fallback fail (the default) or --fallback offline",
    )? == Some(Fallback::Offline);
    let run = RunSettings {
        timeout: secs(
            flags.timeout_secs.or(file.run.timeout_secs),
            600,
            "--timeout / [run] timeout_secs",
        )?,
        max_searches,
        queries,
        auto: flags.auto || file.run.auto.unwrap_or(false),
        fallback_offline,
        region: flags.region.clone().or(file.run.region.clone()),
        session_searches: flags
            .session_searches
            .or(file.run.session_searches)
            .unwrap_or(100),
        pack: flags.pack,
        plan_mode: choose(
            flags.plan_mode,
            [("[run] plan_mode", file.run.plan_mode.clone())],
            PlanMode::parse,
            "not rounds or concurrent",
            "use plan_mode = \"rounds\" (the default) or \"concurrent\"",
        )?
        .unwrap_or(PlanMode::Rounds),
        session_reuse: Duration::from_secs(flags.reuse_secs.or(file.run.reuse_secs).unwrap_or(600)),
    };
    check_range("reuse secs", run.session_reuse.as_secs(), 0, 86_400)?;
    check_range("session searches", run.session_searches as u64, 1, 100_000)?;
    Ok(run)
}

/// `[cache]`: the folder, use/refresh/off, freshness and size. Nothing here can be
/// wrong: out-of-range numbers are clamped, and no home folder turns the cache off.
pub(super) fn cache(
    flags: &Overrides,
    env: &dyn Fn(&str) -> Option<String>,
    file: &FileConfig,
) -> CacheSettings {
    let dir = env("GROUND_CACHE_DIR")
        .map(PathBuf::from)
        .or(file.cache.dir.clone())
        .or_else(|| env("XDG_CACHE_HOME").map(|d| Path::new(&d).join("ground")))
        .or_else(|| env("HOME").map(|h| Path::new(&h).join(".cache").join("ground")));
    CacheSettings {
        dir,
        mode: if flags.no_cache || file.cache.enabled == Some(false) {
            CacheMode::Off
        } else if flags.refresh {
            CacheMode::Refresh
        } else {
            CacheMode::Use
        },
        search_ttl: Duration::from_secs(
            3600 * file.cache.search_ttl_hours.unwrap_or(24).clamp(0, 24 * 365),
        ),
        page_ttl: Duration::from_secs(
            3600 * file.cache.page_ttl_hours.unwrap_or(24).clamp(0, 24 * 365),
        ),
        max_bytes: file.cache.max_mb.unwrap_or(200).clamp(1, 100_000) * 1024 * 1024,
    }
}

/// Turns Ollama's `OLLAMA_HOST` forms (`host`, `host:port`, `:port`, `scheme://host`)
/// into a base URL, defaulting to http and port 11434 as Ollama's own client does.
fn ollama_host_to_url(host: &str) -> String {
    let host = host.trim().trim_end_matches('/');
    let (scheme, rest) = match host.split_once("://") {
        Some((scheme, rest)) => (scheme.to_string(), rest.to_string()),
        None => ("http".to_string(), host.to_string()),
    };
    let (authority, path) = match rest.find('/') {
        Some(i) => (rest[..i].to_string(), rest[i..].to_string()),
        None => (rest, String::new()),
    };
    let has_port = authority.rsplit_once(':').is_some_and(|(h, p)| {
        !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()) && !h.ends_with(':')
    }) && !(authority.starts_with('[') && authority.ends_with(']'));
    let authority = if authority.is_empty() {
        "127.0.0.1:11434".to_string()
    } else if let Some(port) = authority.strip_prefix(':') {
        format!("127.0.0.1:{port}")
    } else if has_port {
        authority
    } else if scheme == "https" {
        format!("{authority}:443")
    } else {
        format!("{authority}:11434")
    };
    format!("{scheme}://{authority}{path}")
}

/// The first of a closed-set setting's sources that is set: the flag (already typed
/// by the command line), else each `(origin, text)` in order, parsed with `parse`. A
/// text that does not parse is a usage error naming its origin.
fn choose<T, const N: usize>(
    flag: Option<T>,
    sources: [(&str, Option<String>); N],
    parse: fn(&str) -> Option<T>,
    expected: &str,
    hint: &str,
) -> Result<Option<T>, Error> {
    if flag.is_some() {
        return Ok(flag);
    }
    for (origin, value) in sources {
        if let Some(value) = value {
            return match parse(&value) {
                Some(choice) => Ok(Some(choice)),
                None => Err(Error::Config {
                    message: format!("{origin} is {value:?}, {expected}"),
                    hint: hint.to_string(),
                }),
            };
        }
    }
    Ok(None)
}

/// `value` as a server's base URL: http or https, with a host; an error names
/// `origin`.
fn parse_base_url(value: &str, origin: &str) -> Result<Url, Error> {
    let url = Url::parse(value.trim()).map_err(|e| Error::Config {
        message: format!("{origin} is not a valid URL ({value:?}: {e})"),
        hint: format!("give {origin} a full URL such as http://localhost:8080"),
    })?;
    if !matches!(url.scheme(), "http" | "https") || url.host().is_none() {
        return Err(Error::Config {
            message: format!("{origin} must be an http(s) URL with a host, not {value:?}"),
            hint: format!("give {origin} a full URL such as http://localhost:8080"),
        });
    }
    Ok(url)
}

/// A number from the flag, else the environment variable `env_name` (whose text
/// must parse), else the config file.
fn pick_number<T: std::str::FromStr + Copy>(
    flag: Option<T>,
    env_value: Option<String>,
    env_name: &str,
    file: Option<T>,
) -> Result<Option<T>, Error> {
    if flag.is_some() {
        return Ok(flag);
    }
    if let Some(v) = env_value {
        return v.trim().parse().map(Some).map_err(|_| Error::Config {
            message: format!("{env_name}={v:?} is not a whole number"),
            hint: format!("set {env_name} to a number, or unset it"),
        });
    }
    Ok(file)
}

/// The answer reserve when none is set: a quarter of the window, at most 1024 (so
/// 1024 for windows of 4096 and up, 256 for the smallest, 1024-token window), always
/// within the valid range `64..=context/2`.
fn default_answer_tokens(context_tokens: u32) -> u32 {
    (context_tokens / 4).clamp(MIN_ANSWER_TOKENS, 1024)
}

/// The smallest answer reserve: about what a reply of one short statement with one
/// cited quote takes in JSON (see `llm::AnswerBounds`, whose smallest bounds are one
/// statement and one citation).
const MIN_ANSWER_TOKENS: u32 = 64;

/// An explicit answer reserve must be at least [`MIN_ANSWER_TOKENS`] and at most half
/// the window; each error names the real range (and why), the hint both ways out.
fn check_answer_tokens(max_answer_tokens: u32, context_tokens: u32) -> Result<(), Error> {
    let most = context_tokens / 2;
    if max_answer_tokens < MIN_ANSWER_TOKENS {
        return Err(Error::Config {
            message: format!(
                "max answer tokens is {max_answer_tokens}, fewer than the {MIN_ANSWER_TOKENS} a reply of one cited statement needs"
            ),
            hint: format!(
                "choose --max-answer-tokens between {MIN_ANSWER_TOKENS} and {most} (half of the {context_tokens}-token context window), or leave it unset to scale it with the window"
            ),
        });
    }
    if max_answer_tokens > most {
        return Err(Error::Config {
            message: format!(
                "max answer tokens is {max_answer_tokens}, more than half of the {context_tokens}-token context window"
            ),
            hint: format!(
                "lower --max-answer-tokens to at most {most} (half of --context-tokens {context_tokens}), raise --context-tokens to at least {}, or leave --max-answer-tokens unset to scale it with the window",
                max_answer_tokens.saturating_mul(2)
            ),
        });
    }
    Ok(())
}

/// An error unless `min <= value <= max`, naming the setting.
pub(super) fn check_range(name: &str, value: u64, min: u64, max: u64) -> Result<(), Error> {
    if (min..=max).contains(&value) {
        Ok(())
    } else {
        Err(Error::Config {
            message: format!("{name} is {value}, outside {min}..={max}"),
            hint: format!("choose {name} between {min} and {max}"),
        })
    }
}

/// A time limit in seconds (`default` when unset), within 1..=3600.
fn secs(value: Option<u64>, default: u64, name: &str) -> Result<Duration, Error> {
    let value = value.unwrap_or(default);
    check_range(name, value, 1, 3600)?;
    Ok(Duration::from_secs(value))
}

/// A boolean environment variable: 1/0, true/false, yes/no or on/off.
pub(super) fn parse_bool(value: &str, name: &str) -> Result<bool, Error> {
    match value.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Ok(true),
        "0" | "false" | "no" | "off" => Ok(false),
        _ => Err(Error::Config {
            message: format!("{name}={value:?} is not a boolean"),
            hint: format!("set {name} to true or false"),
        }),
    }
}

#[cfg(test)]
mod tests;

/// `[docs]`: the local collections a run searches (`--docs` over `[docs]
/// collections`), where they live, and `--no-web`, which needs at least one.
pub(super) fn docs(
    flags: &Overrides,
    env: &dyn Fn(&str) -> Option<String>,
    file: &FileConfig,
) -> Result<crate::settings::DocsSettings, Error> {
    let collections = if flags.docs.is_empty() {
        file.docs.collections.clone().unwrap_or_default()
    } else {
        flags.docs.clone()
    };
    let mut unique: Vec<String> = Vec::new();
    for name in collections {
        crate::docs::check_name(&name).map_err(|e| Error::Config {
            message: e.to_string(),
            hint: e.hint(),
        })?;
        if !unique.contains(&name) {
            unique.push(name);
        }
    }
    if flags.no_web && unique.is_empty() {
        return Err(Error::Config {
            message: "--no-web leaves nothing to answer from: no local collection is named".into(),
            hint: "add --docs (the collection `default`) or --docs=NAME, or set [docs] collections"
                .into(),
        });
    }
    Ok(crate::settings::DocsSettings {
        home: crate::docs::IndexHome::resolve(env),
        collections: unique,
        no_web: flags.no_web,
    })
}
