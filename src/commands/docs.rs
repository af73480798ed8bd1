//! `pi-rules docs`: the documents of the repository's `docs/` folder, embedded in the binary, so
//! that an installed binary's user can read what `--help` points at without a checkout.

use crate::invocation::Context;
use crate::output::{output, Exit, UsageError};
use crate::terminal::escape;
use pi_rules_host::error::Result;

macro_rules! doc {
    ($name:literal) => {
        ($name, include_str!(concat!("../../docs/", $name, ".md")))
    };
}

/// Every `docs/*.md` file: (name without `.md`, text), in name order. A test lists the folder and
/// compares, so a document added there without a line here fails the tests.
pub const DOCS: &[(&str, &str)] = &[
    doc!("assemble-json"),
    doc!("check-json"),
    doc!("config"),
    doc!("config-json"),
    doc!("explain-json"),
    doc!("export"),
    doc!("export-json"),
    doc!("import-json"),
    doc!("performance"),
    doc!("schema-json"),
    doc!("scopes"),
    doc!("serve"),
    doc!("settings-json"),
    doc!("show-json"),
];

/// Print the documentation that ships with pi-rules: the list, or one document.
#[derive(clap::Args, Debug, Clone)]
#[command(after_help = "\
Examples:
  pi-rules docs                  # the documents, with their titles
  pi-rules docs serve            # the JSON-RPC protocol of `pi-rules serve`
  pi-rules docs check-json | less")]
pub struct Args {
    /// The document to print, with or without `.md` [default: list the documents].
    #[arg(value_name = "NAME")]
    pub name: Option<String>,
}

/// The title of a document: its first line without the heading's `#`.
fn title(text: &str) -> &str {
    let first = text.lines().next().unwrap_or_default();
    first.trim_start_matches('#').trim()
}

/// `pi-rules docs`.
pub fn run(args: &Args, cx: &mut Context<'_>) -> Result<Exit> {
    let Some(name) = &args.name else {
        let width = DOCS.iter().map(|(name, _)| name.len()).max().unwrap_or(0);
        let mut list = String::new();
        for (name, text) in DOCS {
            list.push_str(&format!("{name:width$}  {}\n", title(text)));
        }
        list.push_str("\nPrint one with `pi-rules docs NAME`.\n");
        output(cx.out.write_all(list.as_bytes()))?;
        return Ok(Exit::Success);
    };
    let wanted = name.strip_suffix(".md").unwrap_or(name);
    let Some((_, text)) = DOCS.iter().find(|(doc, _)| *doc == wanted) else {
        let names: Vec<&str> = DOCS.iter().map(|(doc, _)| *doc).collect();
        return Err(UsageError(format!(
            "no document is named `{}`; the documents are {}",
            escape(name),
            names.join(", ")
        ))
        .into());
    };
    output(cx.out.write_all(text.as_bytes()))?;
    Ok(Exit::Success)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_title_is_the_first_heading() {
        assert_eq!(
            title("# `pi-rules serve`: the protocol\n\ntext"),
            "`pi-rules serve`: the protocol"
        );
        assert_eq!(title(""), "");
    }

    #[test]
    fn the_documents_are_in_name_order() {
        let names: Vec<&str> = DOCS.iter().map(|(name, _)| *name).collect();
        let mut sorted = names.clone();
        sorted.sort_unstable();
        assert_eq!(names, sorted);
    }
}
