//! The twelve package rules, embedded in the binary from the crate's copy of `rules/` at the
//! repository root (`scripts/sync-embedded` copies it; a test keeps the two the same).

macro_rules! rule {
    ($name:literal) => {
        ($name, include_str!(concat!("../rules/", $name)))
    };
}

/// The package layer used when neither `--package-dir` nor `PI_RULES_PACKAGE_DIR` is given:
/// (file name, text), in file-name order.
pub const PACKAGE_RULES: &[(&str, &str)] = &[
    rule!("00-orchestrator-core.md"),
    rule!("05-issue-first-workflow.md"),
    rule!("10-agent-routing.md"),
    rule!("20-code-review-loop.md"),
    rule!("25-documentation-updates.md"),
    rule!("30-prompt-templates.md"),
    rule!("35-memory.md"),
    rule!("40-critical-rules.md"),
    rule!("45-file-preview.md"),
    rule!("50-agent-bug-reporting.md"),
    rule!("55-coms-protocol.md"),
    rule!("60-task-tracking.md"),
];

/// The settings schema shipped at the repository root (the crate's copy of it).
pub const SETTINGS_KEYS: &str = include_str!("../settings-keys.json");
