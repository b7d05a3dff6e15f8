//! The bottom layer: an export's backing file `<state_dir>/<name>.img`, a
//! sparse file as large as the export, mapped shared.
//!
//! Every write is copied into the mapping before it is acknowledged (or,
//! for whole pages that the dirty window dropped from the page cache,
//! written with `pwrite`): the data is then in the host kernel's page cache, which a SIGKILL of
//! memstore does not lose; the kernel writes it back asynchronously, and a
//! FLUSH or FUA write makes it durable with `fdatasync`.  Blocks are
//! reserved with `fallocate` before the first write into a hole, so a full
//! file system is an ENOSPC reply, not a SIGBUS; reads of pages that were
//! never written are answered from the bitmap without touching the
//! mapping, for the same reason.  The file always holds
//! every acknowledged page, so the tiers above are caches of it and a
//! restarted memstore serves every page from it.

use crate::device::{covers, errno, pages, Device, Errno, PAGE_SIZE};
use memmap2::{Advice, MmapMut, MmapOptions};
use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::os::unix::io::AsRawFd;
use std::path::Path;

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

pub struct FileBackend {
    file: File,
    /// The whole file, MAP_SHARED: a write is a memcpy, not a pwrite.
    map: MmapMut,
    size: u64,
    stored: Bitmap,
    /// Pages `drop_cached` dropped from the page cache and not written
    /// since.
    dropped: Bitmap,
}

impl FileBackend {
    /// Open (or create, `size` bytes) the backing file at `path`.
    pub fn open(path: &Path, size: u64) -> io::Result<FileBackend> {
        // 0600: the file holds a guest's swapped-out memory
        let file = crate::fsutil::open_private(path)?;
        let len = file.metadata()?.len();
        if len == 0 {
            file.set_len(size)?;
        } else if len != size {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "backing file {} is {} bytes, export is {}",
                    path.display(),
                    len,
                    size
                ),
            ));
        }
        let mut stored = Bitmap::new((size + PAGE_SIZE - 1) / PAGE_SIZE);
        scan_data(&file, size, &mut stored);
        // SAFETY: the mapping is only sound while nobody else changes the
        // file's size or contents; memstore owns its state directory
        // (documented: do not modify backing files while it runs).
        let map = unsafe { MmapOptions::new().len(size as usize).map_mut(&file)? };
        // swap-ins are random: no readahead around faults
        let _ = map.advise(Advice::Random);
        let dropped = Bitmap::new((size + PAGE_SIZE - 1) / PAGE_SIZE);
        Ok(FileBackend {
            file,
            map,
            size,
            stored,
            dropped,
        })
    }

    /// Pages that hold data the guest wrote and did not trim.
    pub fn stored_pages(&self) -> u64 {
        self.stored.ones
    }

    fn sync(&self) -> Result<(), Errno> {
        self.file.sync_data().map_err(|e| errno(&e))
    }

    fn fallocate(&self, mode: i32, off: u64, len: u64) -> io::Result<()> {
        // SAFETY: a plain system call on a descriptor we own
        let r = unsafe { libc::fallocate(self.file.as_raw_fd(), mode, off as i64, len as i64) };
        if r == 0 {
            Ok(())
        } else {
            Err(io::Error::last_os_error())
        }
    }

    /// Reserve blocks under the holes in `range` (a write fault
    /// into a hole on a full file system would be a SIGBUS).
    fn reserve(&self, range: std::ops::Range<u64>) -> Result<(), Errno> {
        let mut p = range.start;
        while p < range.end {
            if self.stored.get(p) {
                p += 1;
                continue;
            }
            let mut q = p + 1;
            while q < range.end && !self.stored.get(q) {
                q += 1;
            }
            let start = p * PAGE_SIZE;
            let end = std::cmp::min(q * PAGE_SIZE, self.size);
            self.fallocate(0, start, end - start).map_err(|e| errno(&e))?;
            p = q;
        }
        Ok(())
    }

    fn write_zeros(&self, off: u64, len: u64) -> io::Result<()> {
        let zeros = vec![0u8; 1 << 20];
        let mut done = 0;
        while done < len {
            let n = std::cmp::min(len - done, zeros.len() as u64) as usize;
            self.file.write_all_at(&zeros[..n], off + done)?;
            done += n as u64;
        }
        Ok(())
    }
}

/// The runs [p, q) of consecutive pages in `pages` (sorted, unique).
fn page_runs(pages: &[u64]) -> Vec<(u64, u64)> {
    let mut runs: Vec<(u64, u64)> = Vec::new();
    for &p in pages {
        match runs.last_mut() {
            Some((_, q)) if *q == p => *q += 1,
            _ => runs.push((p, p + 1)),
        }
    }
    runs
}

