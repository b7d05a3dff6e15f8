//! The export registry: state on disk, one NBD unix socket per export.
//!
//! State directory layout: `<name>.json` (the export's configuration) and
//! `<name>.img` (its backing file).  At start-up every export found there is
//! served again on `<socket_dir>/<name>.sock`, so a restarted memstore is
//! back where it was and QEMU's NBD client reconnects to the same path.

use crate::export::{valid_name, Export, ExportConfig, MAX_EXPORT_SIZE};
use crate::fsutil;
use crate::limits::{Budget, Limits};
use crate::log::{error, info, warn};
use crate::nbd;
use crate::ram::Host;
use crate::remote::{SlabClient, SlabInfo};
use crate::slab::{RemoteServer, Slabs};
use std::collections::{BTreeMap, HashMap};
use std::fs;
use std::io;
use std::net::{Shutdown, SocketAddr, TcpListener};
use std::os::unix::io::AsRawFd;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

#[derive(Clone, Debug)]
pub struct Options {
    pub state_dir: PathBuf,
    pub socket_dir: PathBuf,
    pub host_quota: u64,
    pub bucket_pages: u64,
    pub event_ring: usize,
    /// Group of the NBD sockets (0660); None: 0600, memstore's user only.
    pub nbd_socket_gid: Option<u32>,
    pub limits: Limits,
    /// Where slabs are served to other hosts (`--remote-listen`); None:
    /// this memstore lends nothing.
    pub remote_listen: Option<SocketAddr>,
    /// Deadline of each remote request of an attached slab
    /// (`--remote-timeout`).
    pub remote_timeout: Duration,
    /// Page cache the file copies of remote-placed pages may hold, per
    /// export (`--remote-dirty-window`; 0: no bound).
    pub remote_dirty_window: u64,
}

impl Options {
    /// Defaults for everything but the directories.
    pub fn new(state_dir: PathBuf, socket_dir: PathBuf) -> Options {
        Options {
            state_dir,
            socket_dir,
            host_quota: 1 << 30,
            bucket_pages: 256,
            event_ring: 65536,
            nbd_socket_gid: None,
            limits: Limits::default(),
            remote_listen: None,
            remote_timeout: crate::remote::DEFAULT_TIMEOUT,
            remote_dirty_window: crate::remote::DEFAULT_DIRTY_WINDOW,
        }
    }
}

struct Entry {
    export: Arc<Export>,
    listener: UnixListener,
    socket: PathBuf,
    conns: Arc<Mutex<HashMap<u64, UnixStream>>>,
}

pub struct Server {
    pub opts: Options,
    pub host: Arc<Host>,
    exports: Mutex<BTreeMap<String, Entry>>,
    next_conn: Arc<AtomicU64>,
    shared: Arc<ConnShared>,
    ops: Mutex<()>,
    /// The slabs this host lends (remote memory, lender side).
    pub slabs: Arc<Slabs>,
    /// flocks on the state (and socket) directory, held while we live
    _locks: Vec<fs::File>,
}

