//! memmut-memstore: serves each VM's swap disk over NBD from host RAM with a
//! local backing file, and reports swap traffic (Geiger reuse distances) on
//! a control socket.  See doc/source/memstore.rst.

use memstore::control;
use memstore::fsutil;
use memstore::log::{error, info};
use memstore::server::{Options, Server};
use std::path::PathBuf;
use std::process::exit;

const USAGE: &str = "\
usage: memmut-memstore --state-dir DIR [options]

  --state-dir DIR      export configurations and backing files (required)
  --socket-dir DIR     control.sock and one <export>.sock per export
                       (default: the state dir)
  --host-quota SIZE    RAM all exports may use together (default 1G)
  --bucket-pages N     default reuse-distance histogram bucket, in 4 KiB
                       pages (default 256 = 1 MiB)
  --event-ring N       recent page events kept per export (default 65536)
  --nbd-socket-group GROUP
                       group (name or gid) that may connect to the export
                       sockets (QEMU's): they are then 0660 and the socket
                       dir 0710; without it they are 0600 (memstore's user
                       only).  The control socket is always 0600.
  --max-connections N  NBD connections open at once, all exports
                       together; more are refused, logged (default 256)
  --handshake-timeout SECONDS
                       time a client has to finish the NBD handshake
                       (default 10; 0: no limit)
  --request-buffer-budget SIZE
                       memory for READ/WRITE buffers in flight, all
                       connections together; requests are served in chunks
                       of at most 1 MiB that wait for it (default 64M)
  --remote-listen ADDR:PORT
                       serve slabs (remote memory lent to other hosts'
                       memstores) over NBD + TLS 1.3 PSK on this TCP
                       address (default: off; port 0 picks one, logged and
                       in `hello`)
  --remote-timeout SECONDS
                       deadline of each request to a slab this host uses;
                       a slab that misses it is detached (default 0.2)
  --remote-dirty-window SIZE
                       page cache that the backing file's copies of pages
                       placed on slabs may hold, per export: they are
                       written back and dropped from the page cache in
                       halves of SIZE (default 64M; 0: no bound, at least
                       64K otherwise)
  --pidfile PATH       write the process id there once serving
  --version            print the version and exit

SIZE takes a K, M, G or T suffix (powers of 1024).";

fn parse_size(s: &str) -> Option<u64> {
    let s = s.trim();
    let (num, mult) = match s.chars().last()? {
        'k' | 'K' => (&s[..s.len() - 1], 1u64 << 10),
        'm' | 'M' => (&s[..s.len() - 1], 1 << 20),
        'g' | 'G' => (&s[..s.len() - 1], 1 << 30),
        't' | 'T' => (&s[..s.len() - 1], 1 << 40),
        _ => (s, 1),
    };
    num.parse::<u64>().ok()?.checked_mul(mult)
}

fn die(msg: &str) -> ! {
    eprintln!("memmut-memstore: {}\n\n{}", msg, USAGE);
    exit(2)
}

fn main() {
    let mut state_dir: Option<PathBuf> = None;
    let mut socket_dir: Option<PathBuf> = None;
    let mut host_quota: u64 = 1 << 30;
    let mut bucket_pages: u64 = 256;
    let mut event_ring: usize = 65536;
    let mut pidfile: Option<PathBuf> = None;
    let mut nbd_socket_gid: Option<u32> = None;
    let mut limits = memstore::limits::Limits::default();
    let mut remote_listen: Option<std::net::SocketAddr> = None;
    let mut remote_timeout = memstore::remote::DEFAULT_TIMEOUT;
    let mut remote_dirty_window = memstore::remote::DEFAULT_DIRTY_WINDOW;
    // nothing memstore creates is for other users unless said so
    // SAFETY: umask(2) cannot fail
    unsafe {
        libc::umask(0o077);
    }
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let (key, inline) = match a.split_once('=') {
            Some((k, v)) if k.starts_with("--") => (k.to_string(), Some(v.to_string())),
            _ => (a.clone(), None),
        };
        let mut value = || {
            inline
                .clone()
                .or_else(|| args.next())
                .unwrap_or_else(|| die(&format!("{} needs a value", key)))
        };
        match key.as_str() {
            "--state-dir" => state_dir = Some(PathBuf::from(value())),
            "--socket-dir" => socket_dir = Some(PathBuf::from(value())),
            "--host-quota" => {
                let v = value();
                host_quota = parse_size(&v).unwrap_or_else(|| die(&format!("bad --host-quota {:?}", v)))
            }
            "--bucket-pages" => {
                let v = value();
                bucket_pages = v
                    .parse()
                    .ok()
                    .filter(|n| *n > 0)
                    .unwrap_or_else(|| die(&format!("bad --bucket-pages {:?}", v)))
            }
            "--event-ring" => {
                let v = value();
                event_ring = v
                    .parse()
                    .unwrap_or_else(|_| die(&format!("bad --event-ring {:?}", v)))
            }
            "--nbd-socket-group" => {
                let v = value();
                nbd_socket_gid = Some(
                    fsutil::group_id(&v).unwrap_or_else(|| die(&format!("bad --nbd-socket-group {:?}: no such group", v))),
                )
            }
            "--max-connections" => {
                let v = value();
                limits.max_connections = v
                    .parse()
                    .ok()
                    .filter(|n| *n > 0)
                    .unwrap_or_else(|| die(&format!("bad --max-connections {:?}", v)))
            }
            "--handshake-timeout" => {
                let v = value();
                limits.handshake_timeout = v
                    .parse::<f64>()
                    .ok()
                    .filter(|s| s.is_finite() && *s >= 0.0 && *s <= 86400.0)
                    .map(std::time::Duration::from_secs_f64)
                    .unwrap_or_else(|| die(&format!("bad --handshake-timeout {:?}", v)))
            }
            "--request-buffer-budget" => {
                let v = value();
                limits.request_buffer_budget = parse_size(&v)
                    .filter(|n| *n >= 4096)
                    .unwrap_or_else(|| die(&format!("bad --request-buffer-budget {:?} (at least 4K)", v)))
            }
            "--remote-listen" => {
                let v = value();
                remote_listen = Some(
                    v.parse::<std::net::SocketAddr>()
                        .unwrap_or_else(|_| die(&format!("bad --remote-listen {:?} (ADDR:PORT, [v6]:PORT)", v))),
                )
            }
            "--remote-timeout" => {
                let v = value();
                remote_timeout = v
                    .parse::<f64>()
                    .ok()
                    .filter(|s| s.is_finite() && *s > 0.0 && *s <= 60.0)
                    .map(std::time::Duration::from_secs_f64)
                    .unwrap_or_else(|| die(&format!("bad --remote-timeout {:?} (seconds, 0 < t <= 60)", v)))
            }
            "--remote-dirty-window" => {
                let v = value();
                remote_dirty_window = parse_size(&v)
                    .filter(|n| *n == 0 || *n >= 64 << 10)
                    .unwrap_or_else(|| die(&format!("bad --remote-dirty-window {:?} (0, or at least 64K)", v)))
            }
            "--pidfile" => pidfile = Some(PathBuf::from(value())),
            "--version" => {
                println!(
                    "memmut-memstore {} (control protocol {})",
                    env!("CARGO_PKG_VERSION"),
                    control::PROTOCOL_VERSION
                );
                return;
            }
            "-h" | "--help" => {
                println!("{}", USAGE);
                return;
            }
            other => die(&format!("unknown argument {:?}", other)),
        }
    }
    let state_dir = state_dir.unwrap_or_else(|| die("--state-dir is required"));
    let socket_dir = socket_dir.unwrap_or_else(|| state_dir.clone());
    let opts = Options {
        state_dir,
        socket_dir,
        host_quota,
        bucket_pages,
        event_ring,
        nbd_socket_gid,
        limits,
        remote_listen,
        remote_timeout,
        remote_dirty_window,
    };
    let server = match Server::new(opts.clone()) {
        Ok(s) => s,
        Err(e) if e.kind() == std::io::ErrorKind::AddrInUse => {
            // another instance holds the directories: say who, one line
            eprintln!("memmut-memstore: {}", e);
            exit(1)
        }
        Err(e) => {
            error(&format!(
                "cannot create {} / {}: {}",
                opts.state_dir.display(),
                opts.socket_dir.display(),
                e
            ));
            exit(1)
        }
    };
    let restored = server.load_all();
    let control_path = opts.socket_dir.join("control.sock");
    let listener = match server.bind_control() {
        Ok(l) => l,
        Err(e) => {
            error(&format!("cannot listen on {}: {}", control_path.display(), e));
            exit(1)
        }
    };
    let remote = match server.bind_remote() {
        Ok(r) => r,
        Err(e) => {
            error(&format!("cannot listen on --remote-listen {:?}: {}", opts.remote_listen, e));
            exit(1)
        }
    };
    if let Some((rs, l)) = remote {
        info(&format!(
            "serving slabs on {} (NBD, TLS 1.3 PSK)",
            l.local_addr().map(|a| a.to_string()).unwrap_or_default()
        ));
        let spawned = std::thread::Builder::new()
            .name("slab-accept".into())
            .spawn(move || memstore::slab::serve(rs, l));
        if let Err(e) = spawned {
            error(&format!("cannot start the slab server: {}", e));
            exit(1)
        }
    }
    if let Some(p) = &pidfile {
        if let Err(e) = std::fs::write(p, format!("{}\n", std::process::id())) {
            error(&format!("cannot write pidfile {}: {}", p.display(), e));
            exit(1)
        }
    }
    info(&format!(
        "memmut-memstore {} serving: control socket {}, state dir {}, host RAM quota {} bytes, {} export(s) restored",
        env!("CARGO_PKG_VERSION"),
        control_path.display(),
        opts.state_dir.display(),
        host_quota,
        restored
    ));
    control::serve(server, listener);
}

#[cfg(test)]
mod tests {
    use super::parse_size;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("4096"), Some(4096));
        assert_eq!(parse_size("2M"), Some(2 << 20));
        assert_eq!(parse_size("1g"), Some(1 << 30));
        assert_eq!(parse_size("x"), None);
        assert_eq!(parse_size("99999999999T"), None);
    }
}
