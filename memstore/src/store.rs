//! The page store: one per export.
//!
//! Tiers (seed 004 section 4.3.1, Infiniswap's backup disk):
//!
//! * RAM: pages kept in host memory (the host's free-memory reservoir),
//!   bounded by a per-export byte quota and a per-host quota shared by every
//!   export.  Both can change at run time; shrinking evicts at once.
//! * backing file: `<state_dir>/<name>.img`, a sparse file as large as the
//!   export, mapped shared (`mmap`).  Every write reaches it before the
//!   request is acknowledged (copied into the shared mapping: the data is
//!   in the host kernel's page cache, which a SIGKILL of memstore does not
//!   lose; the kernel writes it back to disk asynchronously, and an NBD
//!   FLUSH or FUA write makes it durable with `fdatasync`).  Blocks are
//!   reserved with `fallocate` before the first write into a hole, so a
//!   full file system is an ENOSPC reply, not a SIGBUS.  So the file always holds every acknowledged page, and
//!   RAM is a cache of it: a page over quota simply is not kept in RAM
//!   ("overflows" to the file), and a restarted memstore serves every page
//!   from the file.
//! * remote (a later issue): a third `Tier` behind the same lookups; the file
//!   stays the local copy a reclaimed remote device falls back to.
//!
//! Eviction from RAM is FIFO by last write: a swap device sees each page
//! written once per eviction, so the oldest write is the coldest page.

use crate::monitor::{Monitor, PAGE_SIZE};
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, VecDeque};
use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::FileExt;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{SystemTime, UNIX_EPOCH};

const PAGE: usize = PAGE_SIZE as usize;

/// The backing file mapped MAP_SHARED: writes land in the page cache with
/// a memcpy instead of a pwrite system call.  Only touched under the
/// export's lock.
struct Mapping {
    ptr: *mut u8,
    len: usize,
}

// SAFETY: the mapping is plain memory; every access holds the export lock
unsafe impl Send for Mapping {}
unsafe impl Sync for Mapping {}

impl Mapping {
    fn new(file: &File, len: u64) -> io::Result<Mapping> {
        let len = len as usize;
        // SAFETY: a fresh shared mapping of a file we keep open, as long
        // as the file (set_len'd to `len` before)
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                file.as_raw_fd(),
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        // swap-ins are random: no readahead around faults
        unsafe { libc::madvise(p, len, libc::MADV_RANDOM) };
        Ok(Mapping {
            ptr: p as *mut u8,
            len,
        })
    }

    fn slice(&self, off: u64, len: usize) -> &[u8] {
        assert!(off as usize + len <= self.len);
        // SAFETY: in bounds (checked), mapping alive as long as self
        unsafe { std::slice::from_raw_parts(self.ptr.add(off as usize), len) }
    }

    fn write(&self, off: u64, data: &[u8]) {
        assert!(off as usize + data.len() <= self.len);
        // SAFETY: in bounds (checked); callers hold the export lock
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), self.ptr.add(off as usize), data.len()) }
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: unmapping what new() mapped
        unsafe { libc::munmap(self.ptr as *mut libc::c_void, self.len) };
    }
}

/// Where a page lives.  Only Ram and File exist today; Remote comes with
/// host-to-host memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tier {
    Ram,
    File,
}

/// Host-wide RAM accounting shared by every export.
pub struct Host {
    pub quota: AtomicU64,
    pub used: AtomicU64,
}

impl Host {
    pub fn new(quota: u64) -> Host {
        Host {
            quota: AtomicU64::new(quota),
            used: AtomicU64::new(0),
        }
    }

    fn try_reserve(&self) -> bool {
        let mut cur = self.used.load(Ordering::Relaxed);
        loop {
            if cur + PAGE_SIZE > self.quota.load(Ordering::Relaxed) {
                return false;
            }
            match self
                .used
                .compare_exchange_weak(cur, cur + PAGE_SIZE, Ordering::AcqRel, Ordering::Relaxed)
            {
                Ok(_) => return true,
                Err(v) => cur = v,
            }
        }
    }

    fn release(&self, pages: u64) {
        self.used.fetch_sub(pages * PAGE_SIZE, Ordering::AcqRel);
    }
}

/// Request counters of an export (since memstore started).
#[derive(Clone, Debug, Default)]
pub struct Counters {
    pub reads: u64,
    pub writes: u64,
    pub flushes: u64,
    pub trims: u64,
    pub zeroes: u64,
    pub caches: u64,
    pub errors: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
    pub ram_hit_pages: u64,
    pub file_read_pages: u64,
    pub evicted_pages: u64,
    pub last_io: f64,
}

