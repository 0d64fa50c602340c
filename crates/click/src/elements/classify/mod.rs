//! Click's classification elements: `Classifier`, `IPClassifier`,
//! `IPFilter`, built on `click_classify::Program`.

use crate::element::{Batch, ClassSpec};
use crate::router::Ctx;
use alloc::vec::Vec;

pub mod classifier;
pub mod ipclassifier;
pub mod ipfilter;

pub static SPECS: &[&ClassSpec] = &[&classifier::SPEC, &ipclassifier::SPEC, &ipfilter::SPEC];

/// Output code meaning "drop this packet" in [`dispatch`] port lists.
pub(crate) const DROP_PORT: u32 = u32::MAX;

/// Sends packet `i` of `batch` to output `ports[i]` (or drops it when the
/// port is [`DROP_PORT`]). When every packet goes to the same place the
/// batch is forwarded as is; otherwise one sub-batch per output is pushed,
/// in order of first appearance.
#[inline]
pub(crate) fn dispatch(batch: Batch, ports: &[u32], cx: &Ctx) {
    let Some(&first) = ports.first() else { return };
    if ports.iter().all(|&p| p == first) {
        if first != DROP_PORT {
            cx.push_batch(first as usize, batch);
        }
        return;
    }
    dispatch_mixed(batch, ports, cx);
}

#[cold]
fn dispatch_mixed(batch: Batch, ports: &[u32], cx: &Ctx) {
    let mut outs: Vec<(u32, Batch)> = Vec::new();
    for (p, &port) in batch.into_iter().zip(ports) {
        if port == DROP_PORT {
            continue;
        }
        match outs.iter_mut().find(|(q, _)| *q == port) {
            Some((_, b)) => b.push(p),
            None => {
                let mut b = Vec::with_capacity(ports.len());
                b.push(p);
                outs.push((port, b));
            }
        }
    }
    for (port, b) in outs {
        cx.push_batch(port as usize, b);
    }
}

/// Maps a [`Program::code`](click_classify::Program::code) to a dispatch
/// port, dropping results beyond the connected outputs (and
/// [`DROP_CODE`](click_classify::DROP_CODE), which is beyond them all).
#[inline(always)]
pub(crate) fn code_port(code: u32, noutputs: u32) -> u32 {
    if code < noutputs {
        code
    } else {
        DROP_PORT
    }
}
