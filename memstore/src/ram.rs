//! The RAM tier: copies of pages in memstore's memory (the host's
//! free-memory reservoir), in front of the layer below, which holds every
//! page (RAM is a cache of it: a page over quota simply is not kept here).
//!
//! Two quotas bound it: the export's own byte quota and the host's, shared
//! by every export (`Host`); both can change at run time, and shrinking
//! evicts at once.  When the host quota is full an export makes room among
//! its own pages, never another export's.  Eviction is FIFO by last write:
//! a swap device sees each page written once per eviction, so the oldest
//! write is the coldest page.

use crate::device::{covers, pages, Device, Errno, PAGE, PAGE_SIZE};
use serde::Serialize;
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

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

    /// Reserve `bytes` at once (a slab lent to another host); false if
    /// the quota does not have them.
    pub fn try_reserve_bytes(&self, bytes: u64) -> bool {
        let mut cur = self.used.load(Ordering::Relaxed);
        loop {
            match cur.checked_add(bytes) {
                Some(n) if n <= self.quota.load(Ordering::Relaxed) => {}
                _ => return false,
            }
            match self
                .used
                .compare_exchange_weak(cur, cur + bytes, Ordering::AcqRel, Ordering::Relaxed)
            {
                Ok(_) => return true,
                Err(v) => cur = v,
            }
        }
    }

    pub fn release_bytes(&self, bytes: u64) {
        self.used.fetch_sub(bytes, Ordering::AcqRel);
    }

    fn release(&self, pages: u64) {
        self.used.fetch_sub(pages * PAGE_SIZE, Ordering::AcqRel);
    }
}

/// What the RAM tier counts (since memstore started); `file_read_pages`
/// are the pages it missed and read from the layer below.
#[derive(Clone, Debug, Default, Serialize)]
pub struct RamCounters {
    pub ram_hit_pages: u64,
    pub file_read_pages: u64,
    pub evicted_pages: u64,
}

struct RamPage {
    data: Box<[u8]>,
    gen: u64,
}

pub struct RamTier<D> {
    host: Arc<Host>,
    quota: u64,
    pages: HashMap<u64, RamPage>,
    /// (page, gen) in write order; entries whose gen is stale are skipped.
    fifo: VecDeque<(u64, u64)>,
    gen: u64,
    pub counters: RamCounters,
    next: D,
}

impl<D: Device> RamTier<D> {
    pub fn new(next: D, quota: u64, host: Arc<Host>) -> RamTier<D> {
        RamTier {
            host,
            quota,
            pages: HashMap::new(),
            fifo: VecDeque::new(),
            gen: 0,
            counters: RamCounters::default(),
            next,
        }
    }

    pub fn next(&self) -> &D {
        &self.next
    }

    pub fn next_mut(&mut self) -> &mut D {
        &mut self.next
    }

    pub fn quota(&self) -> u64 {
        self.quota
    }

    pub fn ram_bytes(&self) -> u64 {
        self.pages.len() as u64 * PAGE_SIZE
    }

    /// Is `page` in RAM now?
    pub fn holds(&self, page: u64) -> bool {
        self.pages.contains_key(&page)
    }

    fn evict_one(&mut self) -> bool {
        while let Some((page, gen)) = self.fifo.pop_front() {
            if matches!(self.pages.get(&page), Some(p) if p.gen == gen) {
                if let Some(p) = self.pages.remove(&page) {
                    self.next.offer(page, &p.data);
                }
                self.host.release(1);
                self.counters.evicted_pages += 1;
                return true;
            }
        }
        false
    }

    /// Keep a copy of `data` (one whole page) if the quotas allow.
    fn cache(&mut self, page: u64, data: &[u8]) {
        self.gen += 1;
        let gen = self.gen;
        if let Some(p) = self.pages.get_mut(&page) {
            p.data.copy_from_slice(data);
            p.gen = gen;
            self.fifo.push_back((page, gen));
        } else {
            if self.quota < PAGE_SIZE {
                // over quota: the page overflows to the tiers below
                self.next.offer(page, data);
                return;
            }
            while self.ram_bytes() + PAGE_SIZE > self.quota {
                if !self.evict_one() {
                    self.next.offer(page, data);
                    return;
                }
            }
            while !self.host.try_reserve() {
                // the host reservoir is full: make room among our own pages
                if !self.evict_one() {
                    self.next.offer(page, data);
                    return;
                }
            }
            let data = data.to_vec().into_boxed_slice();
            self.pages.insert(page, RamPage { data, gen });
            self.fifo.push_back((page, gen));
        }
        if self.fifo.len() > 2 * self.pages.len() + 1024 {
            let pages = &self.pages;
            self.fifo
                .retain(|(p, gen)| matches!(pages.get(p), Some(r) if r.gen == *gen));
        }
    }

