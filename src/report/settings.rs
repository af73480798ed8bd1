//! `settings`' rows (each key asked for, with its value and where it came from) and their JSON
//! form (`docs/settings-json.md`): the reference's plain key → value object.

use pi_rules_core::settings::{Resolved, Source};
use pi_rules_core::Value;
use std::io::{self, Write};

/// The version of the JSON form, documented in `docs/settings-json.md` (the object itself is the
/// reference's plain key → value shape, so the version is not a field of it).
pub const FORMAT_VERSION: u32 = 1;

/// One row: a key, its value and its source (`None` for a key that is not a settings key, shown
/// as what a condition on it reads).
pub type Row<'a> = (&'a str, Value, Option<Source>);

/// The rows for the keys in `only`, in that order, or for every key in schema order when `only`
/// is empty.
pub fn rows<'a>(resolved: &'a Resolved, only: &'a [String]) -> Vec<Row<'a>> {
    if only.is_empty() {
        resolved
            .iter()
            .map(|(k, v)| (k, v.value.clone(), Some(v.source.clone())))
            .collect()
    } else {
        only.iter()
            .map(|k| match resolved.get(k) {
                Some(v) => (k.as_str(), v.value.clone(), Some(v.source.clone())),
                None => (k.as_str(), resolved.resolve_key(k).clone(), None),
            })
            .collect()
    }
}

/// Writes the rows' JSON form to `out` as one line, with its newline.
pub fn write_json(rows: Vec<Row<'_>>, out: &mut dyn Write) -> io::Result<()> {
    let mut object = pi_rules_core::Object::new();
    for (key, value, _) in rows {
        object.insert(key.to_owned(), value);
    }
    let text = Value::Object(object).to_json().unwrap_or_default();
    writeln!(out, "{text}")
}
