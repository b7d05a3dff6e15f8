//! The NBD server side fed an arbitrary client stream: the handshake
//! (options, GO/INFO/LIST parsing) and then the transmission phase
//! (request headers, validation, payloads) against a 1 MiB in-memory
//! export.  The first byte picks whether the peer is refused by policy.
#![no_main]

use libfuzzer_sys::fuzz_target;
use memstore::nbd;

fuzz_target!(|data: &[u8]| {
    memstore::log::set_quiet(true);
    let (denied, input) = match data.split_first() {
        Some((b, rest)) if b & 1 == 1 => (Some("bound to another pid"), rest),
        Some((_, rest)) => (None, rest),
        None => (None, data),
    };
    let mem = nbd::Mem::new(1 << 20);
    nbd::serve_script(input, &mem, denied);
});
