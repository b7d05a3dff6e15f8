//! TLS 1.3 with an external pre-shared key, for the memstore-to-memstore
//! transport (doc/source/remote-memory.rst, "TLS with a pre-shared key").
//!
//! rustls has no external-PSK support, so this is the `openssl` crate's
//! PSK callbacks (OpenSSL >= 1.1.1 uses them for TLS 1.3 with a SHA-256
//! cipher suite).  Everything TLS-specific stays in this module.
//!
//! * TLS 1.3 only; cipher suites TLS_AES_128_GCM_SHA256 and
//!   TLS_CHACHA20_POLY1305_SHA256 (a PSK without a hash is SHA-256);
//! * key exchange psk_dhe_ke (OpenSSL's default for TLS 1.3 PSK: the PSK
//!   authenticates an ECDHE exchange, so a key that leaks later does not
//!   decrypt recorded traffic); no certificates;
//! * the server finds the key by the identity the client offers; an
//!   unknown identity or a wrong key fails the handshake.
//!
//! Cost (doc/source/remote-memory.rst, "Where the time goes"): the records
//! are encrypted with AES-128-GCM, which OpenSSL runs on AES-NI/VAES where
//! the CPU has them (`cipher_of` says what a connection negotiated); reads
//! use read-ahead into a large buffer, and writes are corked (`Corked`), so
//! that a 1 MiB reply costs a few system calls, not two per 16 KiB record.

use openssl::ssl::{
    HandshakeError, Ssl, SslContext, SslContextBuilder, SslMethod, SslOptions, SslStream, SslVersion,
};
use std::io::{self, Read, Write};
use openssl::ex_data::Index;
use std::sync::{Arc, OnceLock};

/// Bytes OpenSSL may read from the socket at once (read-ahead): several
/// 16 KiB records per system call.
pub const READ_BUFFER: usize = 256 << 10;
/// Bytes of records a `Corked` stream gathers before it sends them.
pub const WRITE_BUFFER: usize = 256 << 10;

extern "C" {
    // libssl >= 1.1.0; the openssl crate has no wrapper for it
    fn SSL_CTX_set_default_read_buffer_len(ctx: *mut std::ffi::c_void, len: usize);
}

/// A stream whose writes are gathered until `flush` (or until
/// `WRITE_BUFFER` bytes wait): TLS writes one record per call, and a
/// system call per 16 KiB record costs more than the copy into this
/// buffer.  Every writer of the transport flushes before it waits for an
/// answer (the NBD code does), so nothing stays behind.
pub struct Corked<S: Write> {
    inner: S,
    buf: Vec<u8>,
}

impl<S: Write> Corked<S> {
    pub fn new(inner: S) -> Corked<S> {
        Corked {
            inner,
            buf: Vec::new(),
        }
    }

    pub fn get_ref(&self) -> &S {
        &self.inner
    }

    fn send(&mut self) -> io::Result<()> {
        if !self.buf.is_empty() {
            let r = self.inner.write_all(&self.buf);
            self.buf.clear();
            r?;
        }
        Ok(())
    }
}

impl<S: Read + Write> Read for Corked<S> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        // whoever reads waits for the peer: what it must see goes first
        self.send()?;
        self.inner.read(buf)
    }
}

impl<S: Write> Write for Corked<S> {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        if self.buf.len() + data.len() > WRITE_BUFFER {
            self.send()?;
        }
        if data.len() >= WRITE_BUFFER {
            return self.inner.write(data);
        }
        if self.buf.capacity() == 0 {
            self.buf.reserve_exact(WRITE_BUFFER);
        }
        self.buf.extend_from_slice(data);
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.send()?;
        self.inner.flush()
    }
}

/// The cipher suite a connection negotiated (for logs and tests).
pub fn cipher_of<S>(s: &SslStream<S>) -> String {
    s.ssl()
        .current_cipher()
        .map(|c| c.name().to_string())
        .unwrap_or_else(|| "none".into())
}

pub const CIPHERSUITES: &str = "TLS_AES_128_GCM_SHA256:TLS_CHACHA20_POLY1305_SHA256";
/// Longest PSK identity accepted (GnuTLS's limit is larger; ours are short).
pub const MAX_IDENTITY: usize = 128;

/// Finds the key of an identity (None: unknown identity, refused).
pub type KeyLookup = Arc<dyn Fn(&str) -> Option<Vec<u8>> + Send + Sync>;

fn tls_err<E: std::fmt::Display>(e: E) -> io::Error {
    io::Error::new(io::ErrorKind::PermissionDenied, format!("TLS: {}", e))
}

fn base(method: SslMethod) -> io::Result<SslContextBuilder> {
    let mut b = SslContext::builder(method).map_err(tls_err)?;
    b.set_min_proto_version(Some(SslVersion::TLS1_3)).map_err(tls_err)?;
    b.set_max_proto_version(Some(SslVersion::TLS1_3)).map_err(tls_err)?;
    b.set_ciphersuites(CIPHERSUITES).map_err(tls_err)?;
    // no session tickets: every connection proves the key afresh
    b.set_options(SslOptions::NO_TICKET);
    b.set_num_tickets(0).map_err(tls_err)?;
    b.set_read_ahead(true);
    // SAFETY: a live SSL_CTX; the call only records a buffer size
    unsafe { SSL_CTX_set_default_read_buffer_len(b.as_ptr() as *mut std::ffi::c_void, READ_BUFFER) };
    Ok(b)
}

/// Decode a lower-case or upper-case hex key (at least 16 bytes).
pub fn parse_key(hex: &str) -> Result<Vec<u8>, String> {
    if hex.len() % 2 != 0 || hex.len() < 32 || hex.len() > 128 {
        return Err("PSK key must be 16 to 64 bytes in hex".into());
    }
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).map_err(|_| "PSK key is not hex".to_string()))
        .collect()
}

