//! The element model: what an element class declares (ports, processing,
//! documentation, handlers) and the trait its instances implement.
//!
//! This is one half of the element API. The other half is the context
//! every [`Element`] method receives, [`Ctx`] (in `src/router/ctx.rs`):
//! what an element sees of the router while it runs — its ports,
//! [`Ctx::push`] and [`Ctx::pull`], its task and timers, notifiers,
//! handler calls on other elements, the console — and
//! [`Emitter`](crate::router::Emitter), which batches a source's packets.
//! An element file needs these two and [`crate::packet`]; `use
//! crate::prelude::*` brings them all. `docs/WRITING-ELEMENTS.md` walks
//! through writing one.

use crate::packet::Packet;
use crate::router::Ctx;
use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec::Vec;
use click_lang::args::{ArgContext, Args};
use click_lang::NameTable;
use core::any::Any;
use core::cell::RefCell;

/// How a handler may be used.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum HandlerMode {
    Read,
    Write,
    ReadWrite,
}

impl HandlerMode {
    pub fn readable(self) -> bool {
        !matches!(self, HandlerMode::Write)
    }
    pub fn writable(self) -> bool {
        !matches!(self, HandlerMode::Read)
    }
    /// Click's notation in the `handlers` handler: `r`, `w` or `rw`.
    pub fn flags(self) -> &'static str {
        match self {
            HandlerMode::Read => "r",
            HandlerMode::Write => "w",
            HandlerMode::ReadWrite => "rw",
        }
    }
    /// Click's documentation notation.
    pub fn doc_name(self) -> &'static str {
        match self {
            HandlerMode::Read => "read-only",
            HandlerMode::Write => "write-only",
            HandlerMode::ReadWrite => "read/write",
        }
    }
}

/// Documentation of one handler.
#[derive(Debug)]
pub struct HandlerDoc {
    pub name: &'static str,
    pub mode: HandlerMode,
    pub text: &'static str,
}

/// What an [`Element::llrpc`] call knows of the called element's place in
/// the router.
#[derive(Clone, Copy, Debug)]
pub struct LlrpcCtx {
    /// The element's number of outputs.
    pub noutputs: usize,
}

/// Everything an element class declares about itself. One static value per
/// class; the element reference (`clickos elements`, `docs/elements.md`) is
/// generated from these.
#[derive(Debug)]
pub struct ClassSpec {
    /// Class name as written in configurations.
    pub name: &'static str,
    /// Click's port-count code: `"1/1"`, `"1/-"`, `"0/1"`, `"-/-"`,
    /// `"1-2/1"`, `"1/="` (as many outputs as inputs), ...
    pub port_count: &'static str,
    /// Click's processing code: `"a/a"`, `"h/h"`, `"h/l"`, `"l/h"`,
    /// `"a/ah"` (per port; the last letter repeats).
    pub processing: &'static str,
    /// Group, as Click groups elements (`standard`, `ip`, `ethernet`, ...).
    pub group: &'static str,
    /// Signature, e.g. `Counter([KEYWORDS])`.
    pub signature: &'static str,
    /// One-line summary.
    pub summary: &'static str,
    /// Longer description: behaviour and keywords.
    pub description: &'static str,
    /// Ports in words.
    pub ports: &'static str,
    /// The class's own handlers (the standard ones are added by the router).
    pub handlers: &'static [HandlerDoc],
    /// Whether a write to `config` reconfigures a running instance.
    pub live_reconfigure: bool,
    /// Elements whose output order matters relative to each other (Print
    /// and friends); when two or more are present the router processes
    /// packets one at a time, exactly as Click does.
    pub order_sensitive: bool,
    /// Constructor.
    pub make: fn() -> Box<dyn Element>,
}

/// What `configure` can learn about an element's place in the graph, and
/// the names (AddressInfo, PortInfo) its arguments may use.
pub struct ConfigureCtx<'a> {
    pub name: &'a str,
    pub ninputs: usize,
    pub noutputs: usize,
    /// Names for addresses and ports, from the whole configuration.
    pub names: &'a NameTable,
    /// Warnings and messages `configure` gave (see
    /// [`ConfigureCtx::warning`], [`ConfigureCtx::message`]), as printed:
    /// `warning: TEXT` or `TEXT`.
    pub warnings: RefCell<Vec<String>>,
}

