//! The Click configuration language and Click's argument conventions.
//!
//! * [`parse_config`] parses a configuration (declarations, connections,
//!   `elementclass` compounds with formal parameters, `define`, `require`,
//!   `$variable` expansion) and flattens it into a [`FlatConfig`]: a list of
//!   primitive elements in Click's creation order (anonymous elements are
//!   named `Class@N`, compound internals `instance/inner`), the connections
//!   between them (deduplicated, sorted), and the requirements.  Errors are
//!   collected and returned together as [`ParseError`]s that display as
//!   `file:line: message`.  Element class names are *not* checked against
//!   any registry; that is the engine's job.
//! * [`unparse()`] writes a flat configuration like `click -o` does.
//! * [`args`] holds `cp_argvec`-style splitting ([`args::split_args`]),
//!   unquoting, typed value parsers and the keyword-argument reader
//!   [`args::Args`].
#![no_std]
extern crate alloc;

pub mod args;
mod lexer;
pub mod names;
pub mod parse;
pub mod unparse;

pub use args::{
    parse_bandwidth, parse_bool, parse_ether, parse_f64, parse_i64, parse_ipv4, parse_ipv4_prefix,
    parse_string, parse_time_ns, parse_u64, split_args, split_words, uncomment, unquote,
    ArgContext, Args, Bandwidth, FromArg, IpPort, IpPrefix, RawString, Seconds, TcpPort, UdpPort,
};
pub use names::{NameKind, NameTable, NameValue};
pub use parse::{
    parse_config, parse_config_with, FlatConfig, FlatConnection, FlatElement, Landmark, ParseError,
    ParseOptions,
};
pub use unparse::unparse;
