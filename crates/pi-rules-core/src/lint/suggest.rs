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
pub fn distance(a: &[char], b: &[char], limit: usize) -> Option<usize> {
    let width = b.len() + 1;
    // Three rows: two back (for transpositions), one back, current.
    let mut rows = vec![0usize; 3 * width];
    for (j, cell) in rows[..width].iter_mut().enumerate() {
        *cell = j;
    }
    let mut prev2 = 2; // row index roles rotate: 0 = i-1, 1 = i, 2 = i-2
    let mut prev = 0;
    let mut cur = 1;
    for i in 1..=a.len() {
        rows[cur * width] = i;
        let mut row_min = i;
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (rows[prev * width + j] + 1)
                .min(rows[cur * width + j - 1] + 1)
                .min(rows[prev * width + j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(rows[prev2 * width + j - 2] + 1);
            }
            rows[cur * width + j] = v;
            row_min = row_min.min(v);
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

    #[test]
    fn closest_table() {
        let keys = ["dco", "use_worktrees", "review_loop_enforcement", "requires", "requires_setting"];
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
