//! An export: one VM's swap disk, served on its own NBD socket.
//!
//! Its data path is a stack of layers (`device.rs`), top to bottom:
//!
//! * `Monitor` (`monitor.rs`): request counters and Geiger reuse distances;
//! * `RamTier` (`ram.rs`): pages in host RAM under the export's and the
//!   host's quotas;
//! * `RemoteTier` (`remote.rs`): slabs on other hosts' memstores, a cache
//!   of pages the RAM tier evicts;
//! * `FileBackend` (`file.rs`): the sparse backing file, which holds every
//!   acknowledged page.
//!
//! The file stays the local copy a reclaimed or failed slab falls back to.
//! The whole stack sits in one mutex: each request runs under it.

use crate::file::FileBackend;
use crate::geiger::Geiger;
use crate::monitor::Monitor;
use crate::ram::{Host, RamTier};
use crate::remote::RemoteTier;
use serde::{Deserialize, Serialize};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// An export's layers, top to bottom.
pub type Layers = Monitor<RamTier<RemoteTier<FileBackend>>>;

impl Layers {
    pub fn ram(&self) -> &RamTier<RemoteTier<FileBackend>> {
        self.next()
    }

    pub fn ram_mut(&mut self) -> &mut RamTier<RemoteTier<FileBackend>> {
        self.next_mut()
    }

    pub fn remote(&self) -> &RemoteTier<FileBackend> {
        self.ram().next()
    }

    pub fn remote_mut(&mut self) -> &mut RemoteTier<FileBackend> {
        self.ram_mut().next_mut()
    }

    pub fn file(&self) -> &FileBackend {
        self.remote().next()
    }
}

/// What an export is, as persisted in `<name>.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ExportConfig {
    pub name: String,
    pub size: u64,
    pub quota: u64,
    #[serde(default = "one")]
    pub bucket_pages: u64,
    /// The only process (besides memstore's user and root) that may open
    /// the export: the VM's QEMU, told by the agent (`bind`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
}

fn one() -> u64 {
    1
}

/// Export names become file names: keep them plain.
pub fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c))
}

/// 16 TiB: exports are mapped whole (47-bit user address space).
pub const MAX_EXPORT_SIZE: u64 = 1 << 44;

pub struct Export {
    pub name: String,
    pub size: u64,
    pub backing_path: PathBuf,
    layers: Mutex<Layers>,
    pub clients: AtomicUsize,
    pub connections: AtomicU64,
    pub deleted: AtomicBool,
    /// `ExportConfig::pid`, 0 for none (no process has pid 0)
    bound_pid: AtomicU32,
}

