//! Repository root discovery, as `git rev-parse --git-common-dir` gives it. (being written)
