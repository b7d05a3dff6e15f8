//! The control socket: line-delimited JSON, protocol version 1.
//!
//! Each request is one JSON object on one line, with `"v": 1` and an `"op"`;
//! each reply is one JSON object on one line: `{"v": 1, "ok": true, ...}` or
//! `{"v": 1, "ok": false, "error": "why"}`.  The full message reference is
//! in doc/source/memstore.rst; memmut/memstore/client.py is the Python
//! client.

use crate::device::PAGE_SIZE;
use crate::export::Export;
use crate::geiger::{unix_now, Geiger, Histogram};
use crate::log::{info, warn};
use crate::monitor::Counters;
use crate::ram::RamCounters;
use crate::remote::{RemoteCounters, SlabInfo};
use crate::slab::Slab;
use crate::server::Server;
use serde::Serialize;
use serde_json::{json, Map, Value};
use std::io::{self, BufRead, BufReader, Read, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::thread;

pub const PROTOCOL_VERSION: u64 = 1;
/// Longest request line accepted.
pub const MAX_LINE: usize = 1 << 20;
pub const MAX_EVENTS: usize = 65536;

fn export_info(server: &Server, e: &Export) -> Value {
    let g = e.lock();
    json!({
        "name": e.name,
        "size": e.size,
        "socket": server.socket_path(&e.name).to_string_lossy(),
        "backing_file": e.backing_path.to_string_lossy(),
        "quota": g.ram().quota(),
        "ram_bytes": g.ram().ram_bytes(),
        "stored_bytes": g.file().stored_pages() * PAGE_SIZE,
        "remote_pages": g.remote().remote_pages(),
        "clients": e.clients.load(Ordering::SeqCst),
        "pid": e.bound_pid(),
        "connections": e.connections.load(Ordering::SeqCst),
        "last_io": g.counters.last_io,
    })
}

/// The `counters` of a stats reply: the monitor layer's, the RAM tier's
/// and the remote tier's.
#[derive(Serialize)]
struct StatsCounters<'a> {
    #[serde(flatten)]
    requests: &'a Counters,
    #[serde(flatten)]
    ram: &'a RamCounters,
    #[serde(flatten)]
    remote: &'a RemoteCounters,
}

/// A slab this host lends, as `slab_create` and `slabs` show it.
fn lent_info(server: &Server, s: &Slab) -> Value {
    json!({
        "id": s.id,
        "size": s.size,
        "psk_identity": s.identity,
        "uri": server.slab_uri(&s.id),
        "clients": s.clients.load(Ordering::SeqCst),
        "connections": s.counters.connections.load(Ordering::Relaxed),
        "refused": s.counters.refused.load(Ordering::Relaxed),
        "requests": s.counters.requests.load(Ordering::Relaxed),
        "touched_bytes": s.touched_bytes(),
        "created": s.created,
    })
}

/// A slab an export uses.
fn attached_info(export: &str, i: &SlabInfo) -> Value {
    let mut v = json!(i);
    v["export"] = json!(export);
    v
}

fn histogram_json(m: &Geiger, h: &Histogram, cold: u64, percent: f64) -> Value {
    let buckets: Vec<[u64; 2]> = h.buckets.iter().map(|(b, n)| [*b, *n]).collect();
    json!({
        "histogram": buckets,
        "swap_ins": h.total,
        "cold": cold,
        "extra_bytes": m.extra_bytes(h, percent),
    })
}

type Request = Map<String, Value>;

fn field_u64(req: &Request, k: &str) -> Result<Option<u64>, String> {
    match req.get(k) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v
            .as_u64()
            .map(Some)
            .ok_or_else(|| format!("{} must be a non-negative integer", k)),
    }
}

/// `pid`: a process id (1 .. 2^31 - 1) or null/absent.
fn field_pid(req: &Request) -> Result<Option<u32>, String> {
    match field_u64(req, "pid")? {
        None => Ok(None),
        Some(p) if p >= 1 && p <= i32::MAX as u64 => Ok(Some(p as u32)),
        Some(p) => Err(format!("pid {} out of range", p)),
    }
}

fn need_u64(req: &Request, k: &str) -> Result<u64, String> {
    field_u64(req, k)?.ok_or_else(|| format!("missing {}", k))
}

fn need_str<'a>(req: &'a Request, k: &str) -> Result<&'a str, String> {
    req.get(k)
        .and_then(|v| v.as_str())
        .ok_or_else(|| format!("missing or non-string {}", k))
}

