//! memmut-memstore: memmut's memory reservoir server (see
//! doc/source/memstore.rst).

pub mod control;
pub mod json;
pub mod log;
pub mod monitor;
pub mod nbd;
pub mod server;
pub mod store;
pub mod sys;
