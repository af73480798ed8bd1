//! A stand-in for `export::dialect` (the "forms" part of issue 35) until it is on `main`: the
//! same names and signature, so that the switch is one `use` line. Delete this file then.

/// How an agent reads a glob.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    Claude,
    Copilot,
    Cursor,
    Windsurf,
    Kiro,
    Cline,
}

/// One agent's frontmatter value (a string, a comma-separated string, a flow list, braces with
/// commas, `!neg`) as our globs, with warnings for what cannot be kept. Never fails.
pub fn read_value(dialect: Dialect, value: &str) -> (Vec<String>, Vec<String>) {
    let mut globs = Vec::new();
    let mut warnings = Vec::new();
    let value = value.trim();
    let inner = match value.strip_prefix('[') {
        Some(rest) => rest.strip_suffix(']').unwrap_or(rest),
        None => value,
    };
    for piece in pieces(inner) {
        let quoted = piece.trim().starts_with(['"', '\'']);
        let piece = unquote(piece.trim());
        // `'a, b'`: one quoted string of comma-separated globs; `a b`: two globs.
        let parts: Vec<&str> = if piece.contains(',') {
            pieces(&piece).collect()
        } else if quoted {
            vec![piece.as_str()]
        } else {
            piece.split_whitespace().collect()
        };
        for part in parts {
            let part = part.trim();
            if part.is_empty() {
                continue;
            }
            if let Some(negated) = part.strip_prefix('!') {
                warnings.push(format!(
                    "`!{negated}` (every file but these) cannot be a scope of ours; left out"
                ));
                continue;
            }
            globs.push(ours(dialect, part));
        }
    }
    (globs, warnings)
}

/// Our glob for one of the agent's.
fn ours(dialect: Dialect, glob: &str) -> String {
    let glob = glob.strip_prefix("./").unwrap_or(glob);
    let root_only = matches!(dialect, Dialect::Kiro | Dialect::Cline);
    let core = glob.trim_end_matches('/');
    if root_only && !core.is_empty() && !core.contains('/') && !core.starts_with("**") {
        format!("/{glob}")
    } else {
        glob.to_owned()
    }
}

/// The pieces of a comma-separated list, split outside quotes and braces.
fn pieces(value: &str) -> impl Iterator<Item = &str> {
    pi_rules_core::rule_scope::list_pieces(value).map(move |range| &value[range])
}

/// A value without one pair of matching quotes, and a plain value without a ` #` comment.
fn unquote(value: &str) -> String {
    for q in ['"', '\''] {
        if value.len() >= 2 && value.starts_with(q) && value.ends_with(q) {
            return value[1..value.len() - 1].to_owned();
        }
    }
    match value.find(" #") {
        Some(at) => value[..at].trim().to_owned(),
        None => value.to_owned(),
    }
}
