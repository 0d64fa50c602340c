//! Seccomp filters written as tables, Firecracker-style.
//!
//! A filter is a table of [`Allow`] entries, one per allowed system call:
//! the call, the argument conditions under which it is allowed (any one
//! rule, each rule a list of conditions that must all hold; no rules = any
//! arguments), and why it is needed. Anything not in the table gets the
//! filter's mismatch action. Each filter lives in one place beside the code
//! it confines (the vCPU thread's in `clickos-vmm`, the confined process's
//! in `clickos-instance`), so a reviewer reads one table.
//!
//! Conditions compare an argument's low 32 bits (`Dword`: descriptors,
//! ioctl requests, protection flags) with a constant or with a *parameter*:
//! a value known only when the filter is built, such as a descriptor
//! number. A parameter may stand for several values (one rule each) or for
//! none, in which case rules that use it are left out, and an entry left
//! without rules is left out altogether (the call is denied, never allowed
//! with any arguments).
//!
//! ```
//! use clickos_sys::seccomp::{self, allow_call, arg_eq, arg_is, Allow, Probe};
//! static TABLE: &[Allow] = &[
//!     allow_call!(SYS_write, "our pipe only", [arg_is(0, "out")]),
//!     allow_call!(SYS_exit_group, "leaving"),
//! ];
//! let prog = seccomp::compile(TABLE, &[("out", &[7])], seccomp::Action::KillProcess).unwrap();
//! // SAFETY: the calls are raw system calls (async-signal-safe).
//! let wrote = unsafe { seccomp::probe(&prog, || { libc::write(7, std::ptr::null(), 0); }) };
//! assert_eq!(wrote, Probe::Allowed);
//! // SAFETY: as above.
//! let pid = unsafe { seccomp::probe(&prog, || { libc::getpid(); }) };
//! assert_eq!(pid, Probe::Killed(libc::SIGSYS));
//! ```

use seccompiler::{SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter, SeccompRule};
use std::collections::BTreeMap;

pub use seccompiler::{BpfProgram, SeccompAction as Action};

#[doc(hidden)]
pub use libc as __libc;

/// What an argument is compared with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Value {
    Const(u64),
    /// A named value supplied when the filter is compiled.
    Param(&'static str),
}

/// How an argument (its low 32 bits) is compared.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cmp {
    /// `arg == value`
    Eq,
    /// `arg & mask == value`
    MaskedEq(u64),
}

/// One condition on one argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cond {
    /// Argument index, 0..=5.
    pub arg: u8,
    pub cmp: Cmp,
    pub value: Value,
}

/// `arg == v`.
pub const fn arg_eq(arg: u8, v: u64) -> Cond {
    Cond {
        arg,
        cmp: Cmp::Eq,
        value: Value::Const(v),
    }
}

/// `arg ==` one of the values of parameter `param`.
pub const fn arg_is(arg: u8, param: &'static str) -> Cond {
    Cond {
        arg,
        cmp: Cmp::Eq,
        value: Value::Param(param),
    }
}

/// `arg & mask == v`; `arg_masked_eq(2, PROT_EXEC, 0)` says "without
/// PROT_EXEC".
pub const fn arg_masked_eq(arg: u8, mask: u64, v: u64) -> Cond {
    Cond {
        arg,
        cmp: Cmp::MaskedEq(mask),
        value: Value::Const(v),
    }
}

/// One allowed system call.
#[derive(Clone, Copy, Debug)]
pub struct Allow {
    /// The call's number (`libc::SYS_*`).
    pub nr: i64,
    /// Its `libc` constant's name (`SYS_read`).
    pub name: &'static str,
    /// Allowed when one of these rules holds (all of its conditions); empty
    /// = with any arguments.
    pub when: &'static [&'static [Cond]],
    /// Why the confined code needs it.
    pub why: &'static str,
}

impl Allow {
    /// The system call's name (`read`).
    pub fn syscall(&self) -> &'static str {
        self.name.strip_prefix("SYS_").unwrap_or(self.name)
    }
}

