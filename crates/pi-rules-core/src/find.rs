//! Byte and substring searches that need no CPU-feature detection at run time.
//!
//! The `memchr` crate's top-level functions (and `memchr::memmem`) choose between AVX2 and SSE2
//! on their first call by asking the CPU (`CPUID`). In a virtual machine every `CPUID` traps to
//! the hypervisor: that one detection costs about 17–30 µs per process, more than the engine
//! spends assembling the package rules. SSE2 is part of every x86-64 CPU, so on x86-64 this module
//! calls the crate's SSE2 searchers directly. On other targets it calls the crate's own functions
//! (aarch64's NEON needs no detection either).
//!
//! Every search in the engine and the binary goes through here; nothing else names `memchr`.
//!
//! Substring searches ([`Finder`]) use the SIMD "packed pair" search for needles of 2 to 32 bytes
//! (checking a candidate costs at most a 32-byte comparison, so the search stays linear), a plain
//! scan for haystacks too short for a vector, and Two-Way for longer needles.

pub use memchr::arch::all::packedpair::HeuristicFrequencyRank;

#[cfg(target_arch = "x86_64")]
use memchr::arch::{
    all::{packedpair::Pair, twoway},
    x86_64::sse2,
};

/// The longest needle searched with the packed-pair search (as the `memchr` crate itself does).
#[cfg(target_arch = "x86_64")]
const PACKED_MAX: usize = 32;

/// The offset of the first `needle` in `haystack`.
#[inline]
pub fn memchr(needle: u8, haystack: &[u8]) -> Option<usize> {
    #[cfg(target_arch = "x86_64")]
    if let Some(one) = sse2::memchr::One::new(needle) {
        return one.find(haystack);
    }
    memchr::memchr(needle, haystack)
}

/// The offset of the first `needle` in `haystack`, for a byte that is usually near its start:
/// the first sixteen bytes are searched alone, which is one vector step, before the search of
/// the rest is set up (a plain search of a longer haystack would go on to its unrolled loop).
#[inline]
pub fn memchr_near(needle: u8, haystack: &[u8]) -> Option<usize> {
    const NEAR: usize = 16;
    match haystack.split_at_checked(NEAR) {
        Some((near, far)) => match memchr(needle, near) {
            Some(at) => Some(at),
            None => memchr(needle, far).map(|at| NEAR + at),
        },
        None => memchr(needle, haystack),
    }
}

/// Where `byte` may be in `word` (eight bytes of a text, read little-endian): the high bit of each
/// byte equal to it is set, and also of a byte `byte ^ 1` right after one that is set (a borrow
/// runs on into it). The lowest bit set is always a true match. Plain integer arithmetic, for
/// looking at a few bytes, or at bytes in a way a byte search cannot.
#[inline(always)]
pub fn word_matches(word: u64, byte: u8) -> u64 {
    const LOW: u64 = u64::from_le_bytes([0x01; 8]);
    const HIGH: u64 = u64::from_le_bytes([0x80; 8]);
    let x = word ^ u64::from_le_bytes([byte; 8]);
    x.wrapping_sub(LOW) & !x & HIGH
}

/// The offset of the last `needle` in `haystack`.
#[inline]
pub fn memrchr(needle: u8, haystack: &[u8]) -> Option<usize> {
    #[cfg(target_arch = "x86_64")]
    if let Some(one) = sse2::memchr::One::new(needle) {
        return one.rfind(haystack);
    }
    memchr::memrchr(needle, haystack)
}

/// The offset of the first `a` or `b` in `haystack`.
#[inline]
pub fn memchr2(a: u8, b: u8, haystack: &[u8]) -> Option<usize> {
    #[cfg(target_arch = "x86_64")]
    if let Some(two) = sse2::memchr::Two::new(a, b) {
        return two.find(haystack);
    }
    memchr::memchr2(a, b, haystack)
}

/// The offset of the last `a` or `b` in `haystack`.
#[inline]
pub fn memrchr2(a: u8, b: u8, haystack: &[u8]) -> Option<usize> {
    #[cfg(target_arch = "x86_64")]
    if let Some(two) = sse2::memchr::Two::new(a, b) {
        return two.rfind(haystack);
    }
    memchr::memrchr2(a, b, haystack)
}

