//! Suppressor: passes packets port to port, except on suppressed ports.

use crate::common::handlers;
use crate::prelude::*;
use alloc::format;

/// `Suppressor`.
#[derive(Default)]
pub struct Suppressor {
    suppressed: Vec<bool>,
}

pub static SPEC: ClassSpec = ClassSpec {
    name: "Suppressor",
    port_count: "-/=",
    processing: "a/a",
    group: "standard",
    signature: "Suppressor",
    summary: "Passes packets unchanged, optionally dropping some input ports.",
    description: "Has N inputs and N outputs and passes packets from input i to output i \
unchanged. Any port can be suppressed: packets arriving on a suppressed push input are dropped, \
and pulls on a suppressed pull output return nothing. Every port starts out active.\n\n\
Besides the handlers below, each port i has a read/write handler `activei` (`active0`, \
`active1`, ...): whether port i is active, that is, not suppressed.",
    ports: "zero or more inputs, as many outputs",
    handlers: &[
        HandlerDoc {
            name: "reset",
            mode: HandlerMode::Write,
            text: "Makes every port active.",
        },
        HandlerDoc {
            name: "suppress",
            mode: HandlerMode::Write,
            text: "Suppresses the port whose number is written (Click's `suppress` method).",
        },
        HandlerDoc {
            name: "allow",
            mode: HandlerMode::Write,
            text: "Makes the port whose number is written active (Click's `allow` method).",
        },
    ],
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(Suppressor::default()),
};

impl Suppressor {
    /// Whether port `i` is suppressed.
    pub fn is_suppressed(&self, i: usize) -> bool {
        self.suppressed.get(i).copied().unwrap_or(false)
    }

    fn port_arg(&self, value: &str) -> Result<usize, String> {
        match handlers::parse_int(value) {
            Some(i) if i >= 0 && (i as usize) < self.suppressed.len() => Ok(i as usize),
            Some(_) => Err("port out of range".into()),
            None => Err("expected port number".into()),
        }
    }
}

fn active_port(name: &str) -> Option<usize> {
    let d = name.strip_prefix("active")?;
    if d.is_empty() || !d.bytes().all(|b| b.is_ascii_digit()) || (d.len() > 1 && d.starts_with('0'))
    {
        return None;
    }
    d.parse().ok()
}

impl Element for Suppressor {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        cx.args(config).complete()?;
        self.suppressed = alloc::vec![false; cx.noutputs];
        Ok(())
    }

    #[inline]
    fn push(&mut self, port: usize, p: Packet, cx: &Ctx) {
        if !self.is_suppressed(port) {
            cx.push(port, p);
        }
    }

    #[inline]
    fn pull(&mut self, port: usize, cx: &Ctx) -> Option<Packet> {
        if self.is_suppressed(port) {
            None
        } else {
            cx.pull(port)
        }
    }

    fn instance_handlers(&self) -> Vec<(String, HandlerMode)> {
        (0..self.suppressed.len())
            .map(|i| (format!("active{}", i), HandlerMode::ReadWrite))
            .collect()
    }

    fn read_handler(&mut self, name: &str, _cx: &Ctx) -> Option<HandlerResult<String>> {
        let i = active_port(name).filter(|&i| i < self.suppressed.len())?;
        Some(Ok((!self.suppressed[i]).to_string()))
    }

    fn write_handler(&mut self, name: &str, value: &str, _cx: &Ctx) -> Option<HandlerResult<()>> {
        Some(match name {
            "reset" => {
                self.suppressed.iter_mut().for_each(|s| *s = false);
                Ok(())
            }
            "suppress" => self.port_arg(value).map(|i| self.suppressed[i] = true),
            "allow" => self.port_arg(value).map(|i| self.suppressed[i] = false),
            _ => {
                let i = active_port(name).filter(|&i| i < self.suppressed.len())?;
                match handlers::parse_bool(value) {
                    Some(a) => {
                        self.suppressed[i] = !a;
                        Ok(())
                    }
                    None => Err("type mismatch".into()),
                }
            }
        })
    }

    crate::element_any!();
}