struct RamPage {
    data: Box<[u8]>,
    gen: u64,
}

/// One bit per page: the page holds data (written, not trimmed).
struct Bitmap {
    words: Vec<u64>,
    ones: u64,
}

impl Bitmap {
    fn new(bits: u64) -> Bitmap {
        Bitmap {
            words: vec![0; ((bits + 63) / 64) as usize],
            ones: 0,
        }
    }
    fn set(&mut self, i: u64) {
        let (w, b) = ((i / 64) as usize, i % 64);
        if self.words[w] & (1 << b) == 0 {
            self.words[w] |= 1 << b;
            self.ones += 1;
        }
    }
    fn get(&self, i: u64) -> bool {
        self.words[(i / 64) as usize] & (1 << (i % 64)) != 0
    }
    fn clear(&mut self, i: u64) {
        let (w, b) = ((i / 64) as usize, i % 64);
        if self.words[w] & (1 << b) != 0 {
            self.words[w] &= !(1 << b);
            self.ones -= 1;
        }
    }
}

pub struct Inner {
    pub quota: u64,
    ram: HashMap<u64, RamPage>,
    fifo: VecDeque<(u64, u64)>,
    gen: u64,
    stored: Bitmap,
    pub monitor: Monitor,
    pub counters: Counters,
}

