//! InputSwitch: passes packets from one settable input.

use crate::common::handlers;
use crate::prelude::*;

/// `InputSwitch([INPUT])`.
#[derive(Default)]
pub struct InputSwitch {
    /// The input whose packets pass (-1: none).
    input: i64,
}

pub static SPEC: ClassSpec = ClassSpec {
    name: "InputSwitch",
    port_count: "-/1",
    processing: "h/h",
    group: "standard",
    signature: "InputSwitch([INPUT])",
    summary: "Accepts packets from a settable input.",
    description: "Pushes packets arriving on input INPUT (default 0) out its output and drops \
packets arriving on any other input. The `switch` handler changes the input at run time; an \
input number that names no input drops everything.",
    ports: "one or more push inputs, one push output",
    handlers: &[HandlerDoc {
        name: "switch",
        mode: HandlerMode::ReadWrite,
        text: "The current input (-1: none).",
    }],
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(InputSwitch::default()),
};

impl Element for InputSwitch {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        let mut a = cx.args(config);
        let input = a.read_p::<i32>("INPUT")?.unwrap_or(0);
        a.complete()?;
        if input >= 0 && input as usize >= cx.ninputs {
            return Err(alloc::format!("input must be < {}", cx.ninputs));
        }
        self.input = i64::from(input);
        Ok(())
    }

    #[inline]
    fn push(&mut self, port: usize, p: Packet, cx: &Ctx) {
        if self.input >= 0 && port == self.input as usize {
            cx.push(0, p);
        }
    }

    fn read_handler(&mut self, name: &str, _cx: &Ctx) -> Option<HandlerResult<String>> {
        (name == "switch").then(|| Ok(self.input.to_string()))
    }

    fn write_handler(&mut self, name: &str, value: &str, cx: &Ctx) -> Option<HandlerResult<()>> {
        (name == "switch").then(|| match handlers::parse_int(value) {
            Some(k) => {
                self.input = if k >= 0 && (k as usize) < cx.ninputs() {
                    k
                } else {
                    -1
                };
                Ok(())
            }
            None => Err(String::from("InputSwitch input must be integer")),
        })
    }

    fn current_config(&self) -> Option<String> {
        Some(self.input.to_string())
    }

    crate::element_any!();
}
