//! Escaping for terminals: the core's one escaper ([`pi_rules_core::escape`]), re-exported for
//! the host's users and, through the binary's `terminal.rs`, for the front ends. Messages the host
//! returns are meant to be raw, escaped by the front end that prints them.

pub use pi_rules_core::escape::*;
