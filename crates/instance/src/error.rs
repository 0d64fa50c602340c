//! Errors of the instance layer.

use crate::backend::Ended;
use clickos_ring::mailbox::Status;
use std::fmt;

/// A handler call (or any mailbox request) failed. The first five cases
/// are the engine's (`click::router::HandlerError`), with its names; the
/// instance's message comes with each.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HandlerError {
    /// No element of that name.
    NoSuchElement(String),
    /// The element has no such handler.
    NoSuchHandler(String),
    /// The handler exists but not in that direction (read/write), or the
    /// operation is not enabled.
    PermissionDenied(String),
    /// The handler ran and failed; the engine's message.
    Failed(String),
    /// A configuration did not parse or initialise: one `file:line: msg`
    /// per entry.
    Config(Vec<String>),
    /// The request was malformed (e.g. a name longer than 255 bytes).
    BadRequest(String),
    /// No configuration is installed.
    NoRouter,
    /// The request or the reply did not fit the data area.
    TooLarge,
    /// The instance could not serve the request now.
    Busy,
    /// The instance has ended (before or while serving the request).
    Ended(Ended),
    /// A wait (e.g. `wait_stopped`) ran out of time; the instance is fine.
    Timeout(String),
}

impl fmt::Display for HandlerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HandlerError::NoSuchElement(m) => write!(f, "no such element: {m}"),
            HandlerError::NoSuchHandler(m) => write!(f, "no such handler: {m}"),
            HandlerError::PermissionDenied(m) => write!(f, "permission denied: {m}"),
            HandlerError::Failed(m) => write!(f, "handler failed: {m}"),
            HandlerError::Config(lines) => write!(f, "configuration error:\n{}", lines.join("\n")),
            HandlerError::BadRequest(m) => write!(f, "bad request: {m}"),
            HandlerError::NoRouter => write!(f, "no configuration installed"),
            HandlerError::TooLarge => write!(f, "request or reply too large for the data area"),
            HandlerError::Busy => write!(f, "instance busy"),
            HandlerError::Ended(e) => write!(f, "instance {e}"),
            HandlerError::Timeout(m) => write!(f, "timed out: {m}"),
        }
    }
}

impl std::error::Error for HandlerError {}

impl HandlerError {
    /// The result a reply stands for: the payload for `Ok`, else the error
    /// of that status with the payload as its message (`name` when the
    /// payload is empty; a configuration error's lines).
    pub fn from_reply(status: Status, payload: String, name: &str) -> Result<String, HandlerError> {
        let msg = || {
            let p = payload.trim_end();
            if p.is_empty() {
                name.to_string()
            } else {
                p.to_string()
            }
        };
        Err(match status {
            Status::Ok => return Ok(payload),
            Status::NoSuchElement => HandlerError::NoSuchElement(msg()),
            Status::NoSuchHandler => HandlerError::NoSuchHandler(msg()),
            Status::PermissionDenied => HandlerError::PermissionDenied(msg()),
            Status::Failed => HandlerError::Failed(msg()),
            Status::Config => HandlerError::Config(
                payload
                    .lines()
                    .filter(|l| !l.trim().is_empty())
                    .map(str::to_string)
                    .collect(),
            ),
            Status::BadRequest => HandlerError::BadRequest(msg()),
            Status::NoRouter => HandlerError::NoRouter,
            Status::TooLarge => HandlerError::TooLarge,
            Status::Busy => HandlerError::Busy,
        })
    }
}

/// Installing a configuration failed; the old one (if any) keeps running.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConfigError {
    /// The configuration is wrong: the engine's error lines, Click style
    /// (`file:line: message`).
    Invalid(Vec<String>),
    /// The instance could not take it (it ended, was busy, …).
    Instance(HandlerError),
}

impl ConfigError {
    /// The error lines (for `Invalid`), or the one message.
    pub fn lines(&self) -> Vec<String> {
        match self {
            ConfigError::Invalid(l) => l.clone(),
            ConfigError::Instance(e) => vec![e.to_string()],
        }
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigError::Invalid(lines) => f.write_str(&lines.join("\n")),
            ConfigError::Instance(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for ConfigError {}

impl From<HandlerError> for ConfigError {
    fn from(e: HandlerError) -> Self {
        match e {
            HandlerError::Config(l) => ConfigError::Invalid(l),
            e => ConfigError::Instance(e),
        }
    }
}

/// Creating an instance failed (it was destroyed).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CreateError {
    /// The isolation level could not start it (no KVM, bad vNIC geometry,
    /// the helper binary missing, …).
    Launch(String),
    /// The initial configuration was rejected.
    Config(ConfigError),
    /// The instance ended or stopped answering while booting.
    Instance(HandlerError),
}

impl fmt::Display for CreateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CreateError::Launch(m) => write!(f, "cannot start the instance: {m}"),
            CreateError::Config(e) => write!(f, "{e}"),
            CreateError::Instance(e) => write!(f, "instance failed while booting: {e}"),
        }
    }
}

impl std::error::Error for CreateError {}
