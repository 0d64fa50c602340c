//! Moved to [`crate::common`]. This re-export keeps `standard/script.rs`
//! (being split on another branch) compiling; it goes once that file
//! imports from `crate::common`.

pub use crate::common::args::{delay_arg, read_data, source_data, DEFAULT_DATA};
pub use crate::common::drops::{DropStats, DROP_HANDLERS};
pub use crate::common::ewma::{jiffies, RateEwma, CLICK_HZ};
pub use crate::common::handlers::{call_write_desc, clean, parse_bool, parse_int};
pub use crate::common::rate::{GapRate, TokenBucket};
pub use crate::common::rng::Rng;
pub use crate::common::unparse::{fmt_double, unparse_bandwidth, unparse_interval, unparse_real2};
