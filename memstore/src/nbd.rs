//! NBD server side: fixed-newstyle handshake and the transmission phase
//! with simple replies (the NBD protocol document, doc/proto.md of the
//! NetworkBlockDevice/nbd project, is the specification followed).
//!
//! Malformed input handling:
//! * handshake: an unknown client flag, or bad option magic, ends the
//!   connection (the protocol cannot be resynchronised); an unknown, invalid
//!   or oversized option gets an NBD_REP_ERR_* reply and haggling goes on.
//! * transmission: a bad request magic ends the connection (framing is
//!   lost).  Every other bad request gets an error reply with the request's
//!   cookie: EINVAL for an unknown command or flag, a read past the end or a
//!   length over the 32 MiB maximum; ENOSPC for a write, trim or zero past
//!   the end (the spec's choice); a write's payload is always consumed
//!   first so the stream stays in step.  Zero-length requests succeed
//!   without doing anything.

use crate::device::Device;
use crate::export::{Export, Layers};
use crate::limits::{Budget, Limits};
use crate::log::{info, warn};
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::MutexGuard;

pub const NBDMAGIC: u64 = 0x4e42_444d_4147_4943;
pub const IHAVEOPT: u64 = 0x4948_4156_454F_5054;
pub const REPLY_MAGIC_OPT: u64 = 0x0003_e889_0455_65a9;
pub const REQUEST_MAGIC: u32 = 0x2560_9513;
pub const SIMPLE_REPLY_MAGIC: u32 = 0x6744_6698;

pub const FLAG_FIXED_NEWSTYLE: u16 = 1;
pub const FLAG_NO_ZEROES: u16 = 2;
pub const CLIENT_FIXED_NEWSTYLE: u32 = 1;
pub const CLIENT_NO_ZEROES: u32 = 2;

pub const OPT_EXPORT_NAME: u32 = 1;
pub const OPT_ABORT: u32 = 2;
pub const OPT_LIST: u32 = 3;
pub const OPT_STARTTLS: u32 = 5;
pub const OPT_INFO: u32 = 6;
pub const OPT_GO: u32 = 7;

pub const REP_ACK: u32 = 1;
pub const REP_SERVER: u32 = 2;
pub const REP_INFO: u32 = 3;
pub const REP_ERR_UNSUP: u32 = 0x8000_0001;
pub const REP_ERR_POLICY: u32 = 0x8000_0002;
pub const REP_ERR_INVALID: u32 = 0x8000_0003;
pub const REP_ERR_TLS_REQD: u32 = 0x8000_0005;
pub const REP_ERR_UNKNOWN: u32 = 0x8000_0006;
pub const REP_ERR_TOO_BIG: u32 = 0x8000_0009;

pub const INFO_EXPORT: u16 = 0;
pub const INFO_BLOCK_SIZE: u16 = 3;

pub const TF_HAS_FLAGS: u16 = 1;
pub const TF_SEND_FLUSH: u16 = 1 << 2;
pub const TF_SEND_FUA: u16 = 1 << 3;
pub const TF_SEND_TRIM: u16 = 1 << 5;
pub const TF_SEND_WRITE_ZEROES: u16 = 1 << 6;
pub const TF_CAN_MULTI_CONN: u16 = 1 << 8;
pub const TF_SEND_CACHE: u16 = 1 << 10;
pub const TF_SEND_FAST_ZERO: u16 = 1 << 11;
pub const TRANSMISSION_FLAGS: u16 = TF_HAS_FLAGS
    | TF_SEND_FLUSH
    | TF_SEND_FUA
    | TF_SEND_TRIM
    | TF_SEND_WRITE_ZEROES
    | TF_CAN_MULTI_CONN
    | TF_SEND_CACHE
    | TF_SEND_FAST_ZERO;

pub const CMD_READ: u16 = 0;
pub const CMD_WRITE: u16 = 1;
pub const CMD_DISC: u16 = 2;
pub const CMD_FLUSH: u16 = 3;
pub const CMD_TRIM: u16 = 4;
pub const CMD_CACHE: u16 = 5;
pub const CMD_WRITE_ZEROES: u16 = 6;

pub const CMD_FLAG_FUA: u16 = 1;
pub const CMD_FLAG_NO_HOLE: u16 = 2;
pub const CMD_FLAG_FAST_ZERO: u16 = 16;

pub const EINVAL: u32 = 22;
pub const ENOSPC: u32 = 28;
pub const EIO: u32 = 5;

/// Largest read or write payload accepted (advertised as the maximum block
/// size).
pub const MAX_PAYLOAD: u32 = 32 << 20;
/// Largest option payload read (export names are at most 4096 bytes).
pub const MAX_OPTION: u32 = 64 << 10;

/// What an export looks like to the handshake.
pub trait ExportLookup {
    /// Does `name` ("" = default) name this socket's export?
    fn matches(&self, name: &[u8]) -> bool;
    fn size(&self) -> u64;
    fn names(&self) -> Vec<String>;
}

impl ExportLookup for Export {
    fn matches(&self, name: &[u8]) -> bool {
        name.is_empty() || name == self.name.as_bytes()
    }
    fn size(&self) -> u64 {
        self.size
    }
    fn names(&self) -> Vec<String> {
        vec![self.name.clone()]
    }
}

pub fn read_u16<R: Read>(r: &mut R) -> io::Result<u16> {
    let mut b = [0u8; 2];
    r.read_exact(&mut b)?;
    Ok(u16::from_be_bytes(b))
}
pub fn read_u32<R: Read>(r: &mut R) -> io::Result<u32> {
    let mut b = [0u8; 4];
    r.read_exact(&mut b)?;
    Ok(u32::from_be_bytes(b))
}
pub fn read_u64<R: Read>(r: &mut R) -> io::Result<u64> {
    let mut b = [0u8; 8];
    r.read_exact(&mut b)?;
    Ok(u64::from_be_bytes(b))
}

/// Read and throw away `n` bytes (a refused WRITE's payload).
pub fn discard_payload<R: Read>(r: &mut R, n: u64) -> io::Result<()> {
    discard(r, n)
}

