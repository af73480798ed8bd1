//! `pi-rules lsp`: the Language Server Protocol over stdio, on the host's operations.
//!
//! `position` maps byte offsets to the protocol's line/character positions in the negotiated
//! encoding; `features` converts the host's IDE queries to the protocol's types.

pub mod features;
pub mod position;
