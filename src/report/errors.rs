//! Bad input as JSON (`--format json`), so a script reads one format whatever happens:
//! `{"status": "error", "errors": [{"file", "line", "item", "message", "more_like_it"}]}`.

use crate::error::InputErrors;
use serde_json::{json, Value};

pub fn errors_json(errors: &InputErrors) -> Value {
    let list: Vec<Value> = errors
        .0
        .iter()
        .map(|e| json!({"file": e.file, "line": e.line, "item": e.item, "message": e.message, "more_like_it": e.more}))
        .collect();
    json!({"status": "error", "errors": list})
}