fn discard<R: Read>(r: &mut R, mut n: u64) -> io::Result<()> {
    let mut buf = [0u8; 8192];
    while n > 0 {
        let k = std::cmp::min(n, buf.len() as u64) as usize;
        r.read_exact(&mut buf[..k])?;
        n -= k as u64;
    }
    Ok(())
}

fn bad(msg: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, msg.to_string())
}

fn opt_reply<W: Write>(w: &mut W, opt: u32, kind: u32, data: &[u8]) -> io::Result<()> {
    let mut m = Vec::with_capacity(20 + data.len());
    m.extend_from_slice(&REPLY_MAGIC_OPT.to_be_bytes());
    m.extend_from_slice(&opt.to_be_bytes());
    m.extend_from_slice(&kind.to_be_bytes());
    m.extend_from_slice(&(data.len() as u32).to_be_bytes());
    m.extend_from_slice(data);
    w.write_all(&m)?;
    w.flush()
}

fn opt_error<W: Write>(w: &mut W, opt: u32, kind: u32, msg: &str) -> io::Result<()> {
    opt_reply(w, opt, kind, msg.as_bytes())
}

/// Outcome of the handshake.
#[derive(Debug, PartialEq, Eq)]
pub enum Handshake {
    /// Go to transmission; `no_zeroes` is irrelevant after this point.
    Transmission,
    /// The client left (NBD_OPT_ABORT) or gave up.
    Aborted,
}

/// Parse NBD_OPT_GO / NBD_OPT_INFO data: (name, info requests).
fn parse_go(data: &[u8]) -> Option<(&[u8], Vec<u16>)> {
    if data.len() < 6 {
        return None;
    }
    let nlen = u32::from_be_bytes([data[0], data[1], data[2], data[3]]) as usize;
    if data.len() < 4 + nlen + 2 {
        return None;
    }
    let name = &data[4..4 + nlen];
    let rest = &data[4 + nlen..];
    let n = u16::from_be_bytes([rest[0], rest[1]]) as usize;
    if rest.len() != 2 + 2 * n {
        return None;
    }
    let reqs = (0..n)
        .map(|i| u16::from_be_bytes([rest[2 + 2 * i], rest[3 + 2 * i]]))
        .collect();
    Some((name, reqs))
}

/// Server side of the fixed-newstyle handshake on `s`.  With `denied`
/// (the peer may not open this export: the reason), every option that
/// would reveal or open the export is refused with NBD_REP_ERR_POLICY and
/// NBD_OPT_EXPORT_NAME closes the connection.
pub fn handshake<S: Read + Write, E: ExportLookup>(
    s: &mut S,
    export: &E,
    denied: Option<&str>,
) -> io::Result<Handshake> {
    let no_zeroes = greet(s)?;
    options(s, export, denied, no_zeroes, false)
}

/// The server's greeting and the client's flags; returns the client's
/// NO_ZEROES flag.
pub fn greet<S: Read + Write>(s: &mut S) -> io::Result<bool> {
    let mut hello = Vec::with_capacity(18);
    hello.extend_from_slice(&NBDMAGIC.to_be_bytes());
    hello.extend_from_slice(&IHAVEOPT.to_be_bytes());
    hello.extend_from_slice(&(FLAG_FIXED_NEWSTYLE | FLAG_NO_ZEROES).to_be_bytes());
    s.write_all(&hello)?;
    s.flush()?;
    let cflags = read_u32(s)?;
    if cflags & !(CLIENT_FIXED_NEWSTYLE | CLIENT_NO_ZEROES) != 0 {
        return Err(bad(&format!("unknown client flags {:#x}", cflags)));
    }
    Ok(cflags & CLIENT_NO_ZEROES != 0)
}

/// One option request's header: (option, data length); the data follows.
fn option_header<S: Read>(s: &mut S) -> io::Result<(u32, u32)> {
    let magic = read_u64(s)?;
    if magic != IHAVEOPT {
        return Err(bad(&format!("bad option magic {:#x}", magic)));
    }
    Ok((read_u32(s)?, read_u32(s)?))
}

/// Before TLS on a TCP connection (the slab server): every option but
/// NBD_OPT_STARTTLS and NBD_OPT_ABORT gets NBD_REP_ERR_TLS_REQD.
/// Ok(true): STARTTLS was acknowledged, the caller starts TLS now.
pub fn options_before_tls<S: Read + Write>(s: &mut S) -> io::Result<bool> {
    loop {
        let (opt, len) = option_header(s)?;
        if len > MAX_OPTION {
            return Err(bad("oversized option before TLS"));
        }
        discard(s, len as u64)?;
        match opt {
            OPT_EXPORT_NAME => return Err(bad("NBD_OPT_EXPORT_NAME before TLS")),
            OPT_ABORT => {
                let _ = opt_reply(s, opt, REP_ACK, &[]);
                return Ok(false);
            }
            OPT_STARTTLS if len == 0 => {
                opt_reply(s, opt, REP_ACK, &[])?;
                return Ok(true);
            }
            OPT_STARTTLS => opt_error(s, opt, REP_ERR_INVALID, "NBD_OPT_STARTTLS takes no data")?,
            _ => opt_error(s, opt, REP_ERR_TLS_REQD, "TLS is required: send NBD_OPT_STARTTLS first")?,
        }
    }
}

