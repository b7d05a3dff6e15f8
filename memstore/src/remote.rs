//! The client side of remote memory: the remote tier of an export, between
//! the RAM tier and the backing file (doc/source/remote-memory.rst).
//!
//! * Placement: a page the RAM tier evicts, or one that overflows it, is
//!   *offered* to this tier (`Device::offer`), which copies it to a slot of
//!   an attached slab (the one with the most free slots; a page keeps its
//!   slot while it has one).  Remote writes happen after the guest's write
//!   was acknowledged, on the slab's worker thread: the guest never waits
//!   for the network.
//! * I1 (copy): every write goes to the layer below (the backing file)
//!   before it is acknowledged, whatever this tier does.
//! * I2 (generation): each placed page has a generation, new (from one
//!   counter that only grows) at each placement and at each write or trim
//!   that touches the page; a slot records the generation the lender
//!   confirmed.  A read is served from a slab only if the slot's confirmed
//!   generation equals the page's: an in-flight, failed or superseded
//!   remote write leaves it behind, so a slab never serves an old version.
//! * Failure: a remote read that fails or times out (`timeout`) is served
//!   from the file in the same request, and the slab is detached at its
//!   first failure (read, write, or the worker's ping every `PING`).
//!   Detaching forgets the slot map under the export mutex; nothing is
//!   copied back: every page is in the file.
//! * Page cache (`--remote-dirty-window W`): the file's copy of a page that
//!   went to a slab would otherwise stay in the host's page cache, so the
//!   remote tier would save no local memory.  Placed pages (and those the
//!   RAM tier gave up that found no slot or no room in the write queue:
//!   they live in the file alone) are gathered in thirds of W; a full third
//!   is unmapped from memstore's mapping and handed to the export's
//!   writeback thread, which writes it back and waits for it
//!   (sync_file_range) and drops it (posix_fadvise DONTNEED) on its own
//!   descriptor.  One third may wait in the hand-over queue, so at most W
//!   bytes of remote-placed pages are in the page cache on their account,
//!   and a request waits only when the window is full.  Only clean,
//!   unmapped pages are dropped, so nothing leaves the file.

use crate::device::{covers, pages, Device, Errno, PAGE, PAGE_SIZE};
use crate::log::{info, warn};
use crate::nbd;
use crate::tls;
use openssl::ssl::SslStream;
use serde::Serialize;
use std::collections::{HashMap, VecDeque};
use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream, ToSocketAddrs};
use std::os::unix::io::AsRawFd;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender, TrySendError};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread;
use std::time::{Duration, Instant};

/// Default deadline of one remote request (`--remote-timeout`).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_millis(200);
/// An idle slab's connections are pinged (NBD_CMD_FLUSH) this often.
pub const PING: Duration = Duration::from_millis(250);
/// Remote writes queued per slab and not yet sent; beyond, a page is not
/// placed (it stays in the file only).
pub const QUEUE: usize = 1024;
/// Largest remote request (a larger run is split).
pub const MAX_REQUEST: usize = 1 << 20;
/// A READ larger than a chunk sends its remote requests for at most this
/// many bytes ahead (what the socket buffers hold without stalling the
/// lender).
pub const READ_AHEAD_MAX: u64 = 4 << 20;
/// A READ's chunks when it has remote pages (lanes.rs): the replies of
/// one are received, checked and passed on while the next ones travel.
pub const RECV_CHUNK: usize = 256 << 10;
/// Default bound on the host page cache that the backing file's copies of
/// remote-placed pages may hold (`--remote-dirty-window`).
pub const DEFAULT_DIRTY_WINDOW: u64 = 64 << 20;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    match m.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    }
}

fn setsockopt_int(fd: i32, level: i32, opt: i32, v: i32) {
    // SAFETY: setsockopt with a pointer to an int we own
    unsafe {
        libc::setsockopt(
            fd,
            level,
            opt,
            &v as *const i32 as *const libc::c_void,
            std::mem::size_of::<i32>() as libc::socklen_t,
        );
    }
}

/// `nbds://HOST:PORT/EXPORT` → (address, export name).
pub fn parse_uri(uri: &str) -> Result<(SocketAddr, String), String> {
    let rest = uri
        .strip_prefix("nbds://")
        .ok_or_else(|| format!("slab uri {:?} is not nbds://HOST:PORT/EXPORT", uri))?;
    let (hostport, export) = rest
        .split_once('/')
        .ok_or_else(|| format!("slab uri {:?} has no export name", uri))?;
    let addr = hostport
        .to_socket_addrs()
        .map_err(|e| format!("slab uri {:?}: {}", uri, e))?
        .next()
        .ok_or_else(|| format!("slab uri {:?}: no address", uri))?;
    if export.is_empty() {
        return Err(format!("slab uri {:?} has no export name", uri));
    }
    Ok((addr, export.to_string()))
}

/// One NBD connection to a slab, over TLS-PSK.
pub struct Conn {
    tls: SslStream<tls::Corked<TcpStream>>,
    raw: TcpStream,
    pub size: u64,
    cookie: u64,
    /// The negotiated cipher suite.
    pub cipher: String,
}

fn opt_send<W: Write>(w: &mut W, opt: u32, data: &[u8]) -> io::Result<()> {
    let mut m = nbd::IHAVEOPT.to_be_bytes().to_vec();
    m.extend_from_slice(&opt.to_be_bytes());
    m.extend_from_slice(&(data.len() as u32).to_be_bytes());
    m.extend_from_slice(data);
    w.write_all(&m)?;
    w.flush()
}

fn opt_recv<R: Read>(r: &mut R) -> io::Result<(u32, u32, Vec<u8>)> {
    if nbd::read_u64(r)? != nbd::REPLY_MAGIC_OPT {
        return Err(io::Error::new(io::ErrorKind::InvalidData, "bad option reply magic"));
    }
    let opt = nbd::read_u32(r)?;
    let kind = nbd::read_u32(r)?;
    let len = nbd::read_u32(r)?;
    if len > nbd::MAX_OPTION {
        return Err(io::Error::new(io::ErrorKind::InvalidData, "option reply too large"));
    }
    let mut d = vec![0u8; len as usize];
    r.read_exact(&mut d)?;
    Ok((opt, kind, d))
}

fn refused(msg: String) -> io::Error {
    io::Error::new(io::ErrorKind::PermissionDenied, msg)
}

impl Conn {
    /// Connect, STARTTLS, prove the key, NBD_OPT_GO `export`.
    pub fn connect(addr: SocketAddr, export: &str, identity: &str, key: &[u8], timeout: Duration) -> io::Result<Conn> {
        let setup = std::cmp::max(timeout, Duration::from_secs(2));
        let raw = TcpStream::connect_timeout(&addr, setup)?;
        raw.set_nodelay(true)?;
        let fd = raw.as_raw_fd();
        // a dead peer without RST is noticed within about a second, idle
        // or not (TCP_USER_TIMEOUT in ms; keepalive in s)
        setsockopt_int(fd, libc::IPPROTO_TCP, libc::TCP_USER_TIMEOUT, 1000);
        setsockopt_int(fd, libc::SOL_SOCKET, libc::SO_KEEPALIVE, 1);
        setsockopt_int(fd, libc::IPPROTO_TCP, libc::TCP_KEEPIDLE, 1);
        setsockopt_int(fd, libc::IPPROTO_TCP, libc::TCP_KEEPINTVL, 1);
        setsockopt_int(fd, libc::IPPROTO_TCP, libc::TCP_KEEPCNT, 2);
        raw.set_read_timeout(Some(setup))?;
        raw.set_write_timeout(Some(setup))?;
        let mut plain = raw.try_clone()?;
        if nbd::read_u64(&mut plain)? != nbd::NBDMAGIC || nbd::read_u64(&mut plain)? != nbd::IHAVEOPT {
            return Err(io::Error::new(io::ErrorKind::InvalidData, "not a newstyle NBD server"));
        }
        let _flags = nbd::read_u16(&mut plain)?;
        plain.write_all(&(nbd::CLIENT_FIXED_NEWSTYLE | nbd::CLIENT_NO_ZEROES).to_be_bytes())?;
        opt_send(&mut plain, nbd::OPT_STARTTLS, &[])?;
        let (_, kind, d) = opt_recv(&mut plain)?;
        if kind != nbd::REP_ACK {
            return Err(refused(format!(
                "server refused STARTTLS ({:#x}: {})",
                kind,
                String::from_utf8_lossy(&d)
            )));
        }
        let ctx = tls::client_context(identity, key)?;
        let mut t = tls::connect(&ctx, tls::Corked::new(plain))?;
        let mut go = (export.len() as u32).to_be_bytes().to_vec();
        go.extend_from_slice(export.as_bytes());
        go.extend_from_slice(&0u16.to_be_bytes());
        opt_send(&mut t, nbd::OPT_GO, &go)?;
        let mut size = None;
        loop {
            let (_, kind, d) = opt_recv(&mut t)?;
            match kind {
                nbd::REP_ACK => break,
                nbd::REP_INFO if d.len() >= 12 && d[..2] == nbd::INFO_EXPORT.to_be_bytes() => {
                    let mut b = [0u8; 8];
                    b.copy_from_slice(&d[2..10]);
                    size = Some(u64::from_be_bytes(b));
                }
                nbd::REP_INFO => {}
                k => {
                    return Err(refused(format!(
                        "NBD_OPT_GO {} refused ({:#x}: {})",
                        export,
                        k,
                        String::from_utf8_lossy(&d)
                    )))
                }
            }
        }
        let size = size.ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "no export size"))?;
        raw.set_read_timeout(Some(timeout))?;
        raw.set_write_timeout(Some(timeout))?;
        let cipher = tls::cipher_of(&t);
        Ok(Conn {
            cipher,
            tls: t,
            raw,
            size,
            cookie: 0,
        })
    }

    fn header(&mut self, out: &mut Vec<u8>, cmd: u16, off: u64, len: u32) -> u64 {
        self.cookie += 1;
        out.extend_from_slice(&nbd::REQUEST_MAGIC.to_be_bytes());
        out.extend_from_slice(&0u16.to_be_bytes());
        out.extend_from_slice(&cmd.to_be_bytes());
        out.extend_from_slice(&self.cookie.to_be_bytes());
        out.extend_from_slice(&off.to_be_bytes());
        out.extend_from_slice(&len.to_be_bytes());
        self.cookie
    }

    fn reply(&mut self, cookie: u64) -> io::Result<()> {
        let mut h = [0u8; 16];
        self.tls.read_exact(&mut h)?;
        let magic = u32::from_be_bytes([h[0], h[1], h[2], h[3]]);
        let err = u32::from_be_bytes([h[4], h[5], h[6], h[7]]);
        let mut c = [0u8; 8];
        c.copy_from_slice(&h[8..]);
        if magic != nbd::SIMPLE_REPLY_MAGIC || u64::from_be_bytes(c) != cookie {
            return Err(io::Error::new(io::ErrorKind::InvalidData, "malformed reply"));
        }
        if err != 0 {
            return Err(io::Error::new(io::ErrorKind::Other, format!("slab answered error {}", err)));
        }
        Ok(())
    }

    /// Send requests (their headers and payloads, `out`) in one write.
    fn send(&mut self, out: &[u8]) -> io::Result<()> {
        self.tls.write_all(out)?;
        self.tls.flush()
    }

    /// Read `buf.len()` bytes at `off` of the slab.
    pub fn read(&mut self, off: u64, buf: &mut [u8]) -> io::Result<()> {
        self.read_many(&mut [(off, buf)])
    }

    /// Several reads, pipelined: all requests, then all replies (the
    /// lender streams one while the next is on its way).
    pub fn read_many(&mut self, reads: &mut [(u64, &mut [u8])]) -> io::Result<()> {
        let mut out = Vec::with_capacity(28 * reads.len());
        let mut cookies = Vec::with_capacity(reads.len());
        for (off, buf) in reads.iter() {
            cookies.push(self.header(&mut out, nbd::CMD_READ, *off, buf.len() as u32));
        }
        self.tls.write_all(&out)?;
        self.tls.flush()?;
        for ((_, buf), c) in reads.iter_mut().zip(cookies) {
            self.reply(c)?;
            self.tls.read_exact(buf)?;
        }
        Ok(())
    }

    /// Write each (offset, data), pipelined: all requests, then all replies.
    pub fn write_all(&mut self, writes: &[(u64, &[u8])]) -> io::Result<()> {
        let cookies = self.send_writes(writes)?;
        self.replies(&cookies)
    }

    /// Send a WRITE for each (offset, data) and return their cookies; the
    /// replies are left in the socket for `replies`.
    pub fn send_writes(&mut self, writes: &[(u64, &[u8])]) -> io::Result<Vec<u64>> {
        let mut out = Vec::with_capacity(writes.len() * (28 + PAGE));
        let mut cookies = Vec::with_capacity(writes.len());
        for (off, data) in writes {
            cookies.push(self.header(&mut out, nbd::CMD_WRITE, *off, data.len() as u32));
            out.extend_from_slice(data);
        }
        self.tls.write_all(&out)?;
        self.tls.flush()?;
        Ok(cookies)
    }

    /// Read the (data-less) replies of `cookies`, in order: each must be a
    /// success.
    pub fn replies(&mut self, cookies: &[u64]) -> io::Result<()> {
        for c in cookies {
            self.reply(*c)?;
        }
        Ok(())
    }

    /// A round trip that changes nothing (NBD_CMD_FLUSH): is the slab there?
    pub fn ping(&mut self) -> io::Result<()> {
        let mut out = Vec::with_capacity(28);
        let c = self.header(&mut out, nbd::CMD_FLUSH, 0, 0);
        self.tls.write_all(&out)?;
        self.tls.flush()?;
        self.reply(c)
    }

    fn shutdown(&self) {
        let _ = self.raw.shutdown(Shutdown::Both);
    }
}