/// How many times `needle` occurs in `haystack`.
pub fn count(needle: u8, haystack: &[u8]) -> usize {
    #[cfg(target_arch = "x86_64")]
    if let Some(one) = sse2::memchr::One::new(needle) {
        return one.count(haystack);
    }
    memchr::memchr_iter(needle, haystack).count()
}

/// The offsets of every `needle` in `haystack`, in order.
pub fn memchr_iter(needle: u8, haystack: &[u8]) -> impl Iterator<Item = usize> + '_ {
    let mut from = 0;
    std::iter::from_fn(move || {
        let at = from + memchr(needle, haystack.get(from..)?)?;
        from = at + 1;
        Some(at)
    })
}

/// The offset of the first `needle` in `haystack` (a searcher built for one search).
pub fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    Finder::new(needle).find(haystack)
}

/// A substring searcher for one needle, built once and used on many haystacks.
#[derive(Clone, Debug)]
pub struct Finder<'n> {
    needle: &'n [u8],
    #[cfg(target_arch = "x86_64")]
    search: Search,
    #[cfg(not(target_arch = "x86_64"))]
    search: memchr::memmem::Finder<'n>,
}

/// How an x86-64 [`Finder`] searches, by the needle's length.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Debug)]
enum Search {
    /// No needle or one byte: a byte search.
    Byte,
    Packed(sse2::packedpair::Finder),
    TwoWay(twoway::Finder),
}