/// Option haggling after the greeting (`tls`: it runs inside TLS already).
pub fn options<S: Read + Write, E: ExportLookup>(
    s: &mut S,
    export: &E,
    denied: Option<&str>,
    no_zeroes: bool,
    tls: bool,
) -> io::Result<Handshake> {
    loop {
        let (opt, len) = option_header(s)?;
        if len > MAX_OPTION {
            discard(s, len as u64)?;
            if opt == OPT_EXPORT_NAME {
                return Err(bad("oversized NBD_OPT_EXPORT_NAME"));
            }
            opt_error(s, opt, REP_ERR_TOO_BIG, "option data too large")?;
            continue;
        }
        let mut data = vec![0u8; len as usize];
        s.read_exact(&mut data)?;
        match opt {
            OPT_EXPORT_NAME => {
                if denied.is_some() {
                    return Err(bad("NBD_OPT_EXPORT_NAME refused by policy"));
                }
                if !export.matches(&data) {
                    // no error reply exists for this option: close
                    return Err(bad("NBD_OPT_EXPORT_NAME for an unknown export"));
                }
                let mut m = Vec::with_capacity(134);
                m.extend_from_slice(&export.size().to_be_bytes());
                m.extend_from_slice(&TRANSMISSION_FLAGS.to_be_bytes());
                if !no_zeroes {
                    m.extend_from_slice(&[0u8; 124]);
                }
                s.write_all(&m)?;
                s.flush()?;
                return Ok(Handshake::Transmission);
            }
            OPT_ABORT => {
                if len != 0 {
                    opt_error(s, opt, REP_ERR_INVALID, "NBD_OPT_ABORT takes no data")?;
                    continue;
                }
                let _ = opt_reply(s, opt, REP_ACK, &[]);
                return Ok(Handshake::Aborted);
            }
            OPT_LIST => {
                if len != 0 {
                    opt_error(s, opt, REP_ERR_INVALID, "NBD_OPT_LIST takes no data")?;
                    continue;
                }
                if let Some(why) = denied {
                    opt_error(s, opt, REP_ERR_POLICY, why)?;
                    continue;
                }
                for name in export.names() {
                    let mut d = (name.len() as u32).to_be_bytes().to_vec();
                    d.extend_from_slice(name.as_bytes());
                    opt_reply(s, opt, REP_SERVER, &d)?;
                }
                opt_reply(s, opt, REP_ACK, &[])?;
            }
            OPT_STARTTLS if tls => {
                opt_error(s, opt, REP_ERR_INVALID, "TLS is already started")?;
            }
            OPT_STARTTLS => {
                opt_error(s, opt, REP_ERR_POLICY, "TLS is not offered on unix sockets")?;
            }
            OPT_INFO | OPT_GO => {
                let (name, reqs) = match parse_go(&data) {
                    Some(x) => x,
                    None => {
                        opt_error(s, opt, REP_ERR_INVALID, "malformed NBD_OPT_GO/INFO")?;
                        continue;
                    }
                };
                if let Some(why) = denied {
                    opt_error(s, opt, REP_ERR_POLICY, why)?;
                    continue;
                }
                if !export.matches(name) {
                    opt_error(s, opt, REP_ERR_UNKNOWN, "no such export on this socket")?;
                    continue;
                }
                let mut d = INFO_EXPORT.to_be_bytes().to_vec();
                d.extend_from_slice(&export.size().to_be_bytes());
                d.extend_from_slice(&TRANSMISSION_FLAGS.to_be_bytes());
                opt_reply(s, opt, REP_INFO, &d)?;
                if reqs.contains(&INFO_BLOCK_SIZE) {
                    let mut d = INFO_BLOCK_SIZE.to_be_bytes().to_vec();
                    d.extend_from_slice(&1u32.to_be_bytes());
                    d.extend_from_slice(&4096u32.to_be_bytes());
                    d.extend_from_slice(&MAX_PAYLOAD.to_be_bytes());
                    opt_reply(s, opt, REP_INFO, &d)?;
                }
                opt_reply(s, opt, REP_ACK, &[])?;
                if opt == OPT_GO {
                    return Ok(Handshake::Transmission);
                }
            }
            _ => {
                opt_error(s, opt, REP_ERR_UNSUP, "option not supported")?;
            }
        }
    }
}

/// What transmission needs from an export: its size and its layers,
/// locked for one request at a time.  Tests use an in-memory device.
pub trait Backend {
    type Layers: Device;
    fn size(&self) -> u64;
    fn lock(&self) -> MutexGuard<'_, Self::Layers>;
    /// An NBD_CMD_CACHE (a hint: accepted, nothing to do).
    fn cache(&self) {}
    /// A request refused before it reached the layers.
    fn rejected(&self) {}
}

impl Backend for Export {
    type Layers = Layers;
    fn size(&self) -> u64 {
        self.size
    }
    fn lock(&self) -> MutexGuard<'_, Layers> {
        Export::lock(self)
    }
    fn cache(&self) {
        self.lock().cache_hint()
    }
    fn rejected(&self) {
        self.lock().rejected()
    }
}

/// The NBD error for an errno from the layers.  The protocol has a short
/// list (EPERM, EIO, ENOMEM, EINVAL, ENOSPC, EOVERFLOW, ENOTSUP,
/// ESHUTDOWN); a full file system or quota is ENOSPC for every command
/// that writes, the rest is EIO.
pub fn nbd_error(e: i32) -> u32 {
    match e {
        libc::ENOSPC | libc::EDQUOT => ENOSPC,
        _ => EIO,
    }
}

pub fn reply_header(w: &mut Vec<u8>, error: u32, cookie: u64) {
    w.extend_from_slice(&SIMPLE_REPLY_MAGIC.to_be_bytes());
    w.extend_from_slice(&error.to_be_bytes());
    w.extend_from_slice(&cookie.to_be_bytes());
}

/// Check a request's command, flags and range; Some(errno) rejects it.
pub fn validate(cmd: u16, flags: u16, off: u64, len: u32, size: u64) -> Option<u32> {
    let allowed = match cmd {
        CMD_READ | CMD_WRITE | CMD_TRIM | CMD_CACHE | CMD_FLUSH | CMD_DISC => CMD_FLAG_FUA,
        CMD_WRITE_ZEROES => CMD_FLAG_FUA | CMD_FLAG_NO_HOLE | CMD_FLAG_FAST_ZERO,
        _ => return Some(EINVAL), // unknown / not negotiated (block status, resize)
    };
    if flags & !allowed != 0 {
        return Some(EINVAL);
    }
    match cmd {
        CMD_READ | CMD_WRITE if len > MAX_PAYLOAD => Some(EINVAL),
        CMD_READ | CMD_CACHE | CMD_WRITE | CMD_TRIM | CMD_WRITE_ZEROES => {
            let end = off.checked_add(len as u64);
            match end {
                Some(e) if e <= size => None,
                _ if cmd == CMD_READ || cmd == CMD_CACHE => Some(EINVAL),
                _ => Some(ENOSPC),
            }
        }
        _ => None,
    }
}