impl<'a> ConfigureCtx<'a> {
    /// A context for `configure` outside a router (tests, tools).
    pub fn new(name: &'a str, ninputs: usize, noutputs: usize, names: &'a NameTable) -> Self {
        ConfigureCtx {
            name,
            ninputs,
            noutputs,
            names,
            warnings: RefCell::new(Vec::new()),
        }
    }

    /// Reports a warning about the configuration (Click's
    /// `errh->warning`): the router prints it as Click does, under
    /// `While configuring 'NAME :: CLASS':`, whether or not configuration
    /// succeeds.
    pub fn warning(&self, msg: &str) {
        self.warnings
            .borrow_mut()
            .push(alloc::format!("warning: {msg}"));
    }

    /// Reports an informational message (Click's `errh->message`),
    /// printed like a warning but without `warning: `.
    pub fn message(&self, msg: &str) {
        self.warnings.borrow_mut().push(String::from(msg));
    }

    /// The argument reader for `config`, in this element's context:
    /// addresses, prefixes, Ethernet addresses and ports may be given by
    /// name (`a.read_mp::<Ipv4Addr>("SRC")` takes `eth0`, `eth0:ip`, ...).
    pub fn args(&self, config: &str) -> Args<'a> {
        Args::with_context(config, self.arg_context())
    }

    /// This element's argument context, for parsing words by hand
    /// (`cx.arg_context().ip(word)`).
    pub fn arg_context(&self) -> ArgContext<'a> {
        ArgContext::new(self.names, self.name)
    }
}

/// A batch of packets travelling through the graph together.
pub type Batch = Vec<Packet>;

/// `push_batch` for an element whose `push` is the default (its
/// `simple_action`, then output 0): runs `simple_action` over the batch and
/// pushes what it returns as one batch, in order, instead of one push per
/// packet. What `simple_action` itself sends elsewhere (an error output)
/// leaves before the batch, as a Classifier's sub-batches do. An element
/// opts in with one line:
///
/// ```ignore
/// fn push_batch(&mut self, _port: usize, b: Batch, cx: &Ctx) {
///     push_batch_simple(self, b, cx)
/// }
/// ```
#[inline]
pub fn push_batch_simple<E: Element>(e: &mut E, batch: Batch, cx: &Ctx) {
    // `filter_map` over a vector's own iterator collects in place: the
    // batch's allocation is reused.
    let out: Batch = batch
        .into_iter()
        .filter_map(|p| e.simple_action(p, cx))
        .collect();
    cx.push_batch(0, out);
}

/// Result of a handler call.
pub type HandlerResult<T> = Result<T, String>;

/// An element instance. Only `configure` is required; the defaults give a
/// 1-in-1-out element that passes packets unchanged, in push or pull.
pub trait Element: Any {
    /// Parses the configuration string. Must not change `self` when it
    /// returns an error (parse into locals, then assign), so that a failed
    /// live reconfiguration leaves the element running as before.
    fn configure(&mut self, config: &str, cx: &ConfigureCtx) -> Result<(), String>;

    /// Called once after every element is configured and the graph is
    /// checked; the context can schedule tasks and timers.
    fn initialize(&mut self, _cx: &Ctx) -> Result<(), String> {
        Ok(())
    }

    /// The common case: transform or drop one packet.
    #[inline]
    fn simple_action(&mut self, p: Packet, _cx: &Ctx) -> Option<Packet> {
        Some(p)
    }

    /// A packet arrives on push input `port`.
    #[inline]
    fn push(&mut self, _port: usize, p: Packet, cx: &Ctx) {
        if let Some(p) = self.simple_action(p, cx) {
            cx.push(0, p);
        }
    }

    /// A batch arrives on push input `port`. Elements override this to
    /// amortise per-packet work; the default hands packets to `push` one
    /// at a time.
    #[inline]
    fn push_batch(&mut self, port: usize, batch: Batch, cx: &Ctx) {
        for p in batch {
            self.push(port, p, cx);
        }
    }

    /// Output `port` is pulled.
    #[inline]
    fn pull(&mut self, _port: usize, cx: &Ctx) -> Option<Packet> {
        let p = cx.pull(0)?;
        self.simple_action(p, cx)
    }

    /// The element's task ran. Return true to stay scheduled.
    fn run_task(&mut self, _cx: &Ctx) -> bool {
        false
    }

