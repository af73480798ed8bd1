//! Which checking and resolution rule each settings key follows.
//!
//! This is the one place that maps keys to behaviour. The reference singles out some keys by
//! name (SPEC §4); every other key follows its schema type. Both the file checks
//! ([`super::file`]) and the resolution ([`super::resolve`]) dispatch on [`Rule`].

use super::schema::{KeyKind, KeySpec};

/// The largest integer a double holds exactly (`Number.MAX_SAFE_INTEGER`).
pub(crate) const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;

/// How one key is checked in a file and resolved.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Rule {
    /// `commit_trailer`: a boolean or a string; the env var may name a trailer.
    CommitTrailer,
    /// `acpx_agents`, `cli_agents`: a string or an array, resolved through the agent-name parser.
    AgentList,
    /// `pidash_enable`, `pidiff_enable`: a boolean; a non-empty env var disables only with
    /// false/0/no/off.
    Enable,
    /// `pidash_port`: an integer 1..=65535; the env var is read with `parseInt`.
    DashboardPort,
    /// `review_loop_max_cycles`: an integer 1..=10 or a digit string `1`..`10`.
    ReviewCycles,
    /// `agent_overrides`: per-agent provider and model.
    AgentOverrides,
    /// Type `bool`.
    Bool,
    /// Type `int`, within `min..=max`.
    Int { min: f64, max: f64 },
    /// Type `port`, within `min..=65535` in a file and `0..=65535` otherwise.
    Port { min: f64 },
    /// Type `number`: finite (`dream_interval_hours`).
    Number,
    /// Type `string`, trimmed; `drop_empty` makes a string that is empty after trimming absent
    /// (`image_model`, `internal_operations_provider`, `internal_operations_model`).
    String { drop_empty: bool },
    /// Any other type: never taken from a file, resolves to `false`.
    Unsupported,
}

impl Rule {
    /// The rule for `spec`.
    pub(crate) fn of(spec: &KeySpec) -> Rule {
        match spec.name.as_ref() {
            "commit_trailer" => return Rule::CommitTrailer,
            "acpx_agents" | "cli_agents" => return Rule::AgentList,
            "pidash_enable" | "pidiff_enable" => return Rule::Enable,
            "pidash_port" => return Rule::DashboardPort,
            "review_loop_max_cycles" => return Rule::ReviewCycles,
            "agent_overrides" => return Rule::AgentOverrides,
            "image_model" | "internal_operations_provider" | "internal_operations_model" => {
                return Rule::String { drop_empty: true }
            }
            _ => {}
        }
        match spec.kind {
            KeyKind::Bool => Rule::Bool,
            KeyKind::Int => Rule::Int {
                min: spec.min.unwrap_or(0.0),
                max: spec.max.unwrap_or(MAX_SAFE_INTEGER),
            },
            KeyKind::Port => Rule::Port {
                min: spec.min.unwrap_or(0.0),
            },
            KeyKind::Number => Rule::Number,
            KeyKind::String => Rule::String { drop_empty: false },
            KeyKind::BoolOrString
            | KeyKind::BoolEnable
            | KeyKind::AgentList
            | KeyKind::AgentOverrides
            | KeyKind::Other(_) => Rule::Unsupported,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::Schema;

    #[test]
    fn rules_of_the_embedded_schema() {
        let schema = Schema::embedded();
        let rule = |name: &str| Rule::of(schema.get(name).expect(name));
        let cases = [
            ("commit_trailer", Rule::CommitTrailer),
            ("acpx_agents", Rule::AgentList),
            ("cli_agents", Rule::AgentList),
            ("pidash_enable", Rule::Enable),
            ("pidiff_enable", Rule::Enable),
            ("pidash_port", Rule::DashboardPort),
            ("review_loop_max_cycles", Rule::ReviewCycles),
            ("agent_overrides", Rule::AgentOverrides),
            ("image_model", Rule::String { drop_empty: true }),
            ("agent_model", Rule::String { drop_empty: false }),
            ("sidecar_log_level", Rule::String { drop_empty: false }),
            ("dco", Rule::Bool),
            ("dream_interval_hours", Rule::Number),
            (
                "coms_timeout_ms",
                Rule::Int {
                    min: 1000.0,
                    max: MAX_SAFE_INTEGER,
                },
            ),
            (
                "coms_max_hops",
                Rule::Int {
                    min: 1.0,
                    max: 50.0,
                },
            ),
        ];
        for (name, expected) in cases {
            assert_eq!(rule(name), expected, "{name}");
        }
        // Every key of the shipped schema has a real rule.
        for spec in schema.keys() {
            assert_ne!(Rule::of(spec), Rule::Unsupported, "{}", spec.name);
        }
    }

    #[test]
    fn special_types_without_a_special_name_are_unsupported() {
        let schema = Schema::parse(
            r#"{"a": {"type": "bool_enable"}, "b": {"type": "agent_list"}, "c": {"type": "x"},
                "d": {"type": "port"}}"#,
        )
        .expect("schema");
        let rules: Vec<Rule> = schema.keys().map(Rule::of).collect();
        assert_eq!(
            rules,
            [
                Rule::Unsupported,
                Rule::Unsupported,
                Rule::Unsupported,
                Rule::Port { min: 0.0 }
            ]
        );
    }
}