/// One request's header.
#[derive(Clone, Copy, Debug)]
pub struct Request {
    pub flags: u16,
    pub cmd: u16,
    pub cookie: u64,
    pub off: u64,
    pub len: u32,
}

/// Read one request header: Ok(None) when the client closed the
/// connection between requests; a bad magic is an error (framing is lost).
pub fn read_header<R: Read>(r: &mut R) -> io::Result<Option<Request>> {
    let mut hdr = [0u8; 28];
    match r.read_exact(&mut hdr) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(e),
    }
    let magic = u32::from_be_bytes([hdr[0], hdr[1], hdr[2], hdr[3]]);
    if magic != REQUEST_MAGIC {
        return Err(bad(&format!("bad request magic {:#x}: closing", magic)));
    }
    let mut c = [0u8; 8];
    c.copy_from_slice(&hdr[8..16]);
    let mut o = [0u8; 8];
    o.copy_from_slice(&hdr[16..24]);
    Ok(Some(Request {
        flags: u16::from_be_bytes([hdr[4], hdr[5]]),
        cmd: u16::from_be_bytes([hdr[6], hdr[7]]),
        cookie: u64::from_be_bytes(c),
        off: u64::from_be_bytes(o),
        len: u32::from_be_bytes([hdr[24], hdr[25], hdr[26], hdr[27]]),
    }))
}

/// A validated WRITE's payload, read and stored chunk by chunk through
/// buffers of the budget; returns the NBD error (0: success).  The whole
/// payload is read whatever happens, so the stream stays in step.
pub fn write_chunked<R: Read, B: Backend>(
    r: &mut R,
    store: &B,
    budget: &Budget,
    req: &Request,
    tag: &str,
) -> io::Result<u32> {
    let len = req.len as usize;
    let fua = req.flags & CMD_FLAG_FUA != 0;
    let mut done = 0usize;
    let mut err = 0;
    while done < len {
        let n = std::cmp::min(budget.chunk(), len - done);
        let _grant = budget.acquire(n);
        let mut buf = vec![0u8; n];
        r.read_exact(&mut buf)?;
        let at = req.off + done as u64;
        if err == 0 {
            let res = store.lock().write(at, &buf, fua);
            if let Err(e) = res {
                warn(&format!("{}: write at {} failed: errno {}", tag, at, e));
                err = nbd_error(e);
            }
        }
        done += n;
    }
    Ok(err)
}

/// Serve requests until the client disconnects.  Replies are batched: they
/// are flushed when no further request is already buffered, except a
/// READ's, flushed at once: a swap-in blocks a guest's thread, and requests
/// pipelined behind it (a swap-out's WRITEs) would otherwise hold its
/// data here until they are served.  READ and
/// WRITE payloads go through buffers of at most `budget.chunk()` bytes
/// taken from `budget` (see `limits.rs`).
pub fn transmission<R: Read, W: Write, B: Backend>(
    r: R,
    w: W,
    store: &B,
    budget: &Budget,
    tag: &str,
) -> io::Result<()> {
    // small per-connection buffers: they are outside the budget
    let mut r = BufReader::with_capacity(64 << 10, r);
    let mut w = BufWriter::with_capacity(64 << 10, w);
    let mut out: Vec<u8> = Vec::with_capacity(16);
    loop {
        if r.buffer().is_empty() {
            w.flush()?;
        }
        let req = match read_header(&mut r) {
            Ok(Some(req)) => req,
            Ok(None) => {
                w.flush()?;
                return Ok(()); // client went away
            }
            Err(e) => {
                w.flush()?;
                return Err(e);
            }
        };
        let Request {
            flags,
            cmd,
            cookie,
            off,
            len,
        } = req;
        let fua = flags & CMD_FLAG_FUA != 0;

        let verdict = validate(cmd, flags, off, len, store.size());
        out.clear();
        if let Some(err) = verdict {
            if cmd == CMD_WRITE {
                discard(&mut r, len as u64)?; // keep the stream in step
            }
            store.rejected();
            warn(&format!(
                "{}: rejected request cmd={} flags={:#x} offset={} length={} size={}: errno {}",
                tag,
                cmd,
                flags,
                off,
                len,
                store.size(),
                err
            ));
            reply_header(&mut out, err, cookie);
            w.write_all(&out)?;
            continue;
        }
        match cmd {
            CMD_READ => {
                // chunk by chunk, through one buffer taken from the global
                // budget and freed once sent: a 32 MiB READ never holds
                // 32 MiB
                let len = len as usize;
                let mut done = 0usize;
                if len == 0 {
                    reply_header(&mut out, 0, cookie);
                    w.write_all(&out)?;
                }
                // (no fresh zeroed buffer per chunk)
                let first = std::cmp::min(budget.chunk(), len);
                let _grant = budget.acquire(first);
                let mut chunk_buf = vec![0u8; first];
                while done < len {
                    let n = std::cmp::min(budget.chunk(), len - done);
                    let buf = &mut chunk_buf[..n];
                    let at = off + done as u64;
                    let r = store.lock().read(at, buf);
                    match r {
                        Ok(()) => {
                            if done == 0 {
                                reply_header(&mut out, 0, cookie);
                                w.write_all(&out)?;
                            }
                            w.write_all(buf)?;
                        }
                        Err(e) if done == 0 => {
                            warn(&format!("{}: read at {} failed: errno {}", tag, at, e));
                            reply_header(&mut out, nbd_error(e), cookie);
                            w.write_all(&out)?;
                            break;
                        }
                        Err(e) => {
                            // the reply's header said success: a simple
                            // reply cannot take it back, the connection
                            // ends (the client retries on a new one)
                            w.flush()?;
                            return Err(io::Error::new(
                                io::ErrorKind::Other,
                                format!("read at {} failed mid-reply: errno {}: closing", at, e),
                            ));
                        }
                    }
                    done += n;
                }
                w.flush()?;
            }
            CMD_WRITE => {
                let err = write_chunked(&mut r, store, budget, &req, tag)?;
                reply_header(&mut out, err, cookie);
                w.write_all(&out)?;
            }
            CMD_FLUSH => {
                let err = if store.lock().flush().is_ok() { 0 } else { EIO };
                reply_header(&mut out, err, cookie);
                w.write_all(&out)?;
            }
            CMD_TRIM | CMD_WRITE_ZEROES => {
                let zero = cmd == CMD_WRITE_ZEROES;
                let punch = !(zero && flags & CMD_FLAG_NO_HOLE != 0);
                let err = match store.lock().discard(off, len as u64, zero, punch, fua) {
                    Ok(()) => 0,
                    Err(e) => {
                        warn(&format!("{}: trim/zero at {} failed: errno {}", tag, off, e));
                        nbd_error(e)
                    }
                };
                reply_header(&mut out, err, cookie);
                w.write_all(&out)?;
            }
            CMD_CACHE => {
                store.cache();
                reply_header(&mut out, 0, cookie);
                w.write_all(&out)?;
            }
            CMD_DISC => {
                w.flush()?;
                return Ok(());
            }
            _ => unreachable!("validate() rejects unknown commands"),
        }
    }
}