/// Wait until the pages' writeback is done, then drop them from the page
/// cache.  Written and clean before they are dropped: DONTNEED never
/// drops a dirty page (nor a mapped one), and a writeback error is
/// returned here (the pages then stay cached).  It works on the
/// descriptor alone, so another thread may call it without the export's
/// mutex: the data stays in the file whatever it does.
fn wait_and_drop(file: &File, size: u64, pages: &[u64]) -> Result<(), Errno> {
    for (p, q) in page_runs(pages) {
        let off = p * PAGE_SIZE;
        let len = std::cmp::min(q * PAGE_SIZE, size).saturating_sub(off);
        if len == 0 {
            continue;
        }
        let flags = libc::SYNC_FILE_RANGE_WAIT_BEFORE | libc::SYNC_FILE_RANGE_WRITE | libc::SYNC_FILE_RANGE_WAIT_AFTER;
        // SAFETY: plain system calls on a descriptor we own
        let r = unsafe { libc::sync_file_range(file.as_raw_fd(), off as i64, len as i64, flags) };
        if r != 0 {
            return Err(errno(&io::Error::last_os_error()));
        }
        unsafe {
            libc::posix_fadvise(file.as_raw_fd(), off as i64, len as i64, libc::POSIX_FADV_DONTNEED);
        }
    }
    Ok(())
}

/// The backing file's own descriptor, for the remote tier's writeback
/// thread (remote.rs): `drop_cached` without the export's mutex.  A
/// descriptor, not the mapping: it stays valid whatever becomes of the
/// export.
pub struct CacheDropper {
    file: File,
    size: u64,
}

impl CacheDropper {
    pub fn drop_cached(&self, pages: &[u64]) -> Result<(), Errno> {
        wait_and_drop(&self.file, self.size, pages)
    }
}

impl FileBackend {
    /// Bytes of the file in the host's page cache (mincore on the mapping
    /// reports the page cache, mapped here or not).
    pub fn cached_bytes(&self) -> u64 {
        crate::fsutil::resident_bytes(&self.map)
    }

    /// The byte range of pages [p, q), clipped to the file.
    fn span(&self, p: u64, q: u64) -> (u64, u64) {
        let off = p * PAGE_SIZE;
        (off, std::cmp::min(q * PAGE_SIZE, self.size).saturating_sub(off))
    }

    /// Unmap [off, off + len) from this process: the data stays in the
    /// file's page cache (a dirty mapping marks the page dirty there), but
    /// a mapped page would keep the page cache from dropping it.
    fn unmap_range(&self, off: u64, len: u64) {
        // SAFETY: the range lies inside our mapping; MADV_DONTNEED on a
        // shared file mapping drops only the page-table entries, the
        // next access reads the file's current contents
        unsafe {
            libc::madvise(
                self.map.as_ptr().add(off as usize) as *mut libc::c_void,
                len as usize,
                libc::MADV_DONTNEED,
            );
        }
    }

    fn sync_range(&self, off: u64, len: u64, flags: libc::c_uint) -> Result<(), Errno> {
        // SAFETY: a plain system call on a descriptor we own
        let r = unsafe { libc::sync_file_range(self.file.as_raw_fd(), off as i64, len as i64, flags) };
        if r == 0 {
            Ok(())
        } else {
            Err(errno(&io::Error::last_os_error()))
        }
    }
}

impl Device for FileBackend {
    fn start_writeback(&mut self, pages: &[u64]) -> Result<(), Errno> {
        for (p, q) in page_runs(pages) {
            let (off, len) = self.span(p, q);
            if len == 0 {
                continue;
            }
            self.unmap_range(off, len);
            self.sync_range(off, len, libc::SYNC_FILE_RANGE_WRITE)?;
        }
        Ok(())
    }

    fn drop_cached(&mut self, pages: &[u64]) -> Result<(), Errno> {
        for (p, q) in page_runs(pages) {
            let (off, len) = self.span(p, q);
            if len != 0 {
                // again: a page written since start_writeback is mapped again
                self.unmap_range(off, len);
            }
        }
        wait_and_drop(&self.file, self.size, pages)?;
        self.dropped_cached(pages);
        Ok(())
    }

    fn cache_dropper(&self) -> Option<CacheDropper> {
        match self.file.try_clone() {
            Ok(file) => Some(CacheDropper { file, size: self.size }),
            Err(e) => {
                crate::log::warn(&format!("backing file: no descriptor for the writeback thread: {}", e));
                None
            }
        }
    }

    fn unmap_cached(&mut self, pages: &[u64]) {
        for (p, q) in page_runs(pages) {
            let (off, len) = self.span(p, q);
            if len != 0 {
                self.unmap_range(off, len);
            }
        }
    }

