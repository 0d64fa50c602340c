//! Suspend, resume and parking: instances to snapshot files and back
//! (the daemon's suspend/resume/migrate API and its clean stop).

use super::*;

impl Fleet {
    pub(super) fn snapshot_path(&self, name: &str) -> PathBuf {
        self.dir.join("snapshots").join(format!("{name}.snap"))
    }

    /// Suspends a running instance: stops its switch (no frame moves while
    /// its rings are copied), snapshots it with its record, ends it, keeps
    /// the snapshot in `STATE/snapshots/` (it survives a daemon restart)
    /// and marks it `suspended`. On failure it runs on, rewired.
    pub fn suspend(
        &self,
        caller: &Caller,
        key: &str,
        req: SuspendRequest,
    ) -> Result<Value, ApiError> {
        let (mut v, snap) = self.suspend_bytes(caller, key, &req)?;
        if req.inline {
            v["snapshot"] = json!(crate::b64::encode(&snap));
        }
        Ok(v)
    }

    /// [`suspend`](Self::suspend), the snapshot returned as bytes (for an
    /// `application/octet-stream` answer) rather than base64.
    pub fn suspend_bytes(
        &self,
        caller: &Caller,
        key: &str,
        req: &SuspendRequest,
    ) -> Result<(Value, Vec<u8>), ApiError> {
        let e = self.find(caller, key)?;
        let _ops = lock(&e.ops);
        let t0 = Instant::now();
        let (run, mut rec) = {
            let mut st = lock(&e.st);
            (st.run.take(), st.rec.clone())
        };
        let Some(mut run) = run else {
            return Err(ApiError::new(
                409,
                "conflict",
                format!("instance '{}' is not running", rec.name),
            ));
        };
        if let Some(sw) = run.sw.take() {
            let _ = sw.stop();
        }
        let mut note_rec = rec.clone();
        note_rec.suspended = false;
        note_rec.running = true;
        let note = serde_json::to_vec(&note_rec).unwrap_or_default();
        let snap = match run.inst.suspend(&note) {
            Ok(s) => s,
            Err(why) => {
                // It runs on: wire it again.
                let rewired = self.rewire(&rec, &mut run);
                lock(&e.st).run = Some(run);
                rewired?;
                return Err(ApiError::new(409, "cannot_suspend", why));
            }
        };
        let paused = t0.elapsed();
        drop(run);
        let path = self.snapshot_path(&rec.name);
        let write = |p: &std::path::Path| -> Result<(), ApiError> {
            if let Some(d) = p.parent() {
                std::fs::create_dir_all(d).map_err(|err| {
                    ApiError::new(500, "internal", format!("{}: {err}", d.display()))
                })?;
            }
            let tmp = p.with_extension("tmp");
            std::fs::write(&tmp, &snap)
                .and_then(|()| std::fs::rename(&tmp, p))
                .map_err(|err| {
                    ApiError::new(500, "write_failed", format!("{}: {err}", p.display()))
                })
        };
        write(&path)?;
        rec.suspended = true;
        rec.running = false;
        self.persist(&rec)?;
        {
            let mut st = lock(&e.st);
            st.rec = rec.clone();
            st.state = "suspended";
            st.next_try = None;
            st.last_end = Some("suspended".into());
        }
        self.events.push(
            "suspended",
            &rec,
            format!(
                "suspended in {:.3} ms ({} bytes)",
                paused.as_secs_f64() * 1e3,
                snap.len()
            ),
            Vec::new(),
        );
        if let Some(f) = &req.file {
            write(std::path::Path::new(f))?;
        }
        let mut v = self.view_entry(&e, false);
        v["snapshot_bytes"] = json!(snap.len());
        v["suspend_ms"] = json!(paused.as_secs_f64() * 1e3);
        Ok((v, snap))
    }

    pub(super) fn rewire(&self, rec: &Record, run: &mut Running) -> Result<(), ApiError> {
        let attach: Vec<Attach> = rec
            .vnics
            .iter()
            .map(|s| s.parse())
            .collect::<Result<_, String>>()
            .map_err(ApiError::bad)?;
        if attach.is_empty() {
            return Ok(());
        }
        let sw = SwitchHandle::spawn(SwitchOptions {
            name: format!("i{}", rec.id),
            ..SwitchOptions::default()
        })
        .map_err(|e| ApiError::new(500, "switch_failed", e))?;
        let w = clickos_switch::wire_instance(&sw, &run.inst, &rec.name, &attach)
            .map_err(|e| ApiError::bad(format!("wiring: {e}")))?;
        run.sw = Some(sw);
        run.vnic_ports = w.vnics;
        Ok(())
    }

    /// Resumes a suspended instance from the snapshot the daemon kept.
    pub fn resume_in_place(&self, caller: &Caller, key: &str) -> Result<Value, ApiError> {
        let e = self.find(caller, key)?;
        let _ops = lock(&e.ops);
        self.resume_entry(&e)
    }

