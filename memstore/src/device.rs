//! The block-device interface every layer of an export implements, in the
//! manner of nbdkit's plugins and filters: the file backend at the bottom,
//! layers above it that each wrap the one below (`next`) and add one
//! concern (RAM tier and quotas, monitoring).  A tier between two others
//! (a remote one, later) is one more `Device` wrapping the one below.
//!
//! Layers take `&mut self`: an export's whole stack sits in one mutex, so a
//! request sees RAM and file consistent and the borrow checker guarantees
//! nothing touches a layer unlocked.  Offsets and lengths are in bytes and
//! checked against `size()` by the NBD layer before they get here.

/// An errno value (EIO, ENOSPC, ...) for the NBD reply.
pub type Errno = i32;

pub const PAGE_SIZE: u64 = 4096;
pub const PAGE: usize = PAGE_SIZE as usize;

pub trait Device {
    fn size(&self) -> u64;
    fn read(&mut self, off: u64, buf: &mut [u8]) -> Result<(), Errno>;
    /// Returns once the data is in the backing file (on disk with `fua`).
    fn write(&mut self, off: u64, data: &[u8], fua: bool) -> Result<(), Errno>;
    fn flush(&mut self) -> Result<(), Errno>;
    /// Trim (`zero` false) or write zeroes: the range reads back as zeros
    /// either way; with `punch` the file's blocks are released.
    fn discard(&mut self, off: u64, len: u64, zero: bool, punch: bool, fua: bool) -> Result<(), Errno>;
    /// A whole page (`data`, 4096 bytes, the current version) that the
    /// layer above stops keeping (evicted, or over its quota): a tier
    /// below may keep a copy (the remote tier does).  The page is in the
    /// backing file already; the default keeps nothing.
    fn offer(&mut self, _page: u64, _data: &[u8]) {}
    /// Start writing the backing file's copies of `pages` (sorted, no
    /// duplicates) to disk, without waiting (`--remote-dirty-window`).
    fn start_writeback(&mut self, _pages: &[u64]) -> Result<(), Errno> {
        Ok(())
    }
    /// Wait until the copies of `pages` are written, then drop them from
    /// the host's page cache (they read back from disk).
    fn drop_cached(&mut self, _pages: &[u64]) -> Result<(), Errno> {
        Ok(())
    }
    /// A handle that does `drop_cached` from another thread, without this
    /// layer (the remote tier's writeback thread); None: the caller does
    /// it here.
    fn cache_dropper(&self) -> Option<crate::file::CacheDropper> {
        None
    }
    /// `pages` are being dropped from the page cache by a `cache_dropper`.
    fn dropped_cached(&mut self, _pages: &[u64]) {}
    /// Let go of this layer's mappings of `pages` (a mapped page is never
    /// dropped from the page cache).
    fn unmap_cached(&mut self, _pages: &[u64]) {}
    /// A READ of [off, off + len) follows, in reads of `chunk` bytes from
    /// `off` on: the pages of it that live on remote slabs, planned here
    /// (under the export's mutex), requested without it
    /// (`remote::Fetch::send`) and received chunk by chunk into the
    /// buffer of the read that follows (`remote::Fetch::recv`).  None:
    /// nothing to fetch.
    fn plan_fetch(&mut self, _off: u64, _len: u64, _chunk: u64) -> Option<crate::remote::Fetch> {
        None
    }
    /// Give the tier that planned it a fetch, for the reads that follow;
    /// returns the one it held (`stash(None)` takes it back).  A page that
    /// landed in the read's buffer is kept only if it is still the page's
    /// current version (else the read takes it from the file).
    fn stash(&mut self, f: Option<crate::remote::Fetch>) -> Option<crate::remote::Fetch> {
        f
    }
}

/// The pages a request [off, off + len) touches (empty for len 0).
pub fn pages(off: u64, len: u64) -> std::ops::Range<u64> {
    let first = off / PAGE_SIZE;
    if len == 0 {
        first..first
    } else {
        first..(off + len - 1) / PAGE_SIZE + 1
    }
}

/// Does [off, off + len) cover all of `page` (the last page of a device of
/// `size` bytes may be short)?
pub fn covers(off: u64, len: u64, page: u64, size: u64) -> bool {
    let start = page * PAGE_SIZE;
    off <= start && off + len >= std::cmp::min(start + PAGE_SIZE, size)
}

/// The errno of an I/O error (EIO when it has none).
pub fn errno(e: &std::io::Error) -> Errno {
    e.raw_os_error().unwrap_or(libc::EIO)
}

/// A device in memory, for the layers' tests and the fuzzers; `fail`
/// makes every request fail with `fail_errno` (EIO by default).
pub struct MemDevice {
    pub data: Vec<u8>,
    pub fail: bool,
    pub fail_errno: Errno,
    pub flushes: u64,
}

impl MemDevice {
    pub fn new(size: usize) -> MemDevice {
        MemDevice {
            data: vec![0; size],
            fail: false,
            fail_errno: libc::EIO,
            flushes: 0,
        }
    }

    fn check(&self) -> Result<(), Errno> {
        if self.fail {
            Err(self.fail_errno)
        } else {
            Ok(())
        }
    }
}

impl Device for MemDevice {
    fn size(&self) -> u64 {
        self.data.len() as u64
    }
    fn read(&mut self, off: u64, buf: &mut [u8]) -> Result<(), Errno> {
        self.check()?;
        buf.copy_from_slice(&self.data[off as usize..off as usize + buf.len()]);
        Ok(())
    }
    fn write(&mut self, off: u64, data: &[u8], _fua: bool) -> Result<(), Errno> {
        self.check()?;
        self.data[off as usize..off as usize + data.len()].copy_from_slice(data);
        Ok(())
    }
    fn flush(&mut self) -> Result<(), Errno> {
        self.check()?;
        self.flushes += 1;
        Ok(())
    }
    fn discard(&mut self, off: u64, len: u64, _z: bool, _p: bool, _f: bool) -> Result<(), Errno> {
        self.check()?;
        self.data[off as usize..(off + len) as usize].fill(0);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_math() {
        assert_eq!(pages(0, 0), 0..0);
        assert_eq!(pages(4096, 1), 1..2);
        assert_eq!(pages(4095, 2), 0..2);
        assert_eq!(pages(0, 8192), 0..2);
        assert!(covers(0, 4096, 0, 1 << 20));
        assert!(!covers(1, 4096, 0, 1 << 20));
        assert!(!covers(0, 4095, 0, 1 << 20));
        assert!(covers(4096, 100, 1, 4196)); // the short last page
    }
}
