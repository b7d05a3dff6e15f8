//! Two memmut-memstore processes on 127.0.0.1: host B lends a slab, host
//! A's export swaps through it (issue 18, doc/source/remote-memory.rst).
//! Credentials are refused when they are missing or another allocation's,
//! a client cannot get more than the slab, and a SIGKILL of B while A
//! serves reads loses no page and detaches the slab within the remote
//! timeout.

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

const PAGE: usize = 4096;
const K1: &str = "1111111111111111111111111111111111111111111111111111111111111111";
const K2: &str = "2222222222222222222222222222222222222222222222222222222222222222";

struct Memstore {
    child: Child,
    dir: PathBuf,
}

impl Memstore {
    fn start(tag: &str, args: &[&str]) -> Memstore {
        let dir = std::env::temp_dir().join(format!("memstore-remote-{}-{}", tag, std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let child = Command::new(env!("CARGO_BIN_EXE_memmut-memstore"))
            .arg("--state-dir")
            .arg(&dir)
            .args(args)
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let m = Memstore { child, dir };
        let start = Instant::now();
        while UnixStream::connect(m.dir.join("control.sock")).is_err() {
            assert!(start.elapsed() < Duration::from_secs(10), "memstore did not start");
            thread::sleep(Duration::from_millis(20));
        }
        m
    }

    fn call(&self, req: Value) -> Value {
        let mut s = UnixStream::connect(self.dir.join("control.sock")).unwrap();
        let mut req = req;
        req["v"] = json!(1);
        s.write_all(format!("{}\n", req).as_bytes()).unwrap();
        let mut line = String::new();
        BufReader::new(s).read_line(&mut line).unwrap();
        serde_json::from_str(&line).unwrap()
    }

    fn ok(&self, req: Value) -> Value {
        let r = self.call(req.clone());
        assert_eq!(r["ok"], json!(true), "{} -> {}", req, r);
        r
    }

    fn kill(&mut self) {
        let _ = self.child.kill(); // SIGKILL
        let _ = self.child.wait();
    }
}

impl Drop for Memstore {
    fn drop(&mut self) {
        self.kill();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A minimal NBD client over the export's unix socket (QEMU's part).
struct Nbd {
    s: UnixStream,
    cookie: u64,
}

fn rd<const N: usize>(s: &mut impl Read) -> [u8; N] {
    let mut b = [0u8; N];
    s.read_exact(&mut b).unwrap();
    b
}

impl Nbd {
    fn connect(path: &Path) -> Nbd {
        let mut s = UnixStream::connect(path).unwrap();
        rd::<18>(&mut s);
        s.write_all(&3u32.to_be_bytes()).unwrap();
        let mut m = 0x4948_4156_454F_5054u64.to_be_bytes().to_vec();
        m.extend_from_slice(&7u32.to_be_bytes()); // GO
        m.extend_from_slice(&6u32.to_be_bytes());
        m.extend_from_slice(&[0, 0, 0, 0, 0, 0]);
        s.write_all(&m).unwrap();
        loop {
            let h = rd::<20>(&mut s);
            let kind = u32::from_be_bytes([h[12], h[13], h[14], h[15]]);
            let len = u32::from_be_bytes([h[16], h[17], h[18], h[19]]) as usize;
            let mut d = vec![0u8; len];
            s.read_exact(&mut d).unwrap();
            if kind == 1 {
                break;
            }
            assert_eq!(kind, 3, "NBD_OPT_GO refused");
        }
        Nbd { s, cookie: 0 }
    }

    fn req(&mut self, cmd: u16, off: u64, len: u32, data: &[u8]) -> u32 {
        self.cookie += 1;
        let mut m = 0x2560_9513u32.to_be_bytes().to_vec();
        m.extend_from_slice(&0u16.to_be_bytes());
        m.extend_from_slice(&cmd.to_be_bytes());
        m.extend_from_slice(&self.cookie.to_be_bytes());
        m.extend_from_slice(&off.to_be_bytes());
        m.extend_from_slice(&len.to_be_bytes());
        m.extend_from_slice(data);
        self.s.write_all(&m).unwrap();
        let h = rd::<16>(&mut self.s);
        assert_eq!(&h[8..], &self.cookie.to_be_bytes());
        u32::from_be_bytes([h[4], h[5], h[6], h[7]])
    }

    fn write(&mut self, off: u64, data: &[u8]) {
        assert_eq!(self.req(1, off, data.len() as u32, data), 0);
    }

    fn read(&mut self, off: u64, buf: &mut [u8]) -> u32 {
        let e = self.req(0, off, buf.len() as u32, &[]);
        if e == 0 {
            self.s.read_exact(buf).unwrap();
        }
        e
    }
}

fn content(page: u64, round: u64) -> Vec<u8> {
    let mut d = vec![((page * 7 + round) % 251) as u8; PAGE];
    d[..8].copy_from_slice(&page.to_le_bytes());
    d[8..16].copy_from_slice(&round.to_le_bytes());
    d
}

fn now() -> f64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs_f64()
}

/// Wait until export vm1's slab worker wrote every page placed so far
/// (the tests write in bursts below its queue, so none is skipped).
fn drained(a: &Memstore) {
    let start = Instant::now();
    loop {
        let s = a.ok(json!({"op": "stats", "name": "vm1"}));
        let written = s["slabs"][0]["remote_writes"].as_u64().unwrap();
        if written >= s["counters"]["remote_placed_pages"].as_u64().unwrap() {
            assert_eq!(s["counters"]["remote_skipped_pages"], json!(0), "{}", s);
            return;
        }
        assert!(start.elapsed() < Duration::from_secs(20), "{}", s);
        thread::sleep(Duration::from_millis(5));
    }
}

/// Wait until every thread of `pid` is in the stopped state ('T' in
/// /proc/PID/task/TID/stat).
fn all_threads_stopped(pid: i32) {
    let start = Instant::now();
    loop {
        let tasks = std::fs::read_dir(format!("/proc/{}/task", pid)).unwrap();
        let running = tasks.filter_map(|t| t.ok()).any(|t| {
            let stat = std::fs::read_to_string(t.path().join("stat")).unwrap_or_default();
            // the state follows the command, which is in parentheses
            let state = stat.rsplit_once(')').map(|(_, rest)| rest.trim_start().chars().next());
            !matches!(state, Some(Some('T')) | Some(Some('t')) | None)
        });
        if !running {
            return;
        }
        assert!(start.elapsed() < Duration::from_secs(10), "pid {} did not stop", pid);
        thread::sleep(Duration::from_millis(1));
    }
}

fn attach_req(id: &str, uri: &str, size: u64, identity: &str, key: &str) -> Value {
    json!({"op": "slab_attach", "name": "vm1", "id": id, "uri": uri, "size": size,
           "psk_identity": identity, "psk_key": key})
}

#[test]
fn a_slab_on_another_memstore_serves_pages_and_its_death_loses_none() {
    let mut b = Memstore::start("b", &["--remote-listen", "127.0.0.1:0", "--host-quota", "64M"]);
    let a = Memstore::start("a", &["--remote-timeout", "0.2", "--host-quota", "64M"]);
    let listen = b.ok(json!({"op": "hello"}))["remote_listen"].as_str().unwrap().to_string();
    let slab_pages = 1024u64;
    let size = slab_pages * PAGE as u64;
    for (id, key) in [("alloc-1", K1), ("alloc-2", K2)] {
        let r = b.ok(json!({"op": "slab_create", "id": id, "size": size,
                            "psk_identity": format!("memmut-alloc-{}", id), "psk_key": key}));
        assert_eq!(r["slab"]["uri"], json!(format!("nbds://{}/{}", listen, id)));
    }
    // the lender counts both slabs in its host's books
    assert_eq!(b.ok(json!({"op": "hello"}))["host_ram_bytes"], json!(2 * size));
    // every page overflows the RAM tier (quota 0) to the remote tier
    a.ok(json!({"op": "create", "name": "vm1", "size": 2 * size, "quota": 0}));
    let uri1 = format!("nbds://{}/alloc-1", listen);

    // refused: without TLS (a plain NBD client gets NBD_REP_ERR_TLS_REQD)
    let mut plain = TcpStream::connect(&listen).unwrap();
    rd::<18>(&mut plain);
    plain.write_all(&3u32.to_be_bytes()).unwrap();
    let mut go = 0x4948_4156_454F_5054u64.to_be_bytes().to_vec();
    go.extend_from_slice(&7u32.to_be_bytes());
    go.extend_from_slice(&13u32.to_be_bytes());
    go.extend_from_slice(&7u32.to_be_bytes());
    go.extend_from_slice(b"alloc-1");
    go.extend_from_slice(&[0, 0]);
    plain.write_all(&go).unwrap();
    let h = rd::<20>(&mut plain);
    assert_eq!(u32::from_be_bytes([h[12], h[13], h[14], h[15]]), 0x8000_0005);
    drop(plain);
    // refused: the wrong key, another allocation's credentials, more
    // than granted
    let r = a.call(attach_req("alloc-1", &uri1, size, "memmut-alloc-alloc-1", K2));
    assert!(r["error"].as_str().unwrap().contains("TLS"), "{}", r);
    let r = a.call(attach_req("alloc-1", &uri1, size, "memmut-alloc-alloc-2", K2));
    assert!(r["error"].as_str().unwrap().contains("refused"), "{}", r);
    let r = a.call(attach_req("alloc-1", &uri1, 2 * size, "memmut-alloc-alloc-1", K1));
    assert!(r["error"].as_str().unwrap().contains("granted"), "{}", r);
    thread::sleep(Duration::from_millis(100));
    let r = b.ok(json!({"op": "slabs"}));
    // no TLS, wrong key: before any slab; alloc-2's identity asking for
    // alloc-1: on alloc-2
    assert!(r["refused_handshakes"].as_u64().unwrap() >= 2, "{}", r);
    assert!(r["lent"][1]["refused"].as_u64().unwrap() >= 1, "{}", r);

    a.ok(attach_req("alloc-1", &uri1, size, "memmut-alloc-alloc-1", K1));
    let mut nbd = Nbd::connect(&a.dir.join("vm1.sock"));
    for p in 0..slab_pages {
        nbd.write(p * PAGE as u64, &content(p, 1));
        if (p + 1) % 256 == 0 {
            drained(&a);
        }
    }
    let s = a.ok(json!({"op": "stats", "name": "vm1"}));
    assert_eq!(s["slabs"][0]["remote_writes"], json!(slab_pages));
    assert_eq!(s["export"]["remote_pages"], json!(slab_pages));
    let mut buf = vec![0u8; 64 * PAGE];
    for chunk in 0..slab_pages / 64 {
        assert_eq!(nbd.read(chunk * 64 * PAGE as u64, &mut buf), 0);
        for i in 0..64 {
            let p = chunk * 64 + i as u64;
            assert_eq!(&buf[i * PAGE..(i + 1) * PAGE], &content(p, 1)[..], "page {}", p);
        }
    }
    let s = a.ok(json!({"op": "stats", "name": "vm1"}));
    assert!(s["counters"]["remote_hit_pages"].as_u64().unwrap() >= slab_pages, "{}", s);
    let touched = b.ok(json!({"op": "slabs"}))["lent"][0]["touched_bytes"].as_u64().unwrap();
    assert!(touched >= size / 2 && touched <= size, "touched {}", touched);

    // SIGKILL of B while A serves reads: no wrong page, no error
    let stop = Arc::new(AtomicBool::new(false));
    let (wrong, errors, reads) = (
        Arc::new(AtomicU64::new(0)),
        Arc::new(AtomicU64::new(0)),
        Arc::new(AtomicU64::new(0)),
    );
    let reader = {
        let (stop, wrong, errors, reads) = (stop.clone(), wrong.clone(), errors.clone(), reads.clone());
        let sock = a.dir.join("vm1.sock");
        thread::spawn(move || {
            let mut nbd = Nbd::connect(&sock);
            let mut buf = vec![0u8; 8 * PAGE];
            let mut p = 0u64;
            while !stop.load(Ordering::SeqCst) {
                if nbd.read(p * PAGE as u64, &mut buf) != 0 {
                    errors.fetch_add(1, Ordering::SeqCst);
                }
                for i in 0..8u64 {
                    let c = &buf[i as usize * PAGE..(i as usize + 1) * PAGE];
                    if c != &content(p + i, 1)[..] {
                        wrong.fetch_add(1, Ordering::SeqCst);
                    }
                }
                reads.fetch_add(1, Ordering::SeqCst);
                p = (p + 8) % slab_pages;
            }
        })
    };
    thread::sleep(Duration::from_millis(200));
    let killed = now();
    b.kill();
    let start = Instant::now();
    let failed_at = loop {
        let r = a.ok(json!({"op": "slabs"}));
        let att = &r["attached"][0];
        if att["state"] == json!("failed") {
            break att["failed_at"].as_f64().unwrap();
        }
        assert!(start.elapsed() < Duration::from_secs(5), "not detached: {}", r);
        thread::sleep(Duration::from_millis(10));
    };
    thread::sleep(Duration::from_millis(300));
    stop.store(true, Ordering::SeqCst);
    reader.join().unwrap();
    let detach = failed_at - killed;
    eprintln!(
        "lender SIGKILL -> slab detached in {:.1} ms; {} reads, {} wrong pages, {} errors",
        detach * 1e3,
        reads.load(Ordering::SeqCst),
        wrong.load(Ordering::SeqCst),
        errors.load(Ordering::SeqCst)
    );
    assert_eq!(wrong.load(Ordering::SeqCst), 0);
    assert_eq!(errors.load(Ordering::SeqCst), 0);
    assert!(detach <= 0.2, "detached after {:.3} s (remote timeout 0.2 s)", detach);
    let s = a.ok(json!({"op": "stats", "name": "vm1"}));
    assert_eq!(s["slabs"], json!([]));
    assert_eq!(s["export"]["remote_pages"], json!(0));
    // every page is still served, from the backing file
    for chunk in 0..2 * slab_pages / 64 {
        assert_eq!(nbd.read(chunk * 64 * PAGE as u64, &mut buf), 0);
        for i in 0..64 {
            let p = chunk * 64 + i as u64;
            if p < slab_pages {
                assert_eq!(&buf[i * PAGE..(i + 1) * PAGE], &content(p, 1)[..], "page {}", p);
            }
        }
    }
    assert_eq!(a.ok(json!({"op": "slab_detach", "id": "alloc-1"}))["detached"], json!(false));
}

/// A lender that stops answering without closing anything (SIGSTOP: as a
/// host that dies or a cut link, no RST): the read that waits for it is
/// served from the file once the remote timeout passes, and the slab is
/// detached then.
#[test]
fn a_silent_lender_costs_one_timeout_and_no_page() {
    let b = Memstore::start("b2", &["--remote-listen", "127.0.0.1:0"]);
    let a = Memstore::start("a2", &["--remote-timeout", "0.2"]);
    let listen = b.ok(json!({"op": "hello"}))["remote_listen"].as_str().unwrap().to_string();
    let pages = 64u64;
    let size = pages * PAGE as u64;
    b.ok(json!({"op": "slab_create", "id": "s", "size": size,
                "psk_identity": "memmut-alloc-s", "psk_key": K1}));
    a.ok(json!({"op": "create", "name": "vm1", "size": size, "quota": 0}));
    a.ok(attach_req("s", &format!("nbds://{}/s", listen), size, "memmut-alloc-s", K1));
    let mut nbd = Nbd::connect(&a.dir.join("vm1.sock"));
    for p in 0..pages {
        nbd.write(p * PAGE as u64, &content(p, 2));
    }
    drained(&a);
    assert_eq!(
        a.ok(json!({"op": "stats", "name": "vm1"}))["slabs"][0]["remote_writes"],
        json!(pages)
    );
    let pid = b.child.id() as i32;
    // SAFETY: a signal to our own child
    unsafe { libc::kill(pid, libc::SIGSTOP) };
    // kill() only queues the stop: a lender thread busy on a CPU (or on a
    // preempted vCPU of a loaded CI machine) answers on until it reaches
    // the kernel, and once 64 reads were served before it did (CI)
    all_threads_stopped(pid);
    let t = Instant::now();
    let mut buf = vec![0u8; PAGE];
    let mut slowest = Duration::ZERO;
    for p in 0..pages {
        let r = Instant::now();
        assert_eq!(nbd.read(p * PAGE as u64, &mut buf), 0);
        slowest = slowest.max(r.elapsed());
        assert_eq!(&buf[..], &content(p, 2)[..], "page {}", p);
    }
    let total = t.elapsed();
    let r = a.ok(json!({"op": "slabs"}));
    // SAFETY: as above
    unsafe { libc::kill(pid, libc::SIGCONT) };
    eprintln!("silent lender: slowest read {:?}, all {} pages in {:?}", slowest, pages, total);
    assert_eq!(r["attached"][0]["state"], json!("failed"), "{}", r);
    assert!(slowest < Duration::from_millis(450), "{:?}", slowest);
    assert!(total < Duration::from_millis(600), "{:?}", total);
}