/// One table entry: `allow_call!(SYS_name, "why")` allows the call with any
/// arguments; `allow_call!(SYS_name, "why", [cond, ...], [cond, ...])` when one
/// of the bracketed rules holds.
#[macro_export]
macro_rules! allow_call {
    ($sc:ident, $why:expr $(,)?) => {
        $crate::seccomp::Allow {
            nr: $crate::seccomp::__libc::$sc,
            name: stringify!($sc),
            when: &[],
            why: $why,
        }
    };
    ($sc:ident, $why:expr, $([$($c:expr),+ $(,)?]),+ $(,)?) => {
        $crate::seccomp::Allow {
            nr: $crate::seccomp::__libc::$sc,
            name: stringify!($sc),
            when: &[$(&[$($c),+]),+],
            why: $why,
        }
    };
}
pub use allow_call;

/// Values for a table's parameters: (name, values).
pub type Params<'a> = &'a [(&'a str, &'a [u64])];

fn lookup<'a>(params: Params<'a>, name: &str) -> Result<&'a [u64], String> {
    params
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, v)| *v)
        .ok_or_else(|| format!("seccomp: no value for the filter parameter '{name}'"))
}

/// A rule's conditions with parameters replaced by values: one list per
/// combination (none when a parameter has no values).
fn expand(rule: &[Cond], params: Params<'_>) -> Result<Vec<Vec<(Cond, u64)>>, String> {
    let mut out: Vec<Vec<(Cond, u64)>> = vec![vec![]];
    for c in rule {
        let values: Vec<u64> = match c.value {
            Value::Const(v) => vec![v],
            Value::Param(p) => lookup(params, p)?.to_vec(),
        };
        out = out
            .iter()
            .flat_map(|prefix| {
                values.iter().map(move |&v| {
                    let mut r = prefix.clone();
                    r.push((*c, v));
                    r
                })
            })
            .collect();
    }
    Ok(out)
}

fn condition(c: &Cond, v: u64) -> Result<SeccompCondition, String> {
    let op = match c.cmp {
        Cmp::Eq => SeccompCmpOp::Eq,
        Cmp::MaskedEq(m) => SeccompCmpOp::MaskedEq(m),
    };
    SeccompCondition::new(c.arg, SeccompCmpArgLen::Dword, op, v)
        .map_err(|e| format!("seccomp: {e}"))
}

/// Compiles `table` for this architecture, with `params`' values, into a
/// program that allows what the table allows and takes `mismatch` for
/// everything else.
pub fn compile(
    table: &[Allow],
    params: Params<'_>,
    mismatch: Action,
) -> Result<BpfProgram, String> {
    let e = |e: seccompiler::BackendError| format!("seccomp: {e}");
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    for a in table {
        if rules.contains_key(&a.nr) {
            return Err(format!("seccomp: {} is in the table twice", a.syscall()));
        }
        if a.when.is_empty() {
            rules.insert(a.nr, vec![]);
            continue;
        }
        let mut compiled = vec![];
        for rule in a.when {
            for conds in expand(rule, params)? {
                let conds = conds
                    .iter()
                    .map(|(c, v)| condition(c, *v))
                    .collect::<Result<Vec<_>, _>>()?;
                compiled.push(SeccompRule::new(conds).map_err(e)?);
            }
        }
        // No values for its parameters: the call stays denied.
        if !compiled.is_empty() {
            rules.insert(a.nr, compiled);
        }
    }
    let arch = std::env::consts::ARCH.try_into().map_err(e)?;
    let filter = SeccompFilter::new(rules, mismatch, Action::Allow, arch).map_err(e)?;
    filter.try_into().map_err(e)
}

/// Installs `prog` on the calling thread (after `PR_SET_NO_NEW_PRIVS`).
pub fn apply(prog: &BpfProgram) -> Result<(), String> {
    seccompiler::apply_filter(prog).map_err(|e| format!("seccomp: {e}"))
}

/// How a [`probe`] ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Probe {
    /// The calls ran and the child exited normally.
    Allowed,
    /// The child was killed by this signal (`SIGSYS`: the filter said no).
    Killed(i32),
    /// The probe could not run (fork, the filter, or an odd exit).
    Failed(String),
}

