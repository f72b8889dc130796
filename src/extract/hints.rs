//! What an element's `class` and `id` say about it: the words sites use for their
//! article body ("article", "content", "post", "entry", "story") and for the boilerplate
//! around it ("nav", "menu", "footer", "comment", "share", "related", "cookie", "ad", ...).
//!
//! Matching is by word, not by substring: `class="header-shadow"` is not an ad because
//! it contains "ad". A class or id is split into words at every character that is not
//! ASCII alphanumeric and at lower-to-upper case changes (`relatedLinks` -> `related`,
//! `links`); a word matches a hint when it starts with it (`comments`, `sharebar`).

/// The verdict on one element's class/id words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hint {
    /// Article-body words and no boilerplate word.
    Positive,
    /// A boilerplate word (and no article-body word, unless the boilerplate word is a
    /// strong one such as "comment" or "share").
    Negative,
    Neutral,
}

/// Boilerplate words that win even next to an article-body word
/// (`article-comments`, `post-share`, `entry-related`).
const STRONG_NEGATIVE: &[&str] = &[
    "comment",
    "disqus",
    "share",
    "sharing",
    "social",
    "related",
    "recommend",
    "cookie",
    "consent",
    "gdpr",
    "newsletter",
    "subscribe",
    "signup",
    "promo",
    "sponsor",
    "advert",
    "outbrain",
    "taboola",
    "popular",
    "trending",
    "breadcrumb",
    "paywall",
    "toolbar",
    "byline",
    "dateline",
    "timestamp",
    "caption",
    "credit",
    "pagination",
    "pager",
    "login",
    "masthead",
];

/// Boilerplate words that an article-body word overrides
/// (`content-sidebar` stays negative; `main-content` with `menu-open` is not dropped).
const NEGATIVE: &[&str] = &[
    "submitted",
    "modal",
    "popup",
    "more",
    "next",
    "prev",
    "print",
    "email",
    "author",
    "bio",
    "rating",
    "skip",
    "tags",
    "taglist",
    "keywords",
    "nav",
    "menu",
    "footer",
    "header",
    "sidebar",
    "aside",
    "widget",
    "banner",
    "masthead",
    "shoutbox",
    "sitemap",
    "legal",
    "copyright",
    "disclaimer",
    "utility",
    "tools",
    "meta",
    "hidden",
    "offscreen",
    "overlay",
    "dropdown",
    "teaser",
    "rail",
    "extra",
    "supplement",
    "secondary",
    "complementary",
    "footnote",
];

/// Words that keep an element even next to a boilerplate word: an embedded post
/// (`social-media-embed`, `twitter-tweet`) quoted inside an article is content.
const KEEP: &[&str] = &["embed", "tweet"];

/// Words that are whole-word only (too short to match as prefixes).
const NEGATIVE_EXACT: &[&str] = &["ad", "ads", "adv", "dfp", "gpt", "nl", "cta", "rss", "tag"];

const POSITIVE: &[&str] = &[
    "article", "content", "post", "entry", "story", "body", "main", "text", "blog", "prose",
    "column", "richtext",
];

/// Words that negate the next word's meaning in a class name (`has-sidebar`,
/// `with-comments`, `no-ads` describe the page layout, not the element).
const LAYOUT_PREFIX: &[&str] = &["has", "with", "no", "show", "hide", "is", "js"];

/// Judges an element by its `class` and `id` attributes.
pub fn judge(class: Option<&str>, id: Option<&str>) -> Hint {
    let mut positive = false;
    let mut negative = false;
    let mut strong = false;
    let mut keep = false;
    for attr in [class, id].into_iter().flatten() {
        let mut skip_next = false;
        for_each_word(attr, |word| {
            if skip_next {
                skip_next = false;
                return;
            }
            if LAYOUT_PREFIX.contains(&word) {
                skip_next = true;
                return;
            }
            if has_prefix(word, KEEP) {
                keep = true;
            } else if has_prefix(word, STRONG_NEGATIVE) {
                strong = true;
            } else if NEGATIVE_EXACT.contains(&word) || has_prefix(word, NEGATIVE) {
                negative = true;
            } else if has_prefix(word, POSITIVE) {
                positive = true;
            }
        });
    }
    if keep {
        Hint::Positive
    } else if strong || (negative && !positive) {
        Hint::Negative
    } else if positive {
        Hint::Positive
    } else {
        Hint::Neutral
    }
}

/// Calls `f` with each lower-cased word of `attr` (at most 16 words per attribute, and
/// words of at most 32 bytes, so a hostile attribute costs little).
fn for_each_word(attr: &str, mut f: impl FnMut(&str)) {
    let mut word = [0u8; 32];
    let mut len = 0;
    let mut count = 0;
    let mut prev_lower = false;
    for &b in attr.as_bytes() {
        let boundary = !b.is_ascii_alphanumeric() || (prev_lower && b.is_ascii_uppercase());
        if boundary && len > 0 {
            // Only ASCII alphanumerics are stored, so this is valid UTF-8.
            f(std::str::from_utf8(&word[..len]).unwrap_or_default());
            len = 0;
            count += 1;
            if count >= 16 {
                return;
            }
        }
        if b.is_ascii_alphanumeric() && len < word.len() {
            word[len] = b.to_ascii_lowercase();
            len += 1;
        }
        prev_lower = b.is_ascii_lowercase() || b.is_ascii_digit();
    }
    if len > 0 {
        f(std::str::from_utf8(&word[..len]).unwrap_or_default());
    }
}

/// Whether `word` starts with one of `hints` (a byte loop: these words are short and
/// the lists are checked for every class word of every element).
fn has_prefix(word: &str, hints: &[&str]) -> bool {
    let word = word.as_bytes();
    hints.iter().any(|h| {
        let h = h.as_bytes();
        h.len() <= word.len() && h[0] == word[0] && h.iter().zip(word).all(|(a, b)| a == b)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_not_substrings() {
        assert_eq!(judge(Some("header-shadow load"), None), Hint::Negative);
        assert_eq!(judge(Some("shadow load"), None), Hint::Neutral);
        assert_eq!(judge(Some("ad-slot"), None), Hint::Negative);
    }

    #[test]
    fn article_words_and_strong_boilerplate() {
        assert_eq!(judge(Some("article-body"), None), Hint::Positive);
        assert_eq!(judge(None, Some("articleBody")), Hint::Positive);
        assert_eq!(judge(Some("article-comments"), None), Hint::Negative);
        assert_eq!(
            judge(Some("main-content"), Some("menu-wrap")),
            Hint::Positive
        );
        assert_eq!(judge(Some("relatedLinks"), None), Hint::Negative);
    }

    #[test]
    fn layout_prefixes_do_not_count() {
        assert_eq!(
            judge(Some("page has-sidebar with-comments"), None),
            Hint::Neutral
        );
    }
}
