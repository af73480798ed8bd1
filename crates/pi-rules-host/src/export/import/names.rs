//! Names for imported rules: a prefix of the layer's range, then the rest of the source file's
//! name, never a name in use, never one the project's other systems would take for another
//! (`CON`, `a:b`, a trailing dot, two names that differ in case only).
//!
//! Rules are read in the order of their names, so the names keep the sources' order. When
//! there are more rules than free prefixes, several share one, each with a number after it
//! (`90-01-api.md`, `90-02-web.md`, then `91-01-...`): numbers of one width, so that the
//! collation order of the names (digits before letters, digit by digit) is the sources' order.
//! Naming never fails: with no free prefix left, the last of the range is shared.

use std::collections::HashSet;

/// The longest rest of a name, in bytes (file names are limited to 255 bytes).
const MAX_STEM: usize = 80;

/// The rest of a rule name for a source: lower case, letters, digits and `-` (`CLAUDE.md` is
/// `claude`, `.goosehints` is `goosehints`, `Style Guide.mdc` is `style-guide`,
/// `python.instructions.md` is `python`); `imported` when nothing is left.
pub fn stem(name: &str) -> String {
    let base = name.trim_start_matches('.');
    let lower = base.to_lowercase();
    let cut = [".instructions.md", ".mdc", ".md", ".txt"]
        .iter()
        .find_map(|ext| lower.strip_suffix(ext).map(|s| s.len()));
    let base = match cut {
        Some(len) if base.is_char_boundary(len) => &base[..len],
        _ => base,
    };
    let mut out = String::new();
    for c in base.chars() {
        if c.is_alphanumeric() {
            out.extend(c.to_lowercase());
        } else if !out.ends_with('-') && !out.is_empty() {
            out.push('-');
        }
        if out.len() >= MAX_STEM {
            break;
        }
    }
    let out = out.trim_end_matches('-');
    if out.is_empty() {
        "imported".to_owned()
    } else {
        out.to_owned()
    }
}

/// The prefixes new rules take in `lo..=hi`, in order: those after the highest in use, or,
/// when the highest of the range is in use, every free one; the last of the range when none is
/// free (it is shared).
fn free_prefixes(used: &[u64], lo: u64, hi: u64) -> Vec<u64> {
    let in_range: HashSet<u64> = used
        .iter()
        .copied()
        .filter(|n| (lo..=hi).contains(n))
        .collect();
    let free: Vec<u64> = match in_range.iter().max() {
        None => (lo..=hi).collect(),
        Some(&top) if top < hi => (top + 1..=hi).collect(),
        Some(_) => (lo..=hi).filter(|n| !in_range.contains(n)).collect(),
    };
    if free.is_empty() {
        vec![hi]
    } else {
        free
    }
}

/// File names (`NN-stem.md`) for rules whose stems are `stems`, in that order, in a directory
/// where the prefixes `used` are taken: the prefixes of `lo..=hi` that [`free_prefixes`] gives,
/// one each, or shared with numbers when there are more rules than prefixes. A name whose lower
/// case is in `taken` gets `-2`, `-3`... after its stem; each name given is added to `taken`
/// (in lower case).
pub fn allocate(
    stems: &[String],
    used: &[u64],
    (lo, hi): (u64, u64),
    taken: &mut HashSet<String>,
) -> Vec<String> {
    let prefixes = free_prefixes(used, lo, hi);
    let per = stems.len().div_ceil(prefixes.len()).max(1);
    let width = per.to_string().len();
    stems
        .iter()
        .enumerate()
        .map(|(i, stem)| {
            let prefix = prefixes[(i / per).min(prefixes.len() - 1)];
            let head = if per == 1 {
                format!("{prefix:02}-")
            } else {
                format!("{prefix:02}-{:0width$}-", i % per + 1)
            };
            let mut name = format!("{head}{stem}.md");
            let mut n = 1;
            while taken.contains(&name.to_lowercase()) {
                n += 1;
                name = format!("{head}{stem}-{n}.md");
            }
            taken.insert(name.to_lowercase());
            name
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stems() {
        for (name, want) in [
            ("CLAUDE.md", "claude"),
            (".goosehints", "goosehints"),
            ("Style Guide.mdc", "style-guide"),
            ("copilot-instructions.md", "copilot-instructions"),
            ("!!!.md", "imported"),
            ("python.instructions.md", "python"),
            ("API.MD", "api"),
            ("CON", "con"),
            ("a:b.md", "a-b"),
            ("trailing..md", "trailing"),
            ("Ünïcode.md", "ünïcode"),
        ] {
            assert_eq!(stem(name), want, "{name}");
        }
        assert!(stem(&"x".repeat(1000)).len() <= MAX_STEM);
    }

    fn names(count: usize, used: &[u64]) -> Vec<String> {
        let stems: Vec<String> = (0..count).map(|i| format!("r{i}")).collect();
        allocate(&stems, used, (90, 99), &mut HashSet::new())
    }

    #[test]
    fn one_prefix_each_while_they_last() {
        assert_eq!(names(2, &[]), ["90-r0.md", "91-r1.md"]);
        assert_eq!(names(2, &[10, 92]), ["93-r0.md", "94-r1.md"]);
        // The highest is in use: the free ones below it.
        assert_eq!(names(2, &[90, 92, 99]), ["91-r0.md", "93-r1.md"]);
        // None free: the last one is shared.
        let all: Vec<u64> = (90..=99).collect();
        assert_eq!(names(1, &all), ["99-r0.md"]);
        assert_eq!(names(2, &all), ["99-1-r0.md", "99-2-r1.md"]);
    }

    /// More rules than prefixes: shared prefixes, numbered, in the sources' order, every name
    /// distinct, for any count.
    #[test]
    fn shared_prefixes_keep_the_order() {
        for count in [11, 20, 302, 100_000] {
            let got = names(count, &[95]);
            assert_eq!(got.len(), count);
            assert_eq!(got.iter().collect::<HashSet<_>>().len(), count);
            let mut sorted = got.clone();
            sorted.sort();
            assert_eq!(sorted, got, "{count}: byte order is the sources' order");
            // Prefixes 96..=99 only, two digits.
            assert!(got.iter().all(|n| ["96-", "97-", "98-", "99-"]
                .iter()
                .any(|p| n.starts_with(p))));
        }
        assert_eq!(names(302, &[])[0], "90-01-r0.md");
        assert_eq!(names(302, &[])[301], "99-23-r301.md");
    }

    #[test]
    fn names_in_use_or_equal_but_for_case_are_made_distinct() {
        let mut taken: HashSet<String> = ["90-api.md".to_owned()].into();
        let stems = ["api", "Api", "api"].map(str::to_owned);
        // `used` says nothing of 90: the name is still avoided.
        let got = allocate(&stems, &[], (90, 99), &mut taken);
        assert_eq!(got, ["90-api-2.md", "91-Api.md", "92-api.md"]);
        let got = allocate(
            &["API".to_owned()],
            &(90..=99).collect::<Vec<_>>(),
            (90, 99),
            &mut taken,
        );
        assert_eq!(got, ["99-API.md"]);
        let got = allocate(
            &["api".to_owned()],
            &(90..=99).collect::<Vec<_>>(),
            (90, 99),
            &mut taken,
        );
        assert_eq!(got, ["99-api-2.md"]);
    }
}
