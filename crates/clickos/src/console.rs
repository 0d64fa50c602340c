//! The process console: standard error line by line (flushed per line),
//! standard output buffered and flushed at exit. Clones share one buffer,
//! so the routers of several threads never split each other's lines.

use click::router::Console;
use std::io::{BufWriter, Stdout, Write};
use std::sync::{Arc, Mutex};

/// A [`Console`] on the process's standard streams.
#[derive(Clone)]
pub struct StdConsole {
    out: Arc<Mutex<BufWriter<Stdout>>>,
}

impl Default for StdConsole {
    fn default() -> Self {
        StdConsole {
            out: Arc::new(Mutex::new(BufWriter::with_capacity(
                1 << 16,
                std::io::stdout(),
            ))),
        }
    }
}

impl StdConsole {
    /// Flushes buffered standard output.
    pub fn flush(&self) {
        if let Ok(mut o) = self.out.lock() {
            let _ = o.flush();
        }
    }

    /// Writes raw bytes to standard output (through the same buffer).
    pub fn write_bytes(&self, b: &[u8]) {
        if let Ok(mut o) = self.out.lock() {
            let _ = o.write_all(b);
        }
    }
}

impl Console for StdConsole {
    fn error_line(&self, line: &str) {
        // Keep stdout and stderr in order when both go to one terminal.
        let o = self.out.lock();
        if let Ok(mut o) = o {
            let _ = o.flush();
        }
        let mut e = std::io::stderr().lock();
        let _ = e.write_all(line.as_bytes());
        let _ = e.write_all(b"\n");
        let _ = e.flush();
    }

    fn stdout(&self, text: &str) {
        self.write_bytes(text.as_bytes());
    }

    fn write_file(&self, path: &str, append: bool, text: &str) -> Result<(), String> {
        let mut o = std::fs::OpenOptions::new();
        o.write(true).create(true);
        if append {
            o.append(true);
        } else {
            o.truncate(true);
        }
        o.open(path)
            .and_then(|mut f| f.write_all(text.as_bytes()))
            .map_err(|e| format!("{}: {}", path, crate::elements::io_error_text(&e)))
    }

    fn read_file(&self, path: &str) -> Result<String, String> {
        std::fs::read(path)
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .map_err(|e| format!("{}: {}", path, crate::elements::io_error_text(&e)))
    }
}
