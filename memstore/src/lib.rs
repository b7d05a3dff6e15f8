//! memmut-memstore: memmut's memory reservoir server (see
//! doc/source/memstore.rst).

pub mod control;
pub mod log;
pub mod monitor;
pub mod nbd;
pub mod server;
pub mod store;