    /// Set the quota and evict down to it; returns the pages evicted.
    pub fn set_quota(&mut self, quota: u64) -> u64 {
        self.quota = quota;
        let mut n = 0;
        while self.ram_bytes() > quota && self.evict_one() {
            n += 1;
        }
        n
    }

    /// Evict up to `bytes` (host quota shrink); returns the bytes freed.
    pub fn shed(&mut self, bytes: u64) -> u64 {
        let mut freed = 0;
        while freed < bytes && self.evict_one() {
            freed += PAGE_SIZE;
        }
        freed
    }

    /// Give every page back to the host (the export is deleted).
    pub fn release_all(&mut self) {
        self.host.release(self.pages.len() as u64);
        self.pages.clear();
        self.fifo.clear();
    }

    fn drop_page(&mut self, page: u64) {
        if self.pages.remove(&page).is_some() {
            self.host.release(1);
        }
    }
}

impl<D: Device> Device for RamTier<D> {
    fn size(&self) -> u64 {
        self.next.size()
    }

    fn read(&mut self, off: u64, buf: &mut [u8]) -> Result<(), Errno> {
        let len = buf.len();
        let at = |pos: usize| off + pos as u64;
        // bytes from `pos` to the end of its page (or of the buffer)
        let span = |pos: usize| std::cmp::min(PAGE - (at(pos) % PAGE_SIZE) as usize, len - pos);
        let mut pos = 0usize;
        while pos < len {
            let (o, n) = (at(pos), span(pos));
            let in_page = (o % PAGE_SIZE) as usize;
            if let Some(p) = self.pages.get(&(o / PAGE_SIZE)) {
                buf[pos..pos + n].copy_from_slice(&p.data[in_page..in_page + n]);
                self.counters.ram_hit_pages += 1;
                pos += n;
                continue;
            }
            // one read below for the whole run of pages not in RAM
            let mut end = pos + n;
            while end < len && !self.holds(at(end) / PAGE_SIZE) {
                end += span(end);
            }
            self.next.read(o, &mut buf[pos..end])?;
            self.counters.file_read_pages += pages(o, (end - pos) as u64).count() as u64;
            pos = end;
        }
        Ok(())
    }

