//! The lender side of remote memory: slabs of this host's reservoir that
//! other hosts' memstores use as a tier of their exports
//! (doc/source/remote-memory.rst, "Slab accounting" and "memstore-to-
//! memstore protocol").
//!
//! A slab is one allocation: `size` bytes of anonymous memory, touched
//! lazily, reserved against the host quota (the one the RAM tiers share)
//! from its creation to its deletion, so the lender never holds more than
//! it granted.  It is served over NBD on TCP (`--remote-listen`), upgraded
//! with NBD_OPT_STARTTLS before any other option to TLS 1.3 with the
//! allocation's pre-shared key (`tls.rs`).  Refused, each logged with the
//! peer's address and the identity (never the key): an identity that names
//! no slab or a wrong key (the TLS handshake fails), NBD_OPT_GO for an
//! export other than the allocation the identity names, requests beyond the
//! slab (the NBD validation), more than `MAX_CONNS_PER_SLAB` connections.

use crate::device::{Device, Errno};
use crate::limits::{Budget, Limits};
use crate::log::{info, warn};
use crate::nbd::{self, Backend, ExportLookup, Handshake};
use crate::ram::Host;
use crate::tls;
use memmap2::MmapMut;
use openssl::ssl::SslContext;
use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread;
use std::time::Duration;

/// Connections one slab accepts at once (a client uses two).
pub const MAX_CONNS_PER_SLAB: usize = 4;
/// A lender closes a connection idle for longer (clients ping every
/// second).
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(60);
/// Largest slab: as an export.
pub const MAX_SLAB_SIZE: u64 = crate::export::MAX_EXPORT_SIZE;

/// The identity memmut issues for an allocation.
pub fn identity_of(id: &str) -> String {
    format!("memmut-alloc-{}", id)
}

/// A slab's memory: anonymous, mapped whole, touched lazily.
pub struct SlabDevice {
    mem: Option<MmapMut>,
    size: u64,
}

impl Device for SlabDevice {
    fn size(&self) -> u64 {
        self.size
    }
    fn read(&mut self, off: u64, buf: &mut [u8]) -> Result<(), Errno> {
        let m = self.mem.as_ref().ok_or(libc::EIO)?;
        buf.copy_from_slice(&m[off as usize..off as usize + buf.len()]);
        Ok(())
    }
    fn write(&mut self, off: u64, data: &[u8], _fua: bool) -> Result<(), Errno> {
        let m = self.mem.as_mut().ok_or(libc::EIO)?;
        m[off as usize..off as usize + data.len()].copy_from_slice(data);
        Ok(())
    }
    fn flush(&mut self) -> Result<(), Errno> {
        self.mem.as_ref().map(|_| ()).ok_or(libc::EIO)
    }
    fn discard(&mut self, off: u64, len: u64, _z: bool, _p: bool, _f: bool) -> Result<(), Errno> {
        let m = self.mem.as_mut().ok_or(libc::EIO)?;
        m[off as usize..(off + len) as usize].fill(0);
        Ok(())
    }
}

#[derive(Default)]
pub struct SlabCounters {
    pub connections: AtomicU64,
    pub refused: AtomicU64,
    pub requests: AtomicU64,
}

pub struct Slab {
    pub id: String,
    pub size: u64,
    pub identity: String,
    key: Vec<u8>,
    dev: Mutex<SlabDevice>,
    pub clients: AtomicUsize,
    pub freeing: AtomicBool,
    streams: Mutex<HashMap<u64, TcpStream>>,
    pub counters: SlabCounters,
    pub created: f64,
}

impl Slab {
    fn dev(&self) -> MutexGuard<'_, SlabDevice> {
        match self.dev.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        }
    }

    /// Bytes of the slab the clients touched (resident).
    pub fn touched_bytes(&self) -> u64 {
        let d = self.dev();
        match &d.mem {
            Some(m) => crate::fsutil::resident_bytes(m),
            None => 0,
        }
    }
}

impl ExportLookup for Slab {
    fn matches(&self, name: &[u8]) -> bool {
        name == self.id.as_bytes()
    }
    fn size(&self) -> u64 {
        self.size
    }
    fn names(&self) -> Vec<String> {
        vec![self.id.clone()]
    }
}