/// One connection counted among its export's clients for as long as it
/// is served.  Counted from accept, not from the end of the handshake: the
/// client reads the handshake's last reply (NBD_OPT_GO's ACK) before this
/// thread goes on, and a delete without force in between saw no client
/// and removed the export under a disk the guest had just attached.
struct CountedClient<'a>(&'a AtomicUsize);

impl<'a> CountedClient<'a> {
    fn new(clients: &'a AtomicUsize) -> Self {
        clients.fetch_add(1, Ordering::SeqCst);
        CountedClient(clients)
    }
}

impl Drop for CountedClient<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Handshake then transmission on one accepted connection.
pub fn serve_connection(
    stream: std::os::unix::net::UnixStream,
    export: &Export,
    id: u64,
    limits: &Limits,
    budget: &Budget,
) {
    let tag = format!("export {} conn {}", export.name, id);
    let _counted = CountedClient::new(&export.clients);
    let mut s = stream;
    // who connected, from the kernel; checked against the export's binding
    let denied = match crate::peer::peer_cred(&s) {
        Ok(c) => {
            let v = crate::peer::export_allowed(&c, crate::peer::own_uid(), export.bound_pid());
            match &v {
                Ok(()) => info(&format!("{}: peer {}", tag, c)),
                Err(why) => warn(&format!("{}: {}", tag, why)),
            }
            v.err()
        }
        Err(e) => {
            let why = format!("cannot read peer credentials: {}", e);
            warn(&format!("{}: {}", tag, why));
            Some(why)
        }
    };
    // a client that does not finish the handshake in time is dropped
    let t = Some(limits.handshake_timeout).filter(|d| !d.is_zero());
    let hs = s
        .set_read_timeout(t)
        .and_then(|_| s.set_write_timeout(t))
        .and_then(|_| handshake(&mut s, export, denied.as_deref()))
        .map_err(|e| match e.kind() {
            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => io::Error::new(
                e.kind(),
                format!(
                    "no handshake within {:?} (--handshake-timeout)",
                    limits.handshake_timeout
                ),
            ),
            _ => e,
        })
        .and_then(|h| {
            // an idle swap disk is normal: no read timeout once
            // transmitting; a write that makes no progress returns after
            // CLIENT_STALL so that a READ holding lender connections can
            // give them back (lanes.rs retries every other write)
            s.set_read_timeout(None)?;
            s.set_write_timeout(Some(crate::lanes::CLIENT_STALL))?;
            Ok(h)
        });
    match hs {
        Ok(Handshake::Transmission) => {}
        Ok(Handshake::Aborted) => {
            info(&format!("{}: client aborted the handshake", tag));
            return;
        }
        Err(e) => {
            warn(&format!("{}: handshake failed: {}", tag, e));
            return;
        }
    }
    info(&format!("{}: client connected ({} bytes)", tag, export.size));
    let reader = match s.try_clone() {
        Ok(r) => r,
        Err(e) => {
            warn(&format!("{}: {}", tag, e));
            return;
        }
    };
    // READs are served while WRITEs are (lanes.rs); `stop` unblocks the
    // reading thread when a lane must end the connection
    let stop = match s.try_clone() {
        Ok(c) => move || {
            let _ = c.shutdown(std::net::Shutdown::Both);
        },
        Err(e) => {
            warn(&format!("{}: {}", tag, e));
            return;
        }
    };
    let r = crate::lanes::transmission(reader, s, export, budget, &tag, &stop);
    match r {
        Ok(()) => info(&format!("{}: client disconnected", tag)),
        Err(e) => warn(&format!("{}: connection ended: {}", tag, e)),
    }
}

/// An in-memory export named "vm1", for the protocol tests and the
/// fuzzers.
pub struct Mem(pub std::sync::Mutex<crate::device::MemDevice>);

impl Mem {
    pub fn new(size: usize) -> Mem {
        Mem(std::sync::Mutex::new(crate::device::MemDevice::new(size)))
    }
}

impl ExportLookup for Mem {
    fn matches(&self, name: &[u8]) -> bool {
        name.is_empty() || name == b"vm1"
    }
    fn size(&self) -> u64 {
        self.0.lock().map(|d| d.size()).unwrap_or(0)
    }
    fn names(&self) -> Vec<String> {
        vec!["vm1".into()]
    }
}