impl Inner {
    pub fn ram_bytes(&self) -> u64 {
        self.ram.len() as u64 * PAGE_SIZE
    }
    pub fn stored_pages(&self) -> u64 {
        self.stored.ones
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
    file: File,
    map: Mapping,
    host: Arc<Host>,
    inner: Mutex<Inner>,
    pub clients: AtomicUsize,
    pub connections: AtomicU64,
    pub deleted: AtomicBool,
}

fn errno(e: &io::Error) -> i32 {
    e.raw_os_error().unwrap_or(libc::EIO)
}

fn now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

/// Number of the page holding byte `off`, and the pages [first, last] a
/// request [off, off + len) touches (len > 0).
fn pages_of(off: u64, len: u64) -> (u64, u64) {
    (off / PAGE_SIZE, (off + len - 1) / PAGE_SIZE)
}

impl Export {
    /// Open (or create) the backing file of `cfg` in `dir`.
    pub fn open(dir: &Path, cfg: &ExportConfig, host: Arc<Host>, event_cap: usize) -> io::Result<Export> {
        if cfg.size == 0 || cfg.size > MAX_EXPORT_SIZE {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "export size out of range",
            ));
        }
        let path = dir.join(format!("{}.img", cfg.name));
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)?;
        let len = file.metadata()?.len();
        if len == 0 {
            file.set_len(cfg.size)?;
        } else if len != cfg.size {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "backing file {} is {} bytes, export is {}",
                    path.display(),
                    len,
                    cfg.size
                ),
            ));
        }
        let pages = (cfg.size + PAGE_SIZE - 1) / PAGE_SIZE;
        let mut stored = Bitmap::new(pages);
        scan_data(&file, cfg.size, &mut stored);
        let map = Mapping::new(&file, cfg.size)?;
        Ok(Export {
            name: cfg.name.clone(),
            size: cfg.size,
            backing_path: path,
            file,
            map,
            host,
            inner: Mutex::new(Inner {
                quota: cfg.quota,
                ram: HashMap::new(),
                fifo: VecDeque::new(),
                gen: 0,
                stored,
                monitor: Monitor::new(cfg.bucket_pages, event_cap),
                counters: Counters::default(),
            }),
            clients: AtomicUsize::new(0),
            connections: AtomicU64::new(0),
            deleted: AtomicBool::new(false),
        })
    }

    pub fn lock(&self) -> MutexGuard<'_, Inner> {
        // a panic in another connection must not take the export down
        match self.inner.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        }
    }

    pub fn config(&self) -> ExportConfig {
        let g = self.lock();
        ExportConfig {
            name: self.name.clone(),
            size: self.size,
            quota: g.quota,
            bucket_pages: g.monitor.bucket_pages,
        }
    }

    /// Where page `page` is now.
    pub fn tier_of(&self, page: u64) -> Tier {
        if self.lock().ram.contains_key(&page) {
            Tier::Ram
        } else {
            Tier::File
        }
    }

    fn evict_one(&self, g: &mut Inner) -> bool {
        while let Some((page, gen)) = g.fifo.pop_front() {
            let current = matches!(g.ram.get(&page), Some(p) if p.gen == gen);
            if current {
                g.ram.remove(&page);
                self.host.release(1);
                g.counters.evicted_pages += 1;
                return true;
            }
        }
        false
    }

    /// Keep a copy of `data` (one whole page) in RAM if the quotas allow.
    fn cache(&self, g: &mut Inner, page: u64, data: &[u8]) {
        g.gen += 1;
        let gen = g.gen;
        if let Some(p) = g.ram.get_mut(&page) {
            p.data.copy_from_slice(data);
            p.gen = gen;
            g.fifo.push_back((page, gen));
        } else {
            if g.quota < PAGE_SIZE {
                return;
            }
            while g.ram_bytes() + PAGE_SIZE > g.quota {
                if !self.evict_one(g) {
                    return;
                }
            }
            while !self.host.try_reserve() {
                // the host reservoir is full: make room among our own pages
                if !self.evict_one(g) {
                    return;
                }
            }
            g.ram.insert(
                page,
                RamPage {
                    data: data.to_vec().into_boxed_slice(),
                    gen,
                },
            );
            g.fifo.push_back((page, gen));
        }
        if g.fifo.len() > 2 * g.ram.len() + 1024 {
            let ram = &g.ram;
            let kept: VecDeque<(u64, u64)> = g
                .fifo
                .iter()
                .copied()
                .filter(|(p, gen)| matches!(ram.get(p), Some(r) if r.gen == *gen))
                .collect();
            g.fifo = kept;
        }
    }

    /// Evict down to the export quota (after a quota change).
    pub fn set_quota(&self, quota: u64) -> u64 {
        let mut g = self.lock();
        g.quota = quota;
        let mut n = 0;
        while g.ram_bytes() > quota && self.evict_one(&mut g) {
            n += 1;
        }
        n
    }

    /// Evict up to `bytes` of RAM (host quota shrink); returns bytes freed.
    pub fn shed(&self, bytes: u64) -> u64 {
        let mut g = self.lock();
        let mut freed = 0;
        while freed < bytes && self.evict_one(&mut g) {
            freed += PAGE_SIZE;
        }
        freed
    }

    fn drop_page(&self, g: &mut Inner, page: u64) {
        if g.ram.remove(&page).is_some() {
            self.host.release(1);
        }
    }

    fn touch(g: &mut Inner) {
        g.counters.last_io = now();
    }

    /// Read [off, off + buf.len()) (bounds checked by the caller).
    pub fn read(&self, off: u64, buf: &mut [u8]) -> Result<(), i32> {
        let mut g = self.lock();
        Self::touch(&mut g);
        g.counters.reads += 1;
        g.counters.read_bytes += buf.len() as u64;
        let mut pos = 0usize;
        while pos < buf.len() {
            let o = off + pos as u64;
            let page = o / PAGE_SIZE;
            let in_page = (o % PAGE_SIZE) as usize;
            let n = std::cmp::min(PAGE - in_page, buf.len() - pos);
            if let Some(p) = g.ram.get(&page) {
                buf[pos..pos + n].copy_from_slice(&p.data[in_page..in_page + n]);
                g.counters.ram_hit_pages += 1;
            } else {
                // coalesce the run of pages not in RAM into one pread
                let mut end = pos + n;
                while end < buf.len() && !g.ram.contains_key(&((off + end as u64) / PAGE_SIZE)) {
                    end = std::cmp::min(buf.len(), end + PAGE - ((off + end as u64) % PAGE_SIZE) as usize);
                }
                buf[pos..end].copy_from_slice(self.map.slice(o, end - pos));
                let (first, last) = pages_of(o, (end - pos) as u64);
                g.counters.file_read_pages += last - first + 1;
                for p in first..=last {
                    g.monitor.swap_in(p);
                }
                pos = end;
                continue;
            }
            g.monitor.swap_in(page);
            pos += n;
        }
        Ok(())
    }

    /// Write `data` at `off`; returns once it is in the backing file (and on
    /// disk with `fua`).
    pub fn write(&self, off: u64, data: &[u8], fua: bool) -> Result<(), i32> {
        let mut g = self.lock();
        Self::touch(&mut g);
        g.counters.writes += 1;
        g.counters.write_bytes += data.len() as u64;
        if data.is_empty() {
            return Ok(());
        }
        // reserve blocks under holes first: a write fault into a hole on
        // a full file system would be a SIGBUS
        let (first, last) = pages_of(off, data.len() as u64);
        let mut p = first;
        while p <= last {
            if g.stored.get(p) {
                p += 1;
                continue;
            }
            let mut q = p;
            while q < last && !g.stored.get(q + 1) {
                q += 1;
            }
            let start = p * PAGE_SIZE;
            let end = std::cmp::min((q + 1) * PAGE_SIZE, self.size);
            if let Err(e) = fallocate(&self.file, 0, start, end - start) {
                g.counters.errors += 1;
                return Err(errno(&e));
            }
            p = q + 1;
        }
        self.map.write(off, data);
        if fua {
            if let Err(e) = self.file.sync_data() {
                g.counters.errors += 1;
                return Err(errno(&e));
            }
        }
        let mut pos = 0usize;
        let mut page_buf = [0u8; PAGE];
        while pos < data.len() {
            let o = off + pos as u64;
            let page = o / PAGE_SIZE;
            let in_page = (o % PAGE_SIZE) as usize;
            let n = std::cmp::min(PAGE - in_page, data.len() - pos);
            if n == PAGE {
                self.cache(&mut g, page, &data[pos..pos + n]);
            } else if let Some(p) = g.ram.get_mut(&page) {
                p.data[in_page..in_page + n].copy_from_slice(&data[pos..pos + n]);
            } else {
                // partial page not in RAM: the file has it whole now
                let start = page * PAGE_SIZE;
                let len = std::cmp::min(PAGE as u64, self.size - start) as usize;
                page_buf[len..].iter_mut().for_each(|b| *b = 0);
                page_buf[..len].copy_from_slice(self.map.slice(start, len));
                self.cache(&mut g, page, &page_buf);
            }
            g.stored.set(page);
            g.monitor.swap_out(page);
            pos += n;
        }
        Ok(())
    }

    pub fn flush(&self) -> Result<(), i32> {
        {
            let mut g = self.lock();
            Self::touch(&mut g);
            g.counters.flushes += 1;
        }
        self.file.sync_data().map_err(|e| {
            self.lock().counters.errors += 1;
            errno(&e)
        })
    }

    pub fn cache_hint(&self) {
        self.lock().counters.caches += 1;
    }

    /// Trim (`zero` false) or write zeroes.  The range reads back as zeros
    /// either way; with `punch` the file's blocks are released.
    pub fn discard(&self, off: u64, len: u64, zero: bool, punch: bool, fua: bool) -> Result<(), i32> {
        let mut g = self.lock();
        Self::touch(&mut g);
        if zero {
            g.counters.zeroes += 1;
        } else {
            g.counters.trims += 1;
        }
        if len == 0 {
            return Ok(());
        }
        let r = if punch {
            fallocate(
                &self.file,
                libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE,
                off,
                len,
            )
        } else {
            fallocate(
                &self.file,
                libc::FALLOC_FL_ZERO_RANGE | libc::FALLOC_FL_KEEP_SIZE,
                off,
                len,
            )
            .or_else(|_| write_zeros(&self.file, off, len))
        };
        if let Err(e) = r.and_then(|_| if fua { self.file.sync_data() } else { Ok(()) }) {
            g.counters.errors += 1;
            return Err(errno(&e));
        }
        let (first, last) = pages_of(off, len);
        for page in first..=last {
            let start = page * PAGE_SIZE;
            let whole = off <= start && off + len >= std::cmp::min(start + PAGE_SIZE, self.size);
            if whole {
                self.drop_page(&mut g, page);
                if punch {
                    g.stored.clear(page);
                } else {
                    g.stored.set(page);
                }
                g.monitor.discard(page);
            } else if let Some(p) = g.ram.get_mut(&page) {
                let a = std::cmp::max(off, start) - start;
                let b = std::cmp::min(off + len, start + PAGE_SIZE) - start;
                p.data[a as usize..b as usize].iter_mut().for_each(|x| *x = 0);
            }
        }
        Ok(())
    }

    /// Release this export's RAM (on delete).
    pub fn release_all(&self) {
        let mut g = self.lock();
        let n = g.ram.len() as u64;
        g.ram.clear();
        g.fifo.clear();
        self.host.release(n);
    }
}

