//! ToDevice (user level): sends frames out a Linux network interface
//! through AF_XDP or an AF_PACKET TX ring.

use click::element_any;
use click::prelude::*;
use clickos_netdev::{err_text, DevInfo, Method, Tx, TxConfig, TxError};

pub static SPEC: ClassSpec = ClassSpec {
    name: "ToDevice",
    port_count: "1/0-2",
    processing: "l/h",
    group: "userlevel",
    signature: "ToDevice(DEVNAME [, KEYWORDS])",
    summary: "Sends packets to a network device (user level).",
    description: "Pulls packets and sends them out the Linux network interface DEVNAME. \
Packets should already carry their link-level header (ARP and the like done). Each task \
run pulls up to BURST packets, copies them into the transmit ring and hands the whole batch \
to the kernel with one system call. ToDevice sleeps while the notifiers upstream (a Queue's) \
say there is nothing to pull, and while the transmit ring is full it waits for the kernel \
(the driver's poll loop for POLLOUT with AF_PACKET, a short timer for AF_XDP completions) \
holding the packet it could not send, as Click's ToDevice does.\n\n\
Methods, chosen by METHOD: **AF_XDP** (an AF_XDP socket's TX ring; a FromDevice on the same \
interface and queue in the same router copy shares the socket) and **AF_PACKET** (a \
TPACKET_V2 TX ring with PACKET_QDISC_BYPASS: frames go straight to the driver). `METHOD AUTO` \
(the default) tries AF_XDP and falls back to AF_PACKET with a one-line note on standard error \
saying why. The `method` handler tells which is in use. Under `clickos run -j N` each router \
copy has its own socket (AF_XDP: queue QUEUE+k of the device, or AF_PACKET when it has fewer \
queues).\n\n\
Packets sent are pushed out output 0 if it exists; packets that cannot be sent (shorter than \
14 bytes, longer than the device's MTU plus link header, or refused by the kernel) out \
output 1 if it exists, and are counted in `drops`.\n\n\
Keyword arguments:\n\n\
- `BURST` (integer): most packets pulled per task run. Default 32 (Click: 1).\n\
- `METHOD` (word): `AUTO` (default), `XDP` (or `AF_XDP`), `PACKET` (or `AF_PACKET`, and \
Click's `LINUX` and `PCAP`, which mean AF_PACKET here).\n\
- `QUEUE` (unsigned): AF_XDP queue (copy k of `-j N` uses QUEUE+k). Default 0.\n\
- `DEBUG` (boolean): report send errors on standard error. Default false.\n\
- `SET_ERROR_ANNO`, `IGNORE_QUEUE_OVERFLOWS` (boolean): accepted for compatibility with \
older Clicks and ignored.",
    ports: "one pull input; optional push output 0 (packets sent) and 1 (packets not sent)",
    handlers: &[
        HandlerDoc {
            name: "count",
            mode: HandlerMode::Read,
            text: "Packets handed to the device.",
        },
        HandlerDoc {
            name: "drops",
            mode: HandlerMode::Read,
            text: "Packets that could not be sent.",
        },
        HandlerDoc {
            name: "method",
            mode: HandlerMode::Read,
            text: "`AF_XDP` or `AF_PACKET`: the method in use.",
        },
        HandlerDoc {
            name: "pulls",
            mode: HandlerMode::Read,
            text: "Pulls from the input (including empty ones).",
        },
        HandlerDoc {
            name: "signal",
            mode: HandlerMode::Read,
            text: "Whether the upstream notifiers say packets may be available.",
        },
        HandlerDoc {
            name: "q",
            mode: HandlerMode::Read,
            text: "1 while a packet waits for room in the transmit ring, else 0.",
        },
        HandlerDoc {
            name: "debug",
            mode: HandlerMode::ReadWrite,
            text: "The DEBUG value.",
        },
        HandlerDoc {
            name: "reset_counts",
            mode: HandlerMode::Write,
            text: "Resets `count`, `drops` and `pulls` to zero.",
        },
    ],
    live_reconfigure: false,
    order_sensitive: false,
    make: || Box::new(ToDevice::default()),
};

pub struct ToDevice {
    ifname: String,
    burst: usize,
    method: Method,
    queue: u32,
    debug: bool,
    tx: Option<Tx>,
    dev: Option<DevInfo>,
    signal: Option<UpstreamSignal>,
    q: Option<Packet>,
    count: u64,
    drops: u64,
    pulls: u64,
    me: usize,
    has_selector: bool,
    polling_out: bool,
    reported: u32,
}

impl Default for ToDevice {
    fn default() -> Self {
        ToDevice {
            ifname: String::new(),
            burst: 32,
            method: Method::Auto,
            queue: 0,
            debug: false,
            tx: None,
            dev: None,
            signal: None,
            q: None,
            count: 0,
            drops: 0,
            pulls: 0,
            me: 0,
            has_selector: false,
            polling_out: false,
            reported: 0,
        }
    }
}

const TIMER_COMPLETIONS: u32 = 0;
/// How long to wait for AF_XDP completions when out of TX frames.
const COMPLETION_WAIT_NS: i64 = 20_000;

use crate::selector::selector;

impl ToDevice {
    fn send_error(&mut self, cx: &Ctx, e: &std::io::Error) {
        if self.debug || self.reported == 0 {
            cx.error_line(&format!("{}: send: {}", cx.declaration(), err_text(e)));
        }
        self.reported += 1;
    }
}