/// Listen on `path` (replacing a stale socket) with `mode`, and `gid` as
/// its group when given.  Connecting needs write permission on the socket,
/// so the mode is what keeps other users out.
fn bind(path: &Path, mode: u32, gid: Option<u32>) -> io::Result<UnixListener> {
    match fs::remove_file(path) {
        Ok(()) => info(&format!("removed stale socket {}", path.display())),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    let l = UnixListener::bind(path)?;
    let set = (|| {
        if let Some(g) = gid {
            fsutil::chgrp(path, g)?;
        }
        fsutil::chmod(path, mode)
    })();
    if let Err(e) = set {
        let _ = fs::remove_file(path);
        return Err(e);
    }
    Ok(l)
}

impl Server {
    /// Create (0700) and lock the directories.  A second memstore on the
    /// same state or socket directory is refused here, before it touches
    /// any socket: the error names the holder's pid.
    pub fn new(opts: Options) -> io::Result<Arc<Server>> {
        let same = opts.state_dir == opts.socket_dir;
        // QEMU's group traverses the socket directory, never lists it
        let (sock_mode, sock_gid) = match opts.nbd_socket_gid {
            Some(g) => (fsutil::SHARED_DIR_MODE, Some(g)),
            None => (fsutil::DIR_MODE, None),
        };
        let (state_mode, state_gid) = if same {
            (sock_mode, sock_gid)
        } else {
            (fsutil::DIR_MODE, None)
        };
        if fsutil::ensure_dir(&opts.state_dir, state_mode, state_gid)? {
            warn(&format!(
                "state dir {}: mode set to {:o} (it holds guests' swapped pages)",
                opts.state_dir.display(),
                state_mode
            ));
        }
        let mut locks = vec![fsutil::lock_dir(&opts.state_dir)?];
        if !same {
            // an existing socket directory may be shared (/run/...): only a
            // new one gets our mode; the sockets' own modes protect them
            if !opts.socket_dir.exists() {
                fsutil::ensure_dir(&opts.socket_dir, sock_mode, sock_gid)?;
            }
            locks.push(fsutil::lock_dir(&opts.socket_dir)?);
        }
        let shared = Arc::new(ConnShared {
            budget: Budget::new(opts.limits.request_buffer_budget),
            limits: opts.limits.clone(),
            open: AtomicUsize::new(0),
        });
        let host = Arc::new(Host::new(opts.host_quota));
        Ok(Arc::new(Server {
            slabs: Arc::new(Slabs::new(host.clone())),
            host,
            opts,
            exports: Mutex::new(BTreeMap::new()),
            next_conn: Arc::new(AtomicU64::new(1)),
            shared,
            ops: Mutex::new(()),
            _locks: locks,
        }))
    }

    /// Listen on `<socket_dir>/control.sock`, 0600: memstore's user only.
    pub fn bind_control(&self) -> io::Result<UnixListener> {
        bind(&self.opts.socket_dir.join("control.sock"), fsutil::FILE_MODE, None)
    }

    fn nbd_socket_mode(&self) -> (u32, Option<u32>) {
        match self.opts.nbd_socket_gid {
            Some(g) => (0o660, Some(g)),
            None => (fsutil::FILE_MODE, None),
        }
    }

    fn exports(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, Entry>> {
        match self.exports.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        }
    }

    pub fn socket_path(&self, name: &str) -> PathBuf {
        self.opts.socket_dir.join(format!("{}.sock", name))
    }

    /// Serve every export of the state directory; returns how many.
    pub fn load_all(self: &Arc<Self>) -> usize {
        let mut n = 0;
        let entries = match fs::read_dir(&self.opts.state_dir) {
            Ok(e) => e,
            Err(e) => {
                error(&format!(
                    "cannot read state dir {}: {}",
                    self.opts.state_dir.display(),
                    e
                ));
                return 0;
            }
        };
        let mut paths: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().map(|x| x == "json").unwrap_or(false))
            .collect();
        paths.sort();
        for p in paths {
            let cfg = fs::read(&p)
                .map_err(|e| e.to_string())
                .and_then(|b| serde_json::from_slice::<ExportConfig>(&b).map_err(|e| e.to_string()));
            match cfg {
                Ok(cfg) => match self.start_export(&cfg, false) {
                    Ok(e) => {
                        let g = e.lock();
                        info(&format!(
                            "restored export {} ({} bytes, quota {} bytes, {} pages stored) on {}",
                            cfg.name,
                            cfg.size,
                            cfg.quota,
                            g.file().stored_pages(),
                            self.socket_path(&cfg.name).display()
                        ));
                        n += 1;
                    }
                    Err(e) => error(&format!("cannot restore export from {}: {}", p.display(), e)),
                },
                Err(e) => error(&format!(
                    "ignoring unreadable export state {}: {}",
                    p.display(),
                    e
                )),
            }
        }
        n
    }

    /// Open the backing file, listen on the socket, (with `persist`)
    /// write the state file, then serve.  Every step before serving is
    /// undone when a later one fails, so a failed create leaves nothing
    /// behind that a restart would bring back.
    fn start_export(self: &Arc<Self>, cfg: &ExportConfig, persist: bool) -> Result<Arc<Export>, String> {
        let img = self.opts.state_dir.join(format!("{}.img", cfg.name));
        let had_img = img.exists();
        let undo_img = || {
            if !had_img {
                let _ = fs::remove_file(&img);
            }
        };
        let export = Arc::new(
            Export::open(&self.opts.state_dir, cfg, self.host.clone(), self.opts.event_ring).map_err(|e| {
                undo_img();
                format!("backing file: {}", e)
            })?,
        );
        export.lock().remote_mut().set_dirty_window(self.opts.remote_dirty_window);
        let socket = self.socket_path(&cfg.name);
        let (mode, gid) = self.nbd_socket_mode();
        let listener = bind(&socket, mode, gid).map_err(|e| {
            undo_img();
            format!("cannot listen on {}: {}", socket.display(), e)
        })?;
        let undo_socket = || {
            let _ = fs::remove_file(&socket);
            undo_img();
        };
        if persist {
            if let Err(e) = self.persist(cfg) {
                undo_socket();
                return Err(e);
            }
        }
        let conns: Arc<Mutex<HashMap<u64, UnixStream>>> = Arc::new(Mutex::new(HashMap::new()));
        let (ex, cs, ids, sh) = (
            export.clone(),
            conns.clone(),
            self.next_conn.clone(),
            self.shared.clone(),
        );
        let spawned = listener.try_clone().and_then(|accept| {
            thread::Builder::new()
                .name(format!("accept-{}", cfg.name))
                .spawn(move || accept_loop(accept, ex, cs, ids, sh))
        });
        if let Err(e) = spawned {
            if persist {
                let _ = fsutil::remove_durably(&self.state_path(&cfg.name));
            }
            undo_socket();
            return Err(format!("cannot serve export {}: {}", cfg.name, e));
        }
        self.exports().insert(
            cfg.name.clone(),
            Entry {
                export: export.clone(),
                listener,
                socket,
                conns,
            },
        );
        Ok(export)
    }

    fn state_path(&self, name: &str) -> PathBuf {
        self.opts.state_dir.join(format!("{}.json", name))
    }

    /// Serialises the control operations that change state, so that each
    /// runs alone from its check to its effect.
    fn ops(&self) -> std::sync::MutexGuard<'_, ()> {
        match self.ops.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        }
    }

    /// Write `cfg` to `<name>.json`, fsync'd: once this returns Ok the
    /// change survives a crash; on Err the old file is intact.
    fn persist(&self, cfg: &ExportConfig) -> Result<(), String> {
        let path = self.state_path(&cfg.name);
        let json = serde_json::to_vec(cfg).expect("an ExportConfig always serializes");
        fsutil::write_atomic(&path, &json).map_err(|e| format!("cannot write {}: {}", path.display(), e))
    }

    pub fn get(&self, name: &str) -> Option<Arc<Export>> {
        self.exports().get(name).map(|e| e.export.clone())
    }

    pub fn names(&self) -> Vec<String> {
        self.exports().keys().cloned().collect()
    }

    /// Create an export, or return the existing one if it has the same
    /// size (bool: created).
    pub fn create(
        self: &Arc<Self>,
        name: &str,
        size: u64,
        quota: Option<u64>,
        bucket_pages: Option<u64>,
        pid: Option<u32>,
    ) -> Result<(Arc<Export>, bool), String> {
        if !valid_name(name) {
            return Err(format!(
                "invalid export name {:?}: 1-64 characters of A-Z a-z 0-9 . _ -, not starting with '.'",
                name
            ));
        }
        if size == 0 || size > MAX_EXPORT_SIZE {
            return Err(format!(
                "export size {} out of range 1..{}",
                size, MAX_EXPORT_SIZE
            ));
        }
        if let Some(p) = pid {
            check_pid(p)?;
        }
        let _ops = self.ops();
        if let Some(e) = self.get(name) {
            if e.size != size {
                return Err(format!(
                    "export {} exists with size {} (asked {})",
                    name, e.size, size
                ));
            }
            if pid.is_some() && pid != e.bound_pid() {
                self.bind_locked(&e, pid)?;
            }
            return Ok((e, false));
        }
        let cfg = ExportConfig {
            name: name.to_string(),
            size,
            quota: quota.unwrap_or(size),
            bucket_pages: std::cmp::max(1, bucket_pages.unwrap_or(self.opts.bucket_pages)),
            pid,
        };
        // a backing file without a state file is left over from a delete
        // that could not remove it: a new export starts empty
        let img = self.opts.state_dir.join(format!("{}.img", name));
        if !self.state_path(name).exists() && img.exists() {
            fs::remove_file(&img).map_err(|e| format!("cannot remove stale {}: {}", img.display(), e))?;
        }
        let e = self.start_export(&cfg, true)?;
        info(&format!(
            "created export {} ({} bytes, RAM quota {} bytes, histogram buckets of {} pages) on {}",
            name,
            size,
            cfg.quota,
            cfg.bucket_pages,
            self.socket_path(name).display()
        ));
        Ok((e, true))
    }

    /// Delete an export: its state file goes first (fsync'd), so that when
    /// it cannot be removed (read-only state dir, I/O error) the export is
    /// kept, served and reported as an error; after that nothing can bring
    /// it back.
    pub fn delete(&self, name: &str, force: bool) -> Result<(), String> {
        let _ops = self.ops();
        let clients = {
            let map = self.exports();
            let entry = match map.get(name) {
                Some(e) => e,
                None => return Err(format!("no export {}", name)),
            };
            entry.export.clients.load(Ordering::SeqCst)
        };
        if clients > 0 && !force {
            return Err(format!(
                "export {} has {} connected client(s): detach the disk first or pass force",
                name, clients
            ));
        }
        let state = self.state_path(name);
        fsutil::remove_durably(&state).map_err(|e| {
            format!(
                "cannot delete export {}: cannot remove {}: {} (export kept)",
                name,
                state.display(),
                e
            )
        })?;
        let entry = self.exports().remove(name).expect("held by the ops lock");
        entry.export.deleted.store(true, Ordering::SeqCst);
        // wakes the accept loop (accept() fails on a shut-down listener)
        // SAFETY: shutdown(2) on a descriptor we own
        unsafe {
            libc::shutdown(entry.listener.as_raw_fd(), libc::SHUT_RDWR);
        }
        for (_, s) in entry
            .conns
            .lock()
            .map(|mut c| c.drain().collect::<Vec<_>>())
            .unwrap_or_default()
        {
            let _ = s.shutdown(Shutdown::Both);
        }
        let _ = fs::remove_file(&entry.socket);
        entry.export.release_all();
        if let Err(e) = fs::remove_file(&entry.export.backing_path) {
            // harmless: without its state file it is never served again,
            // and a new export of that name starts empty
            warn(&format!(
                "export {}: cannot remove {}: {}",
                name,
                entry.export.backing_path.display(),
                e
            ));
        }
        info(&format!(
            "deleted export {}{}",
            name,
            if clients > 0 { " (forced)" } else { "" }
        ));
        Ok(())
    }

    /// Bind an export to process `pid` (None: unbind): from then on only
    /// that process, memstore's user and root may open it.  Connections
    /// already open stay.  Persisted first, applied after.
    pub fn bind_export(&self, name: &str, pid: Option<u32>) -> Result<(), String> {
        if let Some(p) = pid {
            check_pid(p)?;
        }
        let _ops = self.ops();
        let e = self.get(name).ok_or_else(|| format!("no export {}", name))?;
        self.bind_locked(&e, pid)
    }

    fn bind_locked(&self, e: &Export, pid: Option<u32>) -> Result<(), String> {
        let mut cfg = e.config();
        cfg.pid = pid;
        self.persist(&cfg)?;
        e.set_bound_pid(pid);
        match pid {
            Some(p) => info(&format!("export {}: bound to pid {}", e.name, p)),
            None => info(&format!("export {}: unbound (any peer the socket mode lets in)", e.name)),
        }
        Ok(())
    }

    /// Set an export's RAM quota: persisted first, applied after, so a
    /// failure changes nothing.
    pub fn set_export_quota(&self, name: &str, quota: u64) -> Result<u64, String> {
        let _ops = self.ops();
        let e = self.get(name).ok_or_else(|| format!("no export {}", name))?;
        let mut cfg = e.config();
        cfg.quota = quota;
        self.persist(&cfg)?;
        let evicted = e.set_quota(quota);
        info(&format!(
            "export {}: RAM quota set to {} bytes ({} pages evicted to the backing file)",
            name, quota, evicted
        ));
        Ok(evicted)
    }

    /// Change the host quota; over it, the exports with the most RAM give
    /// pages back first.
    pub fn set_host_quota(&self, quota: u64) -> u64 {
        self.host.quota.store(quota, Ordering::SeqCst);
        let mut freed = 0;
        let used = self.host.used.load(Ordering::SeqCst);
        if used > quota {
            let mut exports: Vec<Arc<Export>> = self.exports().values().map(|e| e.export.clone()).collect();
            exports.sort_by_key(|e| std::cmp::Reverse(e.lock().ram().ram_bytes()));
            for e in exports {
                let over = self.host.used.load(Ordering::SeqCst).saturating_sub(quota);
                if over == 0 {
                    break;
                }
                freed += e.shed(over);
            }
        }
        info(&format!(
            "host RAM quota set to {} bytes ({} bytes evicted to backing files)",
            quota, freed
        ));
        freed
    }
}

