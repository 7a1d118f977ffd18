//! Tidy checks: the map in `docs/ARCHITECTURE.md` and the workspace agree. They run as this
//! crate's tests, so `cargo xtask test` fails when a crate depends upward against the layer
//! list, a `lib.rs` loses its opening sections or lints, or a published package would ship
//! without its licence files.

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::fs;
    use std::path::PathBuf;

    use crate::root;

    /// Every package directory under `crates/`, by package name.
    fn packages() -> BTreeMap<String, PathBuf> {
        let mut out = BTreeMap::new();
        for e in fs::read_dir(root().join("crates")).expect("crates/") {
            let dir = e.expect("crates/ entry").path();
            let toml = fs::read_to_string(dir.join("Cargo.toml")).expect("Cargo.toml");
            let name = toml
                .lines()
                .find_map(|l| l.strip_prefix("name = \""))
                .and_then(|l| l.strip_suffix('"'))
                .expect("package name");
            out.insert(name.to_string(), dir);
        }
        out
    }

    /// The layer of each crate, read from the diagram under "Layers: who may depend on whom":
    /// every `terrane-…` name (and `terrane (facade)`) on a `layer N` line or the lines that
    /// continue it.
    fn layers() -> BTreeMap<String, u32> {
        let doc = fs::read_to_string(root().join("docs/ARCHITECTURE.md")).expect("ARCHITECTURE");
        let start = doc.find("## Layers: who may depend on whom").expect("the layers section");
        let block = doc[start..].split("```").nth(1).expect("the layer diagram");
        let mut out = BTreeMap::new();
        let mut layer = None;
        for line in block.lines() {
            if let Some(rest) = line.trim_start().strip_prefix("layer ") {
                layer = rest.split_whitespace().next().and_then(|n| n.parse::<u32>().ok());
            }
            let Some(n) = layer else { continue };
            // Names outside parentheses: inside them are the crates a crate depends on.
            let mut depth = 0;
            let mut outside = String::new();
            for c in line.chars() {
                match c {
                    '(' => depth += 1,
                    ')' => depth -= 1,
                    _ if depth == 0 => outside.push(c),
                    _ => {}
                }
            }
            if line.contains("terrane (facade)") {
                out.insert("terrane".to_string(), n);
            }
            for word in outside.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-')) {
                if word.starts_with("terrane-") {
                    out.insert(word.to_string(), n);
                }
            }
        }
        out
    }

    /// The `terrane` / `terrane-…` packages in a manifest's `[dependencies]`, and with
    /// `all` in its `[dev-dependencies]` and `[build-dependencies]` too.
    fn internal_dependencies(toml: &str, all: bool) -> Vec<String> {
        let mut out = Vec::new();
        let mut in_deps = false;
        for line in toml.lines() {
            let line = line.trim();
            if line.starts_with('[') {
                in_deps = line == "[dependencies]" || (all && line.ends_with("dependencies]"));
                continue;
            }
            let key = line.split(['=', '.', ' ']).next().unwrap_or("");
            if in_deps && (key == "terrane" || key.starts_with("terrane-")) {
                out.push(key.to_string());
            }
        }
        out
    }

    #[test]
    fn no_crate_depends_upward_against_the_layer_list() {
        let layers = layers();
        let packages = packages();
        for name in packages.keys() {
            assert!(layers.contains_key(name), "{name} is missing from ARCHITECTURE.md's layers");
        }
        // Sideways within a layer only as drawn: the command over the facade.
        let drawn = [("terrane-cli", "terrane")];
        for (name, dir) in &packages {
            let toml = fs::read_to_string(dir.join("Cargo.toml")).expect("Cargo.toml");
            for dep in internal_dependencies(&toml, false) {
                let (l, d) = (layers[name], layers[dep.as_str()]);
                assert!(
                    d < l || drawn.contains(&(name.as_str(), dep.as_str())),
                    "{name} (layer {l}) depends on {dep} (layer {d}): not below it in \
                     ARCHITECTURE.md's layer list"
                );
            }
        }
    }

    /// The packages whose unsafe code is denied, not forbidden: terrane-chunk's AVX2 bulk
    /// read (`crates/chunk/src/bits_avx2.rs`, one call after run-time detection).
    const UNSAFE_DENIED_ONLY: &[&str] = &["terrane-chunk"];

    #[test]
    fn every_lib_rs_opens_as_the_house_style_asks() {
        for (name, dir) in packages() {
            let lib = dir.join("src/lib.rs");
            let Ok(text) = fs::read_to_string(&lib) else { continue }; // the command: main.rs
            for section in ["# Overview", "# Example", "# Features", "# What it does not guarantee"]
            {
                // `# Example` or a titled `# Example: …`.
                let heading = |l: &str| {
                    let rest = l.trim().strip_prefix("//! ").and_then(|r| r.strip_prefix(section));
                    rest.is_some_and(|r| r.is_empty() || r.starts_with(':'))
                };
                assert!(text.lines().any(heading), "{name}: lib.rs has no `{section}` section");
            }
            // Unsafe code is forbidden, except where a measured gain needed it: there it is
            // denied, and allowed only at the one place that uses it.
            let unsafe_lint = if UNSAFE_DENIED_ONLY.contains(&name.as_str()) {
                "#![deny(unsafe_code)]"
            } else {
                "#![forbid(unsafe_code)]"
            };
            for lint in ["#![deny(missing_docs)]", unsafe_lint] {
                assert!(text.contains(lint), "{name}: lib.rs lacks {lint}");
            }
        }
    }

    /// `default-members` is every crate whose build does not reach terrane-rocksdb (through
    /// any dependency, dev-dependencies included): working on a layer below the store never
    /// compiles RocksDB's C++, and no such crate is left out of a plain `cargo test`.
    #[test]
    fn default_members_are_exactly_the_crates_that_do_not_compile_rocksdb() {
        let packages = packages();
        let deps: BTreeMap<&String, Vec<String>> = packages
            .iter()
            .map(|(n, d)| {
                let toml = fs::read_to_string(d.join("Cargo.toml")).expect("Cargo.toml");
                (n, internal_dependencies(&toml, true))
            })
            .collect();
        let reaches_rocksdb = |start: &String| {
            let mut seen = vec![start.clone()];
            let mut i = 0;
            while i < seen.len() {
                let name = seen[i].clone();
                i += 1;
                if name == "terrane-rocksdb" {
                    return true;
                }
                for d in deps.get(&name).into_iter().flatten() {
                    if !seen.contains(d) {
                        seen.push(d.clone());
                    }
                }
            }
            false
        };
        let manifest = fs::read_to_string(root().join("Cargo.toml")).expect("Cargo.toml");
        let list = manifest.split("default-members = [").nth(1).expect("default-members");
        let list = list.split(']').next().expect("a closed list");
        let mut members: Vec<String> = list
            .split(',')
            .map(|m| m.trim().trim_matches('"').to_string())
            .filter(|m| !m.is_empty())
            .collect();
        members.sort();
        let mut want: Vec<String> = packages
            .iter()
            .filter(|(n, _)| !reaches_rocksdb(n))
            .map(|(_, d)| format!("crates/{}", d.file_name().unwrap().to_string_lossy()))
            .collect();
        want.sort();
        assert_eq!(members, want, "Cargo.toml's default-members");
        assert!(!want.contains(&"crates/rocksdb".to_string()) && want.len() >= 10);
    }

    #[test]
    fn every_package_carries_both_licence_files() {
        for (name, dir) in packages() {
            for f in ["LICENSE-MIT", "LICENSE-APACHE"] {
                let text = fs::read_to_string(dir.join(f)).unwrap_or_default();
                assert!(text.len() > 100, "{name}: {f} missing beside its Cargo.toml");
            }
        }
    }

    /// Every file under `testdata/` has its row in `testdata/SOURCES.md` (origin, licence,
    /// size, sha256), and the sha256 matches: a fixture swapped or damaged in the repository
    /// fails here, not as a puzzling decoder test.
    #[test]
    fn every_fixture_is_listed_with_its_sha256() {
        let dir = root().join("testdata");
        let sources = fs::read_to_string(dir.join("SOURCES.md")).expect("testdata/SOURCES.md");
        let mut files = Vec::new();
        let mut stack = vec![dir.clone()];
        while let Some(d) = stack.pop() {
            for e in fs::read_dir(&d).expect("testdata folder") {
                let p = e.expect("entry").path();
                if p.is_dir() {
                    stack.push(p);
                } else if p.file_name().is_some_and(|n| n != "SOURCES.md") {
                    files.push(p);
                }
            }
        }
        assert!(files.len() >= 26, "testdata/ holds {} files", files.len());
        for p in files {
            let rel = p.strip_prefix(&dir).expect("inside").to_string_lossy().replace('\\', "/");
            let row = sources
                .lines()
                .find(|l| l.starts_with(&format!("| `{rel}` |")))
                .unwrap_or_else(|| panic!("testdata/{rel} has no row in testdata/SOURCES.md"));
            let out = std::process::Command::new("sha256sum").arg(&p).output().expect("sha256sum");
            let text = String::from_utf8_lossy(&out.stdout);
            let sum = text.split_whitespace().next().expect("a sum");
            assert!(row.contains(&format!("`{sum}`")), "testdata/{rel}: sha256 {sum} differs");
        }
    }

    /// Nothing the workspace builds, tests or documents reaches outside the repository: a
    /// clone alone in an empty folder tests on its own.
    #[test]
    fn no_path_reaches_outside_the_repository() {
        let out = std::process::Command::new("git")
            .args(["ls-files", "--cached", "--others", "--exclude-standard"])
            .current_dir(root())
            .output()
            .expect("git ls-files");
        let listed = String::from_utf8_lossy(&out.stdout);
        let mut checked = 0;
        for rel in listed.lines() {
            let text_file =
                [".rs", ".toml", ".md", ".yml", ".sh", "/run"].iter().any(|e| rel.ends_with(e));
            if !text_file || rel.starts_with("testdata/") {
                continue;
            }
            let Ok(text) = fs::read_to_string(root().join(rel)) else { continue };
            checked += 1;
            for bad in [concat!("../", "shared"), concat!("TERRANE_", "TESTDATA")] {
                assert!(!text.contains(bad), "{rel} mentions {bad}: a path outside the repository");
            }
        }
        assert!(checked > 100, "only {checked} files checked");
    }

    #[test]
    fn the_layer_list_reads_as_drawn() {
        let l = layers();
        assert_eq!(l["terrane-section"], 0);
        assert_eq!(l["terrane-store"], 1);
        assert_eq!(l["terrane-chunk"], 1);
        assert_eq!(l["terrane-cluster"], 2);
        assert_eq!(l["terrane-postgres"], 2);
        assert_eq!(l["terrane"], 3);
        assert_eq!(l["terrane-cli"], 3);
        let toml = "[dependencies]\nterrane-chunk.workspace = true\nterrane = { path = \"x\" }\n[dev-dependencies]\nterrane-rocksdb = \"1\"\n";
        assert_eq!(internal_dependencies(toml, false), ["terrane-chunk", "terrane"]);
        assert_eq!(
            internal_dependencies(toml, true),
            ["terrane-chunk", "terrane", "terrane-rocksdb"]
        );
    }
}
