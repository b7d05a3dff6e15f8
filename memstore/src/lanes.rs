//! NBD transmission for the exports' unix sockets with READs served while
//! WRITEs are: a swap-in must not wait behind the swap-outs the guest
//! queued before it on the same connection (issue 18, Fig 4.4/4.5).
//!
//! The calling thread reads the requests.  Requests that change data
//! (WRITE, TRIM, WRITE_ZEROES) and FLUSH go, in arrival order, to one
//! write lane thread; READs go to `READ_WORKERS` threads, except a READ
//! that arrives when nothing else is in flight, which the reading thread
//! serves itself (no hand-off).  Replies carry
//! the request's cookie and may leave out of order (the NBD protocol
//! allows it, QEMU's client matches them by cookie); each reply is written
//! whole under the connection's writer lock, so replies never interleave.
//!
//! Ordering, so that overlapping requests behave as if served one by one
//! in arrival order:
//! * a READ waits for every earlier request of the write lane whose range
//!   it overlaps (a READ after a WRITE to the same offset returns the
//!   written data);
//! * a request of the write lane is queued only once every earlier READ
//!   overlapping it has finished (the READ returns the old data);
//! * the write lane runs in order, so a FLUSH covers every write received
//!   before it.
//!
//! A request only ever waits for earlier ones, and a queued write already
//! holds its payload's buffer, so no cycle of waits exists.  A WRITE
//! larger than one buffer chunk is served by the reading thread itself
//! once the lanes are idle (it never holds more than one chunk).
//! Within the export, READs get the export mutex first: the write lane
//! takes it only when no READ worker is waiting for it.
//!
//! A READ with remote pages holds lender connections from the moment its
//! requests go out until its window's last reply is read, and it writes
//! each chunk to the client in between.  A client that stops reading
//! would leave the lender blocked on those connections until its write
//! timeout (10 s) ends them and the slab fails.  So while a READ holds
//! them, waiting for the writer or for the socket is bounded by
//! `CLIENT_STALL`: beyond it the READ reads the rest of its replies
//! into a scratch buffer, gives the connections back, serves the rest
//! of its window from the backing file (which holds every page, I1: no
//! page lost) and then waits for the client as any reply does.

use crate::device::{Device, Errno};
use crate::remote::{Fetch, READ_AHEAD_MAX, RECV_CHUNK};
use crate::limits::{Budget, Grant};
use crate::log::warn;
use crate::nbd::{
    nbd_error, read_header, reply_header, validate, Backend, Request, CMD_CACHE, CMD_DISC, CMD_FLAG_FUA,
    CMD_FLAG_NO_HOLE, CMD_FLUSH, CMD_READ, CMD_TRIM, CMD_WRITE, CMD_WRITE_ZEROES, EIO,
};
use std::collections::VecDeque;
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::ops::{Deref, DerefMut};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Threads serving READs per connection.
pub const READ_WORKERS: usize = 2;

/// Longest a READ holding lender connections waits for the client to
/// take its reply (the writer, or room in the socket) before it gives
/// the connections back (see the module's comment).  Well below the
/// lender's 10 s write timeout; the export socket's write timeout is set
/// to it (nbd.rs) so that a blocked write returns.
pub const CLIENT_STALL: Duration = Duration::from_secs(1);

/// A write that made no progress for the socket's write timeout.
fn stalled(e: &io::Error) -> bool {
    matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut)
}

/// The client socket: a write that times out (the socket's write timeout,
/// `CLIENT_STALL`) is retried, as if the socket had none, unless
/// `impatient` (a READ holding lender connections is writing).
struct Patient<W: Write> {
    w: W,
    impatient: bool,
}

impl<W: Write> Write for Patient<W> {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        loop {
            match self.w.write(b) {
                Err(e) if stalled(&e) && !self.impatient => continue,
                r => return r,
            }
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        loop {
            match self.w.flush() {
                Err(e) if stalled(&e) && !self.impatient => continue,
                r => return r,
            }
        }
    }
}

/// The writer, taken whole for one reply: a gate that can be waited for
/// with a deadline, in front of the buffered socket.
struct Out<W: Write> {
    busy: Mutex<bool>,
    freed: Condvar,
    w: Mutex<BufWriter<Patient<W>>>,
}

struct OutGuard<'a, W: Write> {
    out: &'a Out<W>,
    w: MutexGuard<'a, BufWriter<Patient<W>>>,
}

