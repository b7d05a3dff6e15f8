//! memmut-memstore: memmut's memory reservoir server (see
//! doc/source/memstore.rst).

pub mod control;
pub mod device;
pub mod export;
pub mod file;
pub mod geiger;
pub mod log;
pub mod monitor;
pub mod nbd;
pub mod ram;
pub mod server;
