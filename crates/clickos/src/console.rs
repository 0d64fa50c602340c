//! The process console: standard error line by line (flushed per line),
//! standard output buffered and flushed at exit.

use click::router::Console;
use std::cell::RefCell;
use std::io::{BufWriter, Stdout, Write};

/// A [`Console`] on the process's standard streams.
pub struct StdConsole {
    out: RefCell<BufWriter<Stdout>>,
}

impl Default for StdConsole {
    fn default() -> Self {
        StdConsole {
            out: RefCell::new(BufWriter::with_capacity(1 << 16, std::io::stdout())),
        }
    }
}

impl StdConsole {
    /// Flushes buffered standard output.
    pub fn flush(&self) {
        if let Ok(mut o) = self.out.try_borrow_mut() {
            let _ = o.flush();
        }
    }

    /// Writes raw bytes to standard output (through the same buffer).
    pub fn write_bytes(&self, b: &[u8]) {
        if let Ok(mut o) = self.out.try_borrow_mut() {
            let _ = o.write_all(b);
        }
    }
}

impl Console for StdConsole {
    fn error_line(&self, line: &str) {
        // Keep stdout and stderr in order when both go to one terminal.
        self.flush();
        let mut e = std::io::stderr().lock();
        let _ = e.write_all(line.as_bytes());
        let _ = e.write_all(b"\n");
        let _ = e.flush();
    }

    fn stdout(&self, text: &str) {
        self.write_bytes(text.as_bytes());
    }
}