impl<W: Write> Out<W> {
    /// The writer, waiting at most `within` (None: as long as it takes).
    fn take(&self, within: Option<Duration>) -> Option<OutGuard<'_, W>> {
        let deadline = within.map(|d| Instant::now() + d);
        let mut busy = lock(&self.busy);
        while *busy {
            busy = match deadline {
                None => match self.freed.wait(busy) {
                    Ok(g) => g,
                    Err(p) => p.into_inner(),
                },
                Some(d) => {
                    let now = Instant::now();
                    if now >= d {
                        return None;
                    }
                    match self.freed.wait_timeout(busy, d - now) {
                        Ok((g, _)) => g,
                        Err(p) => p.into_inner().0,
                    }
                }
            };
        }
        *busy = true;
        drop(busy);
        Some(OutGuard {
            out: self,
            w: lock(&self.w),
        })
    }
}

impl<W: Write> Deref for OutGuard<'_, W> {
    type Target = BufWriter<Patient<W>>;
    fn deref(&self) -> &Self::Target {
        &self.w
    }
}

impl<W: Write> DerefMut for OutGuard<'_, W> {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.w
    }
}

impl<W: Write> Drop for OutGuard<'_, W> {
    fn drop(&mut self) {
        *lock(&self.out.busy) = false;
        self.out.freed.notify_one();
    }
}

/// A request's byte range and arrival number.
#[derive(Clone, Copy, Debug)]
struct Span {
    seq: u64,
    off: u64,
    end: u64,
}

impl Span {
    fn overlaps(&self, o: &Span) -> bool {
        self.off < o.end && o.off < self.end
    }
}

struct WriteJob<'b> {
    span: Span,
    req: Request,
    payload: Option<(Grant<'b>, Vec<u8>)>,
}

#[derive(Default)]
struct State<'b> {
    /// READs received and not answered.
    reads: Vec<Span>,
    /// Write-lane requests queued or running.
    writes: Vec<Span>,
    read_q: VecDeque<(Span, Request)>,
    write_q: VecDeque<WriteJob<'b>>,
    /// READ workers waiting for the export mutex.
    lock_waiters: usize,
    /// The write lane waits for `lock_waiters` to fall to 0.
    lane_waits: bool,
    /// No more requests will come.
    closing: bool,
    /// The first fatal error (the connection ends).
    dead: Option<String>,
}

struct Conn<'b, W: Write> {
    out: Out<W>,
    state: Mutex<State<'b>>,
    /// The write lane and the reading thread wait on `cv`, the READ
    /// workers on `read_cv`: a WRITE queued or answered wakes no READ
    /// worker unless a READ may have become servable (at queue depth 32,
    /// waking the two idle READ workers at every WRITE halved memstore's
    /// random-write IOPS on a 2-CPU machine).
    cv: Condvar,
    read_cv: Condvar,
    stop: &'b (dyn Fn() + Sync),
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    match m.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    }
}

impl<'b, W: Write> Conn<'b, W> {
    fn wait<'a>(&self, g: MutexGuard<'a, State<'b>>) -> MutexGuard<'a, State<'b>> {
        match self.cv.wait(g) {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        }
    }

    /// A READ worker's wait (see `read_cv`).
    fn wait_read<'a>(&self, g: MutexGuard<'a, State<'b>>) -> MutexGuard<'a, State<'b>> {
        match self.read_cv.wait(g) {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        }
    }

    /// Wake every thread (the connection ends).
    fn wake_all(&self) {
        self.cv.notify_all();
        self.read_cv.notify_all();
    }

    /// The connection cannot go on (a reply could not be written, or a
    /// READ failed after its header went out): remember why, and close
    /// the socket so that the reading thread returns.
    fn die(&self, why: String) {
        let mut st = lock(&self.state);
        if st.dead.is_none() {
            st.dead = Some(why);
        }
        st.closing = true;
        drop(st);
        self.wake_all();
        (self.stop)();
    }

    fn dead(&self) -> bool {
        lock(&self.state).dead.is_some()
    }

    /// Write one reply whole (`data` after the header), flushed when asked.
    fn reply(&self, err: u32, cookie: u64, data: &[u8], flush: bool) {
        let mut hdr = Vec::with_capacity(16);
        reply_header(&mut hdr, err, cookie);
        let mut w = self.writer();
        let r = w.write_all(&hdr).and_then(|_| w.write_all(data)).and_then(|_| {
            if flush {
                w.flush()
            } else {
                Ok(())
            }
        });
        drop(w);
        if let Err(e) = r {
            self.die(format!("cannot write a reply: {}", e));
        }
    }

    /// The writer, as long as it takes.
    fn writer(&self) -> OutGuard<'_, W> {
        self.out.take(None).expect("no deadline")
    }

    fn flush(&self) {
        let r = self.writer().flush();
        if let Err(e) = r {
            self.die(format!("cannot write a reply: {}", e));
        }
    }
}

