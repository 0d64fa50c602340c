//! pcap ports: replay a capture file into the switch, and capture what the
//! switch sends to the port into a file.

use crate::port::{Port, Refused};
use click_pcap::{linktype, PcapReader, PcapWriter, WriterOptions};
use std::fs::File;
use std::io::BufWriter;
use std::os::fd::RawFd;
use std::path::Path;

/// Reads a whole capture (Ethernet frames) for replay.
pub fn read_frames(path: &Path) -> Result<Vec<Vec<u8>>, String> {
    let show = path.display();
    let mut r = PcapReader::open(path).map_err(|e| format!("{show}: {e}"))?;
    let mut out = Vec::new();
    while let Some(rec) = r.next_record().map_err(|e| format!("{show}: {e}"))? {
        let lt = rec.meta().linktype;
        if lt != linktype::EN10MB {
            return Err(format!(
                "{show}: record {} has link type {} ({}); a switch port carries Ethernet",
                out.len() + 1,
                lt,
                linktype::name(lt)
            ));
        }
        out.push(rec.data.clone());
    }
    Ok(out)
}

/// A pcap port: replays `input` (once, or `loops` times) and writes what
/// it is sent to `output`. Either may be absent.
pub struct PcapPort {
    frames: Vec<Vec<u8>>,
    next: usize,
    loops_left: u64,
    out: Option<PcapWriter<BufWriter<File>>>,
    out_name: Option<String>,
    in_name: Option<String>,
    write_errors: u64,
    written: u64,
}

impl PcapPort {
    /// `loops`: how many times to replay the input (0: forever).
    pub fn open(
        input: Option<&Path>,
        output: Option<&Path>,
        loops: u64,
    ) -> Result<PcapPort, String> {
        let frames = match input {
            Some(p) => read_frames(p)?,
            None => Vec::new(),
        };
        let out = match output {
            Some(p) => Some(
                PcapWriter::create(
                    p,
                    WriterOptions {
                        precision: click_pcap::TsPrecision::Nano,
                        ..WriterOptions::default()
                    },
                )
                .map_err(|e| format!("{}: {e}", p.display()))?,
            ),
            None => None,
        };
        Ok(PcapPort {
            frames,
            next: 0,
            loops_left: if loops == 0 { u64::MAX } else { loops },
            out,
            out_name: output.map(|p| p.display().to_string()),
            in_name: input.map(|p| p.display().to_string()),
            write_errors: 0,
            written: 0,
        })
    }

    /// A [`crate::PortSpec`]; the files are opened now, so errors show
    /// here.
    pub fn spec(
        input: Option<&Path>,
        output: Option<&Path>,
        loops: u64,
    ) -> Result<crate::PortSpec, String> {
        let p = PcapPort::open(input, output, loops)?;
        Ok(Box::new(move || Ok(Box::new(p) as Box<dyn Port>)))
    }

    fn done(&self) -> bool {
        self.frames.is_empty() || self.loops_left == 0
    }
}

impl Port for PcapPort {
    fn kind(&self) -> &'static str {
        "pcap"
    }
    fn describe(&self) -> String {
        match (&self.in_name, &self.out_name) {
            (Some(i), Some(o)) => format!("replay {i}, capture {o}"),
            (Some(i), None) => format!("replay {i}"),
            (None, Some(o)) => format!("capture {o}"),
            (None, None) => "pcap (nothing)".into(),
        }
    }
    fn recv(&mut self, max: usize, f: &mut dyn FnMut(&[u8])) -> usize {
        let mut n = 0;
        while n < max && !self.done() {
            f(&self.frames[self.next]);
            n += 1;
            self.next += 1;
            if self.next == self.frames.len() {
                self.next = 0;
                self.loops_left -= 1;
            }
        }
        n
    }
    fn queue(&mut self, frame: &[u8]) -> Result<(), Refused> {
        if let Some(w) = self.out.as_mut() {
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap_or_default();
            match w.write_packet(
                now.as_secs() as i64,
                now.subsec_nanos(),
                frame.len() as u32,
                frame,
            ) {
                Ok(()) => self.written += 1,
                Err(_) => self.write_errors += 1,
            }
        }
        Ok(())
    }
    fn flush(&mut self) -> bool {
        false
    }
    fn max_frame(&self) -> usize {
        65535
    }
    fn poll_fd(&self) -> Option<RawFd> {
        None
    }
    fn arm(&mut self) -> bool {
        self.done()
    }
    fn extra(&self) -> Vec<(String, u64)> {
        vec![
            ("captured".into(), self.written),
            ("write_errors".into(), self.write_errors),
            ("replay_left".into(), u64::from(!self.done())),
        ]
    }
    fn close(&mut self) {
        if let Some(w) = self.out.as_mut() {
            if w.flush().is_err() {
                self.write_errors += 1;
            }
        }
    }
}

impl Drop for PcapPort {
    fn drop(&mut self) {
        self.close();
    }
}