impl Server {
    /// Listen for slab clients on `--remote-listen` (None if not given);
    /// the caller runs `slab::serve` on it.
    pub fn bind_remote(&self) -> io::Result<Option<(Arc<RemoteServer>, TcpListener)>> {
        let addr = match self.opts.remote_listen {
            Some(a) => a,
            None => return Ok(None),
        };
        let l = TcpListener::bind(addr)?;
        *self.slabs.listen.lock().unwrap_or_else(|p| p.into_inner()) = Some(l.local_addr()?);
        let rs = RemoteServer::new(
            self.slabs.clone(),
            self.opts.limits.clone(),
            Arc::new(Budget::new(self.opts.limits.request_buffer_budget)),
        )?;
        Ok(Some((Arc::new(rs), l)))
    }

    /// The URI clients use for slab `id`.
    pub fn slab_uri(&self, id: &str) -> Option<String> {
        self.slabs.listen_addr().map(|a| format!("nbds://{}/{}", a, id))
    }

    /// The export that uses slab `id`, if any.
    fn export_with_slab(&self, id: &str) -> Option<Arc<Export>> {
        self.exports()
            .values()
            .map(|e| e.export.clone())
            .find(|e| e.lock().remote().has_slab(id))
    }

    /// Attach slab `id` at `uri` to export `name` (client side).
    #[allow(clippy::too_many_arguments)]
    pub fn slab_attach(
        &self,
        name: &str,
        id: &str,
        uri: &str,
        size: u64,
        identity: &str,
        key_hex: &str,
        timeout: Option<Duration>,
        dirty_window: Option<u64>,
    ) -> Result<SlabInfo, String> {
        let key = crate::tls::parse_key(key_hex)?;
        if !crate::tls::valid_identity(identity) {
            return Err("invalid PSK identity".into());
        }
        let e = self.get(name).ok_or_else(|| format!("no export {}", name))?;
        if let Some(other) = self.export_with_slab(id) {
            return Err(format!("slab {} is attached to export {} already", id, other.name));
        }
        let timeout = timeout.unwrap_or(self.opts.remote_timeout);
        // connecting takes round trips: not under the export's mutex
        let client = SlabClient::attach(id, uri, size, identity, &key, timeout)?;
        let info = client.info();
        let mut g = e.lock();
        if g.remote().has_slab(id) {
            return Err(format!("slab {} is attached to export {} already", id, name));
        }
        g.remote_mut().attach(client);
        if let Some(w) = dirty_window {
            g.remote_mut().set_dirty_window(w);
        }
        drop(g);
        info_log(&format!("export {}: slab {} attached ({} bytes at {})", name, id, size, uri));
        Ok(info)
    }