/// What a slab client shares with its worker thread.
struct SlabShared {
    /// slot -> the generation the lender confirmed (0: none)
    confirmed: Mutex<Vec<u64>>,
    failed: AtomicBool,
    why: Mutex<Option<String>>,
    failed_at: Mutex<Option<f64>>,
    closing: AtomicBool,
    remote_writes: AtomicU64,
    /// Batches the worker sent (`remote_writes` / this: pages per batch).
    remote_write_batches: AtomicU64,
    raws: Vec<TcpStream>,
    /// The read connections no fetch holds (`READ_CONNS` in all): a fetch
    /// takes one for its whole exchange, the worker pings idle ones.
    idle: Mutex<Vec<Conn>>,
    idle_cv: Condvar,
}

impl SlabShared {
    /// The first failure detaches the slab: mark it, close its sockets (a
    /// reader blocked on one returns at once).
    fn fail(&self, id: &str, why: String) {
        if self.closing.load(Ordering::SeqCst) {
            return;
        }
        {
            // the reason and the time are set before the flag, under the
            // reason's lock: a fetch fails without the export's mutex, and
            // `info` must never see "failed" without them
            let mut w = lock(&self.why);
            if self.failed.load(Ordering::SeqCst) {
                return;
            }
            *w = Some(why.clone());
            *lock(&self.failed_at) = Some(crate::geiger::unix_now());
            self.failed.store(true, Ordering::SeqCst);
        }
        warn(&format!("slab {}: {}: detached (its pages are read from the backing file)", id, why));
        for r in &self.raws {
            let _ = r.shutdown(Shutdown::Both);
        }
        self.idle_cv.notify_all();
    }

    /// An idle read connection, waiting while every one is in use; None
    /// once the slab failed or is closing.
    fn take_conn(&self) -> Option<Conn> {
        let mut idle = lock(&self.idle);
        loop {
            if self.failed.load(Ordering::SeqCst) || self.closing.load(Ordering::SeqCst) {
                return None;
            }
            if let Some(c) = idle.pop() {
                return Some(c);
            }
            // the timeout only re-checks the flags (`fail` wakes us too)
            idle = match self.idle_cv.wait_timeout(idle, PING) {
                Ok((g, _)) => g,
                Err(p) => p.into_inner().0,
            };
        }
    }

    /// A read connection whose every reply was read goes back.
    fn give_conn(&self, c: Conn) {
        lock(&self.idle).push(c);
        self.idle_cv.notify_one();
    }
}

struct Job {
    slot: u64,
    gen: u64,
    data: Box<[u8]>,
}

/// A slab attached to an export (a granted allocation).
pub struct SlabClient {
    pub id: String,
    pub uri: String,
    pub size: u64,
    slots: u64,
    next_unused: u64,
    free: Vec<u64>,
    used: u64,
    tx: Option<SyncSender<Job>>,
    shared: Arc<SlabShared>,
    pub attached_at: f64,
    pub hit_pages: u64,
    pub read_failures: u64,
}

/// A slab as `stats` and `slabs` report it.
#[derive(Clone, Debug, Serialize)]
pub struct SlabInfo {
    pub id: String,
    pub uri: String,
    pub size: u64,
    pub state: &'static str,
    pub remote_pages: u64,
    pub hit_pages: u64,
    pub remote_writes: u64,
    pub remote_write_batches: u64,
    pub attached_at: f64,
    pub failed_at: Option<f64>,
    pub error: Option<String>,
}

impl SlabClient {
    /// Connect to the slab at `uri` with the allocation's credentials:
    /// `READ_CONNS` connections for reads, one for the worker's writes and
    /// pings.  Refused when the slab is smaller than `size`.
    pub fn attach(id: &str, uri: &str, size: u64, identity: &str, key: &[u8], timeout: Duration) -> Result<SlabClient, String> {
        let (addr, export) = parse_uri(uri)?;
        if export != id {
            return Err(format!("slab uri {} does not name allocation {}", uri, id));
        }
        if size == 0 || size % PAGE_SIZE != 0 {
            return Err(format!("slab size {} is not a positive multiple of 4096", size));
        }
        let connect = || {
            Conn::connect(addr, &export, identity, key, timeout)
                .map_err(|e| format!("cannot attach slab {} at {}: {}", id, uri, e))
        };
        let rcs = (0..READ_CONNS).map(|_| connect()).collect::<Result<Vec<Conn>, String>>()?;
        let wc = connect()?;
        let rc = &rcs[0];
        if rc.size < size {
            return Err(format!(
                "slab {} at {} has {} bytes, {} were granted",
                id, uri, rc.size, size
            ));
        }
        let cipher = rc.cipher.clone();
        let mut raws = Vec::with_capacity(READ_CONNS + 1);
        for c in rcs.iter().chain(std::iter::once(&wc)) {
            raws.push(c.raw.try_clone().map_err(|e| e.to_string())?);
        }
        let slots = size / PAGE_SIZE;
        let shared = Arc::new(SlabShared {
            confirmed: Mutex::new(vec![0; slots as usize]),
            failed: AtomicBool::new(false),
            why: Mutex::new(None),
            failed_at: Mutex::new(None),
            closing: AtomicBool::new(false),
            remote_writes: AtomicU64::new(0),
            remote_write_batches: AtomicU64::new(0),
            raws,
            idle: Mutex::new(rcs),
            idle_cv: Condvar::new(),
        });
        let (tx, rx) = mpsc::sync_channel(QUEUE);
        let (sh, wid) = (shared.clone(), id.to_string());
        thread::Builder::new()
            .name(format!("slab-{}", id))
            .spawn(move || worker(wid, wc, rx, sh))
            .map_err(|e| format!("cannot start the slab worker: {}", e))?;
        info(&format!("slab {}: attached at {} ({} bytes, {})", id, uri, size, cipher));
        Ok(SlabClient {
            id: id.to_string(),
            uri: uri.to_string(),
            size,
            slots,
            next_unused: 0,
            free: Vec::new(),
            used: 0,
            tx: Some(tx),
            shared,
            attached_at: crate::geiger::unix_now(),
            hit_pages: 0,
            read_failures: 0,
        })
    }

    pub fn failed(&self) -> bool {
        self.shared.failed.load(Ordering::SeqCst)
    }

    fn free_slots(&self) -> u64 {
        self.slots - self.used
    }

    fn alloc_slot(&mut self) -> Option<u64> {
        let s = match self.free.pop() {
            Some(s) => s,
            None if self.next_unused < self.slots => {
                self.next_unused += 1;
                self.next_unused - 1
            }
            None => return None,
        };
        self.used += 1;
        Some(s)
    }

    fn free_slot(&mut self, slot: u64) {
        lock(&self.shared.confirmed)[slot as usize] = 0;
        self.free.push(slot);
        self.used -= 1;
    }

    fn confirmed(&self, slot: u64) -> u64 {
        lock(&self.shared.confirmed)[slot as usize]
    }

    pub fn info(&self) -> SlabInfo {
        SlabInfo {
            id: self.id.clone(),
            uri: self.uri.clone(),
            size: self.size,
            state: if self.failed() { "failed" } else { "attached" },
            remote_pages: self.used,
            hit_pages: self.hit_pages,
            remote_writes: self.shared.remote_writes.load(Ordering::Relaxed),
            remote_write_batches: self.shared.remote_write_batches.load(Ordering::Relaxed),
            attached_at: self.attached_at,
            failed_at: *lock(&self.shared.failed_at),
            error: lock(&self.shared.why).clone(),
        }
    }
}

impl Drop for SlabClient {
    fn drop(&mut self) {
        self.shared.closing.store(true, Ordering::SeqCst);
        self.tx = None; // the worker ends
        for r in &self.shared.raws {
            let _ = r.shutdown(Shutdown::Both);
        }
        self.shared.idle_cv.notify_all();
    }
}

