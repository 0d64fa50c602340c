//! Where a router's text goes: the [`Console`] trait a host implements
//! (standard error and output, and the files, signals and process id a
//! Script may ask for), and [`BufferConsole`], which keeps the text in
//! memory for tests and the guest.

use alloc::string::String;
use core::cell::RefCell;

/// Where a router's text output goes (Print, handler dumps, ...).
pub trait Console {
    /// One line (or several) for standard error; no trailing newline.
    fn error_line(&self, line: &str);
    /// Bytes for standard output.
    fn stdout(&self, text: &str);
    /// Writes `text` to the file `path` (truncating it first unless
    /// `append`), for Script's `print >FILE`. Consoles without files
    /// refuse.
    fn write_file(&self, _path: &str, _append: bool, _text: &str) -> Result<(), String> {
        Err(String::from("file redirection not supported here"))
    }
    /// Writes raw bytes to the file `path` (AggregateCounter's binary
    /// `write_file`). The default writes text through
    /// [`Console::write_file`] and refuses bytes that are not UTF-8.
    fn write_file_bytes(&self, path: &str, append: bool, bytes: &[u8]) -> Result<(), String> {
        match core::str::from_utf8(bytes) {
            Ok(t) => self.write_file(path, append, t),
            Err(_) => Err(String::from("binary files not supported here")),
        }
    }
    /// Raw bytes for standard output; the default passes them through
    /// [`Console::stdout`] as (lossy) text.
    fn stdout_bytes(&self, bytes: &[u8]) {
        self.stdout(&String::from_utf8_lossy(bytes));
    }
    /// Reads the file `path` (Script's `$(cat FILE)`); a file longer than
    /// `max` bytes (or one that never ends, such as `/dev/zero`) is an
    /// error, found without reading more than `max + 1` bytes. Consoles
    /// without files refuse.
    fn read_file(&self, _path: &str, _max: usize) -> Result<String, String> {
        Err(String::from("files not supported here"))
    }
    /// Asks the host to catch signal `signo` and hand it to the router
    /// ([`Router::deliver_signal`](super::Router::deliver_signal)); false
    /// where there are no signals (Script's `TYPE SIGNAL`).
    fn catch_signal(&self, _signo: i32) -> bool {
        false
    }
    /// Sends signal `signo` to process `pid` (Script's `$(kill ...)`).
    fn kill(&self, _signo: i32, _pid: i64) -> Result<(), String> {
        Err(String::from("signals not supported here"))
    }
    /// This process's id (Script's `$$`), where there is one.
    fn pid(&self) -> Option<u32> {
        None
    }
}

impl<C: Console + ?Sized> Console for alloc::rc::Rc<C> {
    fn error_line(&self, line: &str) {
        (**self).error_line(line)
    }
    fn stdout(&self, text: &str) {
        (**self).stdout(text)
    }
    fn write_file(&self, path: &str, append: bool, text: &str) -> Result<(), String> {
        (**self).write_file(path, append, text)
    }
    fn write_file_bytes(&self, path: &str, append: bool, bytes: &[u8]) -> Result<(), String> {
        (**self).write_file_bytes(path, append, bytes)
    }
    fn stdout_bytes(&self, bytes: &[u8]) {
        (**self).stdout_bytes(bytes)
    }
    fn read_file(&self, path: &str, max: usize) -> Result<String, String> {
        (**self).read_file(path, max)
    }
    fn catch_signal(&self, signo: i32) -> bool {
        (**self).catch_signal(signo)
    }
    fn kill(&self, signo: i32, pid: i64) -> Result<(), String> {
        (**self).kill(signo, pid)
    }
    fn pid(&self) -> Option<u32> {
        (**self).pid()
    }
}

/// A console that collects output in memory (tests, the guest).
#[derive(Default)]
pub struct BufferConsole {
    pub err: RefCell<String>,
    pub out: RefCell<String>,
}

impl Console for BufferConsole {
    fn error_line(&self, line: &str) {
        let mut e = self.err.borrow_mut();
        e.push_str(line);
        e.push('\n');
    }
    fn stdout(&self, text: &str) {
        self.out.borrow_mut().push_str(text);
    }
}
