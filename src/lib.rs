//! `ground`: answer a question from live web search, with citations a reader can check.
pub mod extract;