impl Backend for Slab {
    type Layers = SlabDevice;
    fn size(&self) -> u64 {
        self.size
    }
    fn lock(&self) -> MutexGuard<'_, SlabDevice> {
        self.counters.requests.fetch_add(1, Ordering::Relaxed);
        self.dev()
    }
    fn rejected(&self) {
        self.counters.refused.fetch_add(1, Ordering::Relaxed);
    }
}

/// The slabs this memstore lends.
pub struct Slabs {
    host: Arc<Host>,
    map: Mutex<BTreeMap<String, Arc<Slab>>>,
    /// Where the slab server listens (None: --remote-listen not given).
    pub listen: Mutex<Option<SocketAddr>>,
    next_conn: AtomicU64,
    /// Connections refused before they named a slab (no TLS, unknown
    /// identity, wrong key).
    pub refused_handshakes: AtomicU64,
}

impl Slabs {
    pub fn new(host: Arc<Host>) -> Slabs {
        Slabs {
            host,
            map: Mutex::new(BTreeMap::new()),
            listen: Mutex::new(None),
            next_conn: AtomicU64::new(1),
            refused_handshakes: AtomicU64::new(0),
        }
    }

    fn map(&self) -> MutexGuard<'_, BTreeMap<String, Arc<Slab>>> {
        match self.map.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        }
    }

    pub fn listen_addr(&self) -> Option<SocketAddr> {
        *self.listen.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn get(&self, id: &str) -> Option<Arc<Slab>> {
        self.map().get(id).cloned()
    }

    pub fn list(&self) -> Vec<Arc<Slab>> {
        self.map().values().cloned().collect()
    }

    /// Bytes lent (reserved against the host quota).
    pub fn lent_bytes(&self) -> u64 {
        self.map().values().map(|s| s.size).sum()
    }

    /// Find the slab whose identity is `identity` (the TLS key lookup).
    pub fn by_identity(&self, identity: &str) -> Option<Arc<Slab>> {
        self.map()
            .values()
            .find(|s| s.identity == identity && !s.freeing.load(Ordering::SeqCst))
            .cloned()
    }

    /// Create a slab: the whole size is reserved against the host quota
    /// now (refused when it does not fit).  An existing slab with the same
    /// size and credentials is returned as it is (bool: created).
    pub fn create(&self, id: &str, size: u64, identity: &str, key_hex: &str) -> Result<(Arc<Slab>, bool), String> {
        if !crate::export::valid_name(id) {
            return Err(format!("invalid slab id {:?}", id));
        }
        if size == 0 || size > MAX_SLAB_SIZE || size % crate::device::PAGE_SIZE != 0 {
            return Err(format!(
                "slab size {} must be a positive multiple of 4096 up to {}",
                size, MAX_SLAB_SIZE
            ));
        }
        if !tls::valid_identity(identity) {
            return Err("invalid PSK identity (1-128 printable ASCII characters)".into());
        }
        let key = tls::parse_key(key_hex)?;
        if self.listen_addr().is_none() {
            return Err("this memstore serves no slabs: started without --remote-listen".into());
        }
        let mut map = self.map();
        if let Some(s) = map.get(id) {
            if s.size == size && s.identity == identity && s.key == key {
                return Ok((s.clone(), false));
            }
            return Err(format!("slab {} exists with other parameters", id));
        }
        if map.values().any(|s| s.identity == identity) {
            return Err(format!("PSK identity {} is used by another slab", identity));
        }
        if !self.host.try_reserve_bytes(size) {
            return Err(format!(
                "slab of {} bytes refused: the host quota has {} of {} bytes free",
                size,
                self.host
                    .quota
                    .load(Ordering::SeqCst)
                    .saturating_sub(self.host.used.load(Ordering::SeqCst)),
                self.host.quota.load(Ordering::SeqCst)
            ));
        }
        let mem = match MmapMut::map_anon(size as usize) {
            Ok(m) => m,
            Err(e) => {
                self.host.release_bytes(size);
                return Err(format!("cannot map {} bytes for slab {}: {}", size, id, e));
            }
        };
        let slab = Arc::new(Slab {
            id: id.to_string(),
            size,
            identity: identity.to_string(),
            key,
            dev: Mutex::new(SlabDevice { mem: Some(mem), size }),
            clients: AtomicUsize::new(0),
            freeing: AtomicBool::new(false),
            streams: Mutex::new(HashMap::new()),
            counters: SlabCounters::default(),
            created: crate::geiger::unix_now(),
        });
        map.insert(id.to_string(), slab.clone());
        info(&format!(
            "slab {}: created, {} bytes for identity {}",
            id, size, identity
        ));
        Ok((slab, true))
    }

    /// Delete a slab: its connections are closed, its memory unmapped and
    /// given back to the host quota.  Ok(false): there was none.
    pub fn delete(&self, id: &str) -> bool {
        let slab = match self.map().remove(id) {
            Some(s) => s,
            None => return false,
        };
        slab.freeing.store(true, Ordering::SeqCst);
        for (_, s) in slab
            .streams
            .lock()
            .map(|mut c| c.drain().collect::<Vec<_>>())
            .unwrap_or_default()
        {
            let _ = s.shutdown(Shutdown::Both);
        }
        slab.dev().mem = None;
        self.host.release_bytes(slab.size);
        info(&format!("slab {}: deleted, {} bytes back to the host quota", id, slab.size));
        true
    }
}

