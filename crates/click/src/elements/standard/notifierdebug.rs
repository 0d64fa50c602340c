//! NotifierDebug: passes packets through and shows the notifier signal
//! its input sees.

use crate::prelude::*;

#[derive(Default)]
pub struct NotifierDebug;

pub static SPEC: ClassSpec = ClassSpec {
    name: "NotifierDebug",
    port_count: "1/1",
    processing: "a/a",
    group: "test",
    signature: "NotifierDebug",
    summary: "Shows the notifier signal at its input.",
    description: "Passes packets through unchanged. Its `signal` handler shows the notifier \
signal that applies where it sits: on a push path, the full notifiers downstream of its output \
(the queues it pushes into, active while one has room); on a pull path, the empty notifiers \
upstream of its input (the queues and sources it pulls from, active while one may have \
packets). The signal is printed as Click's NotifierSignal prints it: `busy*` when some path \
does not end at a notifier (a packet can always move), otherwise, for each group of 32 signals \
of a kind (numbered in the order the elements created them, empty and full apart), \
`KIND.WORD/MASK:VALUE`, MASK the group's signals found (in hex) and VALUE those active, with \
`*` after an active group; groups joined by `+`. For example `empty.0/1:1*` is one empty \
notifier, active. Looking does not subscribe to the signals.",
    ports: "one input, one output",
    handlers: &[HandlerDoc {
        name: "signal",
        mode: HandlerMode::Read,
        text: "The signal, as described above.",
    }],
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(NotifierDebug),
};

impl Element for NotifierDebug {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        cx.args(config).complete()
    }

    fn simple_action(&mut self, p: Packet, _cx: &Ctx) -> Option<Packet> {
        Some(p)
    }

    fn read_handler(&mut self, name: &str, cx: &Ctx) -> Option<HandlerResult<String>> {
        if name != "signal" {
            return None;
        }
        // found when asked: the notifiers are made at initialization, some
        // after this element's
        let sig = if cx.input_is_pull(0) {
            cx.upstream_signal_passive(0)
        } else {
            cx.downstream_signal_passive(0)
        };
        Some(Ok(cx.unparse_signal(&sig)))
    }

    crate::element_any!();
}