fn fallocate(f: &File, mode: i32, off: u64, len: u64) -> io::Result<()> {
    // SAFETY: plain syscall on an owned descriptor
    let r = unsafe { libc::fallocate(f.as_raw_fd(), mode, off as i64, len as i64) };
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

fn write_zeros(f: &File, off: u64, len: u64) -> io::Result<()> {
    let zeros = vec![0u8; 1 << 20];
    let mut done = 0;
    while done < len {
        let n = std::cmp::min(len - done, zeros.len() as u64) as usize;
        f.write_all_at(&zeros[..n], off + done)?;
        done += n as u64;
    }
    Ok(())
}

/// Mark the pages that hold data in the file (SEEK_DATA / SEEK_HOLE).
fn scan_data(f: &File, size: u64, stored: &mut Bitmap) {
    let fd = f.as_raw_fd();
    let mut pos: i64 = 0;
    while (pos as u64) < size {
        // SAFETY: lseek on an owned descriptor
        let data = unsafe { libc::lseek(fd, pos, libc::SEEK_DATA) };
        if data < 0 {
            break; // ENXIO: no more data
        }
        let hole = unsafe { libc::lseek(fd, data, libc::SEEK_HOLE) };
        let end = if hole < 0 { size as i64 } else { hole };
        let mut p = data as u64 / PAGE_SIZE;
        while p * PAGE_SIZE < end as u64 {
            stored.set(p);
            p += 1;
        }
        pos = end;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        };
        Export::open(dir, &cfg, host.clone(), 16).unwrap()
    }

    #[test]
    fn quota_overflows_to_file_and_survives_reopen() {
        let dir = tmpdir("quota");
        let host = Arc::new(Host::new(1 << 30));
        let e = export(&dir, 64 * 4096, 4 * 4096, &host);
        for p in 0..10u64 {
            e.write(p * 4096, &[p as u8 + 1; 4096], false).unwrap();
        }
        {
            let g = e.lock();
            assert_eq!(g.ram_bytes(), 4 * 4096);
            assert_eq!(g.counters.evicted_pages, 6);
            assert_eq!(g.stored_pages(), 10);
        }
        assert_eq!(host.used.load(Ordering::SeqCst), 4 * 4096);
        assert_eq!(e.tier_of(0), Tier::File);
        assert_eq!(e.tier_of(9), Tier::Ram);
        let mut buf = vec![0u8; 10 * 4096];
        e.read(0, &mut buf).unwrap();
        for p in 0..10 {
            assert!(buf[p * 4096..(p + 1) * 4096].iter().all(|&b| b == p as u8 + 1));
        }
        // shrink the quota at run time
        assert_eq!(e.set_quota(4096), 3);
        assert_eq!(host.used.load(Ordering::SeqCst), 4096);
        drop(e);
        // a restart: everything comes back from the file
        let e = export(&dir, 64 * 4096, 4 * 4096, &host);
        assert_eq!(e.lock().stored_pages(), 10);
        let mut page = vec![0u8; 4096];
        e.read(7 * 4096, &mut page).unwrap();
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
        };
        let b = Export::open(&dir, &cfg, host.clone(), 0).unwrap();
        a.write(0, &[1; 8192], false).unwrap();
        b.write(0, &[2; 8192], false).unwrap();
        // b got one page; its second write evicted its own first page
        assert_eq!(a.lock().ram_bytes(), 8192);
        assert_eq!(b.lock().ram_bytes(), 4096);
        assert_eq!(host.used.load(Ordering::SeqCst), 3 * 4096);
        let mut buf = [0u8; 8192];
        b.read(0, &mut buf).unwrap();
        assert!(buf.iter().all(|&x| x == 2));
    }

    #[test]
    fn partial_writes_trim_and_zero() {
        let dir = tmpdir("partial");
        let host = Arc::new(Host::new(1 << 30));
        let e = export(&dir, 8 * 4096 + 100, 1 << 20, &host);
        e.write(4090, &[7u8; 20], false).unwrap(); // straddles pages 0 and 1
        let mut buf = vec![9u8; 8192];
        e.read(0, &mut buf).unwrap();
        assert!(buf[..4090].iter().all(|&b| b == 0));
        assert!(buf[4090..4110].iter().all(|&b| b == 7));
        assert!(buf[4110..].iter().all(|&b| b == 0));
        // the odd-sized last page
        e.write(8 * 4096 + 90, &[5u8; 10], false).unwrap();
        let mut tail = [0u8; 100];
        e.read(8 * 4096, &mut tail).unwrap();
        assert_eq!(&tail[90..], &[5u8; 10]);
        // trim part of page 1 (zeroes those bytes) and all of page 0
        e.write(0, &[3u8; 8192], false).unwrap();
        e.discard(0, 4096 + 10, false, true, false).unwrap();
        e.read(0, &mut buf).unwrap();
        assert!(buf[..4106].iter().all(|&b| b == 0));
        assert!(buf[4106..].iter().all(|&b| b == 3));
        assert_eq!(e.tier_of(0), Tier::File);
        e.discard(4096, 4096, true, false, true).unwrap();
        e.read(0, &mut buf).unwrap();
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
