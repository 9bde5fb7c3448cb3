//! Parameter expressions inside values: `"(20 * particles / 160000 * 4 / instances) ms"`.
//!
//! Owns: evaluating the expression part of a value (after `units` split off the unit) with the
//! `exmex` crate, against named parameters. Unknown names and non-finite results are errors.
//! exmex's parsing grows quadratically with the number of operators, so an expression is at most
//! `caps::EXPRESSION_CHARS` long (evaluated in microseconds).

use exmex::prelude::*;
use std::collections::BTreeMap;

/// Evaluates `text` with the given variables.
pub fn eval(text: &str, vars: &BTreeMap<String, f64>) -> Result<f64, String> {
    let t = text.trim();
    if let Ok(v) = t.replace('_', "").parse::<f64>() {
        return finite(v, t);
    }
    let max = super::caps::EXPRESSION_CHARS;
    if t.chars().count() > max {
        let head: String = t.chars().take(20).collect();
        return Err(format!("expression \"{head}...\" is longer than {max} characters"));
    }
    let ex =
        exmex::parse::<f64>(t).map_err(|e| format!("cannot read expression \"{t}\": {}", short(&e.to_string())))?;
    let mut values = Vec::new();
    for name in ex.var_names() {
        match vars.get(name.as_str()) {
            Some(v) => values.push(*v),
            None => {
                let known: Vec<&str> = vars.keys().map(|s| s.as_str()).collect();
                let hint = super::suggest::closest(name, known.iter().copied())
                    .map(|k| format!("did you mean \"{k}\"? "))
                    .unwrap_or_default();
                return Err(format!(
                    "unknown name \"{name}\" in \"{t}\" ({hint}known: {})",
                    super::suggest::listing(known.iter().copied())
                ));
            }
        }
    }
    let v = ex.eval(&values).map_err(|e| format!("cannot evaluate \"{t}\": {}", short(&e.to_string())))?;
    finite(v, t)
}

fn finite(v: f64, t: &str) -> Result<f64, String> {
    if v.is_finite() {
        Ok(v)
    } else {
        Err(format!("\"{t}\" does not evaluate to a finite number"))
    }
}

fn short(s: &str) -> String {
    s.lines().next().unwrap_or("").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn evaluates_with_parameters() {
        let mut v = BTreeMap::new();
        v.insert("particles".to_string(), 250000.0);
        v.insert("instances".to_string(), 4.0);
        // 20 ms at 160000 particles on 4 instances, linear in particles per instance.
        let x = eval("20 * particles / 160000 * 4 / instances", &v).unwrap();
        assert!((x - 31.25).abs() < 1e-12);
        assert_eq!(eval("1_000", &v).unwrap(), 1000.0);
        assert!(eval("2 * nope", &v).unwrap_err().contains("unknown name \"nope\""));
        assert!(eval("1 / 0", &v).is_err());
        assert!(eval("2 * particle", &v).unwrap_err().contains("did you mean \"particles\"?"));
        let long = vec!["1"; 200].join("+");
        assert!(eval(&long, &v).unwrap_err().contains("longer than 256 characters"));
    }
}