/// Read connections per slab (the lender allows 4 per slab): as many as
/// READ workers per NBD connection (`lanes::READ_WORKERS`).
pub const READ_CONNS: usize = 2;

/// Pages per batch of remote writes (one pipelined exchange, 256 KiB).
pub const WRITE_BATCH: usize = 64;
/// Batches a slab's worker keeps in flight (sent, replies not read): the
/// lender stores one batch while the next travels and the worker encrypts
/// a third, instead of each side waiting for the other (a burst of
/// swap-outs otherwise overflowed the queue, `QUEUE`).  Their replies are
/// 16 bytes each, so neither side ever blocks on the other's socket buffer.
pub const WRITE_DEPTH: usize = 4;

/// A batch sent to the lender whose replies are not read yet: its cookies
/// and the (slot, generation) of each page.
struct InFlight {
    cookies: Vec<u64>,
    pages: Vec<(u64, u64)>,
}

/// A slab's worker: sends the queued remote writes (pipelined batches, up
/// to `WRITE_DEPTH` in flight), confirms their generations once the
/// lender acknowledged them, pings both connections when idle.
fn worker(id: String, mut conn: Conn, rx: Receiver<Job>, sh: Arc<SlabShared>) {
    let mut flight: VecDeque<InFlight> = VecDeque::new();
    loop {
        if sh.failed.load(Ordering::SeqCst) || sh.closing.load(Ordering::SeqCst) {
            break;
        }
        // wait for work only when nothing is in flight
        let first = if flight.is_empty() {
            match rx.recv_timeout(PING) {
                Ok(job) => Some(job),
                Err(RecvTimeoutError::Timeout) => {
                    if let Err(e) = conn.ping() {
                        sh.fail(&id, format!("ping failed: {}", e));
                        continue;
                    }
                    // the read connections no fetch holds, one at a time
                    // (a fetch meanwhile takes another); the oldest first
                    for _ in 0..READ_CONNS {
                        let idle = {
                            let mut idle = lock(&sh.idle);
                            if idle.is_empty() {
                                None
                            } else {
                                Some(idle.remove(0))
                            }
                        };
                        let mut rc = match idle {
                            Some(c) => c,
                            None => break,
                        };
                        if let Err(e) = rc.ping() {
                            sh.fail(&id, format!("ping failed: {}", e));
                            break;
                        }
                        sh.give_conn(rc);
                    }
                    continue;
                }
                Err(RecvTimeoutError::Disconnected) => break,
            }
        } else {
            rx.try_recv().ok()
        };
        let sent_now = first.is_some();
        if let Some(job) = first {
            let mut batch = vec![job];
            while batch.len() < WRITE_BATCH {
                match rx.try_recv() {
                    Ok(j) => batch.push(j),
                    Err(_) => break,
                }
            }
            let writes: Vec<(u64, &[u8])> = batch.iter().map(|j| (j.slot * PAGE_SIZE, &j.data[..])).collect();
            match conn.send_writes(&writes) {
                Ok(cookies) => flight.push_back(InFlight {
                    cookies,
                    pages: batch.iter().map(|j| (j.slot, j.gen)).collect(),
                }),
                Err(e) => {
                    sh.fail(&id, format!("remote write failed: {}", e));
                    continue;
                }
            }
        }
        // the oldest batch's replies, when the pipeline is full or there
        // is nothing more to send now
        if flight.len() >= WRITE_DEPTH || (!sent_now && !flight.is_empty()) {
            if let Some(b) = flight.pop_front() {
                match conn.replies(&b.cookies) {
                    Ok(()) => {
                        let mut c = lock(&sh.confirmed);
                        for (slot, gen) in &b.pages {
                            c[*slot as usize] = *gen;
                        }
                        sh.remote_writes.fetch_add(b.pages.len() as u64, Ordering::Relaxed);
                        sh.remote_write_batches.fetch_add(1, Ordering::Relaxed);
                    }
                    Err(e) => sh.fail(&id, format!("remote write failed: {}", e)),
                }
            }
        }
    }
    conn.shutdown();
}

/// Where a page is placed: slab (by key), slot, generation.
#[derive(Clone, Copy, Debug)]
struct Placed {
    slab: u64,
    slot: u64,
    gen: u64,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct RemoteCounters {
    pub remote_hit_pages: u64,
    pub remote_placed_pages: u64,
    pub remote_skipped_pages: u64,
    pub remote_read_failures: u64,
    /// READs whose client took no reply data for `lanes::CLIENT_STALL`
    /// while they held lender connections (the rest read from the file).
    pub remote_fetches_abandoned: u64,
    pub remote_detaches: u64,
    /// Remote-placed pages whose file copy was written and dropped from
    /// the page cache (the dirty window).
    pub remote_cache_dropped_pages: u64,
    pub remote_writeback_errors: u64,
    /// Microseconds a request spent on remote reads (the round trips, or
    /// the replies of READs sent ahead), on reads from the file below,
    /// and waiting for the dirty window's writeback (`rotate`).
    pub remote_read_us: u64,
    pub remote_file_read_us: u64,
    pub remote_writeback_us: u64,
    /// Microseconds the writeback thread spent waiting for the dirty
    /// window's halves and dropping them (off the request path).
    pub remote_writeback_thread_us: u64,
}

pub struct RemoteTier<D> {
    next: D,
    /// (key, slab), oldest first
    slabs: Vec<(u64, SlabClient)>,
    next_key: u64,
    placed: HashMap<u64, Placed>,
    gen: u64,
    /// Slabs detached lately (failed or asked), newest last, for `slabs`.
    gone: std::collections::VecDeque<SlabInfo>,
    pub counters: RemoteCounters,
    /// The dirty window in pages (0: off): placed pages being gathered,
    /// and (without a writeback thread) the previous third, being
    /// written back.
    window: u64,
    filling: Vec<u64>,
    writing: Vec<u64>,
    /// The fetch of the READ being served (`Device::stash`).
    stash: Option<Fetch>,
    /// The writeback thread, once the first third is handed over (None
    /// when the layer below has no `cache_dropper`: done here).
    writeback: Option<Writeback>,
}

/// A third of the dirty window handed to the writeback thread, and what
/// became of it: (pages, result, microseconds the thread spent).
type Done = (Vec<u64>, Result<(), Errno>, u64);

/// The remote tier's writeback thread: it writes a third of the window
/// back, waits for it and drops it from the page cache, off the request
/// path and without the export's mutex.  The hand-over queue holds one
/// third: at most the third being filled, the one queued and the one
/// being written are cached (the window's bound), and a request waits only
/// when the window is full (a third fills while two are pending).
struct Writeback {
    tx: SyncSender<Vec<u64>>,
    done: Receiver<Done>,
}

impl Writeback {
    fn start(dropper: crate::file::CacheDropper) -> io::Result<Writeback> {
        let (tx, rx) = mpsc::sync_channel::<Vec<u64>>(1);
        let (done_tx, done) = mpsc::channel::<Done>();
        thread::Builder::new().name("writeback".into()).spawn(move || {
            for pages in rx {
                let t = Instant::now();
                let r = dropper.drop_cached(&pages);
                if done_tx.send((pages, r, t.elapsed().as_micros() as u64)).is_err() {
                    break;
                }
            }
        })?;
        Ok(Writeback { tx, done })
    }
}

/// Detached slabs remembered for the `slabs` listing.
pub const GONE_KEPT: usize = 64;

impl<D: Device> RemoteTier<D> {
    pub fn new(next: D) -> RemoteTier<D> {
        RemoteTier {
            next,
            slabs: Vec::new(),
            next_key: 1,
            placed: HashMap::new(),
            gen: 0,
            gone: std::collections::VecDeque::new(),
            counters: RemoteCounters::default(),
            window: DEFAULT_DIRTY_WINDOW / PAGE_SIZE,
            filling: Vec::new(),
            writing: Vec::new(),
            writeback: None,
            stash: None,
        }
    }

    /// Bound the page cache that remote-placed pages' file copies hold to
    /// `bytes` (0: no bound, the kernel writes back and drops them when it
    /// likes).
    pub fn set_dirty_window(&mut self, bytes: u64) {
        self.window = bytes / PAGE_SIZE;
        if self.window == 0 {
            self.rotate();
            self.rotate();
            self.settle_writeback();
        }
    }

    pub fn dirty_window(&self) -> u64 {
        self.window * PAGE_SIZE
    }

    /// Page `page` left the RAM tier for a slab, or for the file alone when
    /// the slabs were full or the write queue was: its file copy joins the
    /// dirty window, to leave the page cache (a skipped page otherwise
    /// stayed there: local memory beyond the export's quota, read back
    /// from host RAM rather than from the backup file's disk).
    fn gather(&mut self, page: u64) {
        if self.window > 0 {
            self.filling.push(page);
            if self.filling.len() as u64 >= std::cmp::max(1, self.window / 3) {
                self.rotate();
            }
        }
    }

    /// The third being filled is full: hand it to the writeback thread
    /// (without one: wait for and drop the third written back since the
    /// last rotation, start writing this one back).
    fn rotate(&mut self) {
        let t = Instant::now();
        self.rotate_now();
        self.counters.remote_writeback_us += t.elapsed().as_micros() as u64;
    }

    fn rotate_now(&mut self) {
        if self.writeback.is_none() {
            if let Some(d) = self.next.cache_dropper() {
                match Writeback::start(d) {
                    Ok(w) => self.writeback = Some(w),
                    Err(e) => warn(&format!("remote tier: no writeback thread ({}): writeback on the request path", e)),
                }
            }
        }
        // the halves the thread has dropped since the last rotation
        self.collect_writeback();
        let mut cur = std::mem::take(&mut self.filling);
        cur.sort_unstable();
        cur.dedup();
        if let Some(w) = &self.writeback {
            // the thread starts the writeback too; here only memstore's
            // mapping lets the pages go (a mapped page is never dropped),
            // and their next whole-page write goes by pwrite already
            self.next.unmap_cached(&cur);
            self.next.dropped_cached(&cur);
            // waits only while a third is queued and another is being
            // written (the window is full); an empty third is a barrier
            if w.tx.send(cur).is_ok() {
                return;
            }
            warn("remote tier: the writeback thread is gone: writeback on the request path");
            self.writeback = None;
            return;
        }
        if let Err(e) = self.next.start_writeback(&cur) {
            self.counters.remote_writeback_errors += 1;
            warn(&format!("remote tier: writeback of {} pages failed: errno {}", cur.len(), e));
        }
        let done = std::mem::replace(&mut self.writing, cur);
        if !done.is_empty() {
            let r = self.next.drop_cached(&done);
            self.writeback_done(done, r);
        }
    }