    /// Stop using slab `id` (client side); false if no export uses it.
    pub fn slab_detach(&self, id: &str) -> bool {
        match self.export_with_slab(id) {
            Some(e) => e.lock().remote_mut().detach(id),
            None => false,
        }
    }

    /// (export name, slab) of every attached slab; failed ones are
    /// detached first and listed with their state.
    pub fn attached_slabs(&self) -> Vec<(String, SlabInfo)> {
        let exports: Vec<Arc<Export>> = self.exports().values().map(|e| e.export.clone()).collect();
        let mut out = Vec::new();
        for e in exports {
            let mut g = e.lock();
            g.remote_mut().reap();
            for s in g.remote().gone().into_iter().chain(g.remote().slabs()) {
                out.push((e.name.clone(), s));
            }
        }
        out
    }
}

fn info_log(msg: &str) {
    info(msg)
}

fn check_pid(pid: u32) -> Result<(), String> {
    if crate::peer::process_exists(pid) {
        Ok(())
    } else {
        Err(format!("no process with pid {}", pid))
    }
}

/// What every NBD connection shares: the limits, the request-buffer
/// budget, the count of open connections.
pub struct ConnShared {
    pub limits: Limits,
    pub budget: Budget,
    pub open: AtomicUsize,
}

/// Gives a connection's slot back when its thread ends, however it ends.
struct Slot(Arc<ConnShared>);

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.open.fetch_sub(1, Ordering::SeqCst);
    }
}