/// Lock the export for a READ worker: ahead of the write lane.
fn lock_for_read<'s, B: Backend, W: Write>(c: &Conn<'_, W>, store: &'s B) -> MutexGuard<'s, B::Layers> {
    lock(&c.state).lock_waiters += 1;
    let g = store.lock();
    let mut st = lock(&c.state);
    st.lock_waiters -= 1;
    // wake the threads only when the write lane waits for this (a wake-up
    // of every waiting thread per READ cost ~25 us on a 2-CPU machine)
    let wake = st.lane_waits && st.lock_waiters == 0;
    drop(st);
    if wake {
        c.cv.notify_all();
    }
    g
}

/// Lock the export for the write lane: once no READ worker waits for it.
fn lock_for_write<'s, B: Backend, W: Write>(c: &Conn<'_, W>, store: &'s B) -> MutexGuard<'s, B::Layers> {
    let mut st = lock(&c.state);
    while st.lock_waiters > 0 && st.dead.is_none() {
        st.lane_waits = true;
        st = c.wait(st);
    }
    st.lane_waits = false;
    drop(st);
    store.lock()
}

/// Read [at, at + buf.len()) (one chunk of a READ): its remote pages are
/// received into `buf` first, without the export's mutex, then checked and
/// completed from the layers under it.
fn read_chunk<B: Backend, W: Write>(
    c: &Conn<'_, W>,
    store: &B,
    fetch: &mut Option<Fetch>,
    at: u64,
    buf: &mut [u8],
) -> Result<(), Errno> {
    if let Some(f) = fetch.as_mut() {
        f.recv(buf);
    }
    let mut g = lock_for_read(c, store);
    let before = g.stash(fetch.take());
    let r = g.read(at, buf);
    *fetch = g.stash(before);
    r
}

/// Does the READ's fetch still hold lender connections (replies not
/// read yet)?
fn holds(fetch: &Option<Fetch>) -> bool {
    fetch.as_ref().is_some_and(|f| f.holds_conns())
}

/// The client has not taken the READ's reply for `CLIENT_STALL`: read the
/// fetch's remaining replies into scratch, give its connections back; the
/// rest of the window is read from the backing file.
fn give_up(fetch: &mut Option<Fetch>, tag: &str, at: u64) {
    if let Some(f) = fetch.as_mut() {
        f.abandon();
        warn(&format!(
            "{}: the client did not take a READ's reply (at {}) within {:?}: its lender connections are given \
             back, the rest of the READ comes from the backing file",
            tag, at, CLIENT_STALL
        ));
    }
}

/// Write `data` whole; while the fetch holds lender connections, a write
/// call that took `CLIENT_STALL` (it waited for room in the socket until
/// its write timeout, with or without progress) gives them up first
/// (`give_up`), then the rest waits as any reply does.
fn write_bounded<W: Write>(
    w: &mut BufWriter<Patient<W>>,
    mut data: &[u8],
    fetch: &mut Option<Fetch>,
    tag: &str,
    at: u64,
) -> io::Result<()> {
    while !data.is_empty() {
        let bounded = holds(fetch);
        w.get_mut().impatient = bounded;
        let t = Instant::now();
        // a BufWriter's `write` says how much it took, and a failed flush
        // of its buffer keeps the unsent rest: no byte lost or repeated
        let r = w.write(data);
        w.get_mut().impatient = false;
        let stall = bounded && (t.elapsed() >= CLIENT_STALL || matches!(&r, Err(e) if stalled(e)));
        match r {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => data = &data[n..],
            Err(e) if e.kind() == io::ErrorKind::Interrupted || stall => {}
            Err(e) => return Err(e),
        }
        if stall {
            give_up(fetch, tag, at);
        }
    }
    Ok(())
}

