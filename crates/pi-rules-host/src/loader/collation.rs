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
    if let Some(order) = compare_plain(a, b) {
        return order;
    }
    match collator() {
        Some(collator) => collator.compare(a, b),
        None => a.cmp(b),
    }
}

/// The rank of each byte that can be in a plain name: `_`, `-` and `.`, then the digits, then
/// the lower-case letters, the order of their primary weights in ICU root collation;
/// [`NOT_PLAIN`] for every other byte.
static PLAIN_RANKS: [u8; 256] = {
    let mut ranks = [NOT_PLAIN; 256];
    ranks[b'_' as usize] = 0;
    ranks[b'-' as usize] = 1;
    ranks[b'.' as usize] = 2;
    let mut i = 0;
    while i < 10 {
        ranks[b'0' as usize + i] = 3 + i as u8;
        i += 1;
    }
    let mut i = 0;
    while i < 26 {
        ranks[b'a' as usize + i] = 13 + i as u8;
        i += 1;
    }
    ranks
};

const NOT_PLAIN: u8 = u8::MAX;

fn plain_rank(byte: u8) -> u8 {
    PLAIN_RANKS[usize::from(byte)]
}

/// The order of two plain names, made only of the characters [`plain_rank`] ranks, as most rule
/// file names are; `None` for any other pair. Each of these characters has one primary weight
/// and no case or accent, and none starts a contraction, so such names collate by their ranks
/// alone, a shorter name before any longer one it begins. This spares the collator (and the
/// first touch of its tables) in the common case.
fn compare_plain(a: &str, b: &str) -> Option<Ordering> {
    (is_plain(a) && is_plain(b)).then(|| compare_plain_names(a, b))
}

/// Whether `name` is plain: made only of the characters [`plain_rank`] ranks.
fn is_plain(name: &str) -> bool {
    name.bytes().all(|byte| plain_rank(byte) != NOT_PLAIN)
}

/// [`compare_names`] for two names already known to be plain ([`is_plain`]): the order of their
/// first differing characters' ranks, else the shorter first.
fn compare_plain_names(a: &str, b: &str) -> Ordering {
    debug_assert!(is_plain(a) && is_plain(b), "{a:?} or {b:?} is not plain");
    let (a, b) = (a.as_bytes(), b.as_bytes());
    match a.iter().zip(b).position(|(x, y)| x != y) {
        Some(at) => plain_rank(a[at]).cmp(&plain_rank(b[at])),
        None => a.len().cmp(&b.len()),
    }
}

/// The order of [`compare_names`] for a run whose names are all among `names`: when every one is
/// plain, as rule file names mostly are, a comparison that need not check them again. A caller
/// that sorts the names more than once checks them once here.
pub fn comparator_for<'n>(mut names: impl Iterator<Item = &'n str>) -> fn(&str, &str) -> Ordering {
    if names.all(is_plain) {
        compare_plain_names
    } else {
        compare_names
    }
}

/// Sorts items by name with [`compare_names`], keeping the relative order of equal names.
pub fn sort_by_name<T>(items: &mut [T], name: impl Fn(&T) -> &str) {
    let compare = comparator_for(items.iter().map(&name));
    items.sort_by(|a, b| compare(name(a), name(b)));
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

    /// The plain comparison is a shortcut: it must agree with the collator on every pair it
    /// answers.
    #[test]
    fn plain_names_compare_as_the_collator_does() {
        let collator = collator().expect("collator");
        let alphabet: Vec<char> = "_-.0123456789abcdefghijklmnopqrstuvwxyz".chars().collect();
        // Every character alone and followed by a few others: the single characters fix the
        // ranks, the pairs that a first difference decides and that a prefix comes first.
        let mut names = vec![String::new()];
        for a in &alphabet {
            names.push(a.to_string());
            for b in "_-.09az".chars() {
                names.push(format!("{a}{b}"));
            }
        }
        names.extend(
            [
                "00-core.md",
                "05-rules.md",
                "10-agent_routing.md",
                "10-agent-routing.md",
                "10-agent.routing.md",
                "9-late.md",
                "20-y.md",
                "a.md",
                "a-.md",
                "a_.md",
                "ab.md",
            ]
            .map(String::from),
        );
        for a in &names {
            for b in &names {
                assert_eq!(
                    compare_plain(a, b),
                    Some(collator.compare(a, b)),
                    "{a:?} vs {b:?}"
                );
            }
        }
        for (a, b) in [("A.md", "a.md"), ("é.md", "e.md"), ("a b.md", "a.md")] {
            assert_eq!(compare_plain(a, b), None, "{a:?} vs {b:?}");
        }
    }

    #[test]
    fn equal_names_keep_their_order() {
        // NFC and NFD spellings of the same name collate equal.
        let mut items = vec![("e\u{301}.md", 0), ("é.md", 1), ("a.md", 2)];
        sort_by_name(&mut items, |item| item.0);
        assert_eq!(items, vec![("a.md", 2), ("e\u{301}.md", 0), ("é.md", 1)]);
    }

    #[test]
    fn a_list_of_plain_names_sorts_as_the_collator_sorts_it() {
        let names = [
            "9-b.md", "10_a.md", "10-a.md", "10.a.md", "_x.md", "-x.md", "0a", "0", "a0",
        ];
        let mut fast = names.to_vec();
        sort_by_name(&mut fast, |name| name);
        let collator = collator().expect("collator");
        let mut slow = names.to_vec();
        slow.sort_by(|a, b| collator.compare(a, b));
        assert_eq!(fast, slow);
        // One name that is not plain sends the whole list to the collator.
        let mut mixed = vec!["b.md", "A.md", "a.md"];
        sort_by_name(&mut mixed, |name| name);
        assert_eq!(mixed, ["a.md", "A.md", "b.md"]);
    }
}
