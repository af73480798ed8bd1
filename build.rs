//! Lays out the functions that start-up runs next to each other in the binary.
//!
//! `assemble` costs little more than `--version`, and most of what it adds is page faults on code:
//! the functions it runs are spread over the binary's text, and each 64 KiB window of it that is
//! touched costs a fault. `startup-order.txt` lists the functions that `--version` and `assemble`
//! run, in the order they first run (`scripts/startup-order.py` writes it); the linker is asked to
//! place them first, together. Measured with copies of the binary side by side, this takes
//! `assemble` on the embedded rules from 1.20-1.24x the CPU time of `--version` to 1.15x when
//! the binary has been read back from disk, and from 1.19-1.21x to 1.17-1.18x as a build leaves
//! it; `assemble` itself takes 5% less CPU.
//!
//! The list names symbols: one that a later change renames is skipped, so a stale list costs
//! speed, never correctness. Their hashes change with the crates' metadata, not with function
//! bodies (adding this script changed them): after such a change, rerun
//! `scripts/startup-order.py` on a build that uses the list until the list stops changing.
//!
//! It also sets `PI_RULES_VERSION`, what `--version` prints: the package version, and when the
//! crate is built from a git checkout of this repository, the commit (`0.1.0 (1a2b3c4d5e6f)`).
//! Without git, or from a packaged crate, it is the version alone; it never fails the build.
//!
//! The option is passed only when the linker takes it (LLD and mold do, the GNU linker does
//! not), which a one-line program linked with it shows; setting `PI_RULES_NO_STARTUP_ORDER`
//! leaves the layout to the linker.

// A build script reads its input and runs the compiler; the no-I/O rule is for the library.
#![allow(clippy::disallowed_methods)]

use std::env;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn main() {
    version();
    println!("cargo:rerun-if-changed=startup-order.txt");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=PI_RULES_NO_STARTUP_ORDER");
    let Some(manifest) = env::var_os("CARGO_MANIFEST_DIR") else {
        return;
    };
    let list = Path::new(&manifest).join("startup-order.txt");
    if !list.is_file() || env::var_os("PI_RULES_NO_STARTUP_ORDER").is_some() {
        return;
    }
    let args = [
        format!("-Wl,--symbol-ordering-file={}", list.display()),
        "-Wl,--no-warn-symbol-ordering".to_owned(),
    ];
    if linker_accepts(&args) {
        for arg in args {
            println!("cargo:rustc-link-arg-bins={arg}");
        }
    }
}

/// Whether a program links with `args`, with the compiler, target, linker and flags of this
/// build.
fn linker_accepts(args: &[String]) -> bool {
    let (Some(rustc), Some(out), Ok(target)) = (
        env::var_os("RUSTC"),
        env::var_os("OUT_DIR").map(PathBuf::from),
        env::var("TARGET"),
    ) else {
        return false;
    };
    let source = out.join("startup_order_probe.rs");
    if std::fs::write(&source, "fn main() {}\n").is_err() {
        return false;
    }
    let mut rustc = Command::new(rustc);
    rustc
        .arg("--crate-type=bin")
        .arg("--target")
        .arg(&target)
        .arg("-o")
        .arg(out.join("startup_order_probe"))
        .arg(&source);
    if let Ok(flags) = env::var("CARGO_ENCODED_RUSTFLAGS") {
        rustc.args(flags.split('\x1f').filter(|flag| !flag.is_empty()));
    }
    if let Some(linker) = env::var_os("RUSTC_LINKER") {
        let mut flag = std::ffi::OsString::from("-Clinker=");
        flag.push(linker);
        rustc.arg(flag);
    }
    for arg in args {
        rustc.arg(format!("-Clink-arg={arg}"));
    }
    rustc
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success())
}

/// Sets `PI_RULES_VERSION`: the package version, with the commit when built from a checkout.
fn version() {
    let version = env::var("CARGO_PKG_VERSION").unwrap_or_default();
    match commit() {
        Some(commit) => println!("cargo:rustc-env=PI_RULES_VERSION={version} ({commit})"),
        None => println!("cargo:rustc-env=PI_RULES_VERSION={version}"),
    }
    // A packaged crate (it has the `Cargo.toml.orig` that `cargo package` writes) and this
    // repository's root crate share one build directory when `cargo package` verifies the crate
    // in the workspace's target directory: cargo names a path package's build by its place in
    // its workspace, the root in both. Naming a file (relative, so looked up in the crate being
    // built) that only the packaged crate has makes cargo run this script again for the
    // checkout, so that its `--version` names the commit after a `cargo package`.
    let packaged = env::var_os("CARGO_MANIFEST_DIR")
        .is_some_and(|dir| Path::new(&dir).join("Cargo.toml.orig").is_file());
    if packaged {
        println!("cargo:rerun-if-changed=Cargo.toml.orig");
    }
}

/// The commit checked out, when this crate is the root of a git work tree, as it is of this
/// repository's (a packaged crate unpacked inside some other repository does not count). Asks
/// cargo to run the script again when `HEAD` or the branch it names moves.
fn commit() -> Option<String> {
    let manifest = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR")?);
    let git = |args: &[&str]| -> Option<String> {
        let out = Command::new("git")
            .arg("-C")
            .arg(&manifest)
            .args(args)
            .stderr(Stdio::null())
            .output()
            .ok()?;
        let text = String::from_utf8(out.stdout).ok()?;
        (out.status.success() && !text.trim().is_empty()).then(|| text.trim().to_owned())
    };
    let top = PathBuf::from(git(&["rev-parse", "--show-toplevel"])?);
    if top.canonicalize().ok()? != manifest.canonicalize().ok()? {
        return None;
    }
    let git_dir = git(&["rev-parse", "--absolute-git-dir"])?;
    println!("cargo:rerun-if-changed={git_dir}/HEAD");
    if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
        if let Some(common) = git(&["rev-parse", "--path-format=absolute", "--git-common-dir"]) {
            // Only files that exist: cargo runs the script again on every build for a missing one.
            for file in [
                format!("{common}/{branch}"),
                format!("{common}/packed-refs"),
            ] {
                if Path::new(&file).is_file() {
                    println!("cargo:rerun-if-changed={file}");
                }
            }
        }
    }
    let commit = git(&["rev-parse", "--short=12", "HEAD"])?;
    commit
        .bytes()
        .all(|b| b.is_ascii_hexdigit())
        .then_some(commit)
}
