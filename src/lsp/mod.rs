//! `pi-rules lsp`: the Language Server Protocol over stdio, on the host's operations.
//!
//! `transport` frames messages on a byte stream, bounded; `server` runs the message loop (the
//! open documents in `documents`, each workspace folder's session and its check in `workspace`,
//! kept up to date file by file, findings and code actions in `diagnostics`); `position` maps byte offsets to the protocol's
//! positions in the negotiated encoding; `uri` maps `file://` URIs to paths; `features` converts
//! the host's IDE queries to the protocol's types.

pub mod diagnostics;
pub mod documents;
pub mod features;
pub mod position;
pub mod server;
pub mod transport;
pub mod uri;
pub mod workspace;

use pi_rules_host::env::Env;
use server::Ending;
use std::io::{BufReader, Write as _};
use transport::{Incoming, Outgoing};

/// Serves the protocol on stdin and stdout until `exit` or the end of stdin.
pub fn run_stdio(env: Env) -> Ending {
    let (in_tx, in_rx) = crossbeam_channel::bounded::<Incoming>(16);
    let (out_tx, out_rx) = crossbeam_channel::unbounded::<Outgoing>();
    // The reader ends with stdin; the server then ends as well.
    std::thread::spawn(move || {
        let mut input = transport::Reader::new(BufReader::new(std::io::stdin().lock()));
        while let Ok(Some(message)) = input.read() {
            if in_tx.send(message).is_err() {
                break;
            }
        }
    });
    let writer = std::thread::spawn(move || {
        let stdout = std::io::stdout();
        let on_terminal = std::io::IsTerminal::is_terminal(&stdout);
        let mut out = stdout.lock();
        for message in out_rx {
            if transport::write(&mut out, message, on_terminal).is_err() {
                break;
            }
        }
        let _ = out.flush();
    });
    let ending = server::run(env, in_rx, out_tx);
    // Every message the server sent is written before the process ends.
    let _ = writer.join();
    ending
}
