//! Click's notifiers: signals that elements own (a Queue's "not empty",
//! "not full"), the searches that find the signals upstream or downstream
//! of a port and register a task to be woken by them, and the flow-based
//! search for nearby Storage elements (RED). Elements reach all of it
//! through [`Ctx`](super::Ctx).

use super::Core;
use alloc::format;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;

/// A notifier signal, owned by the element that created it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct SignalId(pub u32);

/// What a puller learns from the notifiers upstream of one of its inputs.
#[derive(Clone, Debug)]
pub enum UpstreamSignal {
    /// Some upstream path can always produce packets: keep polling.
    AlwaysActive,
    /// Packets can arrive only while one of these signals is active.
    Signals(Vec<SignalId>),
}

/// Which of Click's two notifier kinds a signal is: an empty notifier's
/// (active while its owner may have packets to pull: queues, sources,
/// PullSwitch) or a full notifier's (active while its owner has room:
/// FullNoteQueue). Click numbers each kind's signals apart, 32 to a word,
/// in creation order; [`Core::unparse_signal`] prints them that way.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum SignalKind {
    Empty,
    Full,
}

impl SignalKind {
    fn name(self) -> &'static str {
        match self {
            SignalKind::Empty => "empty",
            SignalKind::Full => "full",
        }
    }
}

pub(super) struct SignalState {
    kind: SignalKind,
    /// The signal's number among those of its kind.
    ordinal: u32,
    active: bool,
    listeners: Vec<usize>,
    /// Signals activated with this one (Click's dependent notifiers: a
    /// PullSwitch's notifier follows the queues upstream of it).
    dependents: Vec<SignalId>,
}

impl Core {
    /// A new signal (see [`Ctx::new_signal`](super::Ctx::new_signal)).
    pub(super) fn new_signal(&self, active: bool, kind: SignalKind) -> SignalId {
        let mut s = self.signals.borrow_mut();
        let ordinal = s.iter().filter(|x| x.kind == kind).count() as u32;
        s.push(SignalState {
            kind,
            ordinal,
            active,
            listeners: Vec::new(),
            dependents: Vec::new(),
        });
        SignalId((s.len() - 1) as u32)
    }

    /// Sets a signal; activating it wakes the tasks listening to it.
    pub(super) fn set_signal(&self, id: SignalId, active: bool) {
        let (wake, deps): (Vec<usize>, Vec<SignalId>) = {
            let mut sigs = self.signals.borrow_mut();
            let Some(s) = sigs.get_mut(id.0 as usize) else {
                return;
            };
            let was = s.active;
            s.active = active;
            if active && !was {
                (s.listeners.clone(), s.dependents.clone())
            } else {
                (Vec::new(), Vec::new())
            }
        };
        for i in wake {
            self.schedule(i);
        }
        // activation wakes dependents once (an active one stops the chain)
        for d in deps {
            self.set_signal(d, true);
        }
    }

    pub(super) fn signal_active(&self, sig: &UpstreamSignal) -> bool {
        match sig {
            UpstreamSignal::AlwaysActive => true,
            UpstreamSignal::Signals(v) => {
                let sigs = self.signals.borrow();
                v.iter()
                    .any(|id| sigs.get(id.0 as usize).map(|s| s.active).unwrap_or(true))
            }
        }
    }

    /// A signal as Click's `NotifierSignal::unparse` prints it: `busy*`
    /// for a path that can always move packets, else one
    /// `KIND.WORD/MASK:VALUE` per 32-signal word of each kind the signals
    /// fall in (MASK their bits, VALUE the active ones, in hex), followed
    /// by `*` when one of them is active, joined by `+`.
    pub(super) fn unparse_signal(&self, sig: &UpstreamSignal) -> String {
        let UpstreamSignal::Signals(v) = sig else {
            return "busy*".into();
        };
        let sigs = self.signals.borrow();
        // (kind, word) -> (mask, value), in kind then word order
        let mut words: Vec<(u8, u32, u32, u32)> = Vec::new();
        for id in v {
            let Some(s) = sigs.get(id.0 as usize) else {
                continue;
            };
            let key = (s.kind == SignalKind::Full) as u8;
            let (w, bit) = (s.ordinal / 32, 1u32 << (s.ordinal % 32));
            let i = match words.iter().position(|x| x.0 == key && x.1 == w) {
                Some(i) => i,
                None => {
                    words.push((key, w, 0, 0));
                    words.len() - 1
                }
            };
            words[i].2 |= bit;
            if s.active {
                words[i].3 |= bit;
            }
        }
        words.sort_by_key(|x| (x.0, x.1));
        let parts: Vec<String> = words
            .iter()
            .map(|&(k, w, mask, value)| {
                let kind = if k == 1 {
                    SignalKind::Full
                } else {
                    SignalKind::Empty
                };
                format!(
                    "{}.{w}/{mask:x}:{value:x}{}",
                    kind.name(),
                    if value != 0 { "*" } else { "" }
                )
            })
            .collect();
        parts.join("+")
    }

    /// Makes `dependent` follow the signals `found` (Click's dependent
    /// notifier).
    pub(super) fn add_dependent(&self, found: &UpstreamSignal, dependent: SignalId) {
        if let UpstreamSignal::Signals(found) = found {
            let mut sigs = self.signals.borrow_mut();
            for id in found {
                if let Some(s) = sigs.get_mut(id.0 as usize) {
                    if *id != dependent && !s.dependents.contains(&dependent) {
                        s.dependents.push(dependent);
                    }
                }
            }
        }
    }

    /// Element `me`'s task listens to the signals `found`.
    fn listen(&self, me: usize, found: &[SignalId]) {
        let mut sigs = self.signals.borrow_mut();
        for id in found {
            if let Some(s) = sigs.get_mut(id.0 as usize) {
                if !s.listeners.contains(&me) {
                    s.listeners.push(me);
                }
            }
        }
    }