    /// Account for the halves the writeback thread finished.
    fn collect_writeback(&mut self) {
        let finished: Vec<Done> = match &self.writeback {
            Some(w) => w.done.try_iter().collect(),
            None => return,
        };
        for (pages, r, us) in finished {
            self.counters.remote_writeback_thread_us += us;
            self.writeback_done(pages, r);
        }
    }

    fn writeback_done(&mut self, done: Vec<u64>, r: Result<(), Errno>) {
        if done.is_empty() {
            return;
        }
        match r {
            Ok(()) => self.counters.remote_cache_dropped_pages += done.len() as u64,
            Err(e) => {
                // the pages stay cached (and in the file): only the
                // bound is missed
                self.counters.remote_writeback_errors += 1;
                warn(&format!("remote tier: writeback of {} pages failed: errno {}", done.len(), e));
            }
        }
    }

    /// Wait until every third handed to the writeback thread is dropped,
    /// and account for them (tests, and `set_dirty_window(0)`).
    pub fn settle_writeback(&mut self) {
        let ok = match &self.writeback {
            // two barriers: the second is taken once the first is, that
            // is once every third handed over before them is dropped
            Some(w) => w.tx.send(Vec::new()).is_ok() && w.tx.send(Vec::new()).is_ok(),
            None => return,
        };
        if !ok {
            self.writeback = None;
        }
        self.collect_writeback();
    }

    /// A read with its remote pages fetched on the spot: plan, round
    /// trips, read.  It does network I/O: for callers that hold no lock
    /// others wait for (tests, tools); the NBD path plans under the
    /// export's mutex and fetches without it (lanes.rs).
    pub fn read_through(&mut self, off: u64, buf: &mut [u8]) -> Result<(), Errno> {
        let mut f = self.plan_fetch(off, buf.len() as u64, buf.len() as u64);
        if let Some(f) = f.as_mut() {
            f.send();
            f.recv(buf);
        }
        let before = self.stash(f);
        let r = self.read(off, buf);
        self.stash(before);
        r
    }

    pub fn next(&self) -> &D {
        &self.next
    }

    pub fn next_mut(&mut self) -> &mut D {
        &mut self.next
    }

    pub fn has_slab(&self, id: &str) -> bool {
        self.slabs.iter().any(|(_, s)| s.id == id)
    }

    pub fn attach(&mut self, slab: SlabClient) {
        self.slabs.push((self.next_key, slab));
        self.next_key += 1;
    }

    /// Stop using slab `id`: forget its slot map (its pages are read from
    /// the file from now on).  False if it was not attached.
    pub fn detach(&mut self, id: &str) -> bool {
        let key = match self.slabs.iter().find(|(_, s)| s.id == id) {
            Some((k, _)) => *k,
            None => return false,
        };
        self.drop_slab(key);
        info(&format!("slab {}: detached", id));
        true
    }

    fn drop_slab(&mut self, key: u64) {
        if let Some((_, s)) = self.slabs.iter().find(|(k, _)| *k == key) {
            let mut i = s.info();
            if i.state == "attached" {
                i.state = "detached";
            }
            if self.gone.len() == GONE_KEPT {
                self.gone.pop_front();
            }
            self.gone.push_back(i);
        }
        self.placed.retain(|_, p| p.slab != key);
        self.slabs.retain(|(k, _)| *k != key);
        self.counters.remote_detaches += 1;
    }

    /// Detach every failed slab (they already serve nothing).
    pub fn reap(&mut self) {
        let failed: Vec<u64> = self.slabs.iter().filter(|(_, s)| s.failed()).map(|(k, _)| *k).collect();
        for k in failed {
            self.drop_slab(k);
        }
    }

    /// Slabs detached lately (state "failed" or "detached").
    pub fn gone(&self) -> Vec<SlabInfo> {
        self.gone.iter().cloned().collect()
    }

    /// Detach all (the export is deleted).
    pub fn detach_all(&mut self) {
        self.placed.clear();
        self.slabs.clear();
    }

    pub fn slabs(&self) -> Vec<SlabInfo> {
        self.slabs.iter().map(|(_, s)| s.info()).collect()
    }

    pub fn remote_pages(&self) -> u64 {
        self.slabs.iter().map(|(_, s)| s.used).sum()
    }

    fn slab_mut(&mut self, key: u64) -> Option<&mut SlabClient> {
        self.slabs.iter_mut().find(|(k, _)| *k == key).map(|(_, s)| s)
    }

    /// Read [off, off + buf.len()) from the file below, timed.
    fn file_read(&mut self, off: u64, buf: &mut [u8]) -> Result<(), Errno> {
        let t = Instant::now();
        let r = self.next.read(off, buf);
        self.counters.remote_file_read_us += t.elapsed().as_micros() as u64;
        r
    }

    fn next_gen(&mut self) -> u64 {
        self.gen += 1;
        self.gen
    }

    /// Where page `p`'s current version can be read remotely: (key, slot).
    fn current(&self, p: u64) -> Option<(u64, u64)> {
        let pl = self.placed.get(&p)?;
        let (_, s) = self.slabs.iter().find(|(k, _)| *k == pl.slab)?;
        if s.failed() || s.confirmed(pl.slot) != pl.gen {
            return None;
        }
        Some((pl.slab, pl.slot))
    }

    /// The page was written or partly trimmed: its slab copy is stale.
    fn invalidate(&mut self, p: u64) {
        if self.placed.contains_key(&p) {
            let g = self.next_gen();
            if let Some(pl) = self.placed.get_mut(&p) {
                pl.gen = g;
            }
        }
    }

    fn unplace(&mut self, p: u64) {
        if let Some(pl) = self.placed.remove(&p) {
            if let Some(s) = self.slab_mut(pl.slab) {
                s.free_slot(pl.slot);
            }
        }
    }

    /// The generations of pages [p, q) (0 for a page not placed).
    fn gens(&self, p: u64, q: u64) -> Vec<u64> {
        (p..q).map(|x| self.placed.get(&x).map(|pl| pl.gen).unwrap_or(0)).collect()
    }
}

/// The remote pages of a READ: planned under the export's mutex
/// (`Device::plan_fetch`), chunk by chunk as the READ will be served;
/// requested without the mutex (`send`: every chunk's remote reads at
/// once, pipelined on one read connection per slab, so the lender streams
/// chunk k + 1 while chunk k is checked and answered); each chunk's
/// replies are then read without the mutex straight into the buffer the
/// NBD reply is written from (`recv`), and checked under the mutex by the
/// READ's read of that chunk (`Device::stash`, `Device::read`).
///
/// A landed page is kept only if its slab, slot and generation are still
/// the page's current ones (I2): a page written, trimmed or placed again
/// since the plan is read from the file over it.  Why this is safe: the
/// plan took only pages whose slot had confirmed the page's generation; a
/// slot is written again only for a new placement, which gives its page a
/// new generation (or the slot to another page once its page left it),
/// and a generation is never reused, so an unchanged (slab, slot,
/// generation) at the check means the slot held this version when the
/// lender answered.
#[derive(Default)]
pub struct Fetch {
    slabs: Vec<FetchSlab>,
    /// The READ's chunks, in order; `next` is the first not received.
    chunks: Vec<FetchChunk>,
    next: usize,
    /// The chunk received last: where its buffer was and which pages
    /// landed in it.
    landed: Option<Landed>,
    /// Microseconds spent sending and receiving, and the slabs that
    /// failed (taken into the tier's counters by `stash`).
    us: u64,
    failures: u64,
    /// Given up before its last chunk (`abandon`), not counted yet.
    abandoned: bool,
}

struct FetchSlab {
    key: u64,
    id: String,
    shared: Arc<SlabShared>,
    /// The read connection this fetch holds from `send` until its last
    /// reply is read (then given back to the slab).
    conn: Option<Conn>,
    /// Cookies of the requests sent and not answered yet, in order.
    cookies: VecDeque<u64>,
    ok: bool,
}

/// One chunk of the READ: [at, at + len) and its remote parts.
struct FetchChunk {
    at: u64,
    len: u64,
    parts: Vec<Part>,
}

/// The bytes [a, b) of the device, within one chunk, that pages
/// `first`.. hold on one slab from slot `slot` on (consecutive slots);
/// `gens`: the pages' generations when planned.
struct Part {
    slab: usize,
    a: u64,
    b: u64,
    first: u64,
    slot: u64,
    gens: Vec<u64>,
}

struct Landed {
    at: u64,
    len: u64,
    /// Address of the buffer the chunk was received into.
    base: usize,
    /// page -> (slab key, slot, generation) of the pages that landed
    pages: HashMap<u64, (u64, u64, u64)>,
}

impl Fetch {
    fn slab_index(&mut self, key: u64, s: &SlabClient) -> usize {
        match self.slabs.iter().position(|f| f.key == key) {
            Some(i) => i,
            None => {
                self.slabs.push(FetchSlab {
                    key,
                    id: s.id.clone(),
                    shared: s.shared.clone(),
                    conn: None,
                    cookies: VecDeque::new(),
                    ok: false,
                });
                self.slabs.len() - 1
            }
        }
    }

    /// Bytes this fetch asks the slabs for.
    pub fn bytes(&self) -> usize {
        self.chunks.iter().flat_map(|c| &c.parts).map(|p| (p.b - p.a) as usize).sum()
    }

    /// Send every remote read of the READ, without the export's mutex: a
    /// read connection per slab (the slab's idle one; waits while both
    /// serve other READs), all requests in one write.  A slab that fails
    /// is failed (its pages come from the file; it is detached at the
    /// tier's next look).
    pub fn send(&mut self) {
        let t = Instant::now();
        for (i, f) in self.slabs.iter_mut().enumerate() {
            let mut c = match f.shared.take_conn() {
                Some(c) => c,
                None => continue,
            };
            let mut out = Vec::new();
            for p in self.chunks.iter().flat_map(|c| &c.parts).filter(|p| p.slab == i) {
                let off = p.slot * PAGE_SIZE + (p.a - p.first * PAGE_SIZE);
                f.cookies.push_back(c.header(&mut out, nbd::CMD_READ, off, (p.b - p.a) as u32));
            }
            match c.send(&out) {
                Ok(()) => {
                    f.conn = Some(c);
                    f.ok = true;
                }
                Err(e) => {
                    f.cookies.clear();
                    self.failures += 1;
                    f.shared.fail(&f.id, format!("remote read failed: {}", e));
                }
            }
        }
        self.us += t.elapsed().as_micros() as u64;
    }

