//! What the reference tests share: a computed figure against the reference file's value.

use serde_json::Value;

/// A JSON array of numbers.
pub fn floats(v: &Value) -> Vec<f64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect()
}

/// `got` is the reference's `want` to 1e-9, or both are undefined (`None`, JSON null).
pub fn close(what: &str, got: Option<f64>, want: &Value) {
    match (got, want.as_f64()) {
        (Some(g), Some(w)) => assert!((g - w).abs() < 1e-9, "{what}: {g} != {w}"),
        (None, None) => {}
        (g, _) => panic!("{what}: {g:?} != {want}"),
    }
}

/// Each `{b, c, p_value}` case of McNemar's exact test against the reference's p-value.
pub fn check_mcnemar(cases: &Value) {
    for case in cases.as_array().unwrap() {
        let (b, c) = (case["b"].as_u64().unwrap(), case["c"].as_u64().unwrap());
        close(
            &format!("mcnemar {b} {c}"),
            Some(crate::metrics::paired::mcnemar_exact(b, c)),
            &case["p_value"],
        );
    }
}