fn field_bool(req: &Request, k: &str) -> Result<bool, String> {
    match req.get(k) {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        _ => Err(format!("{} must be true or false", k)),
    }
}

/// A control request, parsed and checked (types and ranges; whether the
/// export exists is the server's business).
#[derive(Clone, Debug, PartialEq)]
pub enum Op {
    Hello,
    Create {
        name: String,
        size: u64,
        quota: Option<u64>,
        bucket_pages: Option<u64>,
        pid: Option<u32>,
    },
    Bind {
        name: String,
        pid: Option<u32>,
    },
    Delete {
        name: String,
        force: bool,
    },
    List,
    SetQuota {
        name: String,
        quota: u64,
    },
    SetHostQuota {
        quota: u64,
    },
    Stats {
        name: String,
        reset: bool,
        percentile: f64,
    },
    Events {
        name: String,
        since: u64,
        max: usize,
    },
    SlabCreate {
        id: String,
        size: u64,
        psk_identity: String,
        psk_key: String,
    },
    SlabDelete {
        id: String,
    },
    SlabAttach {
        name: String,
        id: String,
        uri: String,
        size: u64,
        psk_identity: String,
        psk_key: String,
        timeout_ms: Option<u64>,
        dirty_window: Option<u64>,
    },
    SlabDetach {
        id: String,
    },
    Slabs,
}

/// How an Op shows in logs: keys never appear.
pub fn redacted(line: &[u8]) -> String {
    match serde_json::from_slice::<Value>(line) {
        Ok(Value::Object(mut m)) => {
            if m.contains_key("psk_key") {
                m.insert("psk_key".into(), Value::String("<hidden>".into()));
            }
            Value::Object(m).to_string()
        }
        _ => String::from_utf8_lossy(line).trim().to_string(),
    }
}

/// Check a request object's version and fields: a pure function (no
/// server), fuzzed by memstore/fuzz.
pub fn parse_request(req: &Request) -> Result<Op, String> {
    match req.get("v") {
        Some(v) if v.as_u64() == Some(PROTOCOL_VERSION) => {}
        Some(v) => {
            return Err(format!(
                "unsupported protocol version {}; this server speaks {}",
                v, PROTOCOL_VERSION
            ))
        }
        None => return Err("missing protocol version \"v\"".into()),
    }
    let name = || need_str(req, "name").map(str::to_string);
    Ok(match need_str(req, "op")? {
        "hello" => Op::Hello,
        "create" => Op::Create {
            name: name()?,
            size: need_u64(req, "size")?,
            quota: field_u64(req, "quota")?,
            bucket_pages: field_u64(req, "bucket_pages")?,
            pid: field_pid(req)?,
        },
        "bind" => {
            let name = name()?;
            if !req.contains_key("pid") {
                return Err("missing pid (a process id, or null to unbind)".into());
            }
            Op::Bind {
                name,
                pid: field_pid(req)?,
            }
        }
        "delete" => Op::Delete {
            name: name()?,
            force: field_bool(req, "force")?,
        },
        "list" => Op::List,
        "set_quota" => Op::SetQuota {
            name: name()?,
            quota: need_u64(req, "quota")?,
        },
        "set_host_quota" => Op::SetHostQuota {
            quota: need_u64(req, "quota")?,
        },
        "stats" => {
            let name = name()?;
            let percentile = match req.get("percentile") {
                None | Some(Value::Null) => 95.0,
                Some(v) => v
                    .as_f64()
                    .filter(|p| *p > 0.0 && *p <= 100.0)
                    .ok_or("percentile must be in (0, 100]")?,
            };
            Op::Stats {
                name,
                reset: field_bool(req, "reset")?,
                percentile,
            }
        }
        "events" => Op::Events {
            name: name()?,
            since: field_u64(req, "since")?.unwrap_or(0),
            max: std::cmp::min(field_u64(req, "max")?.unwrap_or(4096), MAX_EVENTS as u64) as usize,
        },
        "slab_create" => Op::SlabCreate {
            id: need_str(req, "id")?.to_string(),
            size: need_u64(req, "size")?,
            psk_identity: need_str(req, "psk_identity")?.to_string(),
            psk_key: need_str(req, "psk_key")?.to_string(),
        },
        "slab_delete" => Op::SlabDelete {
            id: need_str(req, "id")?.to_string(),
        },
        "slab_attach" => Op::SlabAttach {
            name: name()?,
            id: need_str(req, "id")?.to_string(),
            uri: need_str(req, "uri")?.to_string(),
            size: need_u64(req, "size")?,
            psk_identity: need_str(req, "psk_identity")?.to_string(),
            psk_key: need_str(req, "psk_key")?.to_string(),
            timeout_ms: match field_u64(req, "timeout_ms")? {
                Some(t) if t == 0 || t > 60_000 => return Err("timeout_ms must be in 1..60000".into()),
                t => t,
            },
            dirty_window: match field_u64(req, "dirty_window")? {
                Some(w) if w != 0 && w < 64 << 10 => return Err("dirty_window must be 0 or at least 65536".into()),
                w => w,
            },
        },
        "slab_detach" => Op::SlabDetach {
            id: need_str(req, "id")?.to_string(),
        },
        "slabs" => Op::Slabs,
        other => return Err(format!("unknown op {:?}", other)),
    })
}