    /// Receive the next chunk's remote pages straight into `buf` (the
    /// chunk's reply buffer, `buf.len()` its length), without the export's
    /// mutex.  Pages of a slab that failed do not land (the read takes
    /// them from the file).
    pub fn recv(&mut self, buf: &mut [u8]) {
        let t = Instant::now();
        let ci = self.next;
        self.next += 1;
        let chunk = match self.chunks.get(ci) {
            Some(c) => c,
            None => return,
        };
        let mut landed = Landed {
            at: chunk.at,
            len: buf.len() as u64,
            base: buf.as_ptr() as usize,
            pages: HashMap::with_capacity(chunk.len as usize / PAGE + 1),
        };
        // a buffer of another length than planned: read into a scratch
        // buffer to keep each connection's replies in step, land nothing
        let mut scratch = Vec::new();
        let fits = chunk.len == buf.len() as u64;
        for p in &chunk.parts {
            let f = &mut self.slabs[p.slab];
            if !f.ok {
                continue;
            }
            let dst: &mut [u8] = if fits {
                &mut buf[(p.a - chunk.at) as usize..(p.b - chunk.at) as usize]
            } else {
                scratch.resize((p.b - p.a) as usize, 0);
                &mut scratch[..]
            };
            let r = match (f.conn.as_mut(), f.cookies.pop_front()) {
                (Some(c), Some(cookie)) => c.reply(cookie).and_then(|_| c.tls.read_exact(dst)),
                _ => Err(io::Error::new(io::ErrorKind::Other, "no request was sent")),
            };
            match r {
                Ok(()) if fits => {
                    let key = f.key;
                    for (k, g) in p.gens.iter().enumerate() {
                        landed.pages.insert(p.first + k as u64, (key, p.slot + k as u64, *g));
                    }
                }
                Ok(()) => {}
                Err(e) => {
                    f.ok = false;
                    f.cookies.clear();
                    f.conn = None;
                    self.failures += 1;
                    f.shared.fail(&f.id, format!("remote read failed: {}", e));
                }
            }
        }
        // a connection whose replies are all read goes back to its slab
        for f in &mut self.slabs {
            if f.cookies.is_empty() {
                if let Some(c) = f.conn.take() {
                    f.shared.give_conn(c);
                }
            }
        }
        self.landed = Some(landed);
        self.us += t.elapsed().as_micros() as u64;
    }

    /// Does the fetch still hold a lender connection (replies not read)?
    pub fn holds_conns(&self) -> bool {
        self.slabs.iter().any(|f| f.conn.is_some())
    }

    /// Stop landing pages (the client does not take the READ's reply,
    /// lanes.rs): read the remaining replies into scratch so that the
    /// connections go back to their slabs in step, before the lender's
    /// write timeout would end them.  Nothing lands from now on: the rest
    /// of the READ is read from the file (I1).
    pub fn abandon(&mut self) {
        self.drain();
        self.next = self.chunks.len();
        self.landed = None;
        self.abandoned = true;
    }

    /// Receive and forget the replies not read yet.
    fn drain(&mut self) {
        while self.next < self.chunks.len() && self.holds_conns() {
            // `recv` into a buffer of another length lands nothing
            let mut scratch = vec![0u8; self.chunks[self.next].len as usize + 1];
            self.recv(&mut scratch);
        }
    }

    /// Did page `p`, fetched from (slab `key`, `slot`) at generation
    /// `gen`, land in `dst`, the bytes [a, a + dst.len()) of the device?
    fn landed(&self, p: u64, key: u64, slot: u64, gen: u64, a: u64, dst: &[u8]) -> bool {
        let l = match &self.landed {
            Some(l) => l,
            None => return false,
        };
        // the same buffer as received into, at the same place (a layer
        // above that read into another buffer finds nothing landed)
        a >= l.at
            && a + dst.len() as u64 <= l.at + l.len
            && dst.as_ptr() as usize == l.base + (a - l.at) as usize
            && l.pages.get(&p) == Some(&(key, slot, gen))
    }
}

impl Drop for Fetch {
    /// A READ that ends early (an error) leaves replies in the
    /// connections: read and forget them, so that a connection goes back
    /// to its slab in step (else the slab is failed).
    fn drop(&mut self) {
        self.drain();
    }
}

/// A run of pages [p, q) of one read and where it comes from.
struct Run {
    p: u64,
    q: u64,
    remote: Option<(u64, u64)>,
}

impl<D: Device> RemoteTier<D> {
    /// The runs of pages of [off, off + len) with the same source (remote
    /// runs: the same slab, consecutive slots, at most MAX_REQUEST).
    fn runs(&self, off: u64, len: u64) -> Vec<Run> {
        let range = pages(off, len);
        // each page's source, looked up once
        let cur: Vec<Option<(u64, u64)>> = range.clone().map(|p| self.current(p)).collect();
        let at = |p: u64| cur[(p - range.start) as usize];
        let mut runs: Vec<Run> = Vec::new();
        let mut p = range.start;
        while p < range.end {
            let here = at(p);
            let mut q = p + 1;
            while q < range.end {
                let same = match (here, at(q)) {
                    (None, None) => true,
                    (Some((k, s)), Some((k2, s2))) => {
                        k == k2 && s2 == s + (q - p) && ((q - p + 1) as usize) * PAGE <= MAX_REQUEST
                    }
                    _ => false,
                };
                if !same {
                    break;
                }
                q += 1;
            }
            runs.push(Run {
                p,
                q,
                remote: here,
            });
            p = q;
        }
        runs
    }
}

impl<D: Device> Device for RemoteTier<D> {
    fn size(&self) -> u64 {
        self.next.size()
    }

    fn read(&mut self, off: u64, buf: &mut [u8]) -> Result<(), Errno> {
        if self.slabs.is_empty() {
            return self.next.read(off, buf);
        }
        self.reap();
        // no network here (the export's mutex is held): a remote page is
        // kept when it landed in `buf` at its current version, every other
        // page is read from the file (I1: it has them all), runs of them
        // in one read
        let end = off + buf.len() as u64;
        let runs = self.runs(off, buf.len() as u64);
        let fetch = self.stash.take();
        let mut res = Ok(());
        // the pending run of the file: [from, to)
        let mut from = off;
        let mut to = off;
        for r in &runs {
            let mut hits = 0u64;
            for p in r.p..r.q {
                let a = std::cmp::max(off, p * PAGE_SIZE);
                let b = std::cmp::min(end, (p + 1) * PAGE_SIZE);
                let hit = match (r.remote, &fetch) {
                    (Some((key, slot)), Some(f)) => {
                        let gen = self.placed.get(&p).map(|pl| pl.gen).unwrap_or(0);
                        f.landed(p, key, slot + (p - r.p), gen, a, &buf[(a - off) as usize..(b - off) as usize])
                    }
                    _ => false,
                };
                if hit {
                    self.counters.remote_hit_pages += 1;
                    hits += 1;
                    if to > from {
                        res = self.file_read(from, &mut buf[(from - off) as usize..(to - off) as usize]);
                    }
                    from = b;
                    to = b;
                    if res.is_err() {
                        break;
                    }
                } else {
                    to = b;
                }
            }
            if let (Some((key, _)), true) = (r.remote, hits > 0) {
                if let Some(s) = self.slab_mut(key) {
                    s.hit_pages += hits;
                }
            }
            if res.is_err() {
                break;
            }
        }
        if res.is_ok() && to > from {
            res = self.file_read(from, &mut buf[(from - off) as usize..(to - off) as usize]);
        }
        self.stash = fetch;
        res
    }

    fn plan_fetch(&mut self, off: u64, len: u64, chunk: u64) -> Option<Fetch> {
        if self.slabs.is_empty() || chunk == 0 {
            return None;
        }
        self.reap();
        // the remote runs of each chunk, as `read` will find them
        let end = off + len;
        let mut f = Fetch::default();
        let mut at = off;
        while at < end {
            let n = std::cmp::min(chunk, end - at);
            let mut parts = Vec::new();
            for r in self.runs(at, n) {
                if let Some((key, slot)) = r.remote {
                    let gens = self.gens(r.p, r.q);
                    let s = match self.slabs.iter().find(|(k, _)| *k == key) {
                        Some((_, s)) => s,
                        None => continue,
                    };
                    parts.push(Part {
                        slab: f.slab_index(key, s),
                        a: std::cmp::max(at, r.p * PAGE_SIZE),
                        b: std::cmp::min(at + n, r.q * PAGE_SIZE),
                        first: r.p,
                        slot,
                        gens,
                    });
                }
            }
            f.chunks.push(FetchChunk { at, len: n, parts });
            at += n;
        }
        if f.slabs.is_empty() {
            None
        } else {
            Some(f)
        }
    }

