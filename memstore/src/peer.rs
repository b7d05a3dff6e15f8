//! Who is on the other end of a unix socket (`SO_PEERCRED`), and who may
//! do what (doc/source/memstore.rst, "Trust model"):
//!
//! * the control socket: memstore's own uid, or root;
//! * an export's NBD socket: memstore's own uid or root (admin tools),
//!   and, when the export is bound to a pid (the QEMU that owns the VM,
//!   told by the agent), that pid only; an unbound export is open to
//!   whoever may connect to its socket (file mode and group).
//!
//! The credentials are the kernel's, taken when the peer connected: a
//! process cannot forge them.

use std::io;
use std::os::unix::io::AsRawFd;
use std::os::unix::net::UnixStream;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cred {
    pub pid: u32,
    pub uid: u32,
    pub gid: u32,
}

impl std::fmt::Display for Cred {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "pid {} uid {} gid {}", self.pid, self.uid, self.gid)
    }
}

pub fn peer_cred(s: &UnixStream) -> io::Result<Cred> {
    let mut c = libc::ucred { pid: 0, uid: 0, gid: 0 };
    let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
    // SAFETY: getsockopt writes at most `len` bytes into `c`
    let r = unsafe {
        libc::getsockopt(
            s.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_PEERCRED,
            &mut c as *mut libc::ucred as *mut libc::c_void,
            &mut len,
        )
    };
    if r != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(Cred {
        pid: c.pid as u32,
        uid: c.uid,
        gid: c.gid,
    })
}

pub fn own_uid() -> u32 {
    // SAFETY: geteuid cannot fail
    unsafe { libc::geteuid() }
}

/// Memstore's own user or root: the agent and admin tools.
pub fn is_admin(c: &Cred, own_uid: u32) -> bool {
    c.uid == own_uid || c.uid == 0
}

/// May `c` use the control socket?  Err: the reason it may not.
pub fn control_allowed(c: &Cred, own_uid: u32) -> Result<(), String> {
    if is_admin(c, own_uid) {
        Ok(())
    } else {
        Err(format!(
            "peer {} refused: the control socket is for uid {} (memstore's) and root",
            c, own_uid
        ))
    }
}

/// May `c` open an export bound to `bound` (None: unbound)?  Err: why not.
pub fn export_allowed(c: &Cred, own_uid: u32, bound: Option<u32>) -> Result<(), String> {
    match bound {
        _ if is_admin(c, own_uid) => Ok(()),
        None => Ok(()),
        Some(p) if p == c.pid => Ok(()),
        Some(p) => Err(format!("peer {} refused: the export is bound to pid {}", c, p)),
    }
}

/// Does process `pid` exist (a pid to bind to must)?
pub fn process_exists(pid: u32) -> bool {
    if pid == 0 || pid > i32::MAX as u32 {
        return false;
    }
    // SAFETY: signal 0 only checks that the process exists
    let r = unsafe { libc::kill(pid as i32, 0) };
    r == 0 || io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policy() {
        let me = 1000;
        let qemu = Cred {
            pid: 4242,
            uid: 64055,
            gid: 64055,
        };
        let other = Cred { pid: 4343, ..qemu };
        let agent = Cred {
            pid: 1,
            uid: 1000,
            gid: 1000,
        };
        let root = Cred { pid: 2, uid: 0, gid: 0 };
        assert!(control_allowed(&agent, me).is_ok());
        assert!(control_allowed(&root, me).is_ok());
        let e = control_allowed(&qemu, me).unwrap_err();
        assert!(e.contains("pid 4242 uid 64055"), "{}", e);
        assert!(export_allowed(&qemu, me, Some(4242)).is_ok());
        let e = export_allowed(&other, me, Some(4242)).unwrap_err();
        assert!(e.contains("bound to pid 4242") && e.contains("pid 4343"), "{}", e);
        assert!(export_allowed(&other, me, None).is_ok());
        assert!(export_allowed(&agent, me, Some(4242)).is_ok());
        assert!(export_allowed(&root, me, Some(4242)).is_ok());
    }

    #[test]
    fn credentials_of_a_socket_pair() {
        let (a, _b) = UnixStream::pair().unwrap();
        let c = peer_cred(&a).unwrap();
        assert_eq!((c.pid, c.uid), (std::process::id(), own_uid()));
        assert!(process_exists(std::process::id()));
        assert!(!process_exists(0));
        assert!(!process_exists(u32::MAX));
    }
}