/// Parse one request line (JSON object) into an `Op`: pure.
pub fn parse_line(line: &[u8]) -> Result<Op, String> {
    match serde_json::from_slice::<Value>(line) {
        Ok(Value::Object(req)) => parse_request(&req),
        Ok(_) => Err("a request must be a JSON object".into()),
        Err(e) => Err(format!("malformed JSON: {}", e)),
    }
}

/// Handle one request object; returns the reply's fields (without v/ok).
pub fn handle(server: &Arc<Server>, req: &Request) -> Result<Value, String> {
    execute(server, parse_request(req)?)
}

fn execute(server: &Arc<Server>, op: Op) -> Result<Value, String> {
    let out = match op {
        Op::Hello => json!({
            "server": "memmut-memstore",
            "version": env!("CARGO_PKG_VERSION"),
            "protocol": PROTOCOL_VERSION,
            "pid": std::process::id(),
            "host_quota": server.host.quota.load(Ordering::SeqCst),
            "host_ram_bytes": server.host.used.load(Ordering::SeqCst),
            "exports": server.names().len(),
            "state_dir": server.opts.state_dir.to_string_lossy(),
            "socket_dir": server.opts.socket_dir.to_string_lossy(),
            "remote_listen": server.slabs.listen_addr().map(|a| a.to_string()),
            "lent_bytes": server.slabs.lent_bytes(),
        }),
        Op::Create {
            name,
            size,
            quota,
            bucket_pages,
            pid,
        } => {
            let (e, created) = server.create(&name, size, quota, bucket_pages, pid)?;
            json!({"created": created, "export": export_info(server, &e)})
        }
        Op::SlabCreate {
            id,
            size,
            psk_identity,
            psk_key,
        } => {
            let (slab, created) = server.slabs.create(&id, size, &psk_identity, &psk_key)?;
            json!({
                "created": created,
                "slab": lent_info(server, &slab),
            })
        }
        Op::SlabDelete { id } => json!({ "deleted": server.slabs.delete(&id) }),
        Op::SlabAttach {
            name,
            id,
            uri,
            size,
            psk_identity,
            psk_key,
            timeout_ms,
            dirty_window,
        } => {
            let t = timeout_ms.map(std::time::Duration::from_millis);
            let info = server.slab_attach(&name, &id, &uri, size, &psk_identity, &psk_key, t, dirty_window)?;
            json!({ "slab": attached_info(&name, &info) })
        }
        Op::SlabDetach { id } => json!({ "detached": server.slab_detach(&id) }),
        Op::Slabs => {
            let lent: Vec<Value> = server.slabs.list().iter().map(|s| lent_info(server, s)).collect();
            let attached: Vec<Value> = server
                .attached_slabs()
                .iter()
                .map(|(n, i)| attached_info(n, i))
                .collect();
            json!({
                "remote_listen": server.slabs.listen_addr().map(|a| a.to_string()),
                "lent_bytes": server.slabs.lent_bytes(),
                "refused_handshakes": server.slabs.refused_handshakes.load(Ordering::Relaxed),
                "lent": lent,
                "attached": attached,
            })
        }
        Op::Bind { name, pid } => {
            server.bind_export(&name, pid)?;
            json!({})
        }
        Op::Delete { name, force } => {
            server.delete(&name, force)?;
            json!({})
        }
        Op::List => {
            let list: Vec<Value> = server
                .names()
                .iter()
                .filter_map(|n| server.get(n))
                .map(|e| export_info(server, &e))
                .collect();
            json!({ "exports": list })
        }
        Op::SetQuota { name, quota } => {
            let n = server.set_export_quota(&name, quota)?;
            json!({ "evicted_pages": n })
        }
        Op::SetHostQuota { quota } => {
            let freed = server.set_host_quota(quota);
            json!({ "evicted_bytes": freed })
        }
        Op::Stats {
            name,
            reset,
            percentile: percent,
        } => {
            let e = server.get(&name).ok_or_else(|| format!("no export {}", name))?;
            let export = export_info(server, &e);
            let mut g = e.lock();
            g.remote_mut().reap();
            let counters = json!(StatsCounters {
                requests: &g.counters,
                ram: &g.ram().counters,
                remote: &g.remote().counters,
            });
            let slabs: Vec<Value> = g.remote().slabs().iter().map(|i| json!(i)).collect();
            let now = unix_now();
            let m = &g.geiger;
            let mut mon = json!({
                "bucket_pages": m.bucket_pages,
                "percentile": percent,
                "swap_out_pages": m.swap_outs,
                "swap_in_pages": m.swap_ins,
                "queue_pages": m.queue_len(),
                "interval_started": m.interval_started,
                "interval_seconds": now - m.interval_started,
                "interval": histogram_json(m, &m.interval, m.interval_cold, percent),
                "cumulative": histogram_json(m, &m.cumulative, m.cumulative_cold, percent),
            });
            if reset {
                g.geiger.reset_interval();
                mon["reset"] = Value::Bool(true);
            }
            json!({"export": export, "counters": counters, "monitor": mon, "slabs": slabs})
        }
        Op::Events { name, since, max } => {
            let e = server.get(&name).ok_or_else(|| format!("no export {}", name))?;
            let g = e.lock();
            let first = g.geiger.first_seq();
            let (events, next) = g.geiger.events_since(since, max);
            let list: Vec<Value> = events
                .iter()
                .map(|ev| json!([ev.seq, ev.op.code(), ev.page]))
                .collect();
            json!({
                "events": list,
                "first": first,
                "next": next,
                "lost": first.saturating_sub(since),
            })
        }
    };
    Ok(out)
}

