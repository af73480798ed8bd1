//! [`Env`]: everything the host reads from the process it runs in, as one value that the front
//! end builds. The host itself never calls `std::env` (its `clippy.toml` forbids it): the command
//! line builds one `Env` from the process in `main`, `serve` one for the process that it reuses
//! for every request (a request's `cwd` is given to [`Session::new`](crate::session::Session::new)
//! explicitly), and an editor front end may build one from a map ([`Env::from_vars`]).
//!
//! What is read through it: the working directory (when no `--cwd` is given), `HOME`,
//! `PI_RULES_PACKAGE_DIR`, `PI_SUBAGENT_CHILD`, `PI_RULES_CONFINE`, the variables the settings
//! schema names, and, for repository discovery, `PATH` and git's variables
//! ([`GIT_DISCOVERY_ENV`](crate::repo::GIT_DISCOVERY_ENV)).
//!
//! `Env` holds the process environment and nothing else: the files a session reads, the editor's
//! buffers among them, are its [`Files`](crate::files::Files).

use std::collections::HashMap;
use std::ffi::OsString;
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The environment variable that replaces the embedded package rules with a directory.
pub const PACKAGE_DIR_ENV: &str = "PI_RULES_PACKAGE_DIR";

/// The environment variable that turns confinement on (`--confine`), when it is `1`.
pub const CONFINE_ENV: &str = "PI_RULES_CONFINE";

/// The environment variable that marks a subagent, which gets no rules block.
pub const SUBAGENT_ENV: &str = "PI_SUBAGENT_CHILD";

/// How a variable is looked up: by the front end's own function, or in a map it gave.
type Lookup = dyn Fn(&str) -> Option<OsString> + Send + Sync;

/// The working directory, the environment variables and `$HOME` that the host runs with.
///
/// Variables are looked up when they are needed, through a function the front end gives
/// ([`Env::new`]), so that a command pays for no variable it does not read; or in a map
/// ([`Env::from_vars`]). Cloning is cheap.
#[derive(Clone)]
pub struct Env {
    /// The working directory, or why it could not be read.
    cwd: Result<PathBuf, Arc<str>>,
    vars: Arc<Lookup>,
}

impl Env {
    /// An `Env` on `cwd` (the process's directory, or the error reading it gave) whose
    /// variables are answered by `lookup`.
    pub fn new(
        cwd: io::Result<PathBuf>,
        lookup: impl Fn(&str) -> Option<OsString> + Send + Sync + 'static,
    ) -> Env {
        Env {
            cwd: cwd.map_err(|err| Arc::from(err.to_string())),
            vars: Arc::new(lookup),
        }
    }

    /// An `Env` on `cwd` with exactly the variables `vars`.
    pub fn from_vars<K: Into<String>, V: Into<OsString>>(
        cwd: PathBuf,
        vars: impl IntoIterator<Item = (K, V)>,
    ) -> Env {
        let map: HashMap<String, OsString> = vars
            .into_iter()
            .map(|(k, v)| (k.into(), v.into()))
            .collect();
        Env::new(Ok(cwd), move |name| map.get(name).cloned())
    }

    /// The same variables with `cwd` as the working directory.
    pub fn with_cwd(&self, cwd: PathBuf) -> Env {
        Env {
            cwd: Ok(cwd),
            vars: Arc::clone(&self.vars),
        }
    }

    /// The working directory, or, when it could not be read, the error's text.
    pub fn cwd(&self) -> Result<&Path, &str> {
        match &self.cwd {
            Ok(cwd) => Ok(cwd),
            Err(err) => Err(err),
        }
    }

    /// The variable `name`, when it is set.
    pub fn var_os(&self, name: &str) -> Option<OsString> {
        (self.vars)(name)
    }

    /// The variable `name`, when it is set and is UTF-8.
    pub fn var(&self, name: &str) -> Option<String> {
        self.var_os(name)?.into_string().ok()
    }

    /// Whether the variable `name` is set (to anything, the empty string included).
    pub fn is_set(&self, name: &str) -> bool {
        self.var_os(name).is_some()
    }

    /// Whether the variable `name` is exactly `1`, as the switches `PI_SUBAGENT_CHILD` and
    /// `PI_RULES_CONFINE` are turned on.
    pub fn is_on(&self, name: &str) -> bool {
        self.var_os(name).is_some_and(|v| v == "1")
    }

    /// `$HOME`, when it is set and not empty.
    pub fn home(&self) -> Option<PathBuf> {
        self.var_os("HOME")
            .filter(|h| !h.is_empty())
            .map(PathBuf::from)
    }

    /// Whether rules are confined to the project: `--confine` (`flag`), or
    /// `PI_RULES_CONFINE=1`. The one place that reads the switch.
    pub fn confined(&self, flag: bool) -> bool {
        flag || self.is_on(CONFINE_ENV)
    }
}

impl fmt::Debug for Env {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Env")
            .field("cwd", &self.cwd)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_only_what_it_was_given() {
        let env = Env::from_vars(
            PathBuf::from("/work"),
            [("HOME", ""), ("PI_RULES_CONFINE", "1"), ("X", "2")],
        );
        assert_eq!(env.cwd(), Ok(Path::new("/work")));
        assert_eq!(env.home(), None, "an empty HOME is no HOME");
        assert!(env.confined(false));
        assert!(!env.is_on("X"));
        assert!(env.is_set("X"));
        assert_eq!(env.var("X").as_deref(), Some("2"));
        assert_eq!(env.var("PATH"), None);
        let moved = env.with_cwd(PathBuf::from("/elsewhere"));
        assert_eq!(moved.cwd(), Ok(Path::new("/elsewhere")));
        assert_eq!(moved.var("X").as_deref(), Some("2"));
        let lost = Env::new(Err(io::Error::other("gone")), |_| None);
        assert_eq!(lost.cwd(), Err("gone"));
        assert!(!lost.confined(false));
        assert!(lost.confined(true));
    }
}
