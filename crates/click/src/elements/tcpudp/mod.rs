//! Click's NAT family (Click keeps it in `tcpudp`, `ip` and `icmp`; the
//! reference groups it as `nat`): the rewriters, their shared patterns and
//! mappers, and ICMPRewriter. The tables and patterns are
//! `crate::common::iprw`; the rewriter element is `iprewriterbase`.

use crate::element::ClassSpec;

pub mod cgnatmapper;
pub mod ftpportmapper;
pub mod icmppingrewriter;
pub mod icmprewriter;
pub mod ipaddrpairrewriter;
pub mod ipaddrrewriter;
pub mod iprewriter;
pub mod iprewriterbase;
pub mod iprwpatterns;
pub mod rripmapper;
pub mod siphmapper;
pub mod tcprewriter;
pub mod udprewriter;

pub static SPECS: &[&ClassSpec] = &[
    &iprewriter::SPEC,
    &tcprewriter::SPEC,
    &udprewriter::SPEC,
    &ipaddrrewriter::SPEC,
    &ipaddrpairrewriter::SPEC,
    &icmppingrewriter::SPEC,
    &icmprewriter::SPEC,
    &iprwpatterns::SPEC,
    &rripmapper::SPEC,
    &siphmapper::SPEC,
    &cgnatmapper::SPEC,
    &ftpportmapper::SPEC,
];
