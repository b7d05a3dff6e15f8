//! The few Linux system calls std does not wrap, declared against the C
//! library std already links (so the crate has no dependencies at all and
//! builds offline with Debian 12's Rust 1.63).  64-bit Linux only: off_t is
//! 64 bits there.

#[cfg(not(all(target_os = "linux", target_pointer_width = "64")))]
compile_error!("memmut-memstore supports 64-bit Linux only");

use std::os::raw::c_int;

pub const EIO: i32 = 5;
pub const ENOSPC: i32 = 28;
pub const FALLOC_FL_KEEP_SIZE: c_int = 0x01;
pub const FALLOC_FL_PUNCH_HOLE: c_int = 0x02;
pub const FALLOC_FL_ZERO_RANGE: c_int = 0x10;
pub const SEEK_DATA: c_int = 3;
pub const SEEK_HOLE: c_int = 4;
pub const SHUT_RDWR: c_int = 2;

extern "C" {
    pub fn fallocate(fd: c_int, mode: c_int, offset: i64, len: i64) -> c_int;
    pub fn lseek(fd: c_int, offset: i64, whence: c_int) -> i64;
    pub fn shutdown(fd: c_int, how: c_int) -> c_int;
}

pub const PROT_READ: c_int = 1;
pub const PROT_WRITE: c_int = 2;
pub const MAP_SHARED: c_int = 1;
pub const MADV_RANDOM: c_int = 1;

extern "C" {
    pub fn mmap(
        addr: *mut std::os::raw::c_void,
        len: usize,
        prot: c_int,
        flags: c_int,
        fd: c_int,
        offset: i64,
    ) -> *mut std::os::raw::c_void;
    pub fn munmap(addr: *mut std::os::raw::c_void, len: usize) -> c_int;
    pub fn madvise(addr: *mut std::os::raw::c_void, len: usize, advice: c_int) -> c_int;
}