    /// The empty notifiers upstream of element `me`'s pull input `port`;
    /// with `listen`, `me`'s task is woken when one becomes active.
    pub(super) fn upstream_signal(&self, me: usize, port: usize, listen: bool) -> UpstreamSignal {
        let mut found = Vec::new();
        let mut seen = vec![false; self.slots.len()];
        let mut always = false;
        let mut stack: Vec<usize> = Vec::new();
        if let Some(Some(t)) = self.slots[me].in_source.get(port) {
            stack.push(t.elem as usize);
        } else {
            return UpstreamSignal::AlwaysActive;
        }
        while let Some(u) = stack.pop() {
            if seen[u] {
                continue;
            }
            seen[u] = true;
            let sig = self.with_elem(u, |e, _| e.empty_signal()).flatten();
            if let Some(id) = sig {
                found.push(id);
                continue;
            }
            let s = &self.slots[u];
            if s.in_source.is_empty() || s.in_push.iter().any(|p| *p) {
                // a pull source, or a push-to-pull boundary without a notifier
                always = true;
                continue;
            }
            for t in s.in_source.iter().flatten() {
                stack.push(t.elem as usize);
            }
        }
        if always || found.is_empty() {
            return UpstreamSignal::AlwaysActive;
        }
        if !listen {
            return UpstreamSignal::Signals(found);
        }
        self.listen(me, &found);
        UpstreamSignal::Signals(found)
    }

    /// The full notifiers downstream of element `me`'s push output `port`,
    /// with `me`'s task listening to them (see
    /// [`Ctx::downstream_signal`](super::Ctx::downstream_signal)).
    pub(super) fn downstream_signal(&self, me: usize, port: usize, listen: bool) -> UpstreamSignal {
        let mut found = Vec::new();
        let mut seen = vec![false; self.slots.len()];
        let mut always = false;
        let mut stack: Vec<usize> = Vec::new();
        match self.slots[me].out_target.get(port) {
            Some(Some(t)) => stack.push(t.elem as usize),
            _ => return UpstreamSignal::AlwaysActive,
        }
        while let Some(d) = stack.pop() {
            if seen[d] {
                continue;
            }
            seen[d] = true;
            if let Some(id) = self.with_elem(d, |e, _| e.full_signal()).flatten() {
                found.push(id);
                continue;
            }
            let s = &self.slots[d];
            let outs: Vec<usize> = s
                .out_target
                .iter()
                .flatten()
                .map(|t| t.elem as usize)
                .collect();
            if outs.is_empty() {
                always = true;
                continue;
            }
            stack.extend(outs);
        }
        if always || found.is_empty() {
            return UpstreamSignal::AlwaysActive;
        }
        if listen {
            self.listen(me, &found);
        }
        UpstreamSignal::Signals(found)
    }

    /// The elements within `diameter` connections of element `me`'s
    /// output `port` (`downstream`) or input `port` (upstream), every port
    /// when `port` is `None`: Click's `ElementNeighborhoodTracker` passed to
    /// `Router::visit_downstream`/`visit_upstream`. Breadth first, each
    /// element once, in the order first reached (at a distance, in the
    /// order of the configuration's connections). Elements are crossed from
    /// every input to every output, Click's default flow code (`x/x`).
    pub(super) fn neighborhood(
        &self,
        me: usize,
        port: Option<usize>,
        downstream: bool,
        diameter: usize,
    ) -> Vec<usize> {
        let mut reached = vec![false; self.slots.len()];
        let mut found = Vec::new();
        let mut frontier = vec![(me, port)];
        for _ in 0..diameter {
            let mut next = Vec::new();
            for &(e, p) in &frontier {
                for x in self.adjacent(e, p, downstream) {
                    if !reached[x] {
                        reached[x] = true;
                        found.push(x);
                        next.push((x, None));
                    }
                }
            }
            if next.is_empty() {
                break;
            }
            frontier = next;
        }
        found
    }

    /// The nearest Storage elements from element `me`'s output (or input)
    /// `port` (see [`Ctx::nearby_storage`](super::Ctx::nearby_storage)).
    pub(super) fn nearby_storage(&self, me: usize, port: usize, downstream: bool) -> Vec<usize> {
        let mut seen = vec![false; self.slots.len()];
        let mut found = Vec::new();
        // reversed, so that the stack pops them in the connections' order
        let mut stack: Vec<usize> = self.adjacent(me, Some(port), downstream).rev().collect();
        while let Some(u) = stack.pop() {
            if seen[u] {
                continue;
            }
            seen[u] = true;
            if self.storage_len(u).is_some() {
                found.push(u);
                continue;
            }
            stack.extend(self.adjacent(u, None, downstream).rev());
        }
        found
    }

    /// The elements one connection from element `e`'s output `port`
    /// (`downstream`) or input `port`, every port when `port` is `None`,
    /// in the order of the configuration's connections.
    fn adjacent(
        &self,
        e: usize,
        port: Option<usize>,
        downstream: bool,
    ) -> impl DoubleEndedIterator<Item = usize> + '_ {
        self.connections.iter().filter_map(move |&(f, fp, t, tp)| {
            if downstream {
                (f == e && port.is_none_or(|p| p == fp)).then_some(t)
            } else {
                (t == e && port.is_none_or(|p| p == tp)).then_some(f)
            }
        })
    }

    /// The length element `elem` reports through
    /// [`Element::queue_len`](crate::element::Element::queue_len).
    pub(super) fn storage_len(&self, elem: usize) -> Option<usize> {
        if elem >= self.slots.len() {
            return None;
        }
        self.with_elem(elem, |e, _| e.queue_len()).flatten()
    }
}