fn accept_loop(
    listener: UnixListener,
    export: Arc<Export>,
    conns: Arc<Mutex<HashMap<u64, UnixStream>>>,
    ids: Arc<AtomicU64>,
    shared: Arc<ConnShared>,
) {
    loop {
        let stream = match listener.accept() {
            Ok((s, _)) => s,
            Err(e) => {
                if export.deleted.load(Ordering::SeqCst) {
                    return;
                }
                warn(&format!("export {}: accept failed: {}", export.name, e));
                thread::sleep(Duration::from_millis(100));
                continue;
            }
        };
        if export.deleted.load(Ordering::SeqCst) {
            return;
        }
        let id = ids.fetch_add(1, Ordering::SeqCst);
        // one thread per connection: bounded, or a flood of connections
        // would take every thread and its stack
        let open = shared.open.fetch_add(1, Ordering::SeqCst);
        let slot = Slot(shared.clone());
        if open >= shared.limits.max_connections {
            let who = crate::peer::peer_cred(&stream)
                .map(|c| c.to_string())
                .unwrap_or_else(|_| "unknown peer".into());
            warn(&format!(
                "export {}: refused connection {} from {}: {} NBD connections open (--max-connections {})",
                export.name, id, who, open, shared.limits.max_connections
            ));
            drop(slot);
            continue;
        }
        export.connections.fetch_add(1, Ordering::SeqCst);
        if let (Ok(clone), Ok(mut c)) = (stream.try_clone(), conns.lock()) {
            c.insert(id, clone);
        }
        let (ex, cs, sh) = (export.clone(), conns.clone(), shared.clone());
        let spawned = thread::Builder::new().name(format!("nbd-{}", id)).spawn(move || {
            let _slot = slot;
            nbd::serve_connection(stream, &ex, id, &sh.limits, &sh.budget);
            if let Ok(mut c) = cs.lock() {
                c.remove(&id);
            }
        });
        if let Err(e) = spawned {
            error(&format!(
                "export {}: cannot start a connection thread: {}",
                export.name, e
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{MetadataExt, PermissionsExt};

    fn dir(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("memstore-srv-{}-{}", tag, std::process::id()));
        let _ = fs::remove_dir_all(&d);
        d
    }

    fn mode(p: &Path) -> u32 {
        fs::metadata(p).unwrap().permissions().mode() & 0o7777
    }

    #[test]
    fn state_is_private_and_sockets_follow_the_group_option() {
        let d = dir("modes");
        fs::create_dir_all(d.join("state")).unwrap();
        fsutil::chmod(&d.join("state"), 0o755).unwrap(); // made by an older memstore
        let s = Server::new(Options::new(d.join("state"), d.join("sock"))).unwrap();
        let ctl = s.bind_control().unwrap();
        s.create("a", 1 << 20, None, None, None).unwrap();
        assert_eq!(mode(&d.join("state")), 0o700);
        assert_eq!(mode(&d.join("sock")), 0o700);
        assert_eq!(mode(&d.join("state/a.img")), 0o600);
        assert_eq!(mode(&d.join("state/a.json")), 0o600);
        assert_eq!(mode(&d.join("state/memstore.lock")), 0o600);
        assert_eq!(mode(&d.join("sock/control.sock")), 0o600);
        assert_eq!(mode(&d.join("sock/a.sock")), 0o600);
        drop((ctl, s));

        // with a group for QEMU: export sockets 0660 in that group, the
        // socket dir traversable by it, the control socket still 0600
        let gid = 65534; // nogroup: any gid works for root
        let d = dir("group");
        let s = Server::new(Options {
            nbd_socket_gid: Some(gid),
            ..Options::new(d.clone(), d.clone())
        })
        .unwrap();
        let _ctl = s.bind_control().unwrap();
        s.create("b", 1 << 20, None, None, None).unwrap();
        if unsafe { libc::geteuid() } == 0 {
            assert_eq!(fs::metadata(d.join("b.sock")).unwrap().gid(), gid);
            assert_eq!(fs::metadata(&d).unwrap().gid(), gid);
        }
        assert_eq!(mode(&d.join("b.sock")), 0o660);
        assert_eq!(mode(&d), 0o710);
        assert_eq!(mode(&d.join("b.img")), 0o600);
        assert_eq!(mode(&d.join("control.sock")), 0o600);
    }

    #[test]
    fn a_second_server_on_the_same_dirs_is_refused() {
        let d = dir("lock");
        let first = Server::new(Options::new(d.join("state"), d.join("sock"))).unwrap();
        for (state, sock) in [("state", "other"), ("other2", "sock")] {
            let e = match Server::new(Options::new(d.join(state), d.join(sock))) {
                Err(e) => e,
                Ok(_) => panic!("a second server started on {}/{}", state, sock),
            };
            assert_eq!(e.kind(), io::ErrorKind::AddrInUse);
            assert!(e.to_string().contains(&format!("(pid {})", std::process::id())), "{}", e);
        }
        drop(first);
        Server::new(Options::new(d.join("state"), d.join("sock"))).unwrap();
    }
}
