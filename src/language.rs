//! The answer's language: detected from the question (with `whatlang`), or set by the
//! user (`--answer-language CODE`, `[llm] answer_language`), and the one sentence
//! that asks the model for it. Quotes are never translated: they must stay verbatim
//! in the page's own language, or they would not verify.

use serde::Serialize;

/// The language the answer is asked for, as shown in `--json` (`answer_language`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AnswerLanguage {
    /// ISO 639-1 code where there is one (`de`), else as given or ISO 639-3.
    pub code: String,
    /// English name (`German`), or the code when the name is not known.
    pub name: String,
    /// `detected` (from the question) or `set` (by flag or config).
    pub source: &'static str,
}

/// An [`AnswerLanguage`] as stored (a report kept in shared state), its `source`
/// read back as one of the two names.
#[derive(serde::Deserialize)]
struct StoredLanguage {
    code: String,
    name: String,
    source: String,
}

impl<'de> serde::Deserialize<'de> for AnswerLanguage {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let stored = StoredLanguage::deserialize(d)?;
        let source = ["detected", "set"]
            .into_iter()
            .find(|source| *source == stored.source)
            .ok_or_else(|| {
                serde::de::Error::unknown_variant(&stored.source, &["detected", "set"])
            })?;
        Ok(AnswerLanguage {
            code: stored.code,
            name: stored.name,
            source,
        })
    }
}

/// ISO 639-1 codes, their ISO 639-3 codes (as `whatlang` names languages) and
/// English names, for the languages `whatlang` detects and a few more.
const LANGUAGES: &[(&str, &str, &str)] = &[
    ("af", "afr", "Afrikaans"),
    ("am", "amh", "Amharic"),
    ("ar", "ara", "Arabic"),
    ("az", "aze", "Azerbaijani"),
    ("be", "bel", "Belarusian"),
    ("bg", "bul", "Bulgarian"),
    ("bn", "ben", "Bengali"),
    ("ca", "cat", "Catalan"),
    ("cs", "ces", "Czech"),
    ("cy", "cym", "Welsh"),
    ("da", "dan", "Danish"),
    ("de", "deu", "German"),
    ("el", "ell", "Greek"),
    ("en", "eng", "English"),
    ("eo", "epo", "Esperanto"),
    ("es", "spa", "Spanish"),
    ("et", "est", "Estonian"),
    ("fa", "pes", "Persian"),
    ("fi", "fin", "Finnish"),
    ("fr", "fra", "French"),
    ("gu", "guj", "Gujarati"),
    ("he", "heb", "Hebrew"),
    ("hi", "hin", "Hindi"),
    ("hr", "hrv", "Croatian"),
    ("hu", "hun", "Hungarian"),
    ("hy", "hye", "Armenian"),
    ("id", "ind", "Indonesian"),
    ("it", "ita", "Italian"),
    ("ja", "jpn", "Japanese"),
    ("jv", "jav", "Javanese"),
    ("ka", "kat", "Georgian"),
    ("km", "khm", "Khmer"),
    ("kn", "kan", "Kannada"),
    ("ko", "kor", "Korean"),
    ("la", "lat", "Latin"),
    ("lt", "lit", "Lithuanian"),
    ("lv", "lav", "Latvian"),
    ("mk", "mkd", "Macedonian"),
    ("ml", "mal", "Malayalam"),
    ("mr", "mar", "Marathi"),
    ("my", "mya", "Burmese"),
    ("nb", "nob", "Norwegian Bokmål"),
    ("ne", "nep", "Nepali"),
    ("nl", "nld", "Dutch"),
    ("no", "nor", "Norwegian"),
    ("or", "ori", "Oriya"),
    ("pa", "pan", "Punjabi"),
    ("pl", "pol", "Polish"),
    ("pt", "por", "Portuguese"),
    ("ro", "ron", "Romanian"),
    ("ru", "rus", "Russian"),
    ("si", "sin", "Sinhala"),
    ("sk", "slk", "Slovak"),
    ("sl", "slv", "Slovenian"),
    ("sn", "sna", "Shona"),
    ("sr", "srp", "Serbian"),
    ("sv", "swe", "Swedish"),
    ("ta", "tam", "Tamil"),
    ("te", "tel", "Telugu"),
    ("th", "tha", "Thai"),
    ("tk", "tuk", "Turkmen"),
    ("tl", "tgl", "Tagalog"),
    ("tr", "tur", "Turkish"),
    ("uk", "ukr", "Ukrainian"),
    ("ur", "urd", "Urdu"),
    ("uz", "uzb", "Uzbek"),
    ("vi", "vie", "Vietnamese"),
    ("yi", "yid", "Yiddish"),
    ("zh", "cmn", "Chinese"),
    ("zu", "zul", "Zulu"),
];