    /// Timer `id` of this element fired.
    fn run_timer(&mut self, _id: u32, _cx: &Ctx) {}

    /// Reads one of the class's own handlers. `None` means no such handler.
    fn read_handler(&mut self, _name: &str, _cx: &Ctx) -> Option<HandlerResult<String>> {
        None
    }

    /// Reads a handler that takes a parameter (Click's read-with-parameter
    /// handlers, e.g. a routing table's `lookup ADDR`). `None` means no
    /// such handler.
    fn read_handler_param(
        &mut self,
        _name: &str,
        _param: &str,
        _cx: &Ctx,
    ) -> Option<HandlerResult<String>> {
        None
    }

    /// Writes one of the class's own handlers. `None` means no such handler.
    fn write_handler(&mut self, _name: &str, _value: &str, _cx: &Ctx) -> Option<HandlerResult<()>> {
        None
    }

    /// The configuration as the `config` handler reports it, when the
    /// element changed it at run time (e.g. after a handler write).
    fn current_config(&self) -> Option<String> {
        None
    }

    /// The notifier signal this element raises while it holds packets
    /// (Queue-like elements), so downstream pullers can sleep.
    fn empty_signal(&self) -> Option<crate::router::SignalId> {
        None
    }

    /// Click's full notifier: the signal this element keeps active while it
    /// has room for more packets (Queue), so push sources upstream
    /// (InfiniteSource) can sleep while it is full. See
    /// [`Ctx::downstream_signal`](crate::router::Ctx::downstream_signal).
    fn full_signal(&self) -> Option<crate::router::SignalId> {
        None
    }

    /// Click's `Storage` capability: elements that hold packets for later
    /// (Queue, FrontDropQueue, ...) report how many they hold. RED finds
    /// the nearest such elements with [`Ctx::nearby_storage`] and watches
    /// their length.
    ///
    /// [`Ctx::nearby_storage`]: crate::router::Ctx::nearby_storage
    fn queue_len(&self) -> Option<usize> {
        None
    }

    /// Handlers whose names depend on the instance (Suppressor's
    /// `active0`, `active1`, ...), listed by the `handlers` handler after
    /// the class's documented ones. Reads and writes of these names go to
    /// `read_handler`/`write_handler` like any other.
    fn instance_handlers(&self) -> Vec<(String, HandlerMode)> {
        Vec::new()
    }

    /// Click's low-level RPC: call `command` (Click's portable number,
    /// see [`common::llrpc`](crate::common::llrpc)) with `data`, which
    /// holds the command's input (when it has some) and receives its
    /// output (when it has some). `Err(errno)` on failure; the default,
    /// like Click's `Element::llrpc`, implements none: `EINVAL`. Another
    /// element makes the call (ControlSocket), so `lx` says what the call
    /// may need of this element's router context.
    fn llrpc(&mut self, _command: u32, _data: &mut [u8], _lx: &LlrpcCtx) -> Result<(), i32> {
        Err(crate::common::llrpc::EINVAL)
    }

    /// Called when the router stops (flush files, report).
    fn cleanup(&mut self, _cx: &Ctx) {}

    /// Click's hot swap: takes what should survive a reconfiguration
    /// (queued packets, an ARP table, a listening socket) from `old`, the
    /// element of the same name in the router being replaced. `old` may be
    /// of another class: downcast it with [`Element::as_any_mut`] and
    /// leave it alone if it is not of a compatible type. Called after
    /// `initialize`, before the new router runs; `old` is cleaned up
    /// afterwards. See [`Router::take_state_from`](crate::router::Router::take_state_from).
    fn take_state(&mut self, _old: &mut dyn Element, _cx: &Ctx) {}

    /// For downcasting in tests and by the host.
    fn as_any(&self) -> &dyn Any;

    /// For downcasting mutably ([`Element::take_state`]); `None` for
    /// elements that do not implement it (those written without
    /// [`element_any!`](crate::element_any)).
    fn as_any_mut(&mut self) -> Option<&mut dyn Any> {
        None
    }
}

/// Implements `as_any` for an element type.
#[macro_export]
macro_rules! element_any {
    () => {
        fn as_any(&self) -> &dyn core::any::Any {
            self
        }
        fn as_any_mut(&mut self) -> Option<&mut dyn core::any::Any> {
            Some(self)
        }
    };
}