    fn stash(&mut self, mut f: Option<Fetch>) -> Option<Fetch> {
        if let Some(f) = f.as_mut() {
            // the fetch's time and failures, once
            self.counters.remote_read_us += std::mem::take(&mut f.us);
            let failed = std::mem::take(&mut f.failures);
            self.counters.remote_read_failures += failed;
            if std::mem::take(&mut f.abandoned) {
                self.counters.remote_fetches_abandoned += 1;
            }
            if failed > 0 {
                self.reap();
            }
        }
        std::mem::replace(&mut self.stash, f)
    }
    fn write(&mut self, off: u64, data: &[u8], fua: bool) -> Result<(), Errno> {
        // I1: in the file before the acknowledgement
        self.next.write(off, data, fua)?;
        if !self.placed.is_empty() {
            for p in pages(off, data.len() as u64) {
                self.invalidate(p);
            }
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<(), Errno> {
        self.next.flush()
    }

    fn discard(&mut self, off: u64, len: u64, zero: bool, punch: bool, fua: bool) -> Result<(), Errno> {
        self.next.discard(off, len, zero, punch, fua)?;
        if !self.placed.is_empty() {
            let size = self.next.size();
            for p in pages(off, len) {
                if covers(off, len, p, size) {
                    self.unplace(p);
                } else {
                    self.invalidate(p);
                }
            }
        }
        Ok(())
    }

    fn offer(&mut self, page: u64, data: &[u8]) {
        if self.slabs.is_empty() || data.len() != PAGE {
            return;
        }
        self.reap();
        // the page's slot, or a new one on the slab with the most free
        let (key, slot) = match self.placed.get(&page) {
            Some(pl) => (pl.slab, pl.slot),
            None => {
                let best = self
                    .slabs
                    .iter()
                    .enumerate()
                    .filter(|(_, (_, s))| s.free_slots() > 0)
                    .max_by_key(|(i, (_, s))| (s.free_slots(), std::cmp::Reverse(*i)))
                    .map(|(_, (k, _))| *k);
                let key = match best {
                    Some(k) => k,
                    None => {
                        // every slab is full: the page stays in the file
                        self.counters.remote_skipped_pages += 1;
                        self.gather(page);
                        return;
                    }
                };
                let slot = match self.slab_mut(key).and_then(|s| s.alloc_slot()) {
                    Some(s) => s,
                    None => return,
                };
                (key, slot)
            }
        };
        let gen = self.next_gen();
        self.placed.insert(page, Placed { slab: key, slot, gen });
        let s = match self.slab_mut(key) {
            Some(s) => s,
            None => return,
        };
        lock(&s.shared.confirmed)[slot as usize] = 0;
        let job = Job {
            slot,
            gen,
            data: data.to_vec().into_boxed_slice(),
        };
        let sent = match &s.tx {
            Some(tx) => tx.try_send(job),
            None => return,
        };
        match sent {
            Ok(()) => self.counters.remote_placed_pages += 1,
            // the queue is full: the page stays in the file only, and its
            // slot goes back (a slot holds only a page whose write is
            // queued or confirmed, so `remote_pages` counts no page that
            // never reaches the slab)
            Err(TrySendError::Full(_)) | Err(TrySendError::Disconnected(_)) => {
                self.counters.remote_skipped_pages += 1;
                self.unplace(page);
            }
        }
        self.gather(page);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::MemDevice;
    use crate::limits::{Budget, Limits};
    use crate::ram::Host;
    use crate::slab::{identity_of, RemoteServer, Slabs};
    use std::net::TcpListener;

    const KEY: &str = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";

    /// An in-process lender on 127.0.0.1 with slab `id` of `pages` pages.
    fn lender(id: &str, pages: u64) -> (Arc<Slabs>, String) {
        let slabs = Arc::new(Slabs::new(Arc::new(Host::new(1 << 30))));
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        *slabs.listen.lock().unwrap() = Some(addr);
        slabs.create(id, pages * PAGE_SIZE, &identity_of(id), KEY).unwrap();
        let rs = Arc::new(RemoteServer::new(slabs.clone(), Limits::default(), Arc::new(Budget::new(8 << 20))).unwrap());
        thread::spawn(move || crate::slab::serve(rs, l));
        (slabs, format!("nbds://{}/{}", addr, id))
    }

    fn key() -> Vec<u8> {
        tls::parse_key(KEY).unwrap()
    }

    fn wait_confirmed<D: Device>(t: &RemoteTier<D>, n: u64) {
        let start = Instant::now();
        while t.slabs[0].1.shared.remote_writes.load(Ordering::SeqCst) < n {
            assert!(start.elapsed() < Duration::from_secs(10), "remote writes not confirmed");
            thread::sleep(Duration::from_millis(5));
        }
    }

    fn page(v: u8) -> Vec<u8> {
        vec![v; PAGE]
    }

    #[test]
    fn pipelined_remote_writes_confirm_each_page_at_its_latest_version() {
        // bursts of 512 pages: 8 batches, more than WRITE_DEPTH in flight
        let n = 2048u64;
        let (_slabs, uri) = lender("p1", n);
        let mut t = RemoteTier::new(MemDevice::new(n as usize * PAGE));
        t.set_dirty_window(0);
        let c = SlabClient::attach("p1", &uri, n * PAGE_SIZE, &identity_of("p1"), &key(), DEFAULT_TIMEOUT).unwrap();
        t.attach(c);
        let version = |p: u64, round: u64| {
            let mut v = vec![(p % 251) as u8; PAGE];
            v[..8].copy_from_slice(&(p * 10 + round).to_le_bytes());
            v
        };
        let mut sent = 0;
        for round in 0..2 {
            for p in 0..n {
                let v = version(p, round);
                t.write(p * PAGE_SIZE, &v, false).unwrap();
                t.offer(p, &v);
                sent += 1;
                if sent % 512 == 0 {
                    wait_confirmed(&t, sent);
                }
            }
        }
        assert_eq!(t.counters.remote_skipped_pages, 0);
        // the file differs: every page read must come from the slab, at
        // the version of the second round
        t.next.data.fill(0xee);
        let mut buf = vec![0u8; 16 * PAGE];
        for run in 0..n / 16 {
            t.read_through(run * 16 * PAGE_SIZE, &mut buf).unwrap();
            for i in 0..16 {
                let p = run * 16 + i;
                assert_eq!(&buf[i as usize * PAGE..(i as usize + 1) * PAGE], &version(p, 1)[..], "page {}", p);
            }
        }
        assert_eq!(t.counters.remote_hit_pages, n);
    }

    #[test]
    fn a_page_the_full_write_queue_skips_frees_its_slot_and_joins_the_dirty_window() {
        use crate::nbd::Backend;
        let n = 3000u64;
        let (slabs, uri) = lender("q1", 4096);
        let mut t = RemoteTier::new(MemDevice::new(n as usize * PAGE));
        t.set_dirty_window(4 * n * PAGE_SIZE); // no rotation in this test
        let c = SlabClient::attach("q1", &uri, 4096 * PAGE_SIZE, &identity_of("q1"), &key(), DEFAULT_TIMEOUT).unwrap();
        t.attach(c);
        let skipped = {
            // the lender stalls (its slab is locked): the worker's batches
            // wait for replies, the queue fills, later pages are skipped
            let slab = slabs.get("q1").unwrap();
            let _stall = Backend::lock(&*slab);
            for p in 0..n {
                let v = page((p % 200) as u8 + 1);
                t.write(p * PAGE_SIZE, &v, false).unwrap();
                t.offer(p, &v);
            }
            t.counters.remote_skipped_pages
        };
        assert!(skipped >= n - QUEUE as u64 - ((WRITE_DEPTH + 1) * WRITE_BATCH) as u64, "{} skipped", skipped);
        // a skipped page holds no slot; every page joined the window
        assert_eq!(t.remote_pages(), n - skipped);
        assert_eq!(t.counters.remote_placed_pages, n - skipped);
        assert_eq!(t.filling.len() as u64, n);
        wait_confirmed(&t, n - skipped);
        t.next.data.fill(0xee);
        let mut buf = vec![0u8; PAGE];
        let mut from_slab = 0;
        for p in 0..n {
            t.read_through(p * PAGE_SIZE, &mut buf).unwrap();
            if buf[0] != 0xee {
                assert!(buf.iter().all(|&b| b == (p % 200) as u8 + 1), "page {}", p);
                from_slab += 1;
            }
        }
        // the placed pages, and only they, come from the slab
        assert_eq!(from_slab, n - skipped);
        // a skipped page offered again finds a slot
        let v = page(7);
        t.write((n - 1) * PAGE_SIZE, &v, false).unwrap();
        t.offer(n - 1, &v);
        wait_confirmed(&t, n - skipped + 1);
        t.next.data[(n as usize - 1) * PAGE..].fill(0xee);
        t.read_through((n - 1) * PAGE_SIZE, &mut buf).unwrap();
        assert!(buf.iter().all(|&b| b == 7));
    }

    #[test]
    fn pages_round_trip_and_generations_guard_reads() {
        let (_slabs, uri) = lender("a1", 8);
        let mut t = RemoteTier::new(MemDevice::new(16 * PAGE));
        let c = SlabClient::attach("a1", &uri, 8 * PAGE_SIZE, &identity_of("a1"), &key(), DEFAULT_TIMEOUT).unwrap();
        t.attach(c);
        for p in 0..4u64 {
            t.write(p * PAGE_SIZE, &page(p as u8 + 1), false).unwrap();
            t.offer(p, &page(p as u8 + 1));
        }
        wait_confirmed(&t, 4);
        // make the file differ, so that a read shows where it came from
        t.next.data[..4 * PAGE].fill(0xee);
        let mut buf = vec![0u8; 4 * PAGE];
        t.read_through(0, &mut buf).unwrap();
        for p in 0..4 {
            assert!(buf[p * PAGE..(p + 1) * PAGE].iter().all(|&b| b == p as u8 + 1));
        }
        assert_eq!(t.counters.remote_hit_pages, 4);
        // a partial read of a remote page
        let mut part = [0u8; 10];
        t.read_through(PAGE_SIZE + 100, &mut part).unwrap();
        assert_eq!(part, [2u8; 10]);
        // I2: a write makes the slab copy stale: read from the file
        t.write(2 * PAGE_SIZE, &page(9), false).unwrap();
        t.read_through(2 * PAGE_SIZE, &mut buf[..PAGE]).unwrap();
        assert!(buf[..PAGE].iter().all(|&b| b == 9));
        // offered again (same slot), but not yet confirmed: a slab read
        // must not return the old version meanwhile
        t.offer(2, &page(10));
        t.next.data[2 * PAGE..3 * PAGE].fill(10);
        t.read_through(2 * PAGE_SIZE, &mut buf[..PAGE]).unwrap();
        assert!(buf[..PAGE].iter().all(|&b| b == 10));
        wait_confirmed(&t, 5);
        // a trim frees the slot; the page reads as the file says
        t.discard(0, PAGE_SIZE, false, true, false).unwrap();
        t.read_through(0, &mut buf[..PAGE]).unwrap();
        assert!(buf[..PAGE].iter().all(|&b| b == 0));
        assert_eq!(t.remote_pages(), 3);
        // the slab fills up: no more placements, nothing lost
        for p in 4..16u64 {
            t.write(p * PAGE_SIZE, &page(p as u8), false).unwrap();
            t.offer(p, &page(p as u8));
        }
        assert_eq!(t.remote_pages(), 8);
        assert_eq!(t.counters.remote_skipped_pages, 7);
        assert!(t.detach("a1"));
        assert!(!t.detach("a1"));
        assert_eq!(t.remote_pages(), 0);
        assert_eq!(t.gone()[0].state, "detached");
    }

    /// A directory on a disk file system (the page cache can drop a
    /// written file's pages there; tmpfs pages are the file itself).
    fn disk_dir(tag: &str) -> std::path::PathBuf {
        let base = std::env::var_os("MEMSTORE_TEST_DISK_DIR")
            .map(std::path::PathBuf::from)
            .unwrap_or_else(|| std::path::PathBuf::from("/var/tmp"));
        let d = base.join(format!("memstore-remote-{}-{}", tag, std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        let mut st: libc::statfs = unsafe { std::mem::zeroed() };
        let c = std::ffi::CString::new(d.as_os_str().to_str().unwrap()).unwrap();
        // SAFETY: statfs fills the struct we own
        assert_eq!(unsafe { libc::statfs(c.as_ptr(), &mut st) }, 0);
        assert!(
            st.f_type != libc::TMPFS_MAGIC,
            "{} is on tmpfs: set MEMSTORE_TEST_DISK_DIR to a directory on a disk",
            d.display()
        );
        d
    }

    fn numbered(p: u64) -> Vec<u8> {
        let mut v = page((p % 251) as u8);
        v[..8].copy_from_slice(&p.to_le_bytes());
        v
    }

    #[test]
    fn the_dirty_window_bounds_the_page_cache_of_remote_placed_pages() {
        use crate::file::FileBackend;
        let pages = 8192u64; // 32 MiB written
        let window = 64u64; // 256 KiB: 1/128 of it
        let (_slabs, uri) = lender("a6", pages);
        let dir = disk_dir("window");
        let file = FileBackend::open(&dir.join("e.img"), pages * PAGE_SIZE).unwrap();
        let mut t = RemoteTier::new(file);
        t.set_dirty_window(window * PAGE_SIZE);
        t.attach(SlabClient::attach("a6", &uri, pages * PAGE_SIZE, &identity_of("a6"), &key(), DEFAULT_TIMEOUT).unwrap());
        let mut most = 0u64;
        for p in 0..pages {
            // as the RAM tier does with a page it cannot keep: into the
            // file before the acknowledgement, then offered to a slab
            t.write(p * PAGE_SIZE, &numbered(p), false).unwrap();
            t.offer(p, &numbered(p));
            if p % 512 == 511 {
                wait_confirmed(&t, p + 1); // never more than the queue
            }
            most = std::cmp::max(most, t.next().cached_bytes());
        }
        // the three thirds make the bound (63 pages); POSIX_FADV_DONTNEED
        // is best effort, and a page another CPU still holds in its LRU
        // batch stays cached a moment longer: a few pages of slack (the
        // control case below caches every page written)
        const SLACK_PAGES: u64 = 4;
        assert!(
            most <= (window + SLACK_PAGES) * PAGE_SIZE,
            "{} bytes of the file were cached, the window is {} (+{} pages of slack)",
            most,
            window * PAGE_SIZE,
            SLACK_PAGES
        );
        assert_eq!(t.counters.remote_skipped_pages, 0);
        assert_eq!(t.counters.remote_writeback_errors, 0);
        // the waits and drops ran on the writeback thread, not here (its
        // counter may trail the last hand-over until it settles: counted
        // exactly below)
        assert!(t.writeback.is_some());
        t.settle_writeback();
        assert_eq!(t.counters.remote_cache_dropped_pages, pages - pages % (window / 3));
        assert!(t.counters.remote_writeback_thread_us > 0);
        wait_confirmed(&t, pages);
        // every page reads back: from the slab ...
        let mut buf = vec![0u8; PAGE];
        for p in 0..pages {
            t.read_through(p * PAGE_SIZE, &mut buf).unwrap();
            assert_eq!(buf, numbered(p), "page {} from the slab", p);
        }
        assert_eq!(t.counters.remote_hit_pages, pages);
        // ... and from the file, the slab gone (read back from the disk)
        assert!(t.detach("a6"));
        let mut all = vec![0u8; (pages * PAGE_SIZE) as usize];
        t.read_through(0, &mut all).unwrap();
        for p in 0..pages as usize {
            assert_eq!(&all[p * PAGE..(p + 1) * PAGE], &numbered(p as u64)[..], "page {} from the file", p);
        }
        drop(t);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn without_a_dirty_window_the_file_stays_cached() {
        // the control case: the bound above is the window's doing
        use crate::file::FileBackend;
        let pages = 1024u64;
        let (_slabs, uri) = lender("a7", pages);
        let dir = disk_dir("nowindow");
        let file = FileBackend::open(&dir.join("e.img"), pages * PAGE_SIZE).unwrap();
        let mut t = RemoteTier::new(file);
        t.set_dirty_window(0);
        t.attach(SlabClient::attach("a7", &uri, pages * PAGE_SIZE, &identity_of("a7"), &key(), DEFAULT_TIMEOUT).unwrap());
        for p in 0..pages {
            t.write(p * PAGE_SIZE, &numbered(p), false).unwrap();
            t.offer(p, &numbered(p));
            if p % 512 == 511 {
                wait_confirmed(&t, p + 1);
            }
        }
        assert_eq!(t.next().cached_bytes(), pages * PAGE_SIZE);
        assert_eq!(t.counters.remote_cache_dropped_pages, 0);
        drop(t);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_negotiated_cipher_is_aes_128_gcm() {
        let (_slabs, uri) = lender("a8", 4);
        let (addr, _) = parse_uri(&uri).unwrap();
        let c = Conn::connect(addr, "a8", &identity_of("a8"), &key(), DEFAULT_TIMEOUT).unwrap();
        assert_eq!(c.cipher, "TLS_AES_128_GCM_SHA256");
    }

    /// A tier of `pages` pages, every one placed on slab `id` and confirmed,
    /// the file then overwritten with 0xee (a page read from the slab shows).
    fn all_placed(id: &str, pages: u64) -> (Arc<Slabs>, RemoteTier<MemDevice>) {
        let (slabs, uri) = lender(id, pages);
        let mut t = RemoteTier::new(MemDevice::new(pages as usize * PAGE));
        t.attach(SlabClient::attach(id, &uri, pages * PAGE_SIZE, &identity_of(id), &key(), DEFAULT_TIMEOUT).unwrap());
        for p in 0..pages {
            t.write(p * PAGE_SIZE, &numbered(p), false).unwrap();
            t.offer(p, &numbered(p));
            if p % 512 == 511 {
                wait_confirmed(&t, p + 1);
            }
        }
        wait_confirmed(&t, pages);
        t.next.data.fill(0xee);
        (slabs, t)
    }

    /// As lanes.rs serves a READ of one window: plan, send, then per
    /// chunk receive into `buf`, and read with the fetch stashed; `between`
    /// runs before each chunk is received (what other requests may do).
    fn read_chunked(
        t: &mut RemoteTier<MemDevice>,
        off: u64,
        len: u64,
        chunk: u64,
        mut between: impl FnMut(&mut RemoteTier<MemDevice>, u64),
    ) -> Vec<u8> {
        let mut out = Vec::new();
        let mut f = t.plan_fetch(off, len, chunk);
        if let Some(f) = f.as_mut() {
            f.send();
        }
        let mut buf = vec![0u8; chunk as usize];
        let mut at = off;
        while at < off + len {
            let n = std::cmp::min(chunk, off + len - at) as usize;
            between(t, at);
            if let Some(f) = f.as_mut() {
                f.recv(&mut buf[..n]);
            }
            t.stash(f.take());
            t.read(at, &mut buf[..n]).unwrap();
            f = t.stash(None);
            out.extend_from_slice(&buf[..n]);
            at += n as u64;
        }
        out
    }

    fn check(buf: &[u8], first: u64, n: u64, why: &str) {
        for i in 0..n {
            let p = first + i;
            assert_eq!(&buf[(i as usize) * PAGE..(i as usize + 1) * PAGE], &numbered(p)[..], "page {} ({})", p, why);
        }
    }

    #[test]
    fn a_multi_chunk_read_lands_every_chunk_in_its_buffer() {
        let pages = 1024u64;
        let chunk = 64 * PAGE_SIZE;
        let (_slabs, mut t) = all_placed("a9", pages);
        // a 16-chunk READ (the whole slab) in one window: every page from
        // the slab, received chunk by chunk
        let f = t.plan_fetch(0, pages * PAGE_SIZE, chunk).unwrap();
        assert_eq!(f.bytes() as u64, pages * PAGE_SIZE);
        drop(f);
        let got = read_chunked(&mut t, 0, pages * PAGE_SIZE, chunk, |_, _| {});
        check(&got, 0, pages, "fetched");
        assert_eq!(t.counters.remote_hit_pages, pages);
        // an unaligned READ: the pages split by the chunks' edges land in
        // both halves
        let (off, len) = (100 * PAGE_SIZE + 1000, 3 * chunk + 5000);
        let got = read_chunked(&mut t, off, len, chunk, |_, _| {});
        let mut want = Vec::new();
        for p in 100..100 + len / PAGE_SIZE + 2 {
            want.extend_from_slice(&numbered(p));
        }
        assert_eq!(&got[..], &want[1000..1000 + len as usize]);
        assert_eq!(t.counters.remote_read_failures, 0);
        // the connections went back to the slab: both idle
        assert!(all_idle(&t.slabs[0].1.shared), "a lender connection is still held");
    }

    #[test]
    fn a_page_changed_mid_fetch_comes_from_the_file() {
        let pages = 512u64;
        let chunk = 64 * PAGE_SIZE;
        let (_slabs, mut t) = all_placed("a10", pages);
        let mut v70 = numbered(70);
        v70[100] ^= 0xff;
        let mut v71 = numbered(71);
        v71[5] ^= 0xff;
        let mut v200 = numbered(200);
        v200[9] ^= 0xff;
        // after the requests went out and before chunk 1 (pages 64..128)
        // is received: page 70 written (its slab copy stale), page 71
        // written and placed again in its slot (a new version there, its
        // write to the slab possibly overtaking the fetch), page 72 trimmed
        // and its slot given to page 500 (another page in the slot); page
        // 200 (chunk 3) written before chunk 2 is received
        let got = read_chunked(&mut t, 0, 4 * chunk, chunk, |t, at| {
            if at == chunk {
                t.write(70 * PAGE_SIZE, &v70, false).unwrap();
                t.write(71 * PAGE_SIZE, &v71, false).unwrap();
                t.offer(71, &v71);
                t.discard(500 * PAGE_SIZE, PAGE_SIZE, false, true, false).unwrap();
                t.discard(72 * PAGE_SIZE, PAGE_SIZE, false, true, false).unwrap();
                t.write(500 * PAGE_SIZE, &numbered(500), false).unwrap();
                t.offer(500, &numbered(500));
                wait_confirmed(t, pages + 2);
            }
            if at == 2 * chunk {
                t.write(200 * PAGE_SIZE, &v200, false).unwrap();
            }
        });
        assert_eq!(&got[70 * PAGE..71 * PAGE], &v70[..], "the written page");
        assert_eq!(&got[71 * PAGE..72 * PAGE], &v71[..], "the page placed again");
        assert!(got[72 * PAGE..73 * PAGE].iter().all(|&b| b == 0), "the trimmed page");
        assert_eq!(&got[200 * PAGE..201 * PAGE], &v200[..], "the page written two chunks ahead");
        check(&got, 0, 70, "before the written page");
        check(&got[73 * PAGE..], 73, 200 - 73, "between");
        check(&got[201 * PAGE..], 201, 55, "after");
        assert_eq!(t.counters.remote_hit_pages, 256 - 4);
        // a chunk read into another buffer than it was received into
        // lands nothing: every page from the file
        let mut f = t.plan_fetch(0, chunk, chunk);
        let mut other = vec![0u8; chunk as usize];
        f.as_mut().unwrap().send();
        f.as_mut().unwrap().recv(&mut other);
        check(&other, 0, 64, "received");
        t.stash(f);
        let mut buf = vec![0u8; chunk as usize];
        t.read(0, &mut buf).unwrap();
        t.stash(None);
        assert!(buf.iter().all(|&b| b == 0xee));
        assert_eq!(t.counters.remote_read_failures, 0);
    }

    #[test]
    fn a_fetch_dropped_early_leaves_its_connection_in_step() {
        let pages = 256u64;
        let chunk = 32 * PAGE_SIZE;
        let (_slabs, mut t) = all_placed("a11", pages);
        for round in 0..3 {
            // sent, one chunk of eight received, then given up (a READ
            // whose reply could not be written)
            let mut f = t.plan_fetch(0, pages * PAGE_SIZE, chunk).unwrap();
            f.send();
            let mut buf = vec![0u8; chunk as usize];
            f.recv(&mut buf);
            check(&buf, 0, 32, "first chunk");
            drop(f);
            assert!(all_idle(&t.slabs[0].1.shared), "round {}: a lender connection is still held", round);
            // the next reads get their own replies, not the dropped ones
            let got = read_chunked(&mut t, 64 * PAGE_SIZE, 128 * PAGE_SIZE, chunk, |_, _| {});
            check(&got, 64, 128, "after a dropped fetch");
        }
        assert_eq!(t.counters.remote_read_failures, 0);
        assert!(!t.slabs[0].1.failed());
    }

    #[test]
    fn a_slab_lost_mid_fetch_serves_its_pages_from_the_file() {
        let pages = 256u64;
        let chunk = 64 * PAGE_SIZE;
        let (slabs, mut t) = all_placed("a12", pages);
        // the file is right again (the slab is lost: the file serves)
        for p in 0..pages {
            t.next.data[p as usize * PAGE..(p as usize + 1) * PAGE].copy_from_slice(&numbered(p));
        }
        let got = read_chunked(&mut t, 0, pages * PAGE_SIZE, chunk, |_, at| {
            if at == 2 * chunk {
                assert!(slabs.delete("a12"));
            }
        });
        check(&got, 0, pages, "slab lost mid-fetch");
        // the replies sent before the loss may all have landed; the next
        // read finds the slab gone at the latest
        assert!(t.counters.remote_hit_pages >= 64);
        let got = read_chunked(&mut t, 0, pages * PAGE_SIZE, chunk, |_, _| {});
        check(&got, 0, pages, "slab lost");
        assert!(t.slabs.is_empty(), "detached");
        assert_eq!(t.counters.remote_detaches, 1);
    }

    /// Are all the slab's read connections idle?  The worker takes idle
    /// ones for a moment every `PING` to ping them, so one seen out is
    /// not yet one held: held, it stays out for the whole second.
    fn all_idle(shared: &SlabShared) -> bool {
        let start = Instant::now();
        loop {
            if lock(&shared.idle).len() == READ_CONNS {
                return true;
            }
            if start.elapsed() > 4 * PING {
                return false;
            }
            thread::sleep(Duration::from_millis(1));
        }
    }

    /// An export of a remote tier alone, as lanes.rs serves it.
    struct Tiered(Mutex<RemoteTier<MemDevice>>);

    impl nbd::Backend for Tiered {
        type Layers = RemoteTier<MemDevice>;
        fn size(&self) -> u64 {
            lock(&self.0).size()
        }
        fn lock(&self) -> MutexGuard<'_, RemoteTier<MemDevice>> {
            lock(&self.0)
        }
    }

    #[test]
    fn a_client_that_stops_reading_gets_no_lender_connection_held() {
        use std::os::unix::net::UnixStream;
        let pages = 1024u64; // 4 MiB: one READ window, 16 chunks
        let (_slabs, mut t) = all_placed("a13", pages);
        // the file holds every page (I1); the slab's copies are right too
        for p in 0..pages {
            t.next.data[p as usize * PAGE..(p as usize + 1) * PAGE].copy_from_slice(&numbered(p));
        }
        let store = Arc::new(Tiered(Mutex::new(t)));
        let (mut client, server) = UnixStream::pair().unwrap();
        // as nbd.rs sets the export socket
        server.set_write_timeout(Some(crate::lanes::CLIENT_STALL)).unwrap();
        client.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        client.set_write_timeout(Some(Duration::from_secs(30))).unwrap();
        let st = store.clone();
        let h = thread::spawn(move || {
            let r = server.try_clone().unwrap();
            let s2 = server.try_clone().unwrap();
            let stop = move || {
                let _ = s2.shutdown(Shutdown::Both);
            };
            crate::lanes::transmission(r, server, &*st, &Budget::new(64 << 20), "test", &stop)
        });
        let len = (pages * PAGE_SIZE) as u32;
        nbd::tests::request(&mut client, nbd::REQUEST_MAGIC, 0, nbd::CMD_READ, 7, 0, len, &[]);
        // the READ has taken a lender connection (its first chunk then
        // fills the socket), and the client takes nothing for longer than
        // CLIENT_STALL
        let start = Instant::now();
        while lock(&lock(&store.0).slabs[0].1.shared.idle).len() == READ_CONNS {
            assert!(start.elapsed() < Duration::from_secs(10), "the READ did not start");
            thread::sleep(Duration::from_millis(1));
        }
        thread::sleep(2 * crate::lanes::CLIENT_STALL);
        // the READ gave its connection back (held, the lender would block
        // on the replies and end it at its write timeout)
        let shared = lock(&store.0).slabs[0].1.shared.clone();
        assert!(all_idle(&shared), "a lender connection is still held");
        // the reply is whole and right: its first chunks landed, the rest
        // came from the file
        let mut got = vec![0u8; 16 + len as usize];
        client.read_exact(&mut got).unwrap();
        assert_eq!(&got[4..8], &[0, 0, 0, 0], "error field");
        check(&got[16..], 0, pages, "after the stall");
        {
            let g = lock(&store.0);
            assert!(!g.slabs[0].1.failed());
            assert_eq!(g.counters.remote_fetches_abandoned, 1);
            let hits = g.counters.remote_hit_pages;
            assert!(hits >= 64 && hits < pages, "{} pages landed", hits);
        }
        // the connections are in step: a READ read at once lands every page
        let before = lock(&store.0).counters.remote_hit_pages;
        nbd::tests::request(&mut client, nbd::REQUEST_MAGIC, 0, nbd::CMD_READ, 8, 0, len, &[]);
        client.read_exact(&mut got).unwrap();
        check(&got[16..], 0, pages, "read at once");
        {
            let g = lock(&store.0);
            assert_eq!(g.counters.remote_hit_pages - before, pages);
            assert_eq!(g.counters.remote_fetches_abandoned, 1);
            assert_eq!(g.counters.remote_read_failures, 0);
        }
        drop(client);
        h.join().unwrap().unwrap();
    }

    #[test]
    fn scattered_slots_are_read_in_one_pipelined_exchange() {
        let (_slabs, uri) = lender("a5", 16);
        let mut t = RemoteTier::new(MemDevice::new(16 * PAGE));
        t.attach(SlabClient::attach("a5", &uri, 16 * PAGE_SIZE, &identity_of("a5"), &key(), DEFAULT_TIMEOUT).unwrap());
        // evicted in reverse order: page p lands in slot 15 - p, so no two
        // neighbouring pages have neighbouring slots; every other page is
        // placed, the rest stay in the file only
        for p in (0..16u64).rev() {
            t.write(p * PAGE_SIZE, &page(p as u8 + 1), false).unwrap();
            if p % 2 == 0 {
                t.offer(p, &page(p as u8 + 1));
            }
        }
        wait_confirmed(&t, 8);
        let mut buf = vec![0u8; 16 * PAGE];
        t.read_through(0, &mut buf).unwrap();
        for p in 0..16 {
            assert!(buf[p * PAGE..(p + 1) * PAGE].iter().all(|&b| b == p as u8 + 1), "page {}", p);
        }
        assert_eq!(t.counters.remote_hit_pages, 8);
        assert_eq!(t.slabs[0].1.hit_pages, 8);
    }

    #[test]
    fn a_slab_lost_mid_read_is_served_from_the_file_and_detached() {
        let (slabs, uri) = lender("a2", 8);
        let mut t = RemoteTier::new(MemDevice::new(8 * PAGE));
        t.attach(SlabClient::attach("a2", &uri, 8 * PAGE_SIZE, &identity_of("a2"), &key(), DEFAULT_TIMEOUT).unwrap());
        for p in 0..8u64 {
            t.write(p * PAGE_SIZE, &page(p as u8 + 1), false).unwrap();
            t.offer(p, &page(p as u8 + 1));
        }
        wait_confirmed(&t, 8);
        // the lender frees the slab without asking (its own VMs first)
        assert!(slabs.delete("a2"));
        let start = Instant::now();
        let mut buf = vec![0u8; 8 * PAGE];
        t.read_through(0, &mut buf).unwrap();
        for p in 0..8 {
            assert!(buf[p * PAGE..(p + 1) * PAGE].iter().all(|&b| b == p as u8 + 1));
        }
        // one failure, no retries: within one timeout (200 ms), with room
        // for a loaded 2-CPU machine
        assert!(start.elapsed() < 3 * DEFAULT_TIMEOUT, "{:?}", start.elapsed());
        assert_eq!(t.remote_pages(), 0, "detached at the first failure");
        assert_eq!(t.gone()[0].state, "failed");
        assert_eq!(t.counters.remote_detaches, 1);
    }

    #[test]
    fn attach_is_refused_with_bad_credentials_or_size() {
        let (slabs, uri) = lender("a3", 4);
        slabs.create("a4", 4 * PAGE_SIZE, &identity_of("a4"), &KEY.replace('0', "1")).unwrap();
        let t = DEFAULT_TIMEOUT;
        // wrong key
        let e = SlabClient::attach("a3", &uri, 4 * PAGE_SIZE, &identity_of("a3"), &[1; 32], t).err().unwrap();
        assert!(e.contains("TLS"), "{}", e);
        // no slab under that identity
        let e = SlabClient::attach("a3", &uri, 4 * PAGE_SIZE, "memmut-alloc-x", &key(), t).err().unwrap();
        assert!(e.contains("TLS"), "{}", e);
        // another allocation's credentials open only that allocation
        let (addr, _) = parse_uri(&uri).unwrap();
        let other = tls::parse_key(&KEY.replace('0', "1")).unwrap();
        let e = Conn::connect(addr, "a3", &identity_of("a4"), &other, t).err().unwrap();
        assert_eq!(e.kind(), io::ErrorKind::PermissionDenied, "{}", e);
        // more than granted
        let e = SlabClient::attach("a3", &uri, 8 * PAGE_SIZE, &identity_of("a3"), &key(), t).err().unwrap();
        assert!(e.contains("granted"), "{}", e);
        // a request beyond the slab is refused, the connection stays
        let mut c = Conn::connect(addr, "a3", &identity_of("a3"), &key(), t).unwrap();
        let mut b = vec![0u8; PAGE];
        assert!(c.read(4 * PAGE_SIZE, &mut b).is_err());
        assert!(c.write_all(&[(3 * PAGE_SIZE + 1, &b[..])]).is_err());
        c.read(3 * PAGE_SIZE, &mut b).unwrap();
        // the host quota bounds what is lent
        let e = slabs.create("big", 1 << 31, &identity_of("big"), KEY).err().unwrap();
        assert!(e.contains("host quota"), "{}", e);
    }
}