/// Whether `code` is usable as a language code: 2-3 letters, optionally followed by
/// `-` and a region or script (`pt-BR`, `zh-Hant`); at most 16 characters.
pub fn valid_code(code: &str) -> bool {
    let mut parts = code.split('-');
    let first = parts.next().unwrap_or("");
    code.len() <= 16
        && (2..=3).contains(&first.len())
        && first.chars().all(|c| c.is_ascii_alphabetic())
        && parts
            .all(|p| !p.is_empty() && p.len() <= 8 && p.chars().all(|c| c.is_ascii_alphanumeric()))
}

/// The language a user set (`de`, `deu`, `pt-BR`), normalised: the base code in
/// lower case mapped to ISO 639-1 where known, with its English name.
pub fn set_by_user(code: &str) -> AnswerLanguage {
    let code = code.trim();
    let (base, rest) = code.split_once('-').unwrap_or((code, ""));
    let base = base.to_ascii_lowercase();
    let known = LANGUAGES
        .iter()
        .find(|(one, three, _)| *one == base || *three == base);
    let mut normal = known.map(|k| k.0.to_string()).unwrap_or(base);
    if !rest.is_empty() {
        normal = format!("{normal}-{rest}");
    }
    AnswerLanguage {
        name: known
            .map(|k| k.2.to_string())
            .unwrap_or_else(|| normal.clone()),
        code: normal,
        source: "set",
    }
}

/// The question's language, or `None` when it cannot be told (then the model is
/// not told a language). `whatlang` decides when it is sure; questions are short, and
/// for those it often is not (it takes "do tardigrades survive in space" for
/// Portuguese), so then the question's function words vote among the languages of
/// `FUNCTION_WORDS`: the language with at least two of them, more than any other,
/// wins; else `whatlang`'s guess if it is at least half confident.
pub fn detect(question: &str) -> Option<AnswerLanguage> {
    let info = whatlang::detect(question);
    let three = match info {
        Some(info) if info.is_reliable() => info.lang().code(),
        _ => match function_word_vote(question) {
            Some(three) => three,
            None => info.filter(|i| i.confidence() >= 0.5)?.lang().code(),
        },
    };
    let known = LANGUAGES.iter().find(|(_, t, _)| *t == three);
    Some(AnswerLanguage {
        code: known.map(|k| k.0).unwrap_or(three).to_string(),
        name: known
            .map(|k| k.2.to_string())
            .or_else(|| whatlang::Lang::from_code(three).map(|l| l.eng_name().to_string()))
            .unwrap_or_else(|| three.to_string()),
        source: "detected",
    })
}

/// Frequent function and question words of the languages most questions come in
/// (ISO 639-3 code, words).
const FUNCTION_WORDS: &[(&str, &[&str])] = &[
    (
        "eng",
        &[
            "the", "is", "are", "was", "were", "what", "when", "where", "why", "how", "who",
            "which", "do", "does", "did", "of", "in", "on", "and", "to", "an", "can", "for",
            "with", "it", "this", "that",
        ],
    ),
    (
        "deu",
        &[
            "der", "die", "das", "ist", "sind", "war", "was", "wann", "wo", "warum", "wie", "wer",
            "welche", "welcher", "und", "nicht", "ein", "eine", "auf", "mit", "von", "zu", "im",
            "den", "dem", "des", "für", "gibt", "es",
        ],
    ),
    (
        "fra",
        &[
            "le", "la", "les", "est", "sont", "quel", "quelle", "quand", "où", "pourquoi",
            "comment", "qui", "que", "et", "un", "une", "des", "du", "à", "au", "aux", "dans",
            "pour", "avec", "il", "elle", "ce",
        ],
    ),
    (
        "spa",
        &[
            "el", "la", "los", "las", "es", "son", "qué", "cuándo", "dónde", "por", "cómo",
            "quién", "y", "un", "una", "del", "en", "con", "para", "está",
        ],
    ),
    (
        "ita",
        &[
            "il", "lo", "gli", "le", "è", "sono", "che", "quando", "dove", "perché", "come", "chi",
            "e", "un", "una", "di", "del", "della", "in", "con", "per",
        ],
    ),
    (
        "por",
        &[
            "o", "os", "as", "é", "são", "que", "quando", "onde", "por", "como", "quem", "e", "um",
            "uma", "do", "da", "em", "no", "na", "com", "para",
        ],
    ),
    (
        "nld",
        &[
            "het", "een", "is", "zijn", "wat", "wanneer", "waar", "waarom", "hoe", "wie", "en",
            "van", "op", "met", "voor", "niet",
        ],
    ),
];

