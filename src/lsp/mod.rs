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
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    fix_the_mmap_threshold();
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

/// The environment variable that fixes glibc's mmap threshold, and the threshold the server
/// runs with: blocks of 256 KiB and more are mapped on their own.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub const MMAP_THRESHOLD_VAR: &str = "MALLOC_MMAP_THRESHOLD_";
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub const MMAP_THRESHOLD: &str = "262144";

/// Gives the memory of a closed document back to the system. glibc's malloc maps a block over
/// its mmap threshold on its own and unmaps it when freed, but each time it frees one it raises
/// the threshold to that block's size (up to 32 MiB), and it keeps up to twice the threshold
/// free at the top of each heap: after a few documents of megabytes, the next ones come from
/// the heap, and their memory stays with the process when they are closed (twenty 4 MiB
/// documents in turn: 36 to 62 MB after each close, where the server holds 18 MB). A threshold
/// set in the environment is fixed, so the server starts itself again with one (`exec`: the
/// same process, its pipes untouched, nothing read yet); with it, the resident size after each
/// close is what it was before the first open. A threshold or tunables already set are left as
/// they are, and if the new start fails the server runs as it is.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn fix_the_mmap_threshold() {
    use std::os::unix::process::CommandExt as _;
    if std::env::var_os(MMAP_THRESHOLD_VAR).is_some()
        || std::env::var_os("GLIBC_TUNABLES").is_some()
    {
        return;
    }
    let Ok(exe) = std::env::current_exe() else {
        return;
    };
    let mut args = std::env::args_os();
    let mut command = std::process::Command::new(exe);
    if let Some(arg0) = args.next() {
        command.arg0(arg0);
    }
    command.args(args).env(MMAP_THRESHOLD_VAR, MMAP_THRESHOLD);
    // `exec` returns only when it failed.
    let _ = command.exec();
}