fn serve_read<B: Backend, W: Write>(c: &Conn<'_, W>, store: &B, budget: &Budget, req: &Request, tag: &str) {
    let len = req.len as usize;
    if len == 0 {
        return c.reply(0, req.cookie, &[], true);
    }
    let chunk = budget.chunk();
    // the remote pages of up to `win` bytes are requested at once; their
    // replies wait in the sockets and land chunk by chunk in `buf`
    let win = std::cmp::max(chunk, READ_AHEAD_MAX as usize / chunk * chunk);
    // the grant for the chunk buffer is taken before any lock: a READ
    // never waits for the budget holding the writer
    let _grant = budget.acquire(std::cmp::min(len, chunk));
    let mut buf = vec![0u8; std::cmp::min(chunk, len)];
    let mut out: Option<OutGuard<'_, W>> = None;
    let mut done = 0usize;
    let mut res: io::Result<()> = Ok(());
    while done < len && res.is_ok() {
        let wlen = std::cmp::min(win, len - done);
        // a window with remote pages is served in smaller chunks: each is
        // checked and passed on while the lender streams the next, so
        // only the last one's handling follows the transfer
        let small = std::cmp::min(chunk, RECV_CHUNK);
        let mut fetch = lock_for_read(c, store).plan_fetch(req.off + done as u64, wlen as u64, small as u64);
        let step = match fetch.as_mut() {
            Some(f) => {
                f.send();
                small
            }
            None => chunk,
        };
        let wend = done + wlen;
        while done < wend {
            let n = std::cmp::min(step, wend - done);
            let at = req.off + done as u64;
            let r = read_chunk(c, store, &mut fetch, at, &mut buf[..n]);
            match (r, out.as_mut()) {
                (Err(e), None) => {
                    warn(&format!("{}: read at {} failed: errno {}", tag, at, e));
                    // its lender connections go back before the reply
                    // waits for the client
                    drop(fetch.take());
                    return c.reply(nbd_error(e), req.cookie, &[], true);
                }
                (Ok(()), None) if n == len => return c.reply(0, req.cookie, &buf, true),
                (Ok(()), None) => {
                    // a READ of several chunks: its reply is one whole, so
                    // the writer stays taken until its last byte
                    let mut hdr = Vec::with_capacity(16);
                    reply_header(&mut hdr, 0, req.cookie);
                    let mut w = match c.out.take(holds(&fetch).then_some(CLIENT_STALL)) {
                        Some(w) => w,
                        None => {
                            give_up(&mut fetch, tag, at);
                            c.writer()
                        }
                    };
                    res = write_bounded(&mut w, &hdr, &mut fetch, tag, at)
                        .and_then(|_| write_bounded(&mut w, &buf[..n], &mut fetch, tag, at));
                    out = Some(w);
                }
                (Ok(()), Some(w)) => res = write_bounded(w, &buf[..n], &mut fetch, tag, at),
                // the header said success: a simple reply cannot take it
                // back, the connection ends (the client retries)
                (Err(e), Some(_)) => {
                    res = Err(io::Error::new(
                        io::ErrorKind::Other,
                        format!("read at {} failed mid-reply: errno {}", at, e),
                    ))
                }
            }
            done += n;
            if res.is_err() {
                break;
            }
        }
    }
    if let Some(mut w) = out {
        // what went out is sent before the connection ends
        let res = match w.flush() {
            Err(e) if res.is_ok() => Err(e),
            _ => res,
        };
        drop(w);
        if let Err(e) = res {
            c.die(format!("{}: closing", e));
        }
    }
}

/// One request of the write lane (its payload, for a WRITE, in `data`).
fn serve_write<B: Backend, W: Write>(
    c: &Conn<'_, W>,
    store: &B,
    req: &Request,
    data: &[u8],
    tag: &str,
) -> u32 {
    let fua = req.flags & CMD_FLAG_FUA != 0;
    match req.cmd {
        CMD_WRITE => match lock_for_write(c, store).write(req.off, data, fua) {
            Ok(()) => 0,
            Err(e) => {
                warn(&format!("{}: write at {} failed: errno {}", tag, req.off, e));
                nbd_error(e)
            }
        },
        CMD_FLUSH => match lock_for_write(c, store).flush() {
            Ok(()) => 0,
            Err(_) => EIO,
        },
        _ => {
            let zero = req.cmd == CMD_WRITE_ZEROES;
            let punch = !(zero && req.flags & CMD_FLAG_NO_HOLE != 0);
            match lock_for_write(c, store).discard(req.off, req.len as u64, zero, punch, fua) {
                Ok(()) => 0,
                Err(e) => {
                    warn(&format!("{}: trim/zero at {} failed: errno {}", tag, req.off, e));
                    nbd_error(e)
                }
            }
        }
    }
}

fn read_worker<B: Backend, W: Write>(c: &Conn<'_, W>, store: &B, budget: &Budget, tag: &str) {
    loop {
        let (span, req) = {
            let mut st = lock(&c.state);
            loop {
                if st.dead.is_some() {
                    return;
                }
                // the first READ no earlier write-lane request overlaps
                let i = st
                    .read_q
                    .iter()
                    .position(|(s, _)| !st.writes.iter().any(|w| w.seq < s.seq && w.overlaps(s)));
                if let Some(i) = i {
                    break st.read_q.remove(i).expect("index from position");
                }
                if st.closing && st.read_q.is_empty() {
                    return;
                }
                st = c.wait_read(st);
            }
        };
        serve_read(c, store, budget, &req, tag);
        let mut st = lock(&c.state);
        st.reads.retain(|s| s.seq != span.seq);
        drop(st);
        c.cv.notify_all();
    }
}