    fn dropped_cached(&mut self, pages: &[u64]) {
        pages.iter().for_each(|&x| self.dropped.set(x));
    }

    fn size(&self) -> u64 {
        self.size
    }

    fn read(&mut self, off: u64, buf: &mut [u8]) -> Result<(), Errno> {
        // A page never written (or trimmed whole) is a hole: its zeros come
        // from the bitmap, not the mapping.  Reading a hole through a
        // shared mapping makes tmpfs allocate a page, and on a full tmpfs
        // that is a SIGBUS that kills every export (issue 17).
        let end = off + buf.len() as u64;
        let mut pos = off;
        while pos < end {
            let page = pos / PAGE_SIZE;
            let stored = self.stored.get(page);
            // the run of pages with the same state
            let mut q = page + 1;
            while q * PAGE_SIZE < end && self.stored.get(q) == stored {
                q += 1;
            }
            let run_end = std::cmp::min(q * PAGE_SIZE, end);
            let dst = &mut buf[(pos - off) as usize..(run_end - off) as usize];
            if stored {
                dst.copy_from_slice(&self.map[pos as usize..run_end as usize]);
            } else {
                dst.fill(0);
            }
            pos = run_end;
        }
        Ok(())
    }

    fn write(&mut self, off: u64, data: &[u8], fua: bool) -> Result<(), Errno> {
        if data.is_empty() {
            return Ok(());
        }
        let range = pages(off, data.len() as u64);
        self.reserve(range.clone())?;
        let o = off as usize;
        let whole = off % PAGE_SIZE == 0 && data.len() as u64 % PAGE_SIZE == 0;
        if whole
            && ((self.dropped.ones > 0 && range.clone().any(|p| self.dropped.get(p)))
                || range.clone().any(|p| !self.stored.get(p)))
        {
            // whole pages, some of them dropped from the page cache or
            // never written (holes): a store through the mapping would
            // fault each in and read it from the disk or zero it first,
            // pwrite replaces it (the same page cache: the mapping sees
            // it).  Elsewhere the mapping's memcpy is the faster path
            // (doc/source/memstore.rst).
            self.file.write_all_at(data, off).map_err(|e| errno(&e))?;
            range.clone().for_each(|p| self.dropped.clear(p));
        } else {
            self.map[o..o + data.len()].copy_from_slice(data);
        }
        // the data is in the file now, whether or not the sync below works
        range.for_each(|p| self.stored.set(p));
        if fua {
            self.sync()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<(), Errno> {
        self.sync()
    }

    fn discard(&mut self, off: u64, len: u64, _zero: bool, punch: bool, fua: bool) -> Result<(), Errno> {
        if len == 0 {
            return Ok(());
        }
        let r = if punch {
            self.fallocate(libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE, off, len)
        } else {
            self.fallocate(libc::FALLOC_FL_ZERO_RANGE | libc::FALLOC_FL_KEEP_SIZE, off, len)
                .or_else(|_| self.write_zeros(off, len))
        };
        r.map_err(|e| errno(&e))?;
        if fua {
            self.sync()?;
        }
        for page in pages(off, len).filter(|&p| covers(off, len, p, self.size)) {
            if punch {
                self.stored.clear(page);
            } else {
                self.stored.set(page);
            }
        }
        Ok(())
    }
}

/// Mark the pages that hold data in the file (SEEK_DATA / SEEK_HOLE).
fn scan_data(f: &File, size: u64, stored: &mut Bitmap) {
    let fd = f.as_raw_fd();
    let mut pos: i64 = 0;
    while (pos as u64) < size {
        // SAFETY: lseek on a descriptor we own
        let data = unsafe { libc::lseek(fd, pos, libc::SEEK_DATA) };
        if data < 0 {
            break; // ENXIO: no more data
        }
        // SAFETY: as above
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
    use crate::device::PAGE;

    fn path(tag: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("memstore-file-{}-{}", tag, std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d.join("e.img")
    }

    #[test]
    fn stored_pages_follow_writes_and_trims_across_reopen() {
        let p = path("stored");
        let size = 16 * PAGE_SIZE;
        let mut f = FileBackend::open(&p, size).unwrap();
        assert_eq!(f.stored_pages(), 0);
        f.write(PAGE_SIZE - 1, &[7; 2], true).unwrap(); // pages 0 and 1
        f.write(5 * PAGE_SIZE, &[8; PAGE], false).unwrap();
        assert_eq!(f.stored_pages(), 3);
        f.discard(0, PAGE_SIZE, false, true, false).unwrap(); // punch page 0
        f.discard(8 * PAGE_SIZE, PAGE_SIZE, true, false, false).unwrap(); // zero page 8
        assert_eq!(f.stored_pages(), 3); // 1, 5, 8
        f.flush().unwrap();
        drop(f);
        // pages 1 and 5 hold data; a zeroed range may read back as a hole
        let mut f = FileBackend::open(&p, size).unwrap();
        assert!((2..=3).contains(&f.stored_pages()), "{}", f.stored_pages());
        assert!(f.stored.get(1) && f.stored.get(5) && !f.stored.get(0));
        let mut b = [0u8; 2];
        f.read(PAGE_SIZE - 1, &mut b).unwrap();
        assert_eq!(b, [0, 7]);
        assert!(FileBackend::open(&p, size + PAGE_SIZE).is_err());
    }

    /// Bytes this thread made the kernel read from storage.
    fn thread_read_bytes() -> u64 {
        let io = std::fs::read_to_string("/proc/thread-self/io").unwrap();
        io.lines()
            .find_map(|l| l.strip_prefix("read_bytes: "))
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    }

    #[test]
    fn rewriting_pages_dropped_from_the_page_cache_reads_nothing_from_the_disk() {
        // on a disk (tmpfs pages cannot be dropped)
        let d = std::path::PathBuf::from(std::env::var_os("MEMSTORE_TEST_DISK_DIR").unwrap_or_else(|| "/var/tmp".into()))
            .join(format!("memstore-file-rewrite-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        let n = 256u64;
        let mut f = FileBackend::open(&d.join("e.img"), n * PAGE_SIZE).unwrap();
        let all: Vec<u64> = (0..n).collect();
        for p in 0..n {
            f.write(p * PAGE_SIZE, &[p as u8; PAGE], false).unwrap();
        }
        f.drop_cached(&all).unwrap();
        assert_eq!(f.cached_bytes(), 0);
        // whole pages replace what is on the disk without reading it
        let before = thread_read_bytes();
        for p in 0..n {
            f.write(p * PAGE_SIZE, &[p as u8 ^ 0xff; PAGE], false).unwrap();
        }
        assert_eq!(thread_read_bytes(), before);
        // the control: reading dropped pages does read the disk
        f.drop_cached(&all).unwrap();
        let mut buf = vec![0u8; (n * PAGE_SIZE) as usize];
        f.read(0, &mut buf).unwrap();
        assert!(thread_read_bytes() >= before + n * PAGE_SIZE / 2);
        for p in 0..n as usize {
            assert!(buf[p * PAGE..(p + 1) * PAGE].iter().all(|&b| b == p as u8 ^ 0xff), "page {}", p);
        }
        drop(f);
        let _ = std::fs::remove_dir_all(&d);
    }

    /// The bytes of `path` that the file system allocated.
    fn allocated(p: &Path) -> u64 {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(p).unwrap().blocks() * 512
    }

    #[test]
    fn never_written_pages_are_read_without_touching_the_file() {
        // on tmpfs (where a read fault on a hole allocates) when there is one
        let shm = Path::new("/dev/shm");
        let p = if shm.is_dir() {
            let d = shm.join(format!("memstore-file-holes-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&d);
            std::fs::create_dir_all(&d).unwrap();
            d.join("e.img")
        } else {
            path("holes")
        };
        let size = 64 * PAGE_SIZE;
        let mut f = FileBackend::open(&p, size).unwrap();
        f.write(3 * PAGE_SIZE + 10, &[9; 20], false).unwrap();
        f.write(40 * PAGE_SIZE, &[4; PAGE], false).unwrap();
        let before = allocated(&p);
        let mut buf = vec![1u8; size as usize];
        f.read(0, &mut buf).unwrap();
        // the data is there, every other byte is zero ...
        assert!(buf[3 * PAGE + 10..3 * PAGE + 30].iter().all(|&b| b == 9));
        assert!(buf[40 * PAGE..41 * PAGE].iter().all(|&b| b == 4));
        let nonzero = buf.iter().filter(|&&b| b != 0).count();
        assert_eq!(nonzero, 20 + PAGE);
        // ... and no hole was faulted in (on tmpfs a read fault on a hole
        // of a shared mapping allocates a page: SIGBUS when it is full)
        assert_eq!(allocated(&p), before);
        let mut odd = vec![1u8; 3 * PAGE + 7];
        f.read(PAGE_SIZE - 3, &mut odd).unwrap();
        assert_eq!(&odd[2 * PAGE + 13..2 * PAGE + 33], &[9; 20]);
        assert_eq!(allocated(&p), before);
        drop(f);
        let _ = std::fs::remove_dir_all(p.parent().unwrap());
    }
}
