//! Desired state in an embedded database (redb, `STATE/clickos.redb`):
//! one record per instance (configuration, wiring, restart policy,
//! whether it should run) and the next instance id.
//!
//! A change is appended to a journal (`STATE/clickos.journal`, one
//! checksummed JSON line per change, written before the API answers) and
//! folded into the database by [`Store::flush`] (the daemon does so every
//! 100 ms in the background, and when it stops): an acknowledged change
//! survives `kill -9` (it is in the file), the API does not wait for an
//! fsync (which costs milliseconds here), and after a power loss at most
//! the last 100 ms of changes are gone; a torn last line is dropped. A
//! flush sets the journal aside (`clickos.journal.old`) and starts a new
//! one before it commits, so requests do not wait for its fsync. On open,
//! both are replayed into the database, older first (replaying is
//! idempotent), and emptied.
use redb::{Database, ReadableTable, TableDefinition};
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::sync::Mutex;

const INSTANCES: TableDefinition<&str, &[u8]> = TableDefinition::new("instances");
const META: TableDefinition<&str, u64> = TableDefinition::new("meta");

/// When the supervisor restarts an instance that ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Restart {
    Never,
    /// Unless it exited cleanly; with exponential back-off.
    OnFailure,
    /// Whatever the reason; with exponential back-off.
    Always,
}

impl Restart {
    pub fn name(self) -> &'static str {
        match self {
            Restart::Never => "never",
            Restart::OnFailure => "on-failure",
            Restart::Always => "always",
        }
    }
    pub fn parse(s: &str) -> Result<Restart, String> {
        match s {
            "never" | "no" => Ok(Restart::Never),
            "on-failure" => Ok(Restart::OnFailure),
            "always" => Ok(Restart::Always),
            _ => Err(format!(
                "unknown restart policy '{s}' (never, on-failure or always)"
            )),
        }
    }
}

/// One instance's desired state.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Record {
    pub id: u32,
    pub name: String,
    /// Empty for the admin's instances.
    pub tenant: String,
    pub config: String,
    pub config_file: String,
    pub isolation: String,
    pub memory: u64,
    /// vNIC k joins `vnics[k]` (an [`clickos_switch::Attach`] text).
    pub vnics: Vec<String>,
    pub restart: Restart,
    /// Should it run (false after `stop`).
    pub running: bool,
    pub fault_injection: bool,
    /// Suspended: its snapshot is `STATE/snapshots/NAME.snap` and it comes
    /// back from there (`resume`), not from a cold boot.
    #[serde(default)]
    pub suspended: bool,
    /// Handlers exported by `/metrics` as `clickos_handler_value`.
    #[serde(default)]
    pub metrics: Vec<String>,
}

pub struct Store {
    db: Database,
    journal: Mutex<Journal>,
    jpath: std::path::PathBuf,
    /// One flush at a time.
    flushing: Mutex<()>,
}

struct Journal {
    file: std::fs::File,
    /// Changes appended since the last flush.
    pending: Vec<Change>,
    next_id: u64,
}

/// One journaled change.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Change {
    Put(Record),
    Delete(String),
    NextId(u64),
}

fn e<E: std::fmt::Display>(what: &'static str) -> impl Fn(E) -> String {
    move |err| format!("state database: {what}: {err}")
}

/// FNV-1a, 64 bits: enough to tell a torn or garbled journal line.
fn fnv(b: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf29ce484222325;
    for &x in b {
        h ^= x as u64;
        h = h.wrapping_mul(0x100000001b3);
    }
    h
}

fn journal_line(c: &Change) -> Vec<u8> {
    let json = serde_json::to_vec(c).unwrap_or_default();
    let mut line = format!("{:016x} ", fnv(&json)).into_bytes();
    line.extend_from_slice(&json);
    line.push(b'\n');
    line
}

/// The journal's intact changes, up to the first bad line.
fn parse_journal(bytes: &[u8]) -> Vec<Change> {
    let mut out = Vec::new();
    for line in bytes.split(|&b| b == b'\n') {
        if line.len() < 18 || line[16] != b' ' {
            break;
        }
        let (sum, json) = (&line[..16], &line[17..]);
        let ok = std::str::from_utf8(sum)
            .ok()
            .and_then(|s| u64::from_str_radix(s, 16).ok())
            == Some(fnv(json));
        let Some(c) = ok.then(|| serde_json::from_slice(json).ok()).flatten() else {
            break;
        };
        out.push(c);
    }
    out
}