/// Runs `calls` in a forked child of this process under `prog`, then
/// `_exit(0)` (so the table must allow `exit_group`), and reports how the
/// child ended. For tests of a filter: the allowed calls must leave it
/// alive, a forbidden one must kill it with `SIGSYS`.
///
/// # Safety
/// The child of a multi-threaded process may only make async-signal-safe
/// calls: `calls` must not allocate, lock or unwind (raw system calls
/// through `libc` are fine).
pub unsafe fn probe(prog: &BpfProgram, calls: impl FnOnce()) -> Probe {
    // SAFETY: the child runs only `apply` (prctl and seccomp, no
    // allocation), the caller's async-signal-safe calls and `_exit`.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Probe::Failed(format!("fork: {}", std::io::Error::last_os_error()));
    }
    if pid == 0 {
        if seccompiler::apply_filter(prog).is_err() {
            // SAFETY: leaves the child at once.
            unsafe { libc::_exit(100) };
        }
        calls();
        // SAFETY: as above.
        unsafe { libc::_exit(0) };
    }
    let mut status = 0;
    loop {
        // SAFETY: waits for our own child into a local.
        let r = unsafe { libc::waitpid(pid, &mut status, 0) };
        if r == pid {
            break;
        }
        if std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            return Probe::Failed(format!("waitpid: {}", std::io::Error::last_os_error()));
        }
    }
    if libc::WIFSIGNALED(status) {
        Probe::Killed(libc::WTERMSIG(status))
    } else if libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0 {
        Probe::Allowed
    } else if libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 100 {
        Probe::Failed("the filter could not be installed".into())
    } else {
        Probe::Failed(format!("wait status {status:#x}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    static TABLE: &[Allow] = &[
        allow_call!(SYS_write, "to the given descriptors", [arg_is(0, "fd")]),
        allow_call!(
            SYS_mmap,
            "never executable",
            [arg_masked_eq(2, libc::PROT_EXEC as u64, 0)]
        ),
        allow_call!(SYS_exit_group, "leaving"),
    ];

    fn write_to(fd: i32) {
        // SAFETY: a zero-length write; the descriptor may not exist (EBADF).
        unsafe { libc::write(fd, std::ptr::null(), 0) };
    }

    #[test]
    fn parameters_expand_to_one_rule_per_value() {
        let prog = compile(TABLE, &[("fd", &[40, 41])], Action::KillProcess).unwrap();
        // SAFETY: raw system calls only.
        unsafe {
            assert_eq!(probe(&prog, || write_to(40)), Probe::Allowed);
            assert_eq!(probe(&prog, || write_to(41)), Probe::Allowed);
            assert_eq!(probe(&prog, || write_to(42)), Probe::Killed(libc::SIGSYS));
        }
    }

    #[test]
    fn a_parameter_without_values_denies_the_call() {
        let prog = compile(TABLE, &[("fd", &[])], Action::KillProcess).unwrap();
        // SAFETY: raw system calls only.
        let r = unsafe { probe(&prog, || write_to(40)) };
        assert_eq!(r, Probe::Killed(libc::SIGSYS));
        assert!(compile(TABLE, &[], Action::KillProcess)
            .unwrap_err()
            .contains("'fd'"));
    }

    #[test]
    fn masked_conditions_forbid_a_flag() {
        let prog = compile(TABLE, &[("fd", &[])], Action::KillProcess).unwrap();
        let map = |prot: i32| {
            move || {
                // SAFETY: a fresh anonymous mapping (left to the child's exit).
                unsafe {
                    libc::mmap(
                        std::ptr::null_mut(),
                        4096,
                        prot,
                        libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                        -1,
                        0,
                    )
                };
            }
        };
        // SAFETY: raw system calls only.
        unsafe {
            assert_eq!(probe(&prog, map(libc::PROT_READ)), Probe::Allowed);
            assert_eq!(
                probe(&prog, map(libc::PROT_READ | libc::PROT_EXEC)),
                Probe::Killed(libc::SIGSYS)
            );
        }
    }

    #[test]
    fn an_entry_twice_is_refused() {
        static TWICE: &[Allow] = &[allow_call!(SYS_read, "a"), allow_call!(SYS_read, "b")];
        assert!(compile(TWICE, &[], Action::KillProcess).is_err());
    }
}