/// `{"v": 1, "ok": true, <fields>}` or `{"v": 1, "ok": false, "error": why}`, one line.
pub fn reply_line(result: Result<Value, String>) -> String {
    let (ok, mut reply) = match result {
        Ok(fields) => (true, fields),
        Err(e) => (false, json!({ "error": e })),
    };
    reply["v"] = json!(PROTOCOL_VERSION);
    reply["ok"] = json!(ok);
    let mut s = reply.to_string();
    s.push('\n');
    s
}

/// Parse and handle one request line.
pub fn handle_line(server: &Arc<Server>, line: &[u8]) -> String {
    let r = parse_line(line).and_then(|op| execute(server, op));
    if let Err(e) = &r {
        warn(&format!("control: request {} failed: {}", redacted(line), e));
    }
    reply_line(r)
}

fn serve_client(server: Arc<Server>, stream: UnixStream) -> io::Result<()> {
    let mut w = stream.try_clone()?;
    let mut r = BufReader::new(stream);
    let mut line = Vec::new();
    loop {
        line.clear();
        // bounded read of one line
        let n = (&mut r).take(MAX_LINE as u64 + 1).read_until(b'\n', &mut line)?;
        if n == 0 {
            return Ok(());
        }
        if line.len() > MAX_LINE {
            w.write_all(reply_line(Err(format!("request longer than {} bytes", MAX_LINE))).as_bytes())?;
            return Ok(());
        }
        if line.iter().all(|b| b.is_ascii_whitespace()) {
            continue;
        }
        w.write_all(handle_line(&server, &line).as_bytes())?;
    }
}