/// Is `id` a usable PSK identity (printable ASCII, 1..=128 bytes)?
pub fn valid_identity(id: &str) -> bool {
    !id.is_empty() && id.len() <= MAX_IDENTITY && id.bytes().all(|b| (0x21..0x7f).contains(&b))
}

/// Where the server callback leaves the identity it accepted.
fn identity_index() -> io::Result<Index<Ssl, String>> {
    static IDX: OnceLock<Index<Ssl, String>> = OnceLock::new();
    if let Some(i) = IDX.get() {
        return Ok(*i);
    }
    let i = Ssl::new_ex_index::<String>().map_err(tls_err)?;
    Ok(*IDX.get_or_init(|| i))
}

/// The server's context: keys come from `lookup`.
pub fn server_context(lookup: KeyLookup) -> io::Result<SslContext> {
    let mut b = base(SslMethod::tls_server())?;
    let idx = identity_index()?;
    b.set_psk_server_callback(move |ssl, identity, psk| {
        let id = match identity.and_then(|i| std::str::from_utf8(i).ok()) {
            Some(i) => i,
            None => return Ok(0),
        };
        match lookup(id) {
            Some(key) if key.len() <= psk.len() => {
                psk[..key.len()].copy_from_slice(&key);
                // OpenSSL does not keep a TLS 1.3 external PSK's identity
                // where SSL_get_psk_identity finds it: keep it ourselves
                ssl.set_ex_data(idx, id.to_string());
                Ok(key.len())
            }
            _ => Ok(0), // unknown identity: handshake failure
        }
    });
    Ok(b.build())
}

/// A client's context for one identity and key.
pub fn client_context(identity: &str, key: &[u8]) -> io::Result<SslContext> {
    let mut b = base(SslMethod::tls_client())?;
    let (id, key) = (identity.as_bytes().to_vec(), key.to_vec());
    b.set_psk_client_callback(move |_ssl, _hint, id_buf, psk| {
        if id.len() + 1 > id_buf.len() || key.len() > psk.len() {
            return Ok(0);
        }
        id_buf[..id.len()].copy_from_slice(&id);
        id_buf[id.len()] = 0;
        psk[..key.len()].copy_from_slice(&key);
        Ok(key.len())
    });
    Ok(b.build())
}

fn finish<S: Read + Write>(r: Result<SslStream<S>, HandshakeError<S>>) -> io::Result<SslStream<S>> {
    r.map_err(|e| match e {
        HandshakeError::SetupFailure(e) => tls_err(e),
        HandshakeError::Failure(m) => tls_err(m.error()),
        HandshakeError::WouldBlock(_) => io::Error::new(io::ErrorKind::TimedOut, "TLS handshake timed out"),
    })
}

/// Server side of the handshake; returns the stream and the identity the
/// client proved it holds the key of.
pub fn accept<S: Read + Write>(ctx: &SslContext, s: S) -> io::Result<(SslStream<S>, String)> {
    let ssl = Ssl::new(ctx).map_err(tls_err)?;
    let stream = finish(ssl.accept(s))?;
    let id = stream
        .ssl()
        .ex_data(identity_index()?)
        .cloned()
        .ok_or_else(|| tls_err("no PSK identity after the handshake"))?;
    Ok((stream, id))
}

pub fn connect<S: Read + Write>(ctx: &SslContext, s: S) -> io::Result<SslStream<S>> {
    let ssl = Ssl::new(ctx).map_err(tls_err)?;
    finish(ssl.connect(s))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{TcpListener, TcpStream};
    use std::thread;

    fn run(server_key: &'static [u8], client_id: &str, client_key: &[u8]) -> (io::Result<String>, io::Result<()>) {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        let lookup: KeyLookup = Arc::new(move |id: &str| {
            if id == "memmut-alloc-a" {
                Some(server_key.to_vec())
            } else {
                None
            }
        });
        let ctx = server_context(lookup).unwrap();
        let h = thread::spawn(move || {
            let (s, _) = l.accept().unwrap();
            let (mut t, id) = accept(&ctx, s)?;
            let mut b = [0u8; 5];
            t.read_exact(&mut b)?;
            t.write_all(&b)?;
            Ok(id)
        });
        let c = (|| {
            let ctx = client_context(client_id, client_key)?;
            let mut t = connect(&ctx, TcpStream::connect(addr)?)?;
            t.write_all(b"hello")?;
            let mut b = [0u8; 5];
            t.read_exact(&mut b)?;
            assert_eq!(&b, b"hello");
            Ok(())
        })();
        (h.join().unwrap(), c)
    }

    #[test]
    fn psk_handshakes() {
        let (s, c) = run(&[7; 32], "memmut-alloc-a", &[7; 32]);
        assert_eq!(s.unwrap(), "memmut-alloc-a");
        c.unwrap();
        let (s, c) = run(&[7; 32], "memmut-alloc-a", &[8; 32]);
        assert!(s.is_err() && c.is_err(), "a wrong key is refused");
        let (s, c) = run(&[7; 32], "memmut-alloc-b", &[7; 32]);
        assert!(s.is_err() && c.is_err(), "an unknown identity is refused");
    }

    #[test]
    fn keys_and_identities() {
        assert_eq!(parse_key(&"0a".repeat(32)).unwrap(), vec![10u8; 32]);
        assert!(parse_key("0a").is_err());
        assert!(parse_key(&"zz".repeat(32)).is_err());
        assert!(valid_identity("memmut-alloc-1"));
        assert!(!valid_identity("a b"));
        assert!(!valid_identity(""));
    }
}
