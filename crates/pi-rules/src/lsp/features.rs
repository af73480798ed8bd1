//! The editor features over the host's IDE queries (hover, completion, inlay hints, symbols,
//! definition, references), converted to and from the protocol's types with a `LineIndex`.