impl<'n> Finder<'n> {
    /// A searcher for `needle`, guessing which of its bytes are rare in text.
    pub fn new(needle: &'n [u8]) -> Finder<'n> {
        #[cfg(target_arch = "x86_64")]
        return Finder::build(needle, Pair::new(needle));
        #[cfg(not(target_arch = "x86_64"))]
        return Finder {
            needle,
            search: memchr::memmem::Finder::new(needle),
        };
    }

    /// A searcher for `needle` that looks first for the two bytes `ranker` ranks rarest.
    pub fn with_ranker(needle: &'n [u8], ranker: impl HeuristicFrequencyRank) -> Finder<'n> {
        #[cfg(target_arch = "x86_64")]
        return Finder::build(needle, Pair::with_ranker(needle, ranker));
        #[cfg(not(target_arch = "x86_64"))]
        return Finder {
            needle,
            search: memchr::memmem::FinderBuilder::new().build_forward_with_ranker(ranker, needle),
        };
    }

    #[cfg(target_arch = "x86_64")]
    fn build(needle: &'n [u8], pair: Option<Pair>) -> Finder<'n> {
        let packed = pair
            .filter(|_| needle.len() <= PACKED_MAX)
            .and_then(|pair| sse2::packedpair::Finder::with_pair(needle, pair));
        let search = match (needle.len(), packed) {
            (0 | 1, _) => Search::Byte,
            (_, Some(packed)) => Search::Packed(packed),
            (_, None) => Search::TwoWay(twoway::Finder::new(needle)),
        };
        Finder { needle, search }
    }

    pub fn needle(&self) -> &'n [u8] {
        self.needle
    }

    /// The offset of the first occurrence of the needle in `haystack`.
    pub fn find(&self, haystack: &[u8]) -> Option<usize> {
        #[cfg(target_arch = "x86_64")]
        return match &self.search {
            Search::Byte => match self.needle.first() {
                None => Some(0),
                Some(&byte) => memchr(byte, haystack),
            },
            // The vector search needs a haystack of a vector and a needle at least; a shorter
            // one is scanned plainly (at most 32 × 48 byte comparisons).
            Search::Packed(packed) if haystack.len() < packed.min_haystack_len() => haystack
                .windows(self.needle.len())
                .position(|window| window == self.needle),
            Search::Packed(packed) => packed.find(haystack, self.needle),
            Search::TwoWay(twoway) => twoway.find(haystack, self.needle),
        };
        #[cfg(not(target_arch = "x86_64"))]
        return self.search.find(haystack);
    }

    /// The offsets of the occurrences of the needle in `haystack` that do not overlap, in order.
    pub fn find_iter<'f, 'h>(&'f self, haystack: &'h [u8]) -> impl Iterator<Item = usize> + 'f
    where
        'h: 'f,
    {
        let step = self.needle.len().max(1);
        let mut from = 0;
        std::iter::from_fn(move || {
            let at = from + self.find(haystack.get(from..)?)?;
            from = at + step;
            Some(at)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Every offset where `needle` starts, overlapping or not.
    fn naive(haystack: &[u8], needle: &[u8]) -> Vec<usize> {
        (0..=haystack.len().saturating_sub(needle.len()))
            .filter(|&i| haystack[i..].starts_with(needle))
            .collect()
    }

    /// Non-overlapping occurrences, as `find_iter` reports them.
    fn non_overlapping(haystack: &[u8], needle: &[u8]) -> Vec<usize> {
        let mut out = Vec::new();
        let mut next = 0;
        for at in naive(haystack, needle) {
            if at >= next {
                out.push(at);
                next = at + needle.len().max(1);
            }
        }
        out
    }

    struct Pipes;

    impl HeuristicFrequencyRank for Pipes {
        fn rank(&self, byte: u8) -> u8 {
            if byte == b'|' {
                0
            } else {
                255
            }
        }
    }

    proptest! {
        #[test]
        fn bytes_match_a_plain_scan(haystack in proptest::collection::vec(0u8..4, 0..200), a in 0u8..4, b in 0u8..4) {
            let first = haystack.iter().position(|&x| x == a);
            prop_assert_eq!(memchr(a, &haystack), first);
            prop_assert_eq!(memchr_near(a, &haystack), first);
            prop_assert_eq!(memrchr(a, &haystack), haystack.iter().rposition(|&x| x == a));
            let either = |&x: &u8| x == a || x == b;
            prop_assert_eq!(memchr2(a, b, &haystack), haystack.iter().position(either));
            prop_assert_eq!(memrchr2(a, b, &haystack), haystack.iter().rposition(either));
            let all: Vec<usize> = haystack.iter().enumerate().filter(|(_, &x)| x == a).map(|(i, _)| i).collect();
            prop_assert_eq!(count(a, &haystack), all.len());
            prop_assert_eq!(memchr_iter(a, &haystack).collect::<Vec<_>>(), all);
        }

        #[test]
        fn substrings_match_a_plain_scan(
            haystack in proptest::collection::vec(prop::sample::select(b"ab|\n".to_vec()), 0..300),
            needle in proptest::collection::vec(prop::sample::select(b"ab|\n".to_vec()), 0..40),
        ) {
            for finder in [Finder::new(&needle), Finder::with_ranker(&needle, Pipes)] {
                prop_assert_eq!(finder.find(&haystack), naive(&haystack, &needle).first().copied());
                prop_assert_eq!(finder.find_iter(&haystack).collect::<Vec<_>>(), non_overlapping(&haystack, &needle));
            }
            prop_assert_eq!(find(&haystack, &needle), naive(&haystack, &needle).first().copied());
        }
    }

    proptest! {
        #[test]
        fn word_matches_marks_the_equal_bytes(
            bytes in proptest::array::uniform8(prop::sample::select(b"|}\n\x0b\x00\x01\x7f\x80\xffa".to_vec())),
            byte in prop::sample::select(b"|}\n\x0b\x00\x01\x7f\x80\xffa".to_vec()),
        ) {
            let expected = bytes
                .iter()
                .enumerate()
                .filter(|(_, &b)| b == byte)
                .fold(0u64, |mask, (i, _)| mask | 0x80 << (8 * i));
            // The true marks, and only `byte ^ 1` right after a mark.
            let approximate = word_matches(u64::from_le_bytes(bytes), byte);
            prop_assert_eq!(approximate & expected, expected);
            for (i, &b) in bytes.iter().enumerate() {
                if approximate & !expected & 0x80 << (8 * i) != 0 {
                    prop_assert!(i > 0 && b == byte ^ 1 && approximate & 0x80 << (8 * (i - 1)) != 0);
                }
            }
        }
    }

    #[test]
    fn long_haystacks_with_matches_at_both_ends() {
        let mut haystack = b"{{X}}".to_vec();
        haystack.extend(std::iter::repeat_n(b'{', 10_000));
        haystack.extend_from_slice(b"{{X}}");
        let finder = Finder::new(b"{{X}}");
        assert_eq!(finder.find_iter(&haystack).collect::<Vec<_>>(), [0, 10_005]);
        let needle = [b'a'; 40];
        let mut haystack = vec![b'a'; 39];
        haystack.push(b'b');
        haystack.extend_from_slice(&needle);
        assert_eq!(Finder::new(&needle).find(&haystack), Some(40));
    }
}