    fn write(&mut self, off: u64, data: &[u8], fua: bool) -> Result<(), Errno> {
        self.next.write(off, data, fua)?;
        let size = self.next.size();
        let mut page_buf = [0u8; PAGE];
        let mut pos = 0usize;
        while pos < data.len() {
            let o = off + pos as u64;
            let page = o / PAGE_SIZE;
            let in_page = (o % PAGE_SIZE) as usize;
            let n = std::cmp::min(PAGE - in_page, data.len() - pos);
            if n == PAGE {
                self.cache(page, &data[pos..pos + n]);
            } else if let Some(p) = self.pages.get_mut(&page) {
                p.data[in_page..in_page + n].copy_from_slice(&data[pos..pos + n]);
            } else {
                // part of a page not in RAM: the layer below has it whole now
                let start = page * PAGE_SIZE;
                let len = std::cmp::min(PAGE_SIZE, size - start) as usize;
                page_buf[len..].fill(0);
                self.next.read(start, &mut page_buf[..len])?;
                self.cache(page, &page_buf);
            }
            pos += n;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<(), Errno> {
        self.next.flush()
    }

    fn plan_fetch(&mut self, off: u64, len: u64, chunk: u64) -> Option<crate::remote::Fetch> {
        self.next.plan_fetch(off, len, chunk)
    }

    fn stash(&mut self, f: Option<crate::remote::Fetch>) -> Option<crate::remote::Fetch> {
        self.next.stash(f)
    }

    fn discard(&mut self, off: u64, len: u64, zero: bool, punch: bool, fua: bool) -> Result<(), Errno> {
        self.next.discard(off, len, zero, punch, fua)?;
        let size = self.next.size();
        for page in pages(off, len) {
            if covers(off, len, page, size) {
                self.drop_page(page);
            } else if let Some(p) = self.pages.get_mut(&page) {
                let start = page * PAGE_SIZE;
                let a = std::cmp::max(off, start) - start;
                let b = std::cmp::min(off + len, start + PAGE_SIZE) - start;
                p.data[a as usize..b as usize].fill(0);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::MemDevice;

    fn tier(pages: usize, quota_pages: u64, host: &Arc<Host>) -> RamTier<MemDevice> {
        RamTier::new(
            MemDevice::new(pages * PAGE),
            quota_pages * PAGE_SIZE,
            host.clone(),
        )
    }

    #[test]
    fn quota_evicts_the_oldest_write() {
        let host = Arc::new(Host::new(1 << 30));
        let mut t = tier(8, 2, &host);
        for p in 0..3u64 {
            t.write(p * PAGE_SIZE, &[p as u8; PAGE], false).unwrap();
        }
        assert!(!t.holds(0) && t.holds(1) && t.holds(2));
        t.write(PAGE_SIZE, &[7; PAGE], false).unwrap(); // page 1 is now the newest
        t.write(3 * PAGE_SIZE, &[3; PAGE], false).unwrap();
        assert!(t.holds(1) && !t.holds(2) && t.holds(3));
        assert_eq!(t.counters.evicted_pages, 2);
        assert_eq!(host.used.load(Ordering::SeqCst), 2 * PAGE_SIZE);
        assert_eq!(t.next.data[2 * PAGE], 2); // every page is below
        assert_eq!(t.shed(PAGE_SIZE), PAGE_SIZE);
        assert_eq!(t.set_quota(0), 1);
        assert_eq!(host.used.load(Ordering::SeqCst), 0);
        t.set_quota(8 * PAGE_SIZE);
        t.write(0, &[1; PAGE], false).unwrap();
        t.release_all();
        assert_eq!((host.used.load(Ordering::SeqCst), t.ram_bytes()), (0, 0));
    }

    #[test]
    fn misses_are_read_below() {
        let host = Arc::new(Host::new(1 << 30));
        let mut t = tier(8, 8, &host);
        t.write(0, &[1; PAGE], false).unwrap();
        t.next.data[PAGE..4 * PAGE].fill(5); // below, not in RAM
        let mut buf = vec![0u8; 4 * PAGE - 10];
        t.read(10, &mut buf).unwrap();
        assert!(buf[..PAGE - 10].iter().all(|&b| b == 1));
        assert!(buf[PAGE - 10..].iter().all(|&b| b == 5));
        assert_eq!((t.counters.ram_hit_pages, t.counters.file_read_pages), (1, 3));
        // a RAM hit does not go below
        t.next.fail = true;
        t.read(0, &mut buf[..PAGE]).unwrap();
        assert_eq!(t.read(PAGE_SIZE, &mut buf[..PAGE]), Err(libc::EIO));
    }

    #[test]
    fn partial_writes_cache_the_whole_page() {
        let host = Arc::new(Host::new(1 << 30));
        let mut t = tier(2, 8, &host);
        t.next.data[..PAGE].fill(9);
        t.write(100, &[1; 10], false).unwrap();
        assert!(t.holds(0));
        t.next.fail = true;
        let mut page = [0u8; PAGE];
        t.read(0, &mut page).unwrap();
        assert!(page[..100].iter().chain(&page[110..]).all(|&b| b == 9));
        assert_eq!(&page[100..110], &[1; 10]);
        // a write that fails below leaves RAM as it was
        assert_eq!(t.write(PAGE_SIZE, &[2; PAGE], false), Err(libc::EIO));
        assert!(!t.holds(1));
    }

    #[test]
    fn discard_drops_whole_pages_and_zeroes_parts() {
        let host = Arc::new(Host::new(1 << 30));
        let mut t = tier(2, 8, &host);
        t.write(0, &[3; 2 * PAGE], false).unwrap();
        t.discard(0, PAGE_SIZE + 10, false, true, false).unwrap();
        assert!(!t.holds(0) && t.holds(1));
        assert_eq!(host.used.load(Ordering::SeqCst), PAGE_SIZE);
        let mut page = [0u8; PAGE];
        t.read(PAGE_SIZE, &mut page).unwrap();
        assert!(page[..10].iter().all(|&b| b == 0) && page[10..].iter().all(|&b| b == 3));
    }
}
