//! Desired state in an embedded database (redb, `STATE/clickos.redb`):
//! one record per instance (configuration, wiring, restart policy,
//! whether it should run) and the next instance id. Every change is one
//! committed transaction, so a `kill -9` loses nothing acknowledged.

use redb::{Database, ReadableTable, TableDefinition};
use serde::{Deserialize, Serialize};
use std::path::Path;

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
}

pub struct Store {
    db: Database,
}

fn e<E: std::fmt::Display>(what: &'static str) -> impl Fn(E) -> String {
    move |err| format!("state database: {what}: {err}")
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
        Ok(Store { db })
    }

    pub fn put(&self, rec: &Record) -> Result<(), String> {
        let bytes = serde_json::to_vec(rec).map_err(e("encode"))?;
        let tx = self.db.begin_write().map_err(e("begin"))?;
        {
            let mut t = tx.open_table(INSTANCES).map_err(e("open"))?;
            t.insert(rec.name.as_str(), bytes.as_slice())
                .map_err(e("insert"))?;
        }
        tx.commit().map_err(e("commit"))
    }

    pub fn delete(&self, name: &str) -> Result<(), String> {
        let tx = self.db.begin_write().map_err(e("begin"))?;
        {
            let mut t = tx.open_table(INSTANCES).map_err(e("open"))?;
            t.remove(name).map_err(e("remove"))?;
        }
        tx.commit().map_err(e("commit"))
    }

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
        let tx = self.db.begin_write().map_err(e("begin"))?;
        let id = {
            let mut t = tx.open_table(META).map_err(e("open"))?;
            let cur = t
                .get("next_id")
                .map_err(e("read"))?
                .map(|v| v.value())
                .unwrap_or(1);
            t.insert("next_id", cur + 1).map_err(e("insert"))?;
            cur
        };
        tx.commit().map_err(e("commit"))?;
        u32::try_from(id).map_err(|_| "out of instance ids".to_string())
    }
}
