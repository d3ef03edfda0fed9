//! Text escaped for HTML: what `report.html` and each section written into it (the
//! comparisons) use, so that no name or sentence from the data is read as markup.

/// `text` with `&`, `<`, `>` and `"` written as entities: safe in an element and in a
/// quoted attribute.
pub fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}
