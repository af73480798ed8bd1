//! "Did you mean": the closest known name by edit distance.
//!
//! The distance is optimal string alignment (Levenshtein plus swaps of adjacent characters),
//! compared ASCII case-insensitively. A candidate qualifies when the distance is at most
//! `max(2, len / 3)` of the candidate's length; the length difference is checked first, so a
//! very long word costs nothing.

/// The candidate closest to `word`, if one is close enough. Ties go to the earlier candidate.
pub fn closest<'c>(word: &str, candidates: impl IntoIterator<Item = &'c str>) -> Option<&'c str> {
    let word: Vec<char> = word.chars().map(|c| c.to_ascii_lowercase()).collect();
    let mut best: Option<(usize, &str)> = None;
    for candidate in candidates {
        let cand: Vec<char> = candidate.chars().map(|c| c.to_ascii_lowercase()).collect();
        let limit = (cand.len() / 3).max(2);
        if word.len().abs_diff(cand.len()) > limit {
            continue;
        }
        let Some(d) = distance(&word, &cand, limit) else {
            continue;
        };
        // A suggestion must share something with the word.
        if d >= word.len().max(1) || d >= cand.len() {
            continue;
        }
        match best {
            Some((b, _)) if b <= d => {}
            _ => best = Some((d, candidate)),
        }
    }
    best.map(|(_, c)| c)
}

/// Optimal string alignment distance between `a` and `b`, or `None` when it exceeds `limit`.
///
/// Only the band of cells within `limit` of the diagonal is computed (cells outside it cannot
/// lead to a distance within `limit`), so the cost is `O(len * limit)`, with no allocation for
/// short words.
pub fn distance<T: PartialEq>(a: &[T], b: &[T], limit: usize) -> Option<usize> {
    if a.len().abs_diff(b.len()) > limit {
        return None;
    }
    let width = b.len() + 1;
    let inf = limit + 1;
    let mut stack = [0usize; 3 * 65];
    let mut heap = Vec::new();
    let rows: &mut [usize] = if 3 * width <= stack.len() {
        &mut stack[..3 * width]
    } else {
        heap.resize(3 * width, 0);
        &mut heap
    };
    for (j, cell) in rows[..width].iter_mut().enumerate() {
        *cell = j.min(inf);
    }
    // Row roles rotate: `prev` is row i-1, `cur` row i, `prev2` row i-2.
    let (mut prev2, mut prev, mut cur) = (2, 0, 1);
    for i in 1..=a.len() {
        let lo = i.saturating_sub(limit).max(1);
        let hi = (i + limit).min(b.len());
        rows[cur * width] = i.min(inf);
        if lo > 1 {
            rows[cur * width + lo - 1] = inf;
        }
        let mut row_min = rows[cur * width];
        for j in lo..=hi {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (rows[prev * width + j] + 1)
                .min(rows[cur * width + j - 1] + 1)
                .min(rows[prev * width + j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(rows[prev2 * width + j - 2] + 1);
            }
            let v = v.min(inf);
            rows[cur * width + j] = v;
            row_min = row_min.min(v);
        }
        if hi < b.len() {
            rows[cur * width + hi + 1] = inf;
        }
        if row_min > limit {
            return None;
        }
        (prev2, prev, cur) = (prev, cur, prev2);
    }
    let d = rows[prev * width + b.len()];
    (d <= limit).then_some(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(a: &str, b: &str) -> Option<usize> {
        let a: Vec<char> = a.chars().collect();
        let b: Vec<char> = b.chars().collect();
        distance(&a, &b, 10)
    }

    #[test]
    fn distance_table() {
        let cases = [
            ("", "", 0),
            ("a", "", 1),
            ("dco", "dco", 0),
            ("dco", "doc", 1),
            ("kitten", "sitting", 3),
            ("review_loop_enforcment", "review_loop_enforcement", 1),
            ("ca", "abc", 3),
        ];
        for (a, b, expected) in cases {
            assert_eq!(d(a, b), Some(expected), "{a} {b}");
        }
        assert_eq!(distance(&['a'; 5], &['b'; 5], 2), None);
    }

    /// The full dynamic programme, for checking the banded one.
    fn full(a: &[u8], b: &[u8]) -> usize {
        let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
        for (i, row) in d.iter_mut().enumerate() {
            row[0] = i;
        }
        for (j, cell) in d[0].iter_mut().enumerate() {
            *cell = j;
        }
        for i in 1..=a.len() {
            for j in 1..=b.len() {
                let cost = usize::from(a[i - 1] != b[j - 1]);
                let mut v = (d[i - 1][j] + 1)
                    .min(d[i][j - 1] + 1)
                    .min(d[i - 1][j - 1] + cost);
                if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                    v = v.min(d[i - 2][j - 2] + 1);
                }
                d[i][j] = v;
            }
        }
        d[a.len()][b.len()]
    }

    #[test]
    fn banded_distance_agrees_with_the_full_one() {
        let words: Vec<Vec<u8>> = [
            "",
            "a",
            "ab",
            "ba",
            "abc",
            "acb",
            "dco",
            "doc",
            "kitten",
            "sitting",
            "review_loop",
            "reveiw_lop",
            "aaaa",
            "bbbb",
            "abcdefgh",
            "badcfehg",
        ]
        .iter()
        .map(|w| w.as_bytes().to_vec())
        .collect();
        for a in &words {
            for b in &words {
                let expected = full(a, b);
                for limit in 0..6 {
                    let got = distance(a, b, limit);
                    assert_eq!(
                        got,
                        (expected <= limit).then_some(expected),
                        "{a:?} {b:?} {limit}"
                    );
                }
            }
        }
    }

    #[test]
    fn closest_table() {
        let keys = [
            "dco",
            "use_worktrees",
            "review_loop_enforcement",
            "requires",
            "requires_setting",
        ];
        let cases = [
            ("review_loop_enforcment", Some("review_loop_enforcement")),
            ("Use_worktrees", Some("use_worktrees")),
            ("DCO", Some("dco")),
            ("doc", Some("dco")),
            ("x", None),
            ("require", Some("requires")),
            ("requiresSetting", Some("requires_setting")),
            ("completely_unrelated_name", None),
        ];
        for (word, expected) in cases {
            assert_eq!(closest(word, keys), expected, "{word}");
        }
        let long = "a".repeat(100_000);
        assert_eq!(closest(&long, keys), None);
    }
}
