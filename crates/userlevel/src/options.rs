//! The options a configuration runs with: Click's driver options as a
//! value, for the command line and for any other caller of
//! [`crate::driver::run`].

use click::prelude::*;

/// How to run a configuration: Click's driver options (`click --help`),
/// without the choice of file, which is the caller's. [`Options::default`]
/// is `click` with no options: warnings on, one thread.
#[derive(Debug, Clone)]
pub struct Options {
    /// `-o FILE`: write the flat configuration to FILE (`-`: standard
    /// output).
    pub output_file: Option<String>,
    /// `-q`: do not run the router (after `-o`).
    pub quit: bool,
    /// `-t`: print the time the run took.
    pub report_time: bool,
    /// Print warnings (`-w` turns them off).
    pub warnings: bool,
    /// `-h ELEMENT.H`: read handlers printed after the run.
    pub handlers: Vec<String>,
    /// `-x ELEMENT.H`: the handler whose value is the exit status.
    pub exit_handler: Option<String>,
    /// `NAME=VALUE`: configuration parameters (`$NAME`).
    pub defines: Vec<(String, String)>,
    /// `Some(start)` under `--simtime`; `Some(None)` start = 1000000000 s, as
    /// in Click.
    pub simtime: Option<Option<Timestamp>>,
    /// `-p PORT`: TCP ControlSockets to add.
    pub ports: Vec<String>,
    /// `-u FILE`: UNIX-domain ControlSockets to add.
    pub unix_sockets: Vec<String>,
    /// `-j N`: threads (1 unless given).
    pub threads: usize,
    /// `-a`: pin each thread to a CPU.
    pub affinity: bool,
    /// `--replicate`: one whole copy of the configuration per thread.
    pub replicate: bool,
    /// `-R`: the `hotconfig` handler replaces the running configuration.
    pub reconfigure: bool,
    /// `--allow-socket-reconfigure`: the `-u` ControlSockets take
    /// `RECONFIGURE true`, so that clients of this user (or root) may
    /// write `hotconfig` over them. Needs `reconfigure` and a `-u`.
    pub socket_reconfigure: bool,
    /// `--poll`: poll network devices without ever sleeping, at idle CPU
    /// priority (see [`crate::driver::enter_poll_mode`]).
    pub poll: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            output_file: None,
            quit: false,
            report_time: false,
            warnings: true,
            handlers: Vec::new(),
            exit_handler: None,
            defines: Vec::new(),
            simtime: None,
            ports: Vec::new(),
            unix_sockets: Vec::new(),
            threads: 1,
            affinity: false,
            replicate: false,
            reconfigure: false,
            socket_reconfigure: false,
            poll: false,
        }
    }
}

impl Options {
    /// What makes these options unusable together, as Click's driver says
    /// it (empty when they are fine).
    pub fn problems(&self) -> Vec<String> {
        let mut errors = Vec::new();
        if !(1..=1024).contains(&self.threads) {
            errors.push(format!(
                "expected a number of threads between 1 and 1024, not '{}'",
                self.threads
            ));
        }
        if self.reconfigure && self.threads > 1 {
            errors.push("-R (hot reconfiguration) works with one thread only, not with -j".into());
        }
        if self.socket_reconfigure && !self.reconfigure {
            errors.push(
                "--allow-socket-reconfigure needs -R (there is no 'hotconfig' handler without it)"
                    .into(),
            );
        }
        if self.socket_reconfigure && self.unix_sockets.is_empty() {
            errors.push(
                "--allow-socket-reconfigure needs -u FILE (reconfiguration is allowed over UNIX sockets only)"
                    .into(),
            );
        }
        if self.replicate && self.threads < 2 {
            errors.push("--replicate needs -j N with N of 2 or more".into());
        }
        errors
    }
}
