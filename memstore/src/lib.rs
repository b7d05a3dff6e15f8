//! memmut-memstore: memmut's memory reservoir server (see
//! doc/source/memstore.rst).
//!
//! `server` keeps the exports and their NBD sockets, `nbd` speaks the
//! protocol, `control` the JSON control socket.  An export (`export`) is a
//! stack of `device::Device` layers: `monitor` (counters, Geiger reuse
//! distances from `geiger`) over `ram` (the RAM tier and its quotas) over
//! `file` (the backing file).

pub mod control;
pub mod device;
pub mod export;
pub mod file;
pub mod fsutil;
pub mod geiger;
pub mod lanes;
pub mod limits;
pub mod log;
pub mod monitor;
pub mod nbd;
pub mod peer;
pub mod ram;
pub mod remote;
pub mod server;
pub mod slab;
pub mod tls;
