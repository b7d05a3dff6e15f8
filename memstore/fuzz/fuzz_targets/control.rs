//! The control socket's request parser: any line must give an `Op` or an
//! error, never a panic; the reply line built from it must be one line of
//! JSON that parses back.
#![no_main]

use libfuzzer_sys::fuzz_target;
use memstore::control;

fuzz_target!(|data: &[u8]| {
    let r = control::parse_line(data);
    let reply = control::reply_line(r.map(|op| serde_json::json!({ "op": format!("{:?}", op) })));
    assert!(reply.ends_with('\n') && !reply[..reply.len() - 1].contains('\n'));
    let v: serde_json::Value = serde_json::from_str(&reply).expect("replies are JSON");
    assert_eq!(v["v"], 1);
});
