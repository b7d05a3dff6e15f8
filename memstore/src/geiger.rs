//! Geiger's ghost buffer and reuse distances (fed by the monitor layer,
//! `monitor.rs`).
//!
//! Seed 004 section 2.4.4: the swap device sees every page the guest evicts
//! (a swap-out, an NBD write) and every page it faults back in (a swap-in,
//! an NBD read).  Evicted pages form a queue whose head is the most recently
//! evicted page.  On a swap-in of page p, p leaves the queue and its
//! distance D from the head is recorded:
//!
//!   D = number of pages still in the queue that were evicted after p.
//!
//! Had the guest had D + 1 more pages of memory, p (and the D pages evicted
//! after it) would not have been evicted, so the swap-in would have been a
//! hit.  A page written again while still queued moves back to the head.
//! Swap-ins of pages not in the queue (written before the monitor started,
//! e.g. before a restart, or read twice without a write in between) are
//! counted as `cold` and get no distance.
//!
//! Distances go into a histogram of buckets of `bucket_pages` pages (bucket
//! b holds D in [b * bucket_pages, (b + 1) * bucket_pages)).  The extra
//! memory that would have turned X % of the swap-ins into hits (Geiger's
//! m_ghost) is found by walking the histogram from bucket 0 until the
//! running count reaches X % of the total: for bucket b it is
//! (b + 1) * bucket_pages pages, an upper bound of the exact D + 1.
//!
//! The queue position is found in O(log n) with a Fenwick tree over the
//! queue slots (one slot per swap-out, compacted when the slots run out).

use crate::device::PAGE_SIZE;
use std::collections::{BTreeMap, HashMap, VecDeque};

/// Fenwick (binary indexed) tree of 0/1 slot occupancy.
struct Fenwick {
    tree: Vec<i64>,
}

impl Fenwick {
    fn new(n: usize) -> Fenwick {
        Fenwick { tree: vec![0; n + 1] }
    }

    fn len(&self) -> usize {
        self.tree.len() - 1
    }

    fn add(&mut self, slot: usize, delta: i64) {
        let mut i = slot + 1;
        while i < self.tree.len() {
            self.tree[i] += delta;
            i += i & i.wrapping_neg();
        }
    }

    /// Sum of slots 0..=slot.
    fn prefix(&self, slot: usize) -> i64 {
        let mut i = slot + 1;
        let mut s = 0;
        while i > 0 {
            s += self.tree[i];
            i -= i & i.wrapping_neg();
        }
        s
    }
}

/// The evicted-page queue with O(log n) distance-from-head queries.
pub struct GhostQueue {
    slot_of: HashMap<u64, usize>,
    page_at: Vec<u64>, // page in each slot, EMPTY when free
    tree: Fenwick,
    next: usize,
}

const EMPTY: u64 = u64::MAX;
const MIN_SLOTS: usize = 1024;

impl GhostQueue {
    pub fn new() -> GhostQueue {
        GhostQueue {
            slot_of: HashMap::new(),
            page_at: vec![EMPTY; MIN_SLOTS],
            tree: Fenwick::new(MIN_SLOTS),
            next: 0,
        }
    }

    pub fn len(&self) -> usize {
        self.slot_of.len()
    }

    pub fn is_empty(&self) -> bool {
        self.slot_of.is_empty()
    }

    pub fn contains(&self, page: u64) -> bool {
        self.slot_of.contains_key(&page)
    }

    fn unlink(&mut self, page: u64) -> Option<usize> {
        let slot = self.slot_of.remove(&page)?;
        self.tree.add(slot, -1);
        self.page_at[slot] = EMPTY;
        Some(slot)
    }

    /// Rebuild with the live pages in slots 0..n (queue order kept) in a
    /// tree at least twice that size.
    fn compact(&mut self) {
        let live: Vec<u64> = self.page_at[..self.next]
            .iter()
            .copied()
            .filter(|&p| p != EMPTY)
            .collect();
        let size = std::cmp::max(MIN_SLOTS, (live.len() * 2).next_power_of_two());
        self.page_at = vec![EMPTY; size];
        self.tree = Fenwick::new(size);
        self.slot_of.clear();
        for (slot, &p) in live.iter().enumerate() {
            self.page_at[slot] = p;
            self.tree.add(slot, 1);
            self.slot_of.insert(p, slot);
        }
        self.next = live.len();
    }

    /// A swap-out of `page`: it becomes the head of the queue.
    pub fn evicted(&mut self, page: u64) {
        self.unlink(page);
        if self.next == self.tree.len() {
            self.compact();
        }
        let slot = self.next;
        self.next += 1;
        self.page_at[slot] = page;
        self.tree.add(slot, 1);
        self.slot_of.insert(page, slot);
    }

    /// A swap-in of `page`: removes it and returns its distance from the
    /// head (pages evicted after it), or None if it was not queued.
    pub fn swapped_in(&mut self, page: u64) -> Option<u64> {
        let slot = *self.slot_of.get(&page)?;
        let live = self.slot_of.len() as i64;
        let upto = self.tree.prefix(slot); // includes the page itself
        self.unlink(page);
        Some((live - upto) as u64)
    }