pub fn serve(server: Arc<Server>, listener: UnixListener) {
    for stream in listener.incoming() {
        match stream {
            Ok(mut s) => {
                // only memstore's user and root: the agent, admin tools
                let verdict = crate::peer::peer_cred(&s)
                    .map_err(|e| format!("cannot read peer credentials: {}", e))
                    .and_then(|c| crate::peer::control_allowed(&c, crate::peer::own_uid()));
                if let Err(why) = verdict {
                    warn(&format!("control: {}", why));
                    let _ = s.write_all(reply_line(Err(why)).as_bytes());
                    continue;
                }
                let srv = server.clone();
                let _ = thread::Builder::new().name("control".into()).spawn(move || {
                    if let Err(e) = serve_client(srv, s) {
                        info(&format!("control: client connection ended: {}", e));
                    }
                });
            }
            Err(e) => warn(&format!("control: accept failed: {}", e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::Device;
    use crate::server::Options;

    fn server(tag: &str) -> Arc<Server> {
        let d = std::env::temp_dir().join(format!("memstore-ctl-{}-{}", tag, std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        Server::new(Options {
            bucket_pages: 1,
            event_ring: 100,
            ..Options::new(d.join("state"), d.clone())
        })
        .unwrap()
    }

    fn j(s: &str) -> Value {
        serde_json::from_str(s).unwrap()
    }

    fn call(s: &Arc<Server>, line: &str) -> Value {
        serde_json::from_str(&handle_line(s, line.as_bytes())).unwrap()
    }

    #[test]
    fn reply_lines() {
        assert_eq!(
            reply_line(Err("why".into())),
            "{\"error\":\"why\",\"ok\":false,\"v\":1}\n"
        );
        let ok = reply_line(Ok(json!({"x": [1, 2.5], "s": "a\"b"})));
        assert_eq!(ok, "{\"ok\":true,\"s\":\"a\\\"b\",\"v\":1,\"x\":[1,2.5]}\n");
        assert_eq!(
            reply_line(Ok(json!({"t": 0.0}))),
            "{\"ok\":true,\"t\":0.0,\"v\":1}\n"
        );
    }

    #[test]
    fn requests_and_errors() {
        let s = server("req");
        let r = call(&s, r#"{"v":1,"op":"hello"}"#);
        assert_eq!((r["ok"].clone(), r["protocol"].clone()), (j("true"), j("1")));
        assert_eq!(call(&s, r#"{"v":2,"op":"hello"}"#)["ok"], Value::from(false));
        assert_eq!(call(&s, r#"{"op":"hello"}"#)["ok"], Value::from(false));
        assert!(call(&s, "not json")["error"]
            .as_str()
            .unwrap()
            .contains("malformed"));
        assert_eq!(call(&s, "[1]")["ok"], Value::from(false));
        assert_eq!(call(&s, r#"{"v":1,"op":"nope"}"#)["ok"], Value::from(false));
        assert_eq!(
            call(&s, r#"{"v":1,"op":"create","name":"../x","size":4096}"#)["ok"],
            Value::from(false)
        );
        assert_eq!(
            call(&s, r#"{"v":1,"op":"create","name":"a","size":-1}"#)["ok"],
            Value::from(false)
        );
        let r = call(
            &s,
            r#"{"v":1,"op":"create","name":"a","size":1048576,"quota":8192}"#,
        );
        assert_eq!(r["created"], j(r#"true"#), "{}", r);
        assert_eq!(r["export"]["quota"], Value::from(8192));
        let r = call(&s, r#"{"v":1,"op":"create","name":"a","size":1048576}"#);
        assert_eq!(r["created"], Value::from(false));
        assert_eq!(
            call(&s, r#"{"v":1,"op":"create","name":"a","size":4096}"#)["ok"],
            Value::from(false)
        );
        let e = s.get("a").unwrap();
        for p in 0..4u64 {
            e.lock().write(p * 4096, &[1; 4096], false).unwrap();
        }
        let mut b = [0u8; 4096];
        e.lock().read(0, &mut b).unwrap();
        let r = call(
            &s,
            r#"{"v":1,"op":"stats","name":"a","reset":true,"percentile":50}"#,
        );
        assert_eq!(r["monitor"]["interval"]["histogram"], j(r#"[[3, 1]]"#));
        assert_eq!(r["monitor"]["interval"]["extra_bytes"], Value::from(4 * 4096));
        assert_eq!(r["counters"]["writes"], Value::from(4));
        let keys = |v: &Value| {
            v.as_object()
                .unwrap()
                .keys()
                .cloned()
                .collect::<Vec<_>>()
                .join(" ")
        };
        assert_eq!(
            keys(&r["counters"]),
            "caches errors evicted_pages file_read_pages flushes ram_hit_pages read_bytes read_us reads \
             remote_cache_dropped_pages remote_detaches remote_fetches_abandoned remote_file_read_us remote_hit_pages \
             remote_placed_pages remote_read_failures remote_read_us remote_skipped_pages \
             remote_writeback_errors remote_writeback_thread_us remote_writeback_us trims write_bytes write_us \
             writes zeroes"
        );
        assert_eq!(
            keys(&r["export"]),
            "backing_file clients connections last_io name pid quota ram_bytes remote_pages size socket \
             stored_bytes"
        );
        assert_eq!(
            keys(&r["monitor"]),
            "bucket_pages cumulative interval interval_seconds interval_started percentile queue_pages \
             reset swap_in_pages swap_out_pages"
        );
        assert_eq!(
            keys(&r["monitor"]["interval"]),
            "cold extra_bytes histogram swap_ins"
        );
        assert_eq!(r["export"]["ram_bytes"], Value::from(8192));
        let r = call(&s, r#"{"v":1,"op":"stats","name":"a"}"#);
        assert_eq!(r["monitor"]["interval"]["swap_ins"], Value::from(0));
        assert_eq!(r["monitor"]["cumulative"]["swap_ins"], Value::from(1));
        let r = call(&s, r#"{"v":1,"op":"events","name":"a","since":3}"#);
        assert_eq!(r["events"], j(r#"[[3, "w", 3], [4, "r", 0]]"#));
        assert_eq!(r["next"], Value::from(5));
        let r = call(&s, r#"{"v":1,"op":"set_quota","name":"a","quota":0}"#);
        assert_eq!(r["evicted_pages"], Value::from(2));
        assert_eq!(
            call(&s, r#"{"v":1,"op":"list"}"#)["exports"][0]["ram_bytes"],
            Value::from(0)
        );
        assert_eq!(
            call(&s, r#"{"v":1,"op":"delete","name":"a"}"#)["ok"],
            Value::from(true)
        );
        assert_eq!(
            call(&s, r#"{"v":1,"op":"delete","name":"a"}"#)["ok"],
            Value::from(false)
        );
        assert_eq!(
            call(&s, r#"{"v":1,"op":"stats","name":"a"}"#)["ok"],
            Value::from(false)
        );
    }

    #[test]
    fn slab_ops() {
        let s = server("slabs");
        let key = "ab".repeat(32);
        let create = format!(
            r#"{{"v":1,"op":"slab_create","id":"x1","size":8192,"psk_identity":"memmut-alloc-x1","psk_key":"{}"}}"#,
            key
        );
        // no --remote-listen: nothing is lent
        let r = call(&s, &create);
        assert!(r["error"].as_str().unwrap().contains("--remote-listen"), "{}", r);
        *s.slabs.listen.lock().unwrap() = Some("127.0.0.1:9".parse().unwrap());
        let r = call(&s, &create);
        assert_eq!(r["ok"], Value::from(true), "{}", r);
        assert_eq!(r["slab"]["uri"], Value::from("nbds://127.0.0.1:9/x1"));
        assert_eq!(call(&s, r#"{"v":1,"op":"hello"}"#)["lent_bytes"], Value::from(8192));
        assert_eq!(s.host.used.load(Ordering::SeqCst), 8192);
        assert_eq!(call(&s, &create)["created"], Value::from(false));
        let r = call(&s, r#"{"v":1,"op":"slabs"}"#);
        assert_eq!(r["lent"][0]["id"], Value::from("x1"));
        assert_eq!(r["attached"], j("[]"));
        assert!(!r.to_string().contains(&key), "keys are never shown");
        // malformed: bad size, bad key, bad timeout
        let r = call(&s, &create.replace("8192", "100").replace("x1", "x2"));
        assert_eq!(r["ok"], Value::from(false));
        let r = call(&s, &create.replace(&key, "zz").replace("x1", "x3"));
        assert_eq!(r["ok"], Value::from(false));
        let attach = format!(
            r#"{{"v":1,"op":"slab_attach","name":"nope","id":"x1","uri":"nbds://127.0.0.1:9/x1","size":8192,"psk_identity":"memmut-alloc-x1","psk_key":"{}","timeout_ms":0}}"#,
            key
        );
        assert!(call(&s, &attach)["error"].as_str().unwrap().contains("timeout_ms"));
        let r = call(&s, &attach.replace(r#","timeout_ms":0"#, ""));
        assert!(r["error"].as_str().unwrap().contains("no export nope"), "{}", r);
        assert_eq!(call(&s, r#"{"v":1,"op":"slab_detach","id":"x1"}"#)["detached"], Value::from(false));
        assert_eq!(call(&s, r#"{"v":1,"op":"slab_delete","id":"x1"}"#)["deleted"], Value::from(true));
        assert_eq!(call(&s, r#"{"v":1,"op":"slab_delete","id":"x1"}"#)["deleted"], Value::from(false));
        assert_eq!(s.host.used.load(Ordering::SeqCst), 0);
        assert!(redacted(create.as_bytes()).contains("<hidden>"));
        assert!(!redacted(create.as_bytes()).contains(&key));
    }
}