impl Export {
    /// Open (or create) the backing file of `cfg` in `dir` and stack the
    /// layers on it.
    pub fn open(dir: &Path, cfg: &ExportConfig, host: Arc<Host>, event_cap: usize) -> io::Result<Export> {
        if cfg.size == 0 || cfg.size > MAX_EXPORT_SIZE {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "export size out of range",
            ));
        }
        let path = dir.join(format!("{}.img", cfg.name));
        let file = FileBackend::open(&path, cfg.size)?;
        let ram = RamTier::new(RemoteTier::new(file), cfg.quota, host);
        let layers = Monitor::new(ram, Geiger::new(cfg.bucket_pages, event_cap));
        Ok(Export {
            name: cfg.name.clone(),
            size: cfg.size,
            backing_path: path,
            layers: Mutex::new(layers),
            clients: AtomicUsize::new(0),
            connections: AtomicU64::new(0),
            deleted: AtomicBool::new(false),
            bound_pid: AtomicU32::new(cfg.pid.unwrap_or(0)),
        })
    }

    pub fn lock(&self) -> MutexGuard<'_, Layers> {
        // a panic in another connection must not take the export down
        match self.layers.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        }
    }

    pub fn config(&self) -> ExportConfig {
        let g = self.lock();
        ExportConfig {
            name: self.name.clone(),
            size: self.size,
            quota: g.ram().quota(),
            bucket_pages: g.geiger.bucket_pages,
            pid: self.bound_pid(),
        }
    }

    pub fn bound_pid(&self) -> Option<u32> {
        match self.bound_pid.load(Ordering::SeqCst) {
            0 => None,
            p => Some(p),
        }
    }

    pub fn set_bound_pid(&self, pid: Option<u32>) {
        self.bound_pid.store(pid.unwrap_or(0), Ordering::SeqCst)
    }

    /// Set the RAM quota; returns the pages evicted.
    pub fn set_quota(&self, quota: u64) -> u64 {
        self.lock().ram_mut().set_quota(quota)
    }

    /// Evict up to `bytes` of RAM (host quota shrink); returns bytes freed.
    pub fn shed(&self, bytes: u64) -> u64 {
        self.lock().ram_mut().shed(bytes)
    }

    /// Release this export's RAM and slabs (on delete).
    pub fn release_all(&self) {
        let mut g = self.lock();
        g.ram_mut().release_all();
        g.remote_mut().detach_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::Device;

    fn tmpdir(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("memstore-test-{}-{}", tag, std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn export(dir: &Path, size: u64, quota: u64, host: &Arc<Host>) -> Export {
        let cfg = ExportConfig {
            name: "e".into(),
            size,
            quota,
            bucket_pages: 1,
            pid: None,
        };
        Export::open(dir, &cfg, host.clone(), 16).unwrap()
    }

    #[test]
    fn quota_overflows_to_file_and_survives_reopen() {
        let dir = tmpdir("quota");
        let host = Arc::new(Host::new(1 << 30));
        let e = export(&dir, 64 * 4096, 4 * 4096, &host);
        for p in 0..10u64 {
            e.lock().write(p * 4096, &[p as u8 + 1; 4096], false).unwrap();
        }
        {
            let g = e.lock();
            assert_eq!(g.ram().ram_bytes(), 4 * 4096);
            assert_eq!(g.ram().counters.evicted_pages, 6);
            assert_eq!(g.file().stored_pages(), 10);
            assert!(!g.ram().holds(0));
            assert!(g.ram().holds(9));
        }
        assert_eq!(host.used.load(Ordering::SeqCst), 4 * 4096);
        let mut buf = vec![0u8; 10 * 4096];
        e.lock().read(0, &mut buf).unwrap();
        for p in 0..10 {
            assert!(buf[p * 4096..(p + 1) * 4096].iter().all(|&b| b == p as u8 + 1));
        }
        // shrink the quota at run time
        assert_eq!(e.set_quota(4096), 3);
        assert_eq!(host.used.load(Ordering::SeqCst), 4096);
        drop(e);
        // a restart: everything comes back from the file
        let e = export(&dir, 64 * 4096, 4 * 4096, &host);
        assert_eq!(e.lock().file().stored_pages(), 10);
        let mut page = vec![0u8; 4096];
        e.lock().read(7 * 4096, &mut page).unwrap();
        assert!(page.iter().all(|&b| b == 8));
    }

    #[test]
    fn host_quota_is_shared() {
        let dir = tmpdir("host");
        let host = Arc::new(Host::new(3 * 4096));
        let a = export(&dir, 16 * 4096, 1 << 20, &host);
        let cfg = ExportConfig {
            name: "f".into(),
            size: 16 * 4096,
            quota: 1 << 20,
            bucket_pages: 1,
            pid: None,
        };
        let b = Export::open(&dir, &cfg, host.clone(), 0).unwrap();
        a.lock().write(0, &[1; 8192], false).unwrap();
        b.lock().write(0, &[2; 8192], false).unwrap();
        // b got one page; its second write evicted its own first page
        assert_eq!(a.lock().ram().ram_bytes(), 8192);
        assert_eq!(b.lock().ram().ram_bytes(), 4096);
        assert_eq!(host.used.load(Ordering::SeqCst), 3 * 4096);
        let mut buf = [0u8; 8192];
        b.lock().read(0, &mut buf).unwrap();
        assert!(buf.iter().all(|&x| x == 2));
    }

    #[test]
    fn partial_writes_trim_and_zero() {
        let dir = tmpdir("partial");
        let host = Arc::new(Host::new(1 << 30));
        let e = export(&dir, 8 * 4096 + 100, 1 << 20, &host);
        e.lock().write(4090, &[7u8; 20], false).unwrap(); // straddles pages 0 and 1
        let mut buf = vec![9u8; 8192];
        e.lock().read(0, &mut buf).unwrap();
        assert!(buf[..4090].iter().all(|&b| b == 0));
        assert!(buf[4090..4110].iter().all(|&b| b == 7));
        assert!(buf[4110..].iter().all(|&b| b == 0));
        // the odd-sized last page
        e.lock().write(8 * 4096 + 90, &[5u8; 10], false).unwrap();
        let mut tail = [0u8; 100];
        e.lock().read(8 * 4096, &mut tail).unwrap();
        assert_eq!(&tail[90..], &[5u8; 10]);
        // trim part of page 1 (zeroes those bytes) and all of page 0
        e.lock().write(0, &[3u8; 8192], false).unwrap();
        e.lock().discard(0, 4096 + 10, false, true, false).unwrap();
        e.lock().read(0, &mut buf).unwrap();
        assert!(buf[..4106].iter().all(|&b| b == 0));
        assert!(buf[4106..].iter().all(|&b| b == 3));
        assert!(!e.lock().ram().holds(0));
        e.lock().discard(4096, 4096, true, false, true).unwrap();
        e.lock().read(0, &mut buf).unwrap();
        assert!(buf.iter().all(|&b| b == 0));
        let g = e.lock();
        assert_eq!((g.counters.trims, g.counters.zeroes), (1, 1));
    }

    #[test]
    fn config_files_of_earlier_versions_load() {
        let old = br#"{"bucket_pages":4,"name":"a","quota":8192,"size":1048576}"#;
        let cfg: ExportConfig = serde_json::from_slice(old).unwrap();
        assert_eq!(
            (cfg.name.as_str(), cfg.size, cfg.quota, cfg.bucket_pages),
            ("a", 1 << 20, 8192, 4)
        );
        let cfg: ExportConfig = serde_json::from_slice(br#"{"name":"a","quota":0,"size":1}"#).unwrap();
        assert_eq!(cfg.bucket_pages, 1);
        assert!(serde_json::from_slice::<ExportConfig>(br#"{"name":"a","size":1}"#).is_err());
        let again: ExportConfig = serde_json::from_slice(&serde_json::to_vec(&cfg).unwrap()).unwrap();
        assert_eq!(again, cfg);
        assert_eq!(cfg.pid, None);
        let bound = ExportConfig { pid: Some(42), ..cfg };
        let json = serde_json::to_string(&bound).unwrap();
        assert!(json.contains("\"pid\":42"), "{}", json);
        assert_eq!(serde_json::from_str::<ExportConfig>(&json).unwrap(), bound);
    }

    #[test]
    fn names() {
        assert!(valid_name("0b1c-uuid_x.1"));
        assert!(!valid_name(""));
        assert!(!valid_name(".hidden"));
        assert!(!valid_name("a/b"));
        assert!(!valid_name(&"x".repeat(65)));
    }
}