    pub(super) fn resume_entry(&self, e: &Arc<Entry>) -> Result<Value, ApiError> {
        let mut rec = lock(&e.st).rec.clone();
        if !rec.suspended {
            return Err(ApiError::new(
                409,
                "conflict",
                format!("instance '{}' is not suspended", rec.name),
            ));
        }
        let path = self.snapshot_path(&rec.name);
        let snap = std::fs::read(&path)
            .map_err(|err| ApiError::new(500, "internal", format!("{}: {err}", path.display())))?;
        let run = self.launch_from(&rec, &e.console, Some(&snap))?;
        let took = run.boot;
        rec.suspended = false;
        rec.running = true;
        self.persist(&rec)?;
        let _ = std::fs::remove_file(&path);
        {
            let mut st = lock(&e.st);
            st.rec = rec.clone();
            st.run = Some(run);
            st.state = "running";
            st.next_try = None;
            st.failures = 0;
        }
        self.events.push(
            "resumed",
            &rec,
            format!("resumed in {:.3} ms", took.as_secs_f64() * 1e3),
            Vec::new(),
        );
        let mut v = self.view_entry(e, false);
        v["resume_ms"] = json!(took.as_secs_f64() * 1e3);
        Ok(v)
    }

    /// Resumes a snapshot (a file on this host or the bytes) as a new
    /// instance: its configuration, element state and vNICs (re-attached
    /// here as `vnics` says, else as they were) come from the snapshot.
    pub fn resume_new(
        &self,
        caller: &Caller,
        quota: Quota,
        req: ResumeRequest,
    ) -> Result<Value, ApiError> {
        self.resume_new_from(caller, quota, req, None)
    }

    /// [`resume_new`](Self::resume_new) with the snapshot's bytes given
    /// (an `application/octet-stream` body) instead of `file`/`snapshot`.
    pub fn resume_new_from(
        &self,
        caller: &Caller,
        quota: Quota,
        req: ResumeRequest,
        raw: Option<Vec<u8>>,
    ) -> Result<Value, ApiError> {
        let snap = match (&req.file, &req.snapshot, raw) {
            (None, None, Some(b)) => b,
            (Some(f), None, None) => {
                std::fs::read(f).map_err(|err| ApiError::bad(format!("cannot read {f}: {err}")))?
            }
            (None, Some(b), None) => crate::b64::decode(b).map_err(ApiError::bad)?,
            _ => return Err(ApiError::bad("give either file or snapshot")),
        };
        let note = clickos_instance::snapshot_note(&snap)
            .map_err(|m| ApiError::new(422, "bad_snapshot", format!("cannot resume: {m}")))?;
        let old: Record = serde_json::from_slice(&note).map_err(|err| {
            ApiError::new(
                422,
                "bad_snapshot",
                format!("cannot resume: the snapshot was not taken by a clickos daemon ({err})"),
            )
        })?;
        let old_name = old.name.clone();
        let entry = self.reserve(caller, quota, &req, old)?;
        let _ops = lock(&entry.ops);
        let rec = lock(&entry.st).rec.clone();
        let fail = |e: ApiError| {
            lock(&self.entries).remove(&rec.name);
            e
        };
        let run = self
            .launch_from(&rec, &entry.console, Some(&snap))
            .map_err(fail)?;
        self.persist(&rec).map_err(fail)?;
        let took = run.boot;
        {
            let mut st = lock(&entry.st);
            st.run = Some(run);
            st.state = "running";
        }
        self.events.push(
            "resumed",
            &rec,
            format!(
                "resumed from a snapshot of '{}' in {:.3} ms",
                old_name,
                took.as_secs_f64() * 1e3
            ),
            Vec::new(),
        );
        let mut v = self.view_entry(&entry, false);
        v["resume_ms"] = json!(took.as_secs_f64() * 1e3);
        Ok(v)
    }

    /// Reserves a new instance's name for a snapshot (or migration) of
    /// `old`: its entry is `starting`, with a new id, the name and vNICs
    /// `req` gives (else `old`'s), within the caller's quota.
    pub(super) fn reserve(
        &self,
        caller: &Caller,
        quota: Quota,
        req: &ResumeRequest,
        old: Record,
    ) -> Result<Arc<Entry>, ApiError> {
        let name = req.name.clone().unwrap_or(old.name.clone());
        check_name(&name)?;
        let vnics = req.vnics.clone().unwrap_or(old.vnics.clone());
        for v in &vnics {
            v.parse::<Attach>().map_err(ApiError::bad)?;
        }
        let tenant = caller.tenant().to_string();
        Ok({
            let mut entries = lock(&self.entries);
            if entries.contains_key(&name) {
                return Err(ApiError::new(
                    409,
                    "conflict",
                    format!("an instance named '{name}' exists"),
                ));
            }
            if let Caller::Tenant(_) = caller {
                let mine: Vec<u64> = entries
                    .values()
                    .filter_map(|e| {
                        let st = lock(&e.st);
                        (st.rec.tenant == tenant).then_some(st.rec.memory)
                    })
                    .collect();
                if quota
                    .instances
                    .is_some_and(|max| mine.len() as u64 >= max as u64)
                    || quota
                        .memory
                        .is_some_and(|max| mine.iter().sum::<u64>() + old.memory > max)
                {
                    return Err(ApiError::new(
                        403,
                        "quota_exceeded",
                        format!("tenant '{tenant}' is at its quota"),
                    ));
                }
            }
            let id = self
                .store
                .next_id()
                .map_err(|e| ApiError::new(500, "internal", e))?;
            let rec = Record {
                id,
                name: name.clone(),
                tenant,
                vnics,
                running: true,
                suspended: false,
                fault_injection: false,
                ..old
            };
            let entry = Entry::starting(rec);
            entries.insert(name.clone(), entry.clone());
            entry
        })
    }

