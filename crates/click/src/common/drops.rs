//! Drop accounting shared by the `Check…Header` elements.

use crate::prelude::*;
use alloc::format;

/// The handlers every [`DropStats`] user documents (the Check*Header
/// elements).
pub const DROP_HANDLERS: &[HandlerDoc] = &[
    HandlerDoc {
        name: "drops",
        mode: HandlerMode::Read,
        text: "Number of invalid packets seen.",
    },
    HandlerDoc {
        name: "drop_details",
        mode: HandlerMode::Read,
        text:
            "Invalid packets by reason, one `COUNT<tab>REASON` line each (only with DETAILS true).",
    },
];

/// Drop accounting shared by the `Check…Header` elements: the drop count,
/// per-reason counts under `DETAILS`, the "first drop, or every drop under
/// `VERBOSE`" message rule, and the `drops` / `drop_details` handlers.
#[derive(Default)]
pub struct DropStats<const N: usize> {
    drops: u64,
    verbose: bool,
    details: Option<[u64; N]>,
}

impl<const N: usize> DropStats<N> {
    /// Reads the `VERBOSE` and `DETAILS` keywords.
    pub fn configure(&mut self, a: &mut Args) -> Result<(), String> {
        self.verbose = a.read::<bool>("VERBOSE")?.unwrap_or(false);
        self.details = a
            .read::<bool>("DETAILS")?
            .unwrap_or(false)
            .then_some([0; N]);
        Ok(())
    }

    /// Counts a drop for `reason`; true when its message should be printed.
    #[inline]
    pub fn record(&mut self, reason: usize) -> bool {
        let say = self.drops == 0 || self.verbose;
        self.drops += 1;
        if let Some(d) = &mut self.details {
            d[reason] += 1;
        }
        say
    }

    /// The `drops` and `drop_details` read handlers (`None` for others, and
    /// for `drop_details` without `DETAILS`).
    pub fn read_handler(&self, name: &str, reasons: &[&str; N]) -> Option<HandlerResult<String>> {
        match name {
            "drops" => Some(Ok(self.drops.to_string())),
            "drop_details" => {
                let d = self.details.as_ref()?;
                let mut s = String::new();
                for (n, r) in d.iter().zip(reasons) {
                    s.push_str(&format!("{n}\t{r}\n"));
                }
                Some(Ok(s))
            }
            _ => None,
        }
    }
}
