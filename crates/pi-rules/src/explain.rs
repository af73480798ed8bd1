//! `pi-rules explain` (being written).
use crate::commands::{Common, Exit, OutputFormat};
pub fn run(_c: &Common, _f: OutputFormat, _o: &mut dyn std::io::Write) -> anyhow::Result<Exit> {
    anyhow::bail!("explain: not yet")
}