/// A TLS stream shared by the reader and the writer of `nbd::transmission`
/// (one thread: they never run at once).
struct Shared<S>(Rc<RefCell<S>>);

impl<S: Read> Read for Shared<S> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.0.borrow_mut().read(buf)
    }
}

impl<S: Write> Write for Shared<S> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.borrow_mut().write(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.0.borrow_mut().flush()
    }
}

/// What the slab server's connections share.
pub struct RemoteServer {
    pub slabs: Arc<Slabs>,
    pub ctx: SslContext,
    pub limits: Limits,
    pub budget: Arc<Budget>,
    pub open: Arc<AtomicUsize>,
}

impl RemoteServer {
    pub fn new(slabs: Arc<Slabs>, limits: Limits, budget: Arc<Budget>) -> io::Result<RemoteServer> {
        let s2 = slabs.clone();
        let lookup: tls::KeyLookup = Arc::new(move |id: &str| s2.by_identity(id).map(|s| s.key.clone()));
        Ok(RemoteServer {
            slabs,
            ctx: tls::server_context(lookup)?,
            limits,
            budget,
            open: Arc::new(AtomicUsize::new(0)),
        })
    }
}

/// Accept slab clients on `listener` until the process ends.
pub fn serve(server: Arc<RemoteServer>, listener: TcpListener) {
    for stream in listener.incoming() {
        let s = match stream {
            Ok(s) => s,
            Err(e) => {
                warn(&format!("slab server: accept failed: {}", e));
                thread::sleep(Duration::from_millis(100));
                continue;
            }
        };
        let open = server.open.fetch_add(1, Ordering::SeqCst);
        if open >= server.limits.max_connections {
            server.open.fetch_sub(1, Ordering::SeqCst);
            warn(&format!(
                "slab server: refused a connection from {:?}: {} connections open (--max-connections)",
                s.peer_addr().ok(),
                open
            ));
            continue;
        }
        let srv = server.clone();
        let spawned = thread::Builder::new().name("slab-conn".into()).spawn(move || {
            serve_connection(&srv, s);
            srv.open.fetch_sub(1, Ordering::SeqCst);
        });
        if let Err(e) = spawned {
            server.open.fetch_sub(1, Ordering::SeqCst);
            warn(&format!("slab server: cannot start a connection thread: {}", e));
        }
    }
}

