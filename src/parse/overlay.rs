//! Application overlays: a what-if application that `extends` another file and changes a few
//! entries, as cluster overlays do (docs/formats.md, "Application overlays"). The overlay is
//! merged into its base as TOML tables, then parsed as one application:
//!
//! - `extends = "base.toml"` (relative to the overlay; the base may extend another file);
//! - top-level keys replace the base's; `[parameters]` merge key by key;
//! - `[[modules]]`, `[[filters]]`: an entry with the name of a base entry changes only the keys it
//!   gives (inline tables such as `texec = { xeon = "20 ms" }` or `mpi = { volume = "1 kB" }`
//!   merge key by key), `unset = ["pin", ...]` removes keys; other entries are added;
//! - `[[connections]]`: matched by `name` (a base entry without one is named `from->to`);
//! - `[[requirements]]`: matched by `name` (a base entry without one is `requirement N`);
//!   `remove_requirements = [...]` drops requirements by name.
//!
//! Errors name the overlay file (lines refer to the merged text, so none is given).

use super::cluster::MAX_CHAIN;
use super::read_checked;
use crate::error::{InputError, InputErrors};
use std::path::{Path, PathBuf};
use toml::{Table, Value};

/// The merged source of an application file that `extends` another, or None if it does not.
pub(crate) fn merged(path: &Path, src: &str) -> Result<Option<String>, InputErrors> {
    let file = path.display().to_string();
    let table: Table = src.parse().map_err(|e| syntax(src, &file, e))?;
    if !table.contains_key("extends") {
        return Ok(None);
    }
    let merged = resolve(path, table, &mut Vec::new())?;
    Ok(Some(toml::to_string(&merged).map_err(|e| error(&file, "extends", e.to_string()))?))
}

/// A TOML syntax error, with its line.
fn syntax(src: &str, file: &str, e: toml::de::Error) -> InputErrors {
    super::doc::Doc::new(src, file).error(&e).into()
}

fn error(file: &str, item: &str, message: String) -> InputErrors {
    InputError::new(file, None, item, message).into()
}

/// The overlay merged into its base (recursively).
fn resolve(path: &Path, mut overlay: Table, chain: &mut Vec<PathBuf>) -> Result<Table, InputErrors> {
    let file = path.display().to_string();
    let canon = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    if chain.contains(&canon) {
        return Err(error(&file, "extends", "application files extend each other in a loop".into()));
    }
    if chain.len() >= MAX_CHAIN {
        return Err(error(&file, "extends", format!("more than {MAX_CHAIN} application files extend one another")));
    }
    chain.push(canon);
    let Some(base) = overlay.remove("extends") else { return Ok(overlay) };
    let Value::String(base) = base else {
        return Err(error(&file, "extends", "expected a file path (a string)".into()));
    };
    let base_path = path.parent().unwrap_or(Path::new(".")).join(&base);
    if !base_path.exists() {
        return Err(error(&file, "extends", format!("base application {} does not exist", base_path.display())));
    }
    // A regular file, as a cluster's base (not a pipe or a device).
    let base_src = read_checked(&base_path, false)
        .map_err(|m| error(&file, "extends", format!("base application {}: {m}", base_path.display())))?;
    let base_file = base_path.display().to_string();
    let base_table: Table = base_src.parse().map_err(|e| syntax(&base_src, &base_file, e))?;
    let mut out = resolve(&base_path, base_table, chain)?;
    apply(&mut out, overlay).map_err(|m| error(&file, "overlay", m))?;
    Ok(out)
}

/// The name a base entry is matched by.
fn entry_name(section: &str, t: &Table, i: usize) -> Option<String> {
    let s = |k: &str| t.get(k).and_then(|v| v.as_str()).map(str::to_string);
    match section {
        "connections" => s("name").or_else(|| Some(format!("{}->{}", s("from")?, s("to")?))),
        "requirements" => s("name").or_else(|| Some(format!("requirement {}", i + 1))),
        _ => s("name"),
    }
}

/// Merges `b` into `a`, key by key for tables.
fn merge(a: &mut Table, b: Table) {
    for (k, v) in b {
        match (a.get_mut(&k), v) {
            (Some(Value::Table(x)), Value::Table(y)) => merge(x, y),
            (_, v) => {
                a.insert(k, v);
            }
        }
    }
}

fn apply(base: &mut Table, mut overlay: Table) -> Result<(), String> {
    let removed: Vec<String> = match overlay.remove("remove_requirements") {
        None => vec![],
        Some(Value::Array(v)) => v
            .into_iter()
            .map(|x| x.as_str().map(str::to_string).ok_or("remove_requirements lists names (strings)"))
            .collect::<Result<_, _>>()?,
        Some(_) => return Err("remove_requirements lists names (strings)".into()),
    };
    if !removed.is_empty() {
        let Some(Value::Array(reqs)) = base.get_mut("requirements") else {
            return Err(format!("remove_requirements: the base has no requirement {}", removed[0]));
        };
        for r in &removed {
            let before = reqs.len();
            let names: Vec<Option<String>> = reqs
                .iter()
                .enumerate()
                .map(|(i, v)| v.as_table().and_then(|t| entry_name("requirements", t, i)))
                .collect();
            let mut i = 0;
            reqs.retain(|_| {
                i += 1;
                names[i - 1].as_deref() != Some(r.as_str())
            });
            if reqs.len() == before {
                return Err(format!("remove_requirements: the base has no requirement {r}"));
            }
        }
    }
    for (k, v) in overlay {
        let section = k.as_str();
        match (section, v) {
            ("modules" | "filters" | "connections" | "requirements", Value::Array(entries)) => {
                let list = base.entry(section).or_insert_with(|| Value::Array(vec![]));
                let Value::Array(list) = list else { return Err(format!("{section} must be an array of tables")) };
                for e in entries {
                    let Value::Table(mut e) = e else { return Err(format!("{section} must be an array of tables")) };
                    let unset: Vec<String> = match e.remove("unset") {
                        None => vec![],
                        Some(Value::Array(v)) => v.iter().filter_map(|x| x.as_str().map(str::to_string)).collect(),
                        Some(_) => return Err("unset lists keys (strings)".into()),
                    };
                    let name = e.get("name").and_then(|n| n.as_str()).map(str::to_string);
                    let found = name.as_ref().and_then(|n| {
                        list.iter().enumerate().position(|(i, x)| {
                            x.as_table().and_then(|t| entry_name(section, t, i)).as_deref() == Some(n.as_str())
                        })
                    });
                    match found {
                        Some(i) => {
                            let t = list[i].as_table_mut().expect("table");
                            for u in &unset {
                                t.remove(u);
                            }
                            merge(t, e);
                        }
                        None if !unset.is_empty() => {
                            return Err(format!(
                                "unset: no {section} entry named {} in the base",
                                name.unwrap_or_default()
                            ))
                        }
                        None => list.push(Value::Table(e)),
                    }
                }
            }
            ("parameters", Value::Table(p)) => {
                let t = base.entry("parameters").or_insert_with(|| Value::Table(Table::new()));
                match t {
                    Value::Table(t) => merge(t, p),
                    _ => return Err("parameters must be a table".into()),
                }
            }
            (_, v) => {
                base.insert(k, v);
            }
        }
    }
    Ok(())
}

/// Errors of a merged application: the overlay's file, no line (lines would point into the
/// merged text).
pub(crate) fn relabel(e: InputErrors, file: &str) -> InputErrors {
    InputErrors(
        e.0.into_iter()
            .map(|x| InputError { file: format!("{file} (merged with its base)"), line: None, ..x })
            .collect(),
    )
}
