//! Compact JSON text exactly as JavaScript's `JSON.stringify` writes it, for the values turnscope
//! builds and the runtime reads back (spec §6.5). serde_json already escapes strings the way JS
//! does and keeps key order (`preserve_order`); only numbers differ: JS writes `0.000005`, `1`
//! (never `1.0`) and `1e+21`, where serde_json writes `5e-6`, `1.0` and `1e21`.

use serde_json::Value;

/// The largest integer a JS number holds exactly; beyond it JS prints the rounded double.
const MAX_SAFE_INTEGER: u64 = (1 << 53) - 1;

/// `JSON.stringify(v)` of a value parsed from (or built for) the runtime.
pub fn to_js_string(v: &Value) -> String {
    let mut out = String::new();
    write_value(v, &mut out);
    out
}

fn write_value(v: &Value, out: &mut String) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => write_number(n, out),
        Value::String(s) => out.push_str(&Value::String(s.clone()).to_string()),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_value(item, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (k, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(k.clone()).to_string());
                out.push(':');
                write_value(item, out);
            }
            out.push('}');
        }
    }
}

fn write_number(n: &serde_json::Number, out: &mut String) {
    if let Some(u) = n.as_u64().filter(|u| *u <= MAX_SAFE_INTEGER) {
        out.push_str(&u.to_string());
    } else if let Some(i) = n.as_i64().filter(|i| i.unsigned_abs() <= MAX_SAFE_INTEGER) {
        out.push_str(&i.to_string());
    } else {
        let f = n.as_f64().unwrap_or(0.0);
        if f.is_finite() {
            out.push_str(ryu_js::Buffer::new().format(f));
        } else {
            // JSON.stringify writes non-finite numbers as null.
            out.push_str("null");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_come_out_as_javascript_writes_them() {
        let cases = [
            ("0.000005", "0.000005"),
            ("5e-6", "0.000005"),
            ("1.0", "1"),
            ("1e21", "1e+21"),
            ("0.0000123", "0.0000123"),
            ("1e-7", "1e-7"),
            ("123456789012", "123456789012"),
            ("-0.5", "-0.5"),
            ("12345678901234567890", "12345678901234567000"),
            ("0.1", "0.1"),
        ];
        for (input, js) in cases {
            let v: Value = serde_json::from_str(input).unwrap();
            assert_eq!(to_js_string(&v), js, "{input}");
        }
    }

    #[test]
    fn structure_keys_and_strings_are_serde_json_compact() {
        let raw = r#"{"b":1,"a":[true,null,"é\n\u0001"],"c":{"cost":{"total":0.000005}}}"#;
        let v: Value = serde_json::from_str(raw).unwrap();
        assert_eq!(
            to_js_string(&v),
            r#"{"b":1,"a":[true,null,"é\n\u0001"],"c":{"cost":{"total":0.000005}}}"#
        );
    }
}