fn apply(db: &Database, changes: &[Change]) -> Result<(), String> {
    let tx = db.begin_write().map_err(e("begin"))?;
    {
        let mut t = tx.open_table(INSTANCES).map_err(e("open"))?;
        let mut m = tx.open_table(META).map_err(e("open"))?;
        for c in changes {
            match c {
                Change::Put(rec) => {
                    let bytes = serde_json::to_vec(rec).map_err(e("encode"))?;
                    t.insert(rec.name.as_str(), bytes.as_slice())
                        .map_err(e("insert"))?;
                }
                Change::Delete(name) => {
                    t.remove(name.as_str()).map_err(e("remove"))?;
                }
                Change::NextId(n) => {
                    let cur = m
                        .get("next_id")
                        .map_err(e("read"))?
                        .map(|v| v.value())
                        .unwrap_or(1);
                    m.insert("next_id", cur.max(*n)).map_err(e("insert"))?;
                }
            }
        }
    }
    tx.commit().map_err(e("commit"))
}

impl Store {
    pub fn open(dir: &Path) -> Result<Store, String> {
        std::fs::create_dir_all(dir)
            .map_err(|err| format!("cannot create state directory {}: {err}", dir.display()))?;
        let path = dir.join("clickos.redb");
        let db = Database::create(&path).map_err(|err| format!("{}: {err}", path.display()))?;
        let tx = db.begin_write().map_err(e("begin"))?;
        {
            tx.open_table(INSTANCES).map_err(e("open"))?;
            tx.open_table(META).map_err(e("open"))?;
        }
        tx.commit().map_err(e("commit"))?;
        let jpath = dir.join("clickos.journal");
        let jerr = |err: std::io::Error| format!("{}: {err}", jpath.display());
        // A flush in progress left the older journal aside: it goes first.
        let mut replay = Vec::new();
        for p in [dir.join("clickos.journal.old"), jpath.clone()] {
            match std::fs::read(&p) {
                Ok(b) => replay.extend(parse_journal(&b)),
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
                Err(err) => return Err(format!("{}: {err}", p.display())),
            }
        }
        if !replay.is_empty() {
            apply(&db, &replay)?;
        }
        let _ = std::fs::remove_file(dir.join("clickos.journal.old"));
        let file = std::fs::OpenOptions::new()
            .create(true)
            .write(true)
            .truncate(true)
            .open(&jpath)
            .map_err(jerr)?;
        file.sync_all().map_err(jerr)?;
        let next_id = {
            let tx = db.begin_read().map_err(e("begin"))?;
            let m = tx.open_table(META).map_err(e("open"))?;
            m.get("next_id")
                .map_err(e("read"))?
                .map(|v| v.value())
                .unwrap_or(1)
        };
        Ok(Store {
            db,
            jpath,
            flushing: Mutex::new(()),
            journal: Mutex::new(Journal {
                file,
                pending: Vec::new(),
                next_id,
            }),
        })
    }

    fn append(j: &mut Journal, c: Change) -> Result<(), String> {
        use std::io::Write;
        j.file
            .write_all(&journal_line(&c))
            .map_err(|err| format!("state journal: {err}"))?;
        j.pending.push(c);
        Ok(())
    }

    pub fn put(&self, rec: &Record) -> Result<(), String> {
        let mut j = self.journal.lock().unwrap_or_else(|p| p.into_inner());
        Self::append(&mut j, Change::Put(rec.clone()))
    }

    pub fn delete(&self, name: &str) -> Result<(), String> {
        let mut j = self.journal.lock().unwrap_or_else(|p| p.into_inner());
        Self::append(&mut j, Change::Delete(name.to_string()))
    }

    /// Folds the journal into the database (one committed, synced
    /// transaction) and empties it. Cheap when nothing changed. Changes
    /// go on meanwhile: the journal is set aside (`clickos.journal.old`)
    /// and a new one started before the commit, so the commit's fsync
    /// does not hold up the API.
    pub fn flush(&self) -> Result<(), String> {
        let _one = self.flushing.lock().unwrap_or_else(|p| p.into_inner());
        let pending = {
            let mut j = self.journal.lock().unwrap_or_else(|p| p.into_inner());
            if j.pending.is_empty() {
                return Ok(());
            }
            let jerr = |err: std::io::Error| format!("state journal: {err}");
            std::fs::rename(&self.jpath, self.jpath.with_extension("journal.old")).map_err(jerr)?;
            j.file = std::fs::OpenOptions::new()
                .create(true)
                .write(true)
                .truncate(true)
                .open(&self.jpath)
                .map_err(jerr)?;
            std::mem::take(&mut j.pending)
        };
        if let Err(err) = apply(&self.db, &pending) {
            // Keep every change: back into the (new) journal, in order.
            use std::io::Write;
            let mut j = self.journal.lock().unwrap_or_else(|p| p.into_inner());
            let mut all = pending;
            all.append(&mut j.pending);
            let bytes: Vec<u8> = all.iter().flat_map(journal_line).collect();
            let w = j.file.set_len(0).and_then(|()| {
                use std::io::Seek;
                j.file.seek(std::io::SeekFrom::Start(0))?;
                j.file.write_all(&bytes)
            });
            j.pending = all;
            if w.is_ok() {
                let _ = std::fs::remove_file(self.jpath.with_extension("journal.old"));
            }
            return Err(err);
        }
        let _ = std::fs::remove_file(self.jpath.with_extension("journal.old"));
        Ok(())
    }