fn write_lane<B: Backend, W: Write>(c: &Conn<'_, W>, store: &B, tag: &str) {
    loop {
        let job = {
            let mut st = lock(&c.state);
            loop {
                if st.dead.is_some() {
                    return;
                }
                if let Some(j) = st.write_q.pop_front() {
                    break j;
                }
                if st.closing {
                    return;
                }
                st = c.wait(st);
            }
        };
        let data: &[u8] = job.payload.as_ref().map(|(_, d)| &d[..]).unwrap_or(&[]);
        let err = serve_write(c, store, &job.req, data, tag);
        drop(job.payload);
        let more = !lock(&c.state).write_q.is_empty();
        // replies of a burst of writes go out together
        c.reply(err, job.req.cookie, &[], !more);
        let mut st = lock(&c.state);
        st.writes.retain(|s| s.seq != job.span.seq);
        // a queued READ may have waited for this write
        let reads_wait = !st.read_q.is_empty();
        drop(st);
        c.cv.notify_all();
        if reads_wait {
            c.read_cv.notify_all();
        }
    }
}

/// Serve requests until the client disconnects, READs concurrently with
/// the write lane (see the module's comment).  `stop` shuts the socket
/// down: called when the connection must end while the reading thread is
/// blocked on it.
pub fn transmission<R: Read + Send, W: Write + Send, B: Backend + Sync>(
    r: R,
    w: W,
    store: &B,
    budget: &Budget,
    tag: &str,
    stop: &(dyn Fn() + Sync),
) -> io::Result<()> {
    let c = Conn {
        out: Out {
            busy: Mutex::new(false),
            freed: Condvar::new(),
            w: Mutex::new(BufWriter::with_capacity(64 << 10, Patient { w, impatient: false })),
        },
        state: Mutex::new(State::default()),
        cv: Condvar::new(),
        read_cv: Condvar::new(),
        stop,
    };
    let mut r = BufReader::with_capacity(64 << 10, r);
    std::thread::scope(|s| {
        for _ in 0..READ_WORKERS {
            s.spawn(|| read_worker(&c, store, budget, tag));
        }
        s.spawn(|| write_lane(&c, store, tag));
        let res = receive(&c, &mut r, store, budget, tag);
        // no more requests: the lanes finish what they have, then end
        lock(&c.state).closing = true;
        c.wake_all();
        res
    })
    .and_then(|()| {
        c.flush();
        match lock(&c.state).dead.take() {
            Some(why) => Err(io::Error::new(io::ErrorKind::Other, why)),
            None => Ok(()),
        }
    })
}

/// Wait until nothing is queued or running.
fn idle<W: Write>(c: &Conn<'_, W>) {
    let mut st = lock(&c.state);
    while (!st.reads.is_empty() || !st.writes.is_empty()) && st.dead.is_none() {
        st = c.wait(st);
    }
}