    /// The page's data is gone (trim / write-zeroes): forget it.
    pub fn discarded(&mut self, page: u64) {
        self.unlink(page);
    }
}

impl Default for GhostQueue {
    fn default() -> Self {
        Self::new()
    }
}

/// A reuse-distance histogram: bucket -> swap-ins.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Histogram {
    pub buckets: BTreeMap<u64, u64>,
    pub total: u64,
}

impl Histogram {
    pub fn add(&mut self, bucket: u64) {
        *self.buckets.entry(bucket).or_insert(0) += 1;
        self.total += 1;
    }

    /// Smallest number of buckets k such that at least `percent` % of the
    /// recorded swap-ins have a bucket < k; 0 when nothing was recorded.
    pub fn buckets_for(&self, percent: f64) -> u64 {
        if self.total == 0 {
            return 0;
        }
        let need = percent / 100.0 * self.total as f64;
        let mut seen = 0u64;
        for (&b, &n) in &self.buckets {
            seen += n;
            // tolerate float rounding: 95 % of 20 is 19, exactly
            if seen as f64 + 1e-9 >= need {
                return b + 1;
            }
        }
        self.buckets.keys().next_back().map(|b| b + 1).unwrap_or(0)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Read,
    Write,
    Trim,
}

impl Op {
    pub fn code(self) -> &'static str {
        match self {
            Op::Read => "r",
            Op::Write => "w",
            Op::Trim => "t",
        }
    }
}

/// One swap-traffic event (page-granular).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Event {
    pub seq: u64,
    pub op: Op,
    pub page: u64,
}

/// Per-export reuse-distance state: ghost queue, interval and cumulative
/// histograms, and a bounded ring of recent page events.
pub struct Geiger {
    pub bucket_pages: u64,
    queue: GhostQueue,
    pub interval: Histogram,
    pub cumulative: Histogram,
    pub interval_cold: u64,
    pub cumulative_cold: u64,
    pub swap_outs: u64, // pages written
    pub swap_ins: u64,  // pages read
    events: VecDeque<Event>,
    event_cap: usize,
    next_seq: u64,
    /// Unix time the current interval began.
    pub interval_started: f64,
}

/// Seconds since the Unix epoch (0.0 if the clock is before it).
pub fn unix_now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

impl Geiger {
    pub fn new(bucket_pages: u64, event_cap: usize) -> Geiger {
        Geiger {
            bucket_pages: std::cmp::max(1, bucket_pages),
            queue: GhostQueue::new(),
            interval: Histogram::default(),
            cumulative: Histogram::default(),
            interval_cold: 0,
            cumulative_cold: 0,
            swap_outs: 0,
            swap_ins: 0,
            events: VecDeque::new(),
            event_cap,
            next_seq: 0,
            interval_started: unix_now(),
        }
    }

    fn log(&mut self, op: Op, page: u64) {
        if self.event_cap == 0 {
            return;
        }
        if self.events.len() == self.event_cap {
            self.events.pop_front();
        }
        self.events.push_back(Event {
            seq: self.next_seq,
            op,
            page,
        });
        self.next_seq += 1;
    }

    pub fn swap_out(&mut self, page: u64) {
        self.swap_outs += 1;
        self.queue.evicted(page);
        self.log(Op::Write, page);
    }

    /// Returns the reuse distance recorded, if any.
    pub fn swap_in(&mut self, page: u64) -> Option<u64> {
        self.swap_ins += 1;
        self.log(Op::Read, page);
        match self.queue.swapped_in(page) {
            Some(d) => {
                let b = d / self.bucket_pages;
                self.interval.add(b);
                self.cumulative.add(b);
                Some(d)
            }
            None => {
                self.interval_cold += 1;
                self.cumulative_cold += 1;
                None
            }
        }
    }

    pub fn discard(&mut self, page: u64) {
        self.queue.discarded(page);
        self.log(Op::Trim, page);
    }

    pub fn queue_len(&self) -> usize {
        self.queue.len()
    }

    pub fn queued(&self, page: u64) -> bool {
        self.queue.contains(page)
    }

    /// Extra memory, in bytes, that would have made `percent` % of the
    /// histogram's swap-ins hits.
    pub fn extra_bytes(&self, h: &Histogram, percent: f64) -> u64 {
        h.buckets_for(percent) * self.bucket_pages * PAGE_SIZE
    }

    /// Start a new interval; returns the interval that ended.
    pub fn reset_interval(&mut self) -> (Histogram, u64) {
        let h = std::mem::take(&mut self.interval);
        let c = self.interval_cold;
        self.interval_cold = 0;
        self.interval_started = unix_now();
        (h, c)
    }

    /// Events with seq >= since, at most `max`; and the next seq.
    pub fn events_since(&self, since: u64, max: usize) -> (Vec<Event>, u64) {
        let out: Vec<Event> = self
            .events
            .iter()
            .filter(|e| e.seq >= since)
            .take(max)
            .copied()
            .collect();
        (out, self.next_seq)
    }