fn serve_connection(srv: &RemoteServer, s: TcpStream) {
    let id = srv.slabs.next_conn.fetch_add(1, Ordering::SeqCst);
    let peer = s
        .peer_addr()
        .map(|a| a.to_string())
        .unwrap_or_else(|_| "unknown peer".into());
    let tag = format!("slab conn {} from {}", id, peer);
    let _ = s.set_nodelay(true);
    let t = Some(srv.limits.handshake_timeout).filter(|d| !d.is_zero());
    let _ = s.set_read_timeout(t).and_then(|_| s.set_write_timeout(t));
    let raw = match s.try_clone() {
        Ok(r) => r,
        Err(e) => return warn(&format!("{}: {}", tag, e)),
    };
    let mut plain = s;
    let started = nbd::greet(&mut plain).and_then(|nz| Ok((nz, nbd::options_before_tls(&mut plain)?)));
    let no_zeroes = match started {
        Ok((nz, true)) => nz,
        Ok((_, false)) => return info(&format!("{}: client aborted before TLS", tag)),
        Err(e) => {
            srv.slabs.refused_handshakes.fetch_add(1, Ordering::Relaxed);
            return warn(&format!("{}: refused before TLS: {}", tag, e));
        }
    };
    let (tls_stream, identity) = match tls::accept(&srv.ctx, tls::Corked::new(plain)) {
        Ok(x) => x,
        Err(e) => {
            // an unknown identity or a wrong key ends here
            srv.slabs.refused_handshakes.fetch_add(1, Ordering::Relaxed);
            return warn(&format!("{}: refused: TLS-PSK handshake failed: {}", tag, e));
        }
    };
    let slab = match srv.slabs.by_identity(&identity) {
        Some(s) => s,
        None => return warn(&format!("{}: refused: identity {} names no slab (deleted?)", tag, identity)),
    };
    let tag = format!("{} ({}, slab {})", tag, identity, slab.id);
    let clients = slab.clients.fetch_add(1, Ordering::SeqCst);
    struct Client<'a>(&'a Slab);
    impl Drop for Client<'_> {
        fn drop(&mut self) {
            self.0.clients.fetch_sub(1, Ordering::SeqCst);
        }
    }
    let _client = Client(&slab);
    if clients >= MAX_CONNS_PER_SLAB {
        slab.counters.refused.fetch_add(1, Ordering::Relaxed);
        return warn(&format!(
            "{}: refused: {} connections open on this slab (at most {})",
            tag, clients, MAX_CONNS_PER_SLAB
        ));
    }
    if let (Ok(c), Ok(mut m)) = (raw.try_clone(), slab.streams.lock()) {
        m.insert(id, c);
    }
    struct Forget<'a>(&'a Slab, u64);
    impl Drop for Forget<'_> {
        fn drop(&mut self) {
            if let Ok(mut m) = self.0.streams.lock() {
                m.remove(&self.1);
            }
        }
    }
    let _forget = Forget(&slab, id);
    if slab.freeing.load(Ordering::SeqCst) {
        return warn(&format!("{}: refused: slab being freed", tag));
    }
    let shared = Rc::new(RefCell::new(tls_stream));
    let mut hs = Shared(shared.clone());
    match nbd::options(&mut hs, &*slab, None, no_zeroes, true) {
        Ok(Handshake::Transmission) => {}
        Ok(Handshake::Aborted) => return info(&format!("{}: client aborted the handshake", tag)),
        Err(e) => {
            slab.counters.refused.fetch_add(1, Ordering::Relaxed);
            return warn(&format!("{}: refused in the handshake: {}", tag, e));
        }
    }
    slab.counters.connections.fetch_add(1, Ordering::Relaxed);
    // clients ping when idle; a silent one is dropped
    let _ = raw
        .set_read_timeout(Some(IDLE_TIMEOUT))
        .and_then(|_| raw.set_write_timeout(Some(Duration::from_secs(10))));
    info(&format!(
        "{}: client connected ({} bytes, {})",
        tag,
        slab.size,
        tls::cipher_of(&shared.borrow())
    ));
    let r = nbd::transmission(Shared(shared.clone()), Shared(shared), &*slab, &srv.budget, &tag);
    match r {
        Ok(()) => info(&format!("{}: client disconnected", tag)),
        Err(e) => info(&format!("{}: connection ended: {}", tag, e)),
    }
}
