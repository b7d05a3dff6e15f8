//! The monitor layer, on top of an export's stack: counts the requests and
//! feeds the swap traffic to Geiger's reuse-distance computation
//! (`geiger.rs`): a write is a swap-out, a read a swap-in, a trim or
//! write-zeroes of a whole page forgets it.  Only requests that succeed
//! below reach Geiger; failed ones count as `errors`.

use crate::device::{covers, pages, Device, Errno};
use crate::geiger::{unix_now, Geiger};
use serde::Serialize;
use std::time::Instant;

/// Request counters of an export (since memstore started).
#[derive(Clone, Debug, Default, Serialize)]
pub struct Counters {
    pub reads: u64,
    pub writes: u64,
    pub flushes: u64,
    pub trims: u64,
    pub zeroes: u64,
    pub caches: u64,
    /// requests rejected (by the NBD layer) or failed
    pub errors: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
    /// Microseconds spent serving reads and writes below this layer (the
    /// service time a client sees, less the socket's; per-stage times of
    /// the remote tier are in its counters)
    pub read_us: u64,
    pub write_us: u64,
    /// Unix time of the last read, write, flush, trim or zero (0: none)
    #[serde(skip)]
    pub last_io: f64,
}

pub struct Monitor<D> {
    pub counters: Counters,
    pub geiger: Geiger,
    next: D,
}

impl<D: Device> Monitor<D> {
    pub fn new(next: D, geiger: Geiger) -> Monitor<D> {
        Monitor {
            counters: Counters::default(),
            geiger,
            next,
        }
    }

    pub fn next(&self) -> &D {
        &self.next
    }

    pub fn next_mut(&mut self) -> &mut D {
        &mut self.next
    }

    /// An NBD CACHE request (a hint; nothing below needs it).
    pub fn cache_hint(&mut self) {
        self.counters.caches += 1;
    }

    /// A request the NBD layer refused before it reached the stack.
    pub fn rejected(&mut self) {
        self.counters.errors += 1;
    }

    /// Count an I/O request and pass its outcome on.
    fn io<T>(&mut self, r: Result<T, Errno>) -> Result<T, Errno> {
        if r.is_err() {
            self.counters.errors += 1;
        }
        r
    }
}

impl<D: Device> Device for Monitor<D> {
    fn size(&self) -> u64 {
        self.next.size()
    }

    fn read(&mut self, off: u64, buf: &mut [u8]) -> Result<(), Errno> {
        self.counters.last_io = unix_now();
        self.counters.reads += 1;
        self.counters.read_bytes += buf.len() as u64;
        let t = Instant::now();
        let r = self.next.read(off, buf);
        self.counters.read_us += t.elapsed().as_micros() as u64;
        self.io(r)?;
        pages(off, buf.len() as u64).for_each(|p| {
            self.geiger.swap_in(p);
        });
        Ok(())
    }

    fn write(&mut self, off: u64, data: &[u8], fua: bool) -> Result<(), Errno> {
        self.counters.last_io = unix_now();
        self.counters.writes += 1;
        self.counters.write_bytes += data.len() as u64;
        let t = Instant::now();
        let r = self.next.write(off, data, fua);
        self.counters.write_us += t.elapsed().as_micros() as u64;
        self.io(r)?;
        pages(off, data.len() as u64).for_each(|p| self.geiger.swap_out(p));
        Ok(())
    }

    fn plan_fetch(&mut self, off: u64, len: u64, chunk: u64) -> Option<crate::remote::Fetch> {
        self.next.plan_fetch(off, len, chunk)
    }

    fn stash(&mut self, f: Option<crate::remote::Fetch>) -> Option<crate::remote::Fetch> {
        self.next.stash(f)
    }

    fn flush(&mut self) -> Result<(), Errno> {
        self.counters.last_io = unix_now();
        self.counters.flushes += 1;
        let r = self.next.flush();
        self.io(r)
    }

    fn discard(&mut self, off: u64, len: u64, zero: bool, punch: bool, fua: bool) -> Result<(), Errno> {
        self.counters.last_io = unix_now();
        if zero {
            self.counters.zeroes += 1;
        } else {
            self.counters.trims += 1;
        }
        let r = self.next.discard(off, len, zero, punch, fua);
        self.io(r)?;
        let size = self.next.size();
        for page in pages(off, len).filter(|&p| covers(off, len, p, size)) {
            self.geiger.discard(page);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::{MemDevice, PAGE, PAGE_SIZE};

    fn monitor() -> Monitor<MemDevice> {
        Monitor::new(MemDevice::new(8 * PAGE), Geiger::new(1, 100))
    }

    #[test]
    fn requests_feed_counters_and_geiger() {
        let mut m = monitor();
        m.write(0, &[1; 2 * PAGE], false).unwrap();
        let mut buf = [0u8; 10];
        m.read(PAGE_SIZE - 5, &mut buf).unwrap(); // pages 0 and 1
        m.flush().unwrap();
        m.cache_hint();
        let c = &m.counters;
        assert_eq!(
            (c.writes, c.write_bytes, c.reads, c.read_bytes),
            (1, 2 * PAGE_SIZE, 1, 10)
        );
        assert_eq!((c.flushes, c.caches, c.errors), (1, 1, 0));
        assert!(c.last_io > 0.0);
        assert_eq!((m.geiger.swap_outs, m.geiger.swap_ins), (2, 2));
        assert_eq!(m.geiger.cumulative.total, 2);
        assert_eq!(m.next().flushes, 1);
    }

    #[test]
    fn failures_count_as_errors_and_reach_no_geiger() {
        let mut m = monitor();
        m.next_mut().fail = true;
        assert_eq!(m.write(0, &[1; PAGE], false), Err(libc::EIO));
        assert_eq!(m.read(0, &mut [0u8; PAGE]), Err(libc::EIO));
        assert!(m.discard(0, PAGE_SIZE, false, true, false).is_err());
        assert!(m.flush().is_err());
        m.rejected();
        let c = &m.counters;
        assert_eq!((c.writes, c.reads, c.trims, c.flushes, c.errors), (1, 1, 1, 1, 5));
        assert_eq!(
            (m.geiger.swap_outs, m.geiger.swap_ins, m.geiger.queue_len()),
            (0, 0, 0)
        );
    }

    #[test]
    fn only_whole_pages_leave_the_ghost_queue_on_discard() {
        let mut m = monitor();
        m.write(0, &[1; 3 * PAGE], false).unwrap();
        m.discard(10, 2 * PAGE_SIZE, true, false, false).unwrap(); // whole page 1 only
        assert!(m.geiger.queued(0) && !m.geiger.queued(1) && m.geiger.queued(2));
        assert_eq!((m.counters.zeroes, m.counters.trims), (1, 0));
        m.read(0, &mut []).unwrap(); // zero-length: counted, no page
        assert_eq!((m.counters.reads, m.geiger.swap_ins), (1, 0));
    }
}