    pub fn first_seq(&self) -> u64 {
        self.events.front().map(|e| e.seq).unwrap_or(self.next_seq)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The hand-worked example of doc/source/memstore.rst:
    /// swap-out 1 2 3 4 5          queue (old -> head): 1 2 3 4 5
    /// swap-in 2  -> D = 3 (3,4,5)  queue: 1 3 4 5
    /// swap-in 5  -> D = 0          queue: 1 3 4
    /// swap-out 1 (moves to head)   queue: 3 4 1
    /// swap-in 3  -> D = 2 (4,1)    queue: 4 1
    /// swap-in 1  -> D = 0          queue: 4
    /// swap-in 9  -> cold (never swapped out)
    /// histogram {0: 2, 2: 1, 3: 1}; 50 % -> 1 page, 75 % -> 3 pages,
    /// 95 % -> 4 pages.
    #[test]
    fn hand_worked_example() {
        let mut m = Geiger::new(1, 100);
        for p in 1..=5 {
            m.swap_out(p);
        }
        assert_eq!(m.swap_in(2), Some(3));
        assert_eq!(m.swap_in(5), Some(0));
        m.swap_out(1);
        assert_eq!(m.swap_in(3), Some(2));
        assert_eq!(m.swap_in(1), Some(0));
        assert_eq!(m.swap_in(9), None);
        assert_eq!(m.queue_len(), 1);
        assert!(m.queued(4));
        let want: BTreeMap<u64, u64> = [(0, 2), (2, 1), (3, 1)].into_iter().collect();
        assert_eq!(m.cumulative.buckets, want);
        assert_eq!(m.cumulative.total, 4);
        assert_eq!(m.cumulative_cold, 1);
        assert_eq!(m.extra_bytes(&m.cumulative, 50.0), 4096);
        assert_eq!(m.extra_bytes(&m.cumulative, 75.0), 3 * 4096);
        assert_eq!(m.extra_bytes(&m.cumulative, 95.0), 4 * 4096);
        assert_eq!(m.extra_bytes(&m.cumulative, 100.0), 4 * 4096);
        assert_eq!(m.swap_outs, 6);
        assert_eq!(m.swap_ins, 5);
    }

    #[test]
    fn buckets_group_distances() {
        let mut m = Geiger::new(2, 0);
        for p in 0..10 {
            m.swap_out(p);
        }
        // pages 0..3 in order: each has the pages evicted after it ahead
        assert_eq!(m.swap_in(0), Some(9));
        assert_eq!(m.swap_in(1), Some(8));
        assert_eq!(m.swap_in(2), Some(7));
        assert_eq!(m.swap_in(3), Some(6));
        let want: BTreeMap<u64, u64> = [(3, 2), (4, 2)].into_iter().collect();
        assert_eq!(m.interval.buckets, want);
        // 50 % within buckets 0..=3 -> 4 buckets of 2 pages
        assert_eq!(m.extra_bytes(&m.interval, 50.0), 8 * 4096);
        assert_eq!(m.extra_bytes(&m.interval, 95.0), 10 * 4096);
        let (h, cold) = m.reset_interval();
        assert_eq!((h.total, cold), (4, 0));
        assert_eq!(m.interval.total, 0);
        assert_eq!(m.cumulative.total, 4);
        assert_eq!(m.extra_bytes(&m.interval, 95.0), 0);
    }

    #[test]
    fn discard_and_reread_are_not_hits() {
        let mut m = Geiger::new(1, 0);
        m.swap_out(7);
        m.swap_out(8);
        m.discard(7);
        assert_eq!(m.swap_in(7), None);
        assert_eq!(m.swap_in(8), Some(0));
        assert_eq!(m.swap_in(8), None); // read twice without a write
        assert_eq!(m.cumulative_cold, 2);
    }

    /// The Fenwick queue against a naive list, across many compactions.
    #[test]
    fn matches_naive_queue() {
        let mut q = GhostQueue::new();
        let mut naive: Vec<u64> = Vec::new(); // oldest first
        let mut x: u64 = 12345;
        for _ in 0..50_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let page = x % 3000;
            if x % 3 == 0 {
                let want = naive
                    .iter()
                    .position(|&p| p == page)
                    .map(|i| (naive.len() - 1 - i) as u64);
                if want.is_some() {
                    naive.retain(|&p| p != page);
                }
                assert_eq!(q.swapped_in(page), want);
            } else {
                naive.retain(|&p| p != page);
                naive.push(page);
                q.evicted(page);
            }
            assert_eq!(q.len(), naive.len());
        }
    }

    #[test]
    fn event_ring_is_bounded() {
        let mut m = Geiger::new(1, 3);
        for p in 0..5 {
            m.swap_out(p);
        }
        let (ev, next) = m.events_since(0, 10);
        assert_eq!(next, 5);
        assert_eq!(ev.iter().map(|e| e.page).collect::<Vec<_>>(), vec![2, 3, 4]);
        assert_eq!(m.first_seq(), 2);
        let (ev, _) = m.events_since(4, 10);
        assert_eq!(ev.len(), 1);
        assert_eq!(ev[0].op, Op::Write);
    }
}