    /// Ends every running instance (their desired state stays). A running
    /// `vm` instance is parked first: suspended to
    /// `STATE/parked/NAME.snap`, from which the next daemon resumes it
    /// with its element state; the others are destroyed (they boot fresh
    /// from their configuration). Returns (parked, ended otherwise).
    pub fn shutdown(&self) -> (usize, usize) {
        self.shutting.store(true, Ordering::Relaxed);
        self.events.wake_all();
        let entries: Vec<Arc<Entry>> = lock(&self.entries).values().cloned().collect();
        let next = std::sync::atomic::AtomicUsize::new(0);
        let parked = std::sync::atomic::AtomicUsize::new(0);
        let ended = std::sync::atomic::AtomicUsize::new(0);
        let workers = std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
            .clamp(1, 8)
            .min(entries.len().max(1));
        std::thread::scope(|s| {
            for _ in 0..workers {
                s.spawn(|| loop {
                    let k = next.fetch_add(1, Ordering::Relaxed);
                    let Some(e) = entries.get(k) else { break };
                    match self.park(e) {
                        Some(true) => parked.fetch_add(1, Ordering::Relaxed),
                        Some(false) => ended.fetch_add(1, Ordering::Relaxed),
                        None => 0,
                    };
                });
            }
        });
        self.flush_store();
        let parked = parked.into_inner();
        if parked > 0 {
            // One sync for all the snapshots rather than one per file.
            if let Ok(d) = std::fs::File::open(self.dir.join("parked")) {
                use std::os::fd::AsRawFd;
                // SAFETY: syncfs on a descriptor we own; no memory is shared.
                unsafe { libc::syncfs(d.as_raw_fd()) };
            }
        }
        (parked, ended.into_inner())
    }

    /// Ends one instance at shutdown: parks it when it is a running `vm`
    /// instance (Some(true)), else destroys it (Some(false)); None when it
    /// was not running.
    pub(super) fn park(&self, e: &Arc<Entry>) -> Option<bool> {
        let _ops = lock(&e.ops);
        let (run, rec) = {
            let mut st = lock(&e.st);
            (st.run.take(), st.rec.clone())
        };
        let mut run = run?;
        if rec.isolation != Isolation::Vm.name() || run.inst.ended().is_some() {
            run.shut(false);
            return Some(false);
        }
        if let Some(sw) = run.sw.take() {
            let _ = sw.stop();
        }
        let note = serde_json::to_vec(&rec).unwrap_or_default();
        let snap = match run.inst.suspend(&note) {
            Ok(s) => s,
            Err(why) => {
                eprintln!(
                    "clickos daemon: {}: cannot park ({why}); it boots fresh next time",
                    rec.name
                );
                drop(run);
                return Some(false);
            }
        };
        drop(run);
        let path = self.parked_path(&rec.name);
        let r = path
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|()| {
                let tmp = path.with_extension("tmp");
                std::fs::write(&tmp, &snap).and_then(|()| std::fs::rename(&tmp, &path))
            });
        match r {
            Ok(()) => Some(true),
            Err(err) => {
                eprintln!("clickos daemon: {}: {err}", path.display());
                Some(false)
            }
        }
    }

    pub(super) fn parked_path(&self, name: &str) -> PathBuf {
        self.dir.join("parked").join(format!("{name}.snap"))
    }

    /// The snapshot a clean shutdown left for `rec`, if there is one and
    /// it fits the record (taken of the same configuration and vNICs);
    /// the file is removed either way. Err says why it is not used.
    pub(super) fn take_parked(&self, rec: &Record) -> Option<Result<Vec<u8>, String>> {
        let path = self.parked_path(&rec.name);
        let snap = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
            Err(e) => return Some(Err(format!("{}: {e}", path.display()))),
        };
        let _ = std::fs::remove_file(&path);
        let check = || -> Result<(), String> {
            let note = clickos_instance::snapshot_note(&snap)?;
            let old: Record =
                serde_json::from_slice(&note).map_err(|e| format!("the snapshot's record: {e}"))?;
            if old.config != rec.config || old.vnics.len() != rec.vnics.len() {
                return Err("the snapshot is of another configuration".into());
            }
            if rec.isolation != Isolation::Vm.name() {
                return Err(format!(
                    "the instance is now at isolation {}",
                    rec.isolation
                ));
            }
            Ok(())
        };
        Some(check().map(|()| snap))
    }
}
