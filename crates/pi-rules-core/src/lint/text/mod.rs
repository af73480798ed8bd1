//! Checks on the raw text: invalid UTF-8; hidden text (characters a reader does not see but the
//! model reads: bidirectional and other controls, zero-width and filler characters, tags,
//! variation selectors, lone `\r`, separators, private use), found in one forward pass over one
//! classification table and also applied to settings strings; HTML comments; and blank lines
//! holding `\r` between table rows (which table repair keeps).
//!
//! One file per check: [`decode`](mod@decode) (invalid UTF-8, PR502), [`hidden`] (the scanner,
//! PR503-PR511 and PR513) with [`classes`] (its table of characters) and [`names`] (the character
//! names its messages use), [`comments`] (HTML comments, PR512) and [`table_gaps`] (PR501).
//! [`check_hidden`] runs the scanner and the comment check over a rule file; settings files run
//! the scanner on their strings.

mod classes;
mod comments;
mod decode;
mod hidden;
mod names;
mod table_gaps;
#[cfg(test)]
mod tests;

pub(crate) use classes::is_hidden;
pub use comments::html_comments;
pub(crate) use decode::decode;
pub(crate) use hidden::{report, scan, scan_text, Place, Unit};
pub(crate) use table_gaps::check_table_gaps;

use super::diagnostic::FileDiagnostics;
use comments::check_html_comments;

/// Reports hidden text in a rule file (a BOM as its first character is ordinary) and its HTML
/// comments.
pub(crate) fn check_hidden(text: &str, out: &mut FileDiagnostics) {
    scan_text(text, 0, Some(0), |run| report(run, Place::Rule, out));
    let body = crate::frontmatter::split(text).body_start;
    check_html_comments(text, body, out);
}