impl Element for ToDevice {
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String> {
        let mut a = cx.args(config);
        let ifname = a.read_mp::<String>("DEVNAME")?;
        let burst = a.read::<i32>("BURST")?.unwrap_or(32);
        let method = a.read::<String>("METHOD")?;
        let queue = a.read::<u32>("QUEUE")?.unwrap_or(0);
        let debug = a.read::<bool>("DEBUG")?.unwrap_or(false);
        let _ = a.read::<bool>("SET_ERROR_ANNO")?;
        let _ = a.read::<bool>("IGNORE_QUEUE_OVERFLOWS")?;
        a.complete()?;
        if burst <= 0 {
            return Err("bad BURST".into());
        }
        let method = match method {
            None => Method::Auto,
            Some(m) => Method::parse(&m).ok_or("bad METHOD")?,
        };
        self.ifname = ifname;
        self.burst = burst as usize;
        self.method = method;
        self.queue = queue;
        self.debug = debug;
        Ok(())
    }

    fn initialize(&mut self, cx: &Ctx) -> Result<(), String> {
        if self.ifname.is_empty() {
            return Err("interface not set".into());
        }
        let dev = DevInfo::lookup(&self.ifname)?;
        let decl = cx.declaration();
        let cfg = TxConfig {
            method: self.method,
            queue: self.queue,
            copy: cx.copy() as u32,
            copies: cx.ncopies() as u32,
        };
        let tx = Tx::open(&dev, &cfg, &mut |m| cx.error_line(&format!("{decl}: {m}")))?;
        self.tx = Some(tx);
        self.dev = Some(dev);
        self.me = cx.index();
        self.has_selector = selector(cx).is_some();
        cx.schedule_task();
        Ok(())
    }

    fn run_task(&mut self, cx: &Ctx) -> bool {
        if self.signal.is_none() {
            self.signal = Some(cx.upstream_signal(0));
        }
        if self.polling_out {
            if let Some(sel) = selector(cx) {
                sel.set(self.me, &[]);
            }
            self.polling_out = false;
        }
        let mut sent = 0usize;
        let mut full = false;
        while sent < self.burst {
            let p = match self.q.take() {
                Some(p) => p,
                None => {
                    self.pulls += 1;
                    match cx.pull(0) {
                        Some(p) => p,
                        None => break,
                    }
                }
            };
            let r = match &mut self.tx {
                Some(tx) => tx.queue(p.data()),
                None => Err(TxError::BadLength),
            };
            match r {
                Ok(()) => {
                    sent += 1;
                    self.count += 1;
                    if cx.noutputs() > 0 {
                        cx.push(0, p);
                    }
                }
                Err(TxError::Full) => {
                    self.q = Some(p);
                    full = true;
                    break;
                }
                Err(TxError::BadLength) => {
                    self.drops += 1;
                    if cx.noutputs() > 1 {
                        cx.push(1, p);
                    }
                }
            }
        }
        // one kick for the batch
        let (r, unsent) = match &mut self.tx {
            Some(tx) => {
                let r = tx.flush();
                (r, tx.unsent())
            }
            None => (Ok(()), 0),
        };
        if let Err(e) = r {
            self.send_error(cx, &e);
        }
        if full {
            match &self.tx {
                Some(tx) if tx.method() == Method::Packet && self.has_selector && unsent == 0 => {
                    if let Some(sel) = selector(cx) {
                        sel.set(self.me, &[(tx.fd(), libc::POLLOUT)]);
                        self.polling_out = true;
                    }
                    return false;
                }
                Some(tx) if tx.method() == Method::Xdp && unsent == 0 => {
                    // out of frames until the kernel completes some
                    cx.schedule_timer_after(TIMER_COMPLETIONS, COMPLETION_WAIT_NS);
                    return false;
                }
                _ => return true,
            }
        }
        if unsent > 0 || sent >= self.burst {
            return true;
        }
        match &self.signal {
            Some(s) => cx.signal_active(s),
            None => true,
        }
    }

    fn run_timer(&mut self, _id: u32, cx: &Ctx) {
        cx.schedule_task();
    }

    fn read_handler(&mut self, name: &str, cx: &Ctx) -> Option<HandlerResult<String>> {
        Some(Ok(match name {
            "count" => self.count.to_string(),
            "drops" => self.drops.to_string(),
            "pulls" => self.pulls.to_string(),
            "method" => self
                .tx
                .as_ref()
                .map_or("", |tx| tx.method().name())
                .to_string(),
            "signal" => self
                .signal
                .as_ref()
                .is_none_or(|s| cx.signal_active(s))
                .to_string(),
            "q" => if self.q.is_some() { "1" } else { "0" }.into(),
            "debug" => self.debug.to_string(),
            _ => return None,
        }))
    }

    fn write_handler(&mut self, name: &str, value: &str, _cx: &Ctx) -> Option<HandlerResult<()>> {
        match name {
            "reset_counts" => {
                self.count = 0;
                self.drops = 0;
                self.pulls = 0;
                Some(Ok(()))
            }
            "debug" => Some(
                click_lang::parse_bool(value.trim())
                    .map(|v| self.debug = v)
                    .map_err(|_| "syntax error".to_string()),
            ),
            _ => None,
        }
    }

    fn cleanup(&mut self, cx: &Ctx) {
        if let Some(sel) = selector(cx) {
            sel.set(self.me, &[]);
        }
        if let Some(tx) = self.tx.as_mut().filter(|tx| tx.method() == Method::Packet) {
            let _ = tx.flush();
        }
        self.q = None;
        self.tx = None;
    }

    element_any!();
}
