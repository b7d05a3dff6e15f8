//! File-system helpers for memstore's own files: private modes, the
//! state-directory lock, durable (fsync'd) atomic replacement.
//!
//! Everything memstore writes holds a guest's swapped-out memory or says
//! where it is, so files are 0600 and directories 0700 (0710 with the NBD
//! socket group when QEMU must traverse them); see doc/source/memstore.rst,
//! "Trust model".

use std::ffi::CString;
use std::fs::{self, DirBuilder, File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::os::unix::io::AsRawFd;
use std::path::Path;

pub const FILE_MODE: u32 = 0o600;
pub const DIR_MODE: u32 = 0o700;
/// A directory QEMU's group must traverse (to reach its NBD socket) but
/// not list.
pub const SHARED_DIR_MODE: u32 = 0o710;
pub const LOCK_FILE: &str = "memstore.lock";

fn cpath(path: &Path) -> io::Result<CString> {
    CString::new(path.as_os_str().as_bytes()).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "NUL in path"))
}

pub fn chmod(path: &Path, mode: u32) -> io::Result<()> {
    fs::set_permissions(path, fs::Permissions::from_mode(mode))
}

/// chown(path, -1, gid).
pub fn chgrp(path: &Path, gid: u32) -> io::Result<()> {
    let c = cpath(path)?;
    // SAFETY: a plain system call on a NUL-terminated path
    if unsafe { libc::chown(c.as_ptr(), u32::MAX, gid) } == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Create `path` (parents as usual) with `mode`, or bring an existing one
/// to `mode`; with `gid`, give it that group.  Returns whether the mode
/// of an existing directory was tightened.
pub fn ensure_dir(path: &Path, mode: u32, gid: Option<u32>) -> io::Result<bool> {
    if let Some(parent) = path.parent() {
        if !parent.as_os_str().is_empty() {
            fs::create_dir_all(parent)?;
        }
    }
    let mut changed = false;
    match DirBuilder::new().mode(mode).create(path) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
            if !fs::metadata(path)?.is_dir() {
                return Err(io::Error::new(
                    io::ErrorKind::AlreadyExists,
                    format!("{} is not a directory", path.display()),
                ));
            }
            changed = fs::metadata(path)?.permissions().mode() & 0o7777 != mode;
        }
        Err(e) => return Err(e),
    }
    if let Some(g) = gid {
        chgrp(path, g)?;
    }
    // mkdir applies the umask: set the mode explicitly either way
    chmod(path, mode)?;
    Ok(changed)
}

/// Open (creating it 0600) a file for reading and writing; an existing
/// file with a wider mode (made by an older memstore) is brought to 0600.
pub fn open_private(path: &Path) -> io::Result<File> {
    let f = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(FILE_MODE)
        .open(path)?;
    if f.metadata()?.permissions().mode() & 0o7777 != FILE_MODE {
        f.set_permissions(fs::Permissions::from_mode(FILE_MODE))?;
    }
    Ok(f)
}

pub fn fsync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

/// Replace `path` with `data` atomically and durably: a 0600 temporary
/// file, fsync'd, renamed over `path`, and the directory fsync'd (so the
/// rename itself survives a crash).  On error `path` is unchanged.
pub fn write_atomic(path: &Path, data: &[u8]) -> io::Result<()> {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".tmp");
    let tmp = path.with_file_name(name);
    let r = (|| {
        let mut f = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(FILE_MODE)
            .open(&tmp)?;
        f.write_all(data)?;
        f.sync_all()?;
        fs::rename(&tmp, path)
    })();
    if r.is_err() {
        let _ = fs::remove_file(&tmp);
        return r;
    }
    fsync_dir(path.parent().unwrap_or_else(|| Path::new(".")))
}

