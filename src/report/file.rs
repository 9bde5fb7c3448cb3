//! Output files (`solve --out`, `gen`): written whole or not at all.

use std::io::Write;
use std::path::Path;

/// Writes `text` to `path` through a temporary file in the same directory, renamed over `path`
/// once complete: a reader (or a failure half-way, e.g. a full disk) never sees a partial file.
pub fn write_file(path: &Path, text: &str) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = dir.join(format!(".{name}.flowmap-{}.tmp", std::process::id()));
    let result = (|| {
        let mut f = std::fs::OpenOptions::new().write(true).create_new(true).open(&tmp)?;
        f.write_all(text.as_bytes())?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_a_file_whole_and_leaves_no_temporary() {
        let dir = std::env::temp_dir().join(format!("flowmap-write-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("m.toml");
        std::fs::write(&p, "old").unwrap();
        write_file(&p, "new text").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "new text");
        let left: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(left.len(), 1, "{left:?}");
        // A directory cannot be replaced by a file: an error, and the directory is untouched.
        assert!(write_file(&dir, "x").is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
