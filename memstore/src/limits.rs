//! Bounds on what clients can make memstore hold: connections, time to
//! finish the handshake, and memory for request buffers.
//!
//! The request-buffer budget is global: every READ or WRITE payload buffer
//! is taken from it, one chunk (`CHUNK`, at most 1 MiB) at a time, and
//! given back when the chunk has been sent or stored.  A request larger
//! than a chunk is served chunk by chunk; a connection that finds the
//! budget spent waits for it.  So 24 clients with one 32 MiB READ each
//! hold at most the budget in buffers, not 768 MiB.

use std::sync::{Condvar, Mutex};
use std::time::Duration;

/// Largest buffer one request holds at a time.
pub const CHUNK: usize = 1 << 20;

#[derive(Clone, Debug)]
pub struct Limits {
    /// NBD connections open at once, all exports together; more are
    /// refused (closed at once, logged).
    pub max_connections: usize,
    /// Time a client has for the whole handshake (and each reply write
    /// during it); 0 disables.
    pub handshake_timeout: Duration,
    /// Bytes of request buffers in flight, all connections together.
    pub request_buffer_budget: u64,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_connections: 256,
            handshake_timeout: Duration::from_secs(10),
            request_buffer_budget: 64 << 20,
        }
    }
}

/// A counting semaphore of bytes.
pub struct Budget {
    limit: u64,
    used: Mutex<u64>,
    freed: Condvar,
}

/// Bytes taken from a `Budget`, given back on drop.
pub struct Grant<'a> {
    budget: &'a Budget,
    bytes: u64,
}

impl Budget {
    pub fn new(limit: u64) -> Budget {
        Budget {
            // a budget below one page would never let a request through
            limit: std::cmp::max(limit, 4096),
            used: Mutex::new(0),
            freed: Condvar::new(),
        }
    }

    /// The chunk size for buffers of this budget: at most `CHUNK` and at
    /// most the budget itself, so that a chunk always fits.
    pub fn chunk(&self) -> usize {
        std::cmp::min(CHUNK as u64, self.limit) as usize
    }

    pub fn used(&self) -> u64 {
        *self.lock()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, u64> {
        match self.used.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        }
    }

    /// Wait until `bytes` (≤ `chunk()`) fit, and take them.
    pub fn acquire(&self, bytes: usize) -> Grant<'_> {
        let bytes = std::cmp::min(bytes as u64, self.limit);
        let mut used = self.lock();
        while *used + bytes > self.limit {
            used = match self.freed.wait(used) {
                Ok(g) => g,
                Err(p) => p.into_inner(),
            };
        }
        *used += bytes;
        Grant { budget: self, bytes }
    }
}

impl Drop for Grant<'_> {
    fn drop(&mut self) {
        *self.budget.lock() -= self.bytes;
        self.budget.freed.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::Arc;

    #[test]
    fn the_budget_is_never_exceeded() {
        let b = Arc::new(Budget::new(3 << 20));
        assert_eq!(b.chunk(), CHUNK);
        let peak = Arc::new(AtomicU64::new(0));
        let threads: Vec<_> = (0..8)
            .map(|_| {
                let (b, peak) = (b.clone(), peak.clone());
                std::thread::spawn(move || {
                    for _ in 0..50 {
                        let _g = b.acquire(CHUNK);
                        peak.fetch_max(b.used(), Ordering::SeqCst);
                        std::thread::yield_now();
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert!(peak.load(Ordering::SeqCst) <= 3 << 20);
        assert_eq!(b.used(), 0);
        let small = Budget::new(100);
        assert_eq!(small.chunk(), 4096);
        drop(small.acquire(1 << 30)); // clamped: never waits forever
    }
}