/// The language of [`FUNCTION_WORDS`] with the most of its words in `question`, if
/// it has at least two and strictly more than any other.
fn function_word_vote(question: &str) -> Option<&'static str> {
    let lower = question.to_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| !c.is_alphabetic())
        .filter(|w| !w.is_empty())
        .collect();
    let mut scores: Vec<(usize, &str)> = FUNCTION_WORDS
        .iter()
        .map(|(lang, list)| (words.iter().filter(|w| list.contains(w)).count(), *lang))
        .collect();
    scores.sort_by_key(|s| std::cmp::Reverse(s.0));
    (scores[0].0 >= 2 && scores[0].0 > scores[1].0).then_some(scores[0].1)
}

/// The language for this run: the user's when set, else the question's.
pub fn choose(set: Option<&str>, question: &str) -> Option<AnswerLanguage> {
    match set {
        Some(code) => Some(set_by_user(code)),
        None => detect(question),
    }
}

/// The sentence added to the model's instructions.
pub fn instruction(language: &AnswerLanguage) -> String {
    format!(
        "\nWrite every statement and unknown in {} (language code {}){}. Quotes stay exactly as they appear in the source, in the source's own language: never translate a quote.",
        language.name,
        language.code,
        if language.source == "detected" {
            ", the language of the question"
        } else {
            ""
        }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_german_and_french_questions() {
        let de = detect("Wann findet das Laternenfest auf Varnholm statt und wie lange dauert es?")
            .unwrap();
        assert_eq!(
            (de.code.as_str(), de.name.as_str(), de.source),
            ("de", "German", "detected")
        );
        let fr = detect("Est-ce que les tardigrades survivent dans l'espace ?").unwrap();
        assert_eq!(fr.code, "fr");
        // Short questions, where trigrams alone guess wrong or are unsure.
        for (question, code) in [
            ("do tardigrades survive in space", "en"),
            ("what is sqlite vacuum", "en"),
            ("When is the Lantern Tide festival held on Varnholm?", "en"),
            ("Wann findet das Laternenfest auf Varnholm statt?", "de"),
            ("Warum ist der Himmel blau?", "de"),
            ("Überleben Bärtierchen im Weltraum?", "de"),
            ("Pourquoi le ciel est-il bleu ?", "fr"),
            ("Quand a lieu la fête des lanternes à Varnholm ?", "fr"),
            ("¿Por qué el cielo es azul?", "es"),
        ] {
            assert_eq!(
                detect(question).map(|l| l.code),
                Some(code.into()),
                "{question}"
            );
        }
        // Nothing to tell by: no language is asked for.
        assert_eq!(detect("SQLite VACUUM"), None);
    }

    #[test]
    fn user_codes_are_normalised() {
        assert_eq!(set_by_user("FR").code, "fr");
        assert_eq!(set_by_user("fr").name, "French");
        assert_eq!(set_by_user("deu").code, "de");
        assert_eq!(set_by_user("pt-BR").code, "pt-BR");
        assert_eq!(set_by_user("pt-BR").name, "Portuguese");
        assert_eq!(set_by_user("xx").name, "xx");
        assert_eq!(set_by_user("fr").source, "set");
    }

    #[test]
    fn codes_are_checked() {
        for good in ["de", "fra", "pt-BR", "zh-Hant"] {
            assert!(valid_code(good), "{good}");
        }
        for bad in [
            "",
            "d",
            "german1",
            "de_DE",
            "de-",
            "ignore previous instructions",
        ] {
            assert!(!valid_code(bad), "{bad}");
        }
    }

    #[test]
    fn the_instruction_names_the_language_and_keeps_quotes_verbatim() {
        let text = instruction(&set_by_user("fr"));
        assert!(text.contains("in French (language code fr)"), "{text}");
        assert!(text.contains("never translate a quote"));
        let text =
            instruction(&detect("Wann findet das Laternenfest auf Varnholm statt?").unwrap());
        assert!(text.contains("German") && text.contains("the language of the question"));
    }
}