impl Backend for Mem {
    type Layers = crate::device::MemDevice;
    fn size(&self) -> u64 {
        ExportLookup::size(self)
    }
    fn lock(&self) -> MutexGuard<'_, crate::device::MemDevice> {
        match self.0.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        }
    }
}

/// One client stream in, replies thrown away: what the NBD fuzzer feeds
/// the handshake and the transmission phase.
pub struct Scripted<'a> {
    pub input: &'a [u8],
}

impl Read for Scripted<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.input.read(buf)
    }
}

impl Write for Scripted<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Serve the whole client stream `input` against `mem` (the fuzz target's
/// body); errors are the connection ending, as on a socket.
pub fn serve_script(input: &[u8], mem: &Mem, denied: Option<&str>) {
    let mut s = Scripted { input };
    if let Ok(Handshake::Transmission) = handshake(&mut s, mem, denied) {
        let rest = s.input;
        let budget = Budget::new(4 << 20);
        let _ = transmission(Scripted { input: rest }, io::sink(), mem, &budget, "fuzz");
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::os::unix::net::UnixStream;
    use std::thread;

    fn serve(mem: std::sync::Arc<Mem>) -> (UnixStream, thread::JoinHandle<io::Result<Handshake>>) {
        let (mut server, client) = UnixStream::pair().unwrap();
        let h = thread::spawn(move || {
            let hs = handshake(&mut server, &*mem, None)?;
            if hs == Handshake::Transmission {
                let r = server.try_clone()?;
                transmission(r, server, &*mem, &Budget::new(1 << 20), "test")?;
            }
            Ok(hs)
        });
        (client, h)
    }

    fn opt(c: &mut UnixStream, opt: u32, data: &[u8]) {
        let mut m = IHAVEOPT.to_be_bytes().to_vec();
        m.extend_from_slice(&opt.to_be_bytes());
        m.extend_from_slice(&(data.len() as u32).to_be_bytes());
        m.extend_from_slice(data);
        c.write_all(&m).unwrap();
    }

    fn opt_reply_read(c: &mut UnixStream) -> (u32, u32, Vec<u8>) {
        assert_eq!(read_u64(c).unwrap(), REPLY_MAGIC_OPT);
        let o = read_u32(c).unwrap();
        let k = read_u32(c).unwrap();
        let n = read_u32(c).unwrap();
        let mut d = vec![0; n as usize];
        c.read_exact(&mut d).unwrap();
        (o, k, d)
    }

    fn go_data(name: &[u8], infos: &[u16]) -> Vec<u8> {
        let mut d = (name.len() as u32).to_be_bytes().to_vec();
        d.extend_from_slice(name);
        d.extend_from_slice(&(infos.len() as u16).to_be_bytes());
        for i in infos {
            d.extend_from_slice(&i.to_be_bytes());
        }
        d
    }

    fn greet(c: &mut UnixStream) {
        assert_eq!(read_u64(c).unwrap(), NBDMAGIC);
        assert_eq!(read_u64(c).unwrap(), IHAVEOPT);
        assert_eq!(read_u16(c).unwrap(), FLAG_FIXED_NEWSTYLE | FLAG_NO_ZEROES);
        c.write_all(&(CLIENT_FIXED_NEWSTYLE | CLIENT_NO_ZEROES).to_be_bytes())
            .unwrap();
    }

    fn go(c: &mut UnixStream) {
        opt(c, OPT_GO, &go_data(b"vm1", &[INFO_BLOCK_SIZE]));
        let (_, k, d) = opt_reply_read(c);
        assert_eq!(k, REP_INFO);
        assert_eq!(&d[..2], &INFO_EXPORT.to_be_bytes());
        let (_, k, d) = opt_reply_read(c);
        assert_eq!((k, &d[..2]), (REP_INFO, &INFO_BLOCK_SIZE.to_be_bytes()[..]));
        assert_eq!(opt_reply_read(c).1, REP_ACK);
    }

    /// One request on the wire (also used by lanes.rs's tests).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn request(
        c: &mut UnixStream,
        magic: u32,
        flags: u16,
        cmd: u16,
        cookie: u64,
        off: u64,
        len: u32,
        payload: &[u8],
    ) {
        let mut m = magic.to_be_bytes().to_vec();
        m.extend_from_slice(&flags.to_be_bytes());
        m.extend_from_slice(&cmd.to_be_bytes());
        m.extend_from_slice(&cookie.to_be_bytes());
        m.extend_from_slice(&off.to_be_bytes());
        m.extend_from_slice(&len.to_be_bytes());
        m.extend_from_slice(payload);
        c.write_all(&m).unwrap();
    }

    fn reply(c: &mut UnixStream) -> (u32, u64) {
        assert_eq!(read_u32(c).unwrap(), SIMPLE_REPLY_MAGIC);
        (read_u32(c).unwrap(), read_u64(c).unwrap())
    }

    #[test]
    fn validation_table() {
        let size = 1 << 20;
        assert_eq!(validate(CMD_READ, 0, 0, 4096, size), None);
        assert_eq!(validate(CMD_READ, 0, size - 4096, 4096, size), None);
        assert_eq!(validate(CMD_READ, 0, size - 4095, 4096, size), Some(EINVAL));
        assert_eq!(validate(CMD_WRITE, 0, size, 1, size), Some(ENOSPC));
        assert_eq!(validate(CMD_WRITE, 0, u64::MAX, 2, size), Some(ENOSPC));
        assert_eq!(validate(CMD_READ, 0, u64::MAX - 1, 4096, size), Some(EINVAL));
        assert_eq!(validate(CMD_READ, 0, 0, MAX_PAYLOAD + 1, u64::MAX), Some(EINVAL));
        assert_eq!(validate(CMD_TRIM, 0, 0, u32::MAX, size), Some(ENOSPC));
        assert_eq!(
            validate(CMD_WRITE_ZEROES, CMD_FLAG_NO_HOLE | CMD_FLAG_FUA, 0, 8, size),
            None
        );
        assert_eq!(validate(CMD_WRITE, CMD_FLAG_NO_HOLE, 0, 8, size), Some(EINVAL));
        assert_eq!(validate(CMD_READ, 4, 0, 8, size), Some(EINVAL)); // DF without structured replies
        assert_eq!(validate(7, 0, 0, 8, size), Some(EINVAL)); // block status
        assert_eq!(validate(999, 0, 0, 0, size), Some(EINVAL));
        assert_eq!(validate(CMD_FLUSH, 0, 0, 0, size), None);
        assert_eq!(validate(CMD_READ, 0, 0, 0, size), None);
    }

    #[test]
    fn handshake_options_and_io() {
        let mem = std::sync::Arc::new(Mem::new(1 << 20));
        let (mut c, h) = serve(mem.clone());
        greet(&mut c);
        opt(&mut c, 99, b"whatever");
        assert_eq!(opt_reply_read(&mut c).1, REP_ERR_UNSUP);
        opt(&mut c, OPT_LIST, &[]);
        let (_, k, d) = opt_reply_read(&mut c);
        assert_eq!((k, &d[4..]), (REP_SERVER, &b"vm1"[..]));
        assert_eq!(opt_reply_read(&mut c).1, REP_ACK);
        opt(&mut c, OPT_GO, &go_data(b"other", &[]));
        assert_eq!(opt_reply_read(&mut c).1, REP_ERR_UNKNOWN);
        opt(&mut c, OPT_GO, &[0, 0, 0, 9, 1]); // name length past the data
        assert_eq!(opt_reply_read(&mut c).1, REP_ERR_INVALID);
        opt(&mut c, OPT_STARTTLS, &[]);
        assert_eq!(opt_reply_read(&mut c).1, REP_ERR_POLICY);
        go(&mut c);

        request(&mut c, REQUEST_MAGIC, 0, CMD_WRITE, 1, 8192, 4, b"abcd");
        assert_eq!(reply(&mut c), (0, 1));
        request(&mut c, REQUEST_MAGIC, 0, CMD_READ, 2, 8190, 8, &[]);
        assert_eq!(reply(&mut c), (0, 2));
        let mut d = [0u8; 8];
        c.read_exact(&mut d).unwrap();
        assert_eq!(&d, b"\0\0abcd\0\0");
        // a write past the end: payload consumed, ENOSPC, stream in step
        request(&mut c, REQUEST_MAGIC, 0, CMD_WRITE, 3, (1 << 20) - 2, 4, b"wxyz");
        assert_eq!(reply(&mut c), (ENOSPC, 3));
        request(&mut c, REQUEST_MAGIC, 0, CMD_READ, 4, 1 << 20, 1, &[]);
        assert_eq!(reply(&mut c), (EINVAL, 4));
        request(&mut c, REQUEST_MAGIC, 0, 42, 5, 0, 0, &[]);
        assert_eq!(reply(&mut c), (EINVAL, 5));
        request(&mut c, REQUEST_MAGIC, 0x80, CMD_FLUSH, 6, 0, 0, &[]);
        assert_eq!(reply(&mut c), (EINVAL, 6));
        request(&mut c, REQUEST_MAGIC, CMD_FLAG_FUA, CMD_FLUSH, 7, 0, 0, &[]);
        assert_eq!(reply(&mut c), (0, 7));
        request(&mut c, REQUEST_MAGIC, 0, CMD_TRIM, 8, 8192, 2, &[]);
        assert_eq!(reply(&mut c), (0, 8));
        request(&mut c, REQUEST_MAGIC, 0, CMD_READ, 9, 8192, 4, &[]);
        assert_eq!(reply(&mut c), (0, 9));
        c.read_exact(&mut d[..4]).unwrap();
        assert_eq!(&d[..4], b"\0\0cd");
        // a pipelined batch: replies in order, nothing lost
        for i in 0..64u64 {
            request(
                &mut c,
                REQUEST_MAGIC,
                0,
                CMD_WRITE,
                100 + i,
                i * 512,
                512,
                &[i as u8; 512],
            );
        }
        for i in 0..64u64 {
            assert_eq!(reply(&mut c), (0, 100 + i));
        }
        assert_eq!(Backend::lock(&*mem).data[63 * 512], 63);
        request(&mut c, REQUEST_MAGIC, 0, CMD_DISC, 10, 0, 0, &[]);
        assert_eq!(h.join().unwrap().unwrap(), Handshake::Transmission);
        assert_eq!(Backend::lock(&*mem).flushes, 1);
    }

    #[test]
    fn a_read_reply_is_not_held_behind_requests_pipelined_after_it() {
        let mem = std::sync::Arc::new(Mem::new(1 << 20));
        let (mut c, h) = serve(mem.clone());
        greet(&mut c);
        go(&mut c);
        request(&mut c, REQUEST_MAGIC, 0, CMD_WRITE, 1, 0, 4, b"abcd");
        assert_eq!(reply(&mut c), (0, 1));
        // a READ, then a WRITE whose payload is still on its way: the
        // server is busy with the WRITE, the READ's reply must be out
        let mut m = Vec::new();
        for (cmd, cookie, len) in [(CMD_READ, 2u64, 4u32), (CMD_WRITE, 3, 8192)] {
            m.extend_from_slice(&REQUEST_MAGIC.to_be_bytes());
            m.extend_from_slice(&0u16.to_be_bytes());
            m.extend_from_slice(&cmd.to_be_bytes());
            m.extend_from_slice(&cookie.to_be_bytes());
            m.extend_from_slice(&0u64.to_be_bytes());
            m.extend_from_slice(&len.to_be_bytes());
        }
        m.extend_from_slice(&[7u8; 100]);
        c.write_all(&m).unwrap();
        // (a failure shows as this timeout, not as a hang)
        c.set_read_timeout(Some(std::time::Duration::from_secs(20)))
            .unwrap();
        assert_eq!(reply(&mut c), (0, 2));
        let mut d = [0u8; 4];
        c.read_exact(&mut d).unwrap();
        assert_eq!(&d, b"abcd");
        c.write_all(&[7u8; 8192 - 100]).unwrap();
        assert_eq!(reply(&mut c), (0, 3));
        request(&mut c, REQUEST_MAGIC, 0, CMD_DISC, 4, 0, 0, &[]);
        assert_eq!(h.join().unwrap().unwrap(), Handshake::Transmission);
        assert_eq!(Backend::lock(&*mem).data[8191], 7);
    }

    #[test]
    fn full_file_system_is_enospc_for_every_writing_command() {
        let mem = std::sync::Arc::new(Mem::new(1 << 20));
        let (mut c, h) = serve(mem.clone());
        greet(&mut c);
        go(&mut c);
        {
            let mut d = Backend::lock(&*mem);
            d.fail = true;
            d.fail_errno = libc::ENOSPC;
        }
        request(&mut c, REQUEST_MAGIC, 0, CMD_WRITE, 1, 0, 4, b"abcd");
        assert_eq!(reply(&mut c), (ENOSPC, 1));
        request(&mut c, REQUEST_MAGIC, 0, CMD_WRITE_ZEROES, 2, 0, 4096, &[]);
        assert_eq!(reply(&mut c), (ENOSPC, 2));
        request(
            &mut c,
            REQUEST_MAGIC,
            CMD_FLAG_NO_HOLE,
            CMD_WRITE_ZEROES,
            3,
            0,
            4096,
            &[],
        );
        assert_eq!(reply(&mut c), (ENOSPC, 3));
        request(&mut c, REQUEST_MAGIC, 0, CMD_TRIM, 4, 0, 4096, &[]);
        assert_eq!(reply(&mut c), (ENOSPC, 4));
        Backend::lock(&*mem).fail_errno = libc::EDQUOT;
        request(&mut c, REQUEST_MAGIC, 0, CMD_WRITE_ZEROES, 5, 0, 4096, &[]);
        assert_eq!(reply(&mut c), (ENOSPC, 5));
        Backend::lock(&*mem).fail_errno = libc::EIO;
        request(&mut c, REQUEST_MAGIC, 0, CMD_WRITE_ZEROES, 6, 0, 4096, &[]);
        assert_eq!(reply(&mut c), (EIO, 6));
        request(&mut c, REQUEST_MAGIC, 0, CMD_DISC, 7, 0, 0, &[]);
        h.join().unwrap().unwrap();
    }

    #[test]
    fn a_denied_peer_gets_policy_errors_and_no_export() {
        let mem = std::sync::Arc::new(Mem::new(4096));
        let run = |mem: std::sync::Arc<Mem>| {
            let (mut server, client) = UnixStream::pair().unwrap();
            let h = thread::spawn(move || handshake(&mut server, &*mem, Some("bound to pid 1")));
            (client, h)
        };
        let (mut c, h) = run(mem.clone());
        greet(&mut c);
        opt(&mut c, OPT_GO, &go_data(b"", &[]));
        let (_, k, d) = opt_reply_read(&mut c);
        assert_eq!((k, &d[..]), (REP_ERR_POLICY, &b"bound to pid 1"[..]));
        opt(&mut c, OPT_INFO, &go_data(b"vm1", &[]));
        assert_eq!(opt_reply_read(&mut c).1, REP_ERR_POLICY);
        opt(&mut c, OPT_LIST, &[]);
        assert_eq!(opt_reply_read(&mut c).1, REP_ERR_POLICY);
        opt(&mut c, OPT_EXPORT_NAME, b"vm1");
        assert!(h.join().unwrap().is_err());
        let mut b = [0u8; 1];
        assert_eq!(c.read(&mut b).unwrap(), 0);
    }

    #[test]
    fn bad_request_magic_closes() {
        let mem = std::sync::Arc::new(Mem::new(4096));
        let (mut c, h) = serve(mem);
        greet(&mut c);
        go(&mut c);
        request(&mut c, 0xdeadbeef, 0, CMD_READ, 1, 0, 8, &[]);
        assert!(h.join().unwrap().is_err());
        let mut b = [0u8; 1];
        assert_eq!(c.read(&mut b).unwrap(), 0); // closed, no reply
    }

    #[test]
    fn bad_client_flags_and_option_magic_close() {
        let mem = std::sync::Arc::new(Mem::new(4096));
        let (mut c, h) = serve(mem.clone());
        read_u64(&mut c).unwrap();
        read_u64(&mut c).unwrap();
        read_u16(&mut c).unwrap();
        c.write_all(&0x80u32.to_be_bytes()).unwrap();
        assert!(h.join().unwrap().is_err());

        let (mut c, h) = serve(mem);
        greet(&mut c);
        c.write_all(&[0u8; 16]).unwrap();
        assert!(h.join().unwrap().is_err());
    }

    #[test]
    fn oversized_option_and_export_name() {
        let mem = std::sync::Arc::new(Mem::new(4096));
        let (mut c, h) = serve(mem.clone());
        greet(&mut c);
        opt(&mut c, OPT_INFO, &vec![0u8; MAX_OPTION as usize + 1]);
        assert_eq!(opt_reply_read(&mut c).1, REP_ERR_TOO_BIG);
        opt(&mut c, OPT_ABORT, &[]);
        assert_eq!(opt_reply_read(&mut c).1, REP_ACK);
        assert_eq!(h.join().unwrap().unwrap(), Handshake::Aborted);

        let (mut c, h) = serve(mem.clone());
        greet(&mut c);
        opt(&mut c, OPT_EXPORT_NAME, b"vm1");
        assert_eq!(read_u64(&mut c).unwrap(), 4096);
        assert_eq!(read_u16(&mut c).unwrap(), TRANSMISSION_FLAGS);
        request(&mut c, REQUEST_MAGIC, 0, CMD_DISC, 1, 0, 0, &[]);
        assert_eq!(h.join().unwrap().unwrap(), Handshake::Transmission);

        let (mut c, h) = serve(mem);
        greet(&mut c);
        opt(&mut c, OPT_EXPORT_NAME, b"nope");
        assert!(h.join().unwrap().is_err());
    }
}