    /// Every record, as of the last flush (the journal is replayed on
    /// open, so right after [`open`](Self::open) that is everything).
    pub fn load(&self) -> Result<Vec<Record>, String> {
        let tx = self.db.begin_read().map_err(e("begin"))?;
        let t = tx.open_table(INSTANCES).map_err(e("open"))?;
        let mut out = Vec::new();
        for item in t.iter().map_err(e("iterate"))? {
            let (_, v) = item.map_err(e("read"))?;
            out.push(serde_json::from_slice(v.value()).map_err(e("decode"))?);
        }
        Ok(out)
    }

    /// Allocates the next instance id (persisted, never reused).
    pub fn next_id(&self) -> Result<u32, String> {
        let mut j = self.journal.lock().unwrap_or_else(|p| p.into_inner());
        let id = j.next_id;
        let id32 = u32::try_from(id).map_err(|_| "out of instance ids".to_string())?;
        Self::append(&mut j, Change::NextId(id + 1))?;
        j.next_id = id + 1;
        Ok(id32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(name: &str, id: u32) -> Record {
        Record {
            id,
            name: name.into(),
            tenant: String::new(),
            config: "Idle -> Discard;".into(),
            config_file: "config".into(),
            isolation: "process".into(),
            memory: 8 << 20,
            vnics: vec![],
            restart: Restart::Never,
            running: true,
            fault_injection: false,
            suspended: false,
            metrics: vec![],
        }
    }

    fn tmp(name: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("clickos-store-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    /// What was appended and not flushed (as after `kill -9`) comes back;
    /// a torn last line is dropped; ids are not reused.
    #[test]
    fn the_journal_is_replayed_and_a_torn_tail_dropped() {
        let d = tmp("journal");
        {
            let s = Store::open(&d).unwrap();
            assert_eq!(s.next_id().unwrap(), 1);
            s.put(&rec("a", 1)).unwrap();
            s.flush().unwrap();
            assert_eq!(s.next_id().unwrap(), 2);
            s.put(&rec("b", 2)).unwrap();
            s.delete("a").unwrap();
            assert_eq!(s.next_id().unwrap(), 3);
            s.put(&rec("c", 3)).unwrap();
            // no flush: the process "dies" here
        }
        // tear the last line (c)
        let j = d.join("clickos.journal");
        let mut b = std::fs::read(&j).unwrap();
        b.truncate(b.len() - 10);
        std::fs::write(&j, &b).unwrap();
        let s = Store::open(&d).unwrap();
        let names: Vec<String> = s.load().unwrap().into_iter().map(|r| r.name).collect();
        assert_eq!(names, vec!["b".to_string()]);
        assert_eq!(s.next_id().unwrap(), 4);
        assert!(std::fs::metadata(&j).unwrap().len() > 0);
        let _ = std::fs::remove_dir_all(&d);
    }

    /// A flush interrupted after setting the journal aside: both files
    /// are replayed, the older first.
    #[test]
    fn an_interrupted_flush_replays_both_journals_in_order() {
        let d = tmp("old");
        drop(Store::open(&d).unwrap());
        let old: Vec<u8> = [Change::Put(rec("a", 1)), Change::NextId(2)]
            .iter()
            .flat_map(journal_line)
            .collect();
        std::fs::write(d.join("clickos.journal.old"), old).unwrap();
        let new: Vec<u8> = [Change::Delete("a".into()), Change::Put(rec("b", 2))]
            .iter()
            .flat_map(journal_line)
            .collect();
        std::fs::write(d.join("clickos.journal"), new).unwrap();
        let s = Store::open(&d).unwrap();
        let names: Vec<String> = s.load().unwrap().into_iter().map(|r| r.name).collect();
        assert_eq!(names, vec!["b".to_string()]);
        assert_eq!(s.next_id().unwrap(), 2);
        assert!(!d.join("clickos.journal.old").exists());
        // and a flush with changes after it leaves one empty journal
        s.put(&rec("c", 2)).unwrap();
        s.flush().unwrap();
        assert_eq!(
            std::fs::metadata(d.join("clickos.journal")).unwrap().len(),
            0
        );
        assert_eq!(s.load().unwrap().len(), 2);
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn garbled_lines_end_the_replay() {
        let c = Change::Delete("x".into());
        let mut b = journal_line(&c);
        b.extend_from_slice(&journal_line(&c));
        assert_eq!(parse_journal(&b).len(), 2);
        let k = b.len() - 5;
        b[k] ^= 1;
        assert_eq!(parse_journal(&b).len(), 1);
        assert_eq!(parse_journal(b"garbage\n").len(), 0);
    }
}
