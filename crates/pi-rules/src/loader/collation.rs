//! The order of rule file names: ICU root collation, as JavaScript `localeCompare` gives it.
//!
//! The reference sorts names with `String.prototype.localeCompare`, which V8 implements with ICU
//! root collation at tertiary strength (punctuation is not ignored). This is not byte order:
//! `_x.md` sorts before `-x.md`, `10-agent_routing.md` before `10-agent-routing.md`, `a.md` before
//! `A.md`, and `9-late.md` after `20-y.md`. Names that collate equal keep their earlier order, as
//! JavaScript's stable `Array.prototype.sort` keeps it.

use std::cmp::Ordering;
use std::sync::OnceLock;

use icu_collator::options::CollatorOptions;
use icu_collator::{Collator, CollatorBorrowed};

/// The root collator, built once from the compiled data; `None` if construction failed.
fn collator() -> Option<&'static CollatorBorrowed<'static>> {
    static COLLATOR: OnceLock<Option<CollatorBorrowed<'static>>> = OnceLock::new();
    COLLATOR
        .get_or_init(|| Collator::try_new(Default::default(), CollatorOptions::default()).ok())
        .as_ref()
}

/// Compares two rule file names the way JavaScript `a.localeCompare(b)` does.
///
/// Falls back to byte order in the (unexpected) case that the compiled collation data cannot be
/// loaded, so that sorting never fails.
pub fn compare_names(a: &str, b: &str) -> Ordering {
    match collator() {
        Some(collator) => collator.compare(a, b),
        None => a.cmp(b),
    }
}

/// Sorts items by name with [`compare_names`], keeping the relative order of equal names.
pub fn sort_by_name<T>(items: &mut [T], name: impl Fn(&T) -> &str) {
    items.sort_by(|a, b| compare_names(name(a), name(b)));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn collator_is_available() {
        assert!(collator().is_some());
    }

    #[test]
    fn punctuation_digits_and_case() {
        let cases = [
            ("_x.md", "-x.md", Ordering::Less),
            ("-x.md", "0-x.md", Ordering::Less),
            ("9-late.md", "20-y.md", Ordering::Greater),
            ("a.md", "A.md", Ordering::Less),
            ("A.md", "b.md", Ordering::Less),
            ("é.md", "Z.md", Ordering::Less),
            ("x.md", "x.md", Ordering::Equal),
        ];
        for (a, b, expected) in cases {
            assert_eq!(compare_names(a, b), expected, "{a} vs {b}");
        }
    }

    #[test]
    fn equal_names_keep_their_order() {
        // NFC and NFD spellings of the same name collate equal.
        let mut items = vec![("e\u{301}.md", 0), ("é.md", 1), ("a.md", 2)];
        sort_by_name(&mut items, |item| item.0);
        assert_eq!(items, vec![("a.md", 2), ("e\u{301}.md", 0), ("é.md", 1)]);
    }
}
