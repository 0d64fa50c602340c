//! Tenants and their tokens.
//!
//! The rule: a request with `Authorization: Bearer TOKEN` acts as that
//! token's tenant (or as the admin for an admin token); an unknown token is
//! refused (401). A request without a token is the admin when it comes over
//! the UNIX socket from a peer running as root or as the daemon's own user
//! (SO_PEERCRED); any other request without a token is refused (401). So
//! on a machine where only root can reach the socket nothing changes, and
//! tenants (and anything over TCP) always present a token.
//!
//! Tokens live in a JSON file (`STATE/tokens.json`, or `--tokens FILE`):
//!
//! ```json
//! {"tokens": [
//!   {"token": "adm-secret", "admin": true},
//!   {"token": "a-secret", "tenant": "a", "max_instances": 10, "max_memory": 268435456}
//! ]}
//! ```

use serde::Deserialize;
use std::collections::HashMap;
use std::path::Path;

/// Who is calling.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Caller {
    Admin,
    Tenant(String),
}

impl Caller {
    /// Whether the caller may see an instance of `tenant` ("" = admin's).
    pub fn owns(&self, tenant: &str) -> bool {
        match self {
            Caller::Admin => true,
            Caller::Tenant(t) => t == tenant,
        }
    }
    /// The tenant new instances belong to.
    pub fn tenant(&self) -> &str {
        match self {
            Caller::Admin => "",
            Caller::Tenant(t) => t,
        }
    }
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TokenEntry {
    pub token: String,
    #[serde(default)]
    pub admin: bool,
    #[serde(default)]
    pub tenant: Option<String>,
    #[serde(default)]
    pub max_instances: Option<u32>,
    #[serde(default)]
    pub max_memory: Option<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TokenFile {
    tokens: Vec<TokenEntry>,
}

/// A tenant's quotas (`None` = unlimited).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Quota {
    pub instances: Option<u32>,
    pub memory: Option<u64>,
}

#[derive(Debug, Default)]
pub struct Tokens {
    by_token: HashMap<String, TokenEntry>,
    quotas: HashMap<String, Quota>,
}

impl Tokens {
    pub fn load(path: &Path) -> Result<Tokens, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        Tokens::parse(&text).map_err(|e| format!("{}: {e}", path.display()))
    }

    pub fn parse(text: &str) -> Result<Tokens, String> {
        let f: TokenFile = serde_json::from_str(text).map_err(|e| e.to_string())?;
        let mut t = Tokens::default();
        for entry in f.tokens {
            if entry.token.len() < 8 {
                return Err("a token must have at least 8 characters".into());
            }
            match (&entry.tenant, entry.admin) {
                (Some(_), true) => return Err("a token is either admin or a tenant's".into()),
                (None, false) => return Err("a token needs \"tenant\" or \"admin\": true".into()),
                (Some(name), false) => {
                    if name.is_empty() {
                        return Err("empty tenant name".into());
                    }
                    let q = t.quotas.entry(name.clone()).or_default();
                    q.instances = q.instances.or(entry.max_instances);
                    q.memory = q.memory.or(entry.max_memory);
                }
                (None, true) => {}
            }
            if t.by_token.insert(entry.token.clone(), entry).is_some() {
                return Err("the same token twice".into());
            }
        }
        Ok(t)
    }

    /// The caller for a bearer token.
    pub fn caller(&self, token: &str) -> Option<Caller> {
        let e = self.by_token.get(token)?;
        Some(match &e.tenant {
            Some(t) => Caller::Tenant(t.clone()),
            None => Caller::Admin,
        })
    }

    pub fn quota(&self, tenant: &str) -> Quota {
        self.quotas.get(tenant).copied().unwrap_or_default()
    }
}

/// The peer's uid on a UNIX socket.
pub fn peer_uid(fd: std::os::fd::RawFd) -> Option<u32> {
    let mut cred = libc::ucred {
        pid: 0,
        uid: 0,
        gid: 0,
    };
    let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
    // SAFETY: getsockopt writes at most `len` bytes into `cred`.
    let r = unsafe {
        libc::getsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_PEERCRED,
            &mut cred as *mut libc::ucred as *mut libc::c_void,
            &mut len,
        )
    };
    (r == 0).then_some(cred.uid)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_parse_and_refuse_nonsense() {
        let t = Tokens::parse(
            r#"{"tokens":[{"token":"adminadmin","admin":true},{"token":"aaaaaaaa","tenant":"a","max_instances":2}]}"#,
        )
        .unwrap();
        assert_eq!(t.caller("adminadmin"), Some(Caller::Admin));
        assert_eq!(t.caller("aaaaaaaa"), Some(Caller::Tenant("a".into())));
        assert_eq!(t.caller("nope"), None);
        assert_eq!(t.quota("a").instances, Some(2));
        assert!(Tokens::parse(r#"{"tokens":[{"token":"x","admin":true}]}"#).is_err());
        assert!(Tokens::parse(r#"{"tokens":[{"token":"xxxxxxxx"}]}"#).is_err());
        assert!(
            Tokens::parse(r#"{"tokens":[{"token":"xxxxxxxx","admin":true,"bogus":1}]}"#)
                .unwrap_err()
                .contains("unknown field")
        );
    }
}
