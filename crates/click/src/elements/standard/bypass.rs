//! Bypass: an optional path that packets take while it is active.

use crate::prelude::*;

/// `Bypass([ACTIVE, INLINE])`.
#[derive(Default)]
pub struct Bypass {
    active: bool,
    ninputs: usize,
    noutputs: usize,
}

pub static SPEC: ClassSpec = ClassSpec {
    name: "Bypass",
    port_count: "1-2/1-2",
    processing: "a/a",
    group: "standard",
    signature: "Bypass([ACTIVE, KEYWORDS])",
    summary: "Sends packet stream through optional bypass.",
    description: "Normally a Bypass passes packets from input 0 to output 0, like Null. While \
ACTIVE (boolean, default false) is true, a push Bypass emits packets from input 0 on output 1, \
and a pull Bypass answers pulls on output 0 from input 1. A second push input (pull output) \
rejoins the bypass path to the normal one: push input 1 goes to output 0, pulls on output 1 \
come from input 0. So `b :: Bypass; b[1] -> Print -> [1]b;` puts a Print in the path while \
`b.active` is true.\n\n\
Keyword arguments:\n\n\
- `INLINE` (boolean): accepted for compatibility. Click rewires its neighbours so an inactive \
Bypass costs nothing unless INLINE is true; here Bypass always stays in the path (one \
indirect call per batch) in push context; in pull context the router answers pulls through it \
without calling it, so a pull bypass path may loop back into the same Bypass.",
    ports: "one or two inputs, one or two outputs",
    handlers: &[HandlerDoc {
        name: "active",
        mode: HandlerMode::ReadWrite,
        text: "Whether packets take the bypass path (boolean).",
    }],
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(Bypass::default()),
};

impl Bypass {
    /// In pull context the router answers pulls on our outputs from the
    /// right input without calling us (as Click rewires the neighbours),
    /// so a bypass path can loop back through this element.
    fn route(&self, cx: &Ctx) {
        if self.noutputs == 0 || cx.output_is_push(0) {
            return;
        }
        cx.set_pull_route(0, Some(usize::from(self.active && self.ninputs > 1)));
        if self.noutputs > 1 {
            cx.set_pull_route(1, Some(0));
        }
    }

    /// Where input `port`'s packets go (push).
    #[inline]
    fn out_for(&self, port: usize) -> usize {
        usize::from(self.active && port == 0 && self.noutputs > 1)
    }
}

impl Element for Bypass {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        let mut a = cx.args(config);
        self.active = a.read_p::<bool>("ACTIVE")?.unwrap_or(false);
        // INLINE changes nothing here: Bypass always stays in the path
        let _inline = a.read::<bool>("INLINE")?;
        a.complete()?;
        self.ninputs = cx.ninputs;
        self.noutputs = cx.noutputs;
        Ok(())
    }

    fn initialize(&mut self, cx: &Ctx) -> Result<(), String> {
        self.route(cx);
        Ok(())
    }

    #[inline]
    fn push(&mut self, port: usize, p: Packet, cx: &Ctx) {
        cx.push(self.out_for(port), p);
    }

    #[inline]
    fn push_batch(&mut self, port: usize, b: Batch, cx: &Ctx) {
        cx.push_batch(self.out_for(port), b);
    }

    #[inline]
    fn pull(&mut self, port: usize, cx: &Ctx) -> Option<Packet> {
        cx.pull(usize::from(self.active && port == 0 && self.ninputs > 1))
    }

    fn read_handler(&mut self, name: &str, _cx: &Ctx) -> Option<HandlerResult<String>> {
        (name == "active").then(|| Ok(self.active.to_string()))
    }

    fn write_handler(&mut self, name: &str, value: &str, cx: &Ctx) -> Option<HandlerResult<()>> {
        (name == "active").then(|| {
            click_lang::args::parse_bool(value.trim())
                .map(|b| {
                    self.active = b;
                    self.route(cx);
                })
                .map_err(|_| "syntax error".into())
        })
    }

    crate::element_any!();
}