/// The reading thread: parse requests and hand them to the lanes.
fn receive<'b, R: Read, W: Write, B: Backend>(
    c: &Conn<'b, W>,
    r: &mut BufReader<R>,
    store: &B,
    budget: &'b Budget,
    tag: &str,
) -> io::Result<()> {
    let mut seq = 0u64;
    loop {
        if c.dead() {
            return Ok(()); // the reason is returned by the caller
        }
        if r.buffer().is_empty() {
            c.flush();
        }
        let req = match read_header(r) {
            Ok(Some(req)) => req,
            Ok(None) => {
                idle(c);
                return Ok(()); // client went away
            }
            Err(e) if c.dead() => {
                let _ = e; // the socket was shut down on purpose
                return Ok(());
            }
            Err(e) => return Err(e),
        };
        seq += 1;
        if let Some(err) = validate(req.cmd, req.flags, req.off, req.len, store.size()) {
            if req.cmd == CMD_WRITE {
                crate::nbd::discard_payload(r, req.len as u64)?; // keep the stream in step
            }
            store.rejected();
            warn(&format!(
                "{}: rejected request cmd={} flags={:#x} offset={} length={} size={}: errno {}",
                tag,
                req.cmd,
                req.flags,
                req.off,
                req.len,
                store.size(),
                err
            ));
            c.reply(err, req.cookie, &[], false);
            continue;
        }
        let (off, end) = match req.cmd {
            CMD_FLUSH => (0, u64::MAX),
            _ => (req.off, req.off + req.len as u64),
        };
        let span = Span { seq, off, end };
        match req.cmd {
            CMD_READ => {
                let mut st = lock(&c.state);
                if st.reads.is_empty() && st.writes.is_empty() {
                    // nothing else in flight: served here, without a
                    // hand-off to a worker (a wake-up and a context switch
                    // per request); requests behind it wait, as they would
                    // for a busy worker
                    drop(st);
                    serve_read(c, store, budget, &req, tag);
                    continue;
                }
                st.reads.push(span);
                st.read_q.push_back((span, req));
                drop(st);
                c.read_cv.notify_one();
            }
            CMD_CACHE => {
                store.cache();
                c.reply(0, req.cookie, &[], false);
            }
            CMD_DISC => {
                idle(c);
                return Ok(());
            }
            CMD_WRITE if req.len as usize > budget.chunk() => {
                // larger than one buffer: served here, alone, chunk by
                // chunk (the lanes idle, so nothing overlaps it)
                idle(c);
                let err = crate::nbd::write_chunked(r, store, budget, &req, tag)?;
                c.reply(err, req.cookie, &[], false);
            }
            CMD_WRITE | CMD_TRIM | CMD_WRITE_ZEROES | CMD_FLUSH => {
                // earlier READs of this range finish first (FLUSH changes
                // no data: it waits for none)
                if req.cmd != CMD_FLUSH {
                    let mut st = lock(&c.state);
                    while st.reads.iter().any(|x| x.overlaps(&span)) && st.dead.is_none() {
                        st = c.wait(st);
                    }
                }
                let payload = if req.cmd == CMD_WRITE {
                    let g = budget.acquire(req.len as usize);
                    let mut buf = vec![0u8; req.len as usize];
                    r.read_exact(&mut buf)?;
                    Some((g, buf))
                } else {
                    None
                };
                let mut st = lock(&c.state);
                st.writes.push(span);
                st.write_q.push_back(WriteJob { span, req, payload });
                drop(st);
                c.cv.notify_all();
            }
            _ => unreachable!("validate() rejects unknown commands"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::{Errno, MemDevice};
    use crate::nbd::{read_u32, read_u64, REQUEST_MAGIC, SIMPLE_REPLY_MAGIC};
    use std::os::unix::net::UnixStream;
    use std::sync::Arc;
    use std::thread;
    use std::time::Duration;

    /// A device in memory whose reads and writes take a while (under the
    /// export mutex, as the real layers' do).
    struct Slow {
        mem: MemDevice,
        read_delay: Duration,
        write_delay: Duration,
    }

    impl Device for Slow {
        fn size(&self) -> u64 {
            self.mem.size()
        }
        fn read(&mut self, off: u64, buf: &mut [u8]) -> Result<(), Errno> {
            thread::sleep(self.read_delay);
            self.mem.read(off, buf)
        }
        fn write(&mut self, off: u64, data: &[u8], fua: bool) -> Result<(), Errno> {
            thread::sleep(self.write_delay);
            self.mem.write(off, data, fua)
        }
        fn flush(&mut self) -> Result<(), Errno> {
            self.mem.flush()
        }
        fn discard(&mut self, off: u64, len: u64, z: bool, p: bool, f: bool) -> Result<(), Errno> {
            self.mem.discard(off, len, z, p, f)
        }
    }

    struct Store(Mutex<Slow>);

    /// The device's size, known without its mutex (as the real export's
    /// is): the reading thread validates every request against it, and a
    /// lock here would queue it behind the slow WRITE being stored.
    const STORE_SIZE: u64 = 1 << 20;

    impl Backend for Store {
        type Layers = Slow;
        fn size(&self) -> u64 {
            STORE_SIZE
        }
        fn lock(&self) -> MutexGuard<'_, Slow> {
            lock(&self.0)
        }
    }

    fn store(read_ms: u64, write_ms: u64) -> Arc<Store> {
        Arc::new(Store(Mutex::new(Slow {
            mem: MemDevice::new(STORE_SIZE as usize),
            read_delay: Duration::from_millis(read_ms),
            write_delay: Duration::from_millis(write_ms),
        })))
    }

    fn serve(st: Arc<Store>, budget: u64) -> (UnixStream, thread::JoinHandle<io::Result<()>>) {
        let (server, client) = UnixStream::pair().unwrap();
        client.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        client.set_write_timeout(Some(Duration::from_secs(30))).unwrap();
        let h = thread::spawn(move || {
            let r = server.try_clone()?;
            let closer = server.try_clone()?;
            let stop = move || {
                let _ = closer.shutdown(std::net::Shutdown::Both);
            };
            transmission(r, server, &*st, &Budget::new(budget), "test", &stop)
        });
        (client, h)
    }

    fn request(c: &mut UnixStream, cmd: u16, cookie: u64, off: u64, len: u32, payload: &[u8]) {
        crate::nbd::tests::request(c, REQUEST_MAGIC, 0, cmd, cookie, off, len, payload);
    }

    /// The next reply: (error, cookie, data of `lens[cookie]` bytes).
    fn reply(c: &mut UnixStream, read_len: impl Fn(u64) -> usize) -> (u32, u64, Vec<u8>) {
        assert_eq!(read_u32(c).unwrap(), SIMPLE_REPLY_MAGIC);
        let err = read_u32(c).unwrap();
        let cookie = read_u64(c).unwrap();
        let mut d = vec![0u8; if err == 0 { read_len(cookie) } else { 0 }];
        c.read_exact(&mut d).unwrap();
        (err, cookie, d)
    }

    #[test]
    fn the_writer_is_waited_for_with_a_deadline_only_when_asked() {
        let out = Out {
            busy: Mutex::new(false),
            freed: Condvar::new(),
            w: Mutex::new(BufWriter::new(Patient {
                w: Vec::new(),
                impatient: false,
            })),
        };
        let held = out.take(Some(Duration::from_millis(10))).expect("free");
        let t = std::time::Instant::now();
        assert!(out.take(Some(Duration::from_millis(50))).is_none(), "taken twice");
        assert!(t.elapsed() >= Duration::from_millis(50));
        thread::scope(|s| {
            let waiter = s.spawn(|| out.take(None).map(|mut w| w.write_all(b"x").is_ok()));
            thread::sleep(Duration::from_millis(50));
            drop(held);
            assert_eq!(waiter.join().unwrap(), Some(true), "given back to the waiter");
        });
        assert!(out.take(Some(Duration::ZERO)).is_some(), "free again");
    }

    #[test]
    fn a_read_after_a_write_to_the_same_offset_returns_the_written_data() {
        // the WRITE is slow: a READ served without the ordering rule
        // would read the old bytes
        let st = store(0, 100);
        lock(&st.0).mem.data[..4096].fill(1);
        let (mut c, h) = serve(st.clone(), 8 << 20);
        for round in 0..3u8 {
            let base = 10 * round as u64;
            request(&mut c, CMD_WRITE, base + 1, 0, 4096, &[round + 2; 4096]);
            request(&mut c, CMD_READ, base + 2, 1024, 2048, &[]);
            // a READ of a range the WRITE does not touch may pass it
            request(&mut c, CMD_READ, base + 3, 8192, 4096, &[]);
            let mut seen = Vec::new();
            for _ in 0..3 {
                let (err, cookie, d) = reply(&mut c, |k| {
                    if k == base + 2 {
                        2048
                    } else if k == base + 3 {
                        4096
                    } else {
                        0
                    }
                });
                assert_eq!(err, 0);
                if cookie == base + 2 {
                    assert!(d.iter().all(|&b| b == round + 2), "READ after WRITE saw old data");
                }
                seen.push(cookie);
            }
            seen.sort_unstable();
            assert_eq!(seen, vec![base + 1, base + 2, base + 3]);
        }
        request(&mut c, CMD_DISC, 99, 0, 0, &[]);
        h.join().unwrap().unwrap();
    }

    #[test]
    fn a_write_after_a_read_of_the_same_range_leaves_the_read_its_old_data() {
        // slow READs elsewhere keep the workers busy: READ 1 waits in
        // the queue while the write lane is free
        let st = store(80, 0);
        lock(&st.0).mem.data[..4096].fill(5);
        let (mut c, h) = serve(st.clone(), 8 << 20);
        for k in 10..13u64 {
            request(&mut c, CMD_READ, k, (k + 1) * 8192, 4096, &[]);
        }
        request(&mut c, CMD_READ, 1, 0, 4096, &[]);
        request(&mut c, CMD_WRITE, 2, 0, 4096, &[6; 4096]);
        request(&mut c, CMD_READ, 3, 0, 4096, &[]);
        let mut got = std::collections::HashMap::new();
        for _ in 0..6 {
            let (err, cookie, d) = reply(&mut c, |k| if k == 2 { 0 } else { 4096 });
            assert_eq!(err, 0);
            got.insert(cookie, d);
        }
        assert!(
            got[&1].iter().all(|&b| b == 5),
            "the first READ saw the later WRITE"
        );
        assert!(got[&3].iter().all(|&b| b == 6));
        request(&mut c, CMD_DISC, 9, 0, 0, &[]);
        h.join().unwrap().unwrap();
    }

    #[test]
    fn a_read_overtakes_the_writes_queued_before_it() {
        // eight slow WRITEs, then a READ elsewhere: it is answered once
        // the WRITE being stored is done, not after all eight
        let st = store(0, 60);
        let (mut c, h) = serve(st.clone(), 8 << 20);
        // the nine requests in one send: the server has them all at once,
        // whatever the scheduler does to this thread
        let (mut all, mut sink) = UnixStream::pair().unwrap();
        for i in 0..8u64 {
            request(&mut all, CMD_WRITE, 1 + i, i * 4096, 4096, &[7; 4096]);
        }
        request(&mut all, CMD_READ, 100, 512 << 10, 4096, &[]);
        drop(all);
        let mut burst = Vec::new();
        sink.read_to_end(&mut burst).unwrap();
        c.write_all(&burst).unwrap();
        let order: Vec<u64> = (0..9)
            .map(|_| reply(&mut c, |k| if k == 100 { 4096 } else { 0 }).1)
            .collect();
        let at = order.iter().position(|&k| k == 100).unwrap();
        assert!(at < 8, "the READ waited behind every queued WRITE: {:?}", order);
        // the writes kept their order
        let writes: Vec<u64> = order.iter().copied().filter(|&k| k != 100).collect();
        assert_eq!(writes, (1..9).collect::<Vec<u64>>());
        request(&mut c, CMD_FLUSH, 200, 0, 0, &[]);
        assert_eq!(reply(&mut c, |_| 0).1, 200);
        request(&mut c, CMD_DISC, 201, 0, 0, &[]);
        h.join().unwrap().unwrap();
        let g = lock(&st.0);
        assert_eq!((g.mem.data[7 * 4096], g.mem.flushes), (7, 1));
    }

    #[test]
    fn replies_stay_whole_under_concurrent_reads_and_writes() {
        // many pipelined READs of several sizes between WRITEs, with a
        // budget of one page: every reply parses and carries its data
        let st = store(0, 0);
        {
            let mut g = lock(&st.0);
            for (i, b) in g.mem.data.iter_mut().enumerate() {
                *b = (i / 4096) as u8;
            }
        }
        let (mut c, h) = serve(st.clone(), 4096);
        let mut lens = std::collections::HashMap::new();
        let mut requests = Vec::new();
        for i in 0..200u64 {
            let page = i % 64;
            if i % 5 == 0 {
                // rewrite a page with the value it holds: data stays the same
                requests.push((CMD_WRITE, i, (page + 64) * 4096, 4096u32, vec![(page + 64) as u8; 4096]));
                lens.insert(i, 0usize);
            } else {
                let len = 4096 * (1 + (i % 3) as usize);
                requests.push((CMD_READ, i, page * 4096, len as u32, Vec::new()));
                lens.insert(i, len);
            }
        }
        // sent from another thread while this one reads the replies, as an
        // NBD client does: with a one-page budget the server stops reading
        // requests until its replies are read, so a client that only sends
        // would block both ends once the socket buffers fill
        let mut w = c.try_clone().unwrap();
        let sender = thread::spawn(move || {
            for (cmd, cookie, off, len, payload) in requests {
                request(&mut w, cmd, cookie, off, len, &payload);
            }
        });
        let mut left: std::collections::HashSet<u64> = (0..200).collect();
        for _ in 0..200 {
            let (err, cookie, d) = reply(&mut c, |k| lens[&k]);
            assert_eq!(err, 0);
            assert!(left.remove(&cookie), "cookie {} twice", cookie);
            let page = cookie % 64;
            for (j, b) in d.iter().enumerate() {
                assert_eq!(*b as u64, page + j as u64 / 4096, "reply {} byte {}", cookie, j);
            }
        }
        sender.join().unwrap();
        request(&mut c, CMD_DISC, 999, 0, 0, &[]);
        h.join().unwrap().unwrap();
    }

    /// Fails every read after the first.
    struct FlakyDev(MemDevice, u32);

    struct Flaky(Mutex<FlakyDev>);

    impl Device for FlakyDev {
        fn size(&self) -> u64 {
            self.0.size()
        }
        fn read(&mut self, off: u64, buf: &mut [u8]) -> Result<(), Errno> {
            self.1 += 1;
            if self.1 > 1 {
                return Err(libc::EIO);
            }
            self.0.read(off, buf)
        }
        fn write(&mut self, off: u64, data: &[u8], fua: bool) -> Result<(), Errno> {
            self.0.write(off, data, fua)
        }
        fn flush(&mut self) -> Result<(), Errno> {
            Ok(())
        }
        fn discard(&mut self, _: u64, _: u64, _: bool, _: bool, _: bool) -> Result<(), Errno> {
            Ok(())
        }
    }
    impl Backend for Flaky {
        type Layers = FlakyDev;
        fn size(&self) -> u64 {
            1 << 20
        }
        fn lock(&self) -> MutexGuard<'_, FlakyDev> {
            lock(&self.0)
        }
    }

    #[test]
    fn a_read_failing_mid_reply_ends_the_connection() {
        // a READ of two chunks (budget: one page) on a device that fails
        // after its first read: the header already said success
        let f = Arc::new(Flaky(Mutex::new(FlakyDev(MemDevice::new(1 << 20), 0))));
        let (server, mut c) = UnixStream::pair().unwrap();
        c.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        let h = thread::spawn(move || {
            let r = server.try_clone().unwrap();
            let closer = server.try_clone().unwrap();
            let stop = move || {
                let _ = closer.shutdown(std::net::Shutdown::Both);
            };
            transmission(r, server, &*f, &Budget::new(4096), "test", &stop)
        });
        request(&mut c, CMD_READ, 1, 0, 8192, &[]);
        assert!(h.join().unwrap().is_err());
        // the header and the first chunk, then the end of the stream
        let mut all = Vec::new();
        c.read_to_end(&mut all).unwrap();
        assert_eq!(all.len(), 16 + 4096);
    }
}