/// Remove `path` durably (the directory is fsync'd); a missing file is
/// not an error.
pub fn remove_durably(path: &Path) -> io::Result<()> {
    match fs::remove_file(path) {
        Ok(()) => fsync_dir(path.parent().unwrap_or_else(|| Path::new("."))),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

/// An exclusive `flock` on `<dir>/memstore.lock`, held as long as the
/// returned file is open (the kernel drops it when the process dies, so
/// a SIGKILLed memstore never leaves a stale lock).  The holder's pid is
/// written in the file so that a refused instance can name it.
pub fn lock_dir(dir: &Path) -> io::Result<File> {
    let path = dir.join(LOCK_FILE);
    let mut f = open_private(&path)?;
    // SAFETY: flock on a descriptor we own
    if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
        let e = io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EWOULDBLOCK) {
            return Err(e);
        }
        let mut s = String::new();
        let _ = f.read_to_string(&mut s);
        let holder = match s.trim().parse::<u32>() {
            Ok(pid) => format!("pid {}", pid),
            Err(_) => "pid unknown".to_string(),
        };
        return Err(io::Error::new(
            io::ErrorKind::AddrInUse,
            format!(
                "{} is in use by another memmut-memstore ({}): not starting",
                dir.display(),
                holder
            ),
        ));
    }
    f.set_len(0)?;
    f.seek(SeekFrom::Start(0))?;
    f.write_all(format!("{}\n", std::process::id()).as_bytes())?;
    f.sync_all()?;
    Ok(f)
}

/// The gid of group `name` (a name or a number).
pub fn group_id(name: &str) -> Option<u32> {
    if let Ok(n) = name.parse::<u32>() {
        return Some(n);
    }
    let c = CString::new(name).ok()?;
    // SAFETY: getgrnam returns a pointer to static storage or NULL; we
    // read one field at once, at start-up, before any thread exists
    let g = unsafe { libc::getgrnam(c.as_ptr()) };
    if g.is_null() {
        None
    } else {
        // SAFETY: non-null, as above
        Some(unsafe { (*g).gr_gid })
    }
}

/// Bytes of a page-aligned mapping resident in memory (mincore).
pub fn resident_bytes(map: &[u8]) -> u64 {
    let (ptr, len) = (map.as_ptr(), map.len());
    let page = 4096usize;
    if len == 0 || (ptr as usize) % page != 0 {
        return 0;
    }
    let mut total = 0u64;
    let mut vec = vec![0u8; 4096];
    let mut off = 0usize;
    while off < len {
        let n = std::cmp::min(len - off, vec.len() * page);
        // SAFETY: [ptr + off, ptr + off + n) lies in `map`; vec has a
        // byte per page of it; mincore only reads the page tables
        let r = unsafe { libc::mincore(ptr.add(off) as *mut libc::c_void, n, vec.as_mut_ptr()) };
        if r != 0 {
            return total;
        }
        let pages = (n + page - 1) / page;
        total += vec[..pages].iter().filter(|&&b| b & 1 != 0).count() as u64 * page as u64;
        off += n;
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmp(tag: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("memstore-fsutil-{}-{}", tag, std::process::id()));
        let _ = fs::remove_dir_all(&d);
        d
    }

    fn mode(p: &Path) -> u32 {
        fs::metadata(p).unwrap().permissions().mode() & 0o7777
    }

    #[test]
    fn private_dirs_and_files() {
        let d = tmp("modes");
        assert!(!ensure_dir(&d, DIR_MODE, None).unwrap());
        assert_eq!(mode(&d), 0o700);
        chmod(&d, 0o755).unwrap();
        assert!(ensure_dir(&d, DIR_MODE, None).unwrap()); // tightened
        assert_eq!(mode(&d), 0o700);
        let f = d.join("x");
        fs::write(&f, b"old").unwrap();
        chmod(&f, 0o644).unwrap();
        open_private(&f).unwrap();
        assert_eq!(mode(&f), 0o600);
        write_atomic(&d.join("y.json"), b"{}").unwrap();
        assert_eq!(mode(&d.join("y.json")), 0o600);
        assert!(!d.join("y.json.tmp").exists());
        remove_durably(&d.join("y.json")).unwrap();
        remove_durably(&d.join("y.json")).unwrap();
    }

    #[test]
    fn second_lock_names_the_holder() {
        let d = tmp("lock");
        ensure_dir(&d, DIR_MODE, None).unwrap();
        let held = lock_dir(&d).unwrap();
        let e = lock_dir(&d).unwrap_err();
        let msg = e.to_string();
        assert!(
            msg.contains(&format!("pid {}", std::process::id())) && msg.contains("in use"),
            "{}",
            msg
        );
        assert!(!msg.contains('\n'));
        drop(held);
        lock_dir(&d).unwrap();
    }
}

