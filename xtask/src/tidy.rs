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
            out.insert(crate::package_name(&dir).expect("package name"), dir);
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
        // Sideways within a layer only as drawn: the command over the facade, the server, the
        // simulation and the conversion (its binary without the facade); the server and the
        // simulation over the facade; the facade over the conversion between the editions
        // (which needs both editions' crates, layer 2).
        let drawn = [
            ("terrane-cli", "terrane"),
            ("terrane-cli", "terrane-valence"),
            ("terrane-cli", "terrane-sim"),
            ("terrane-cli", "terrane-convert"),
            ("terrane-valence", "terrane"),
            ("terrane-sim", "terrane"),
            ("terrane", "terrane-convert"),
        ];
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

    /// The `terrane` command's subcommands, as clap names them (the variants of its
    /// `Subcommand` enum, lower case).
    fn cli_commands() -> Vec<String> {
        let main = fs::read_to_string(root().join("crates/cli/src/main.rs")).expect("cli main");
        let start = main.find("#[derive(Subcommand").expect("the command enum");
        let body = &main[start..];
        let body = &body[body.find('{').expect("enum body") + 1..];
        let mut depth = 0;
        let mut out = Vec::new();
        for line in body.lines() {
            if depth == 0 && line.trim() == "}" {
                break;
            }
            let t = line.trim();
            let name: String = t.chars().take_while(|c| c.is_ascii_alphanumeric()).collect();
            if depth == 0 && name.starts_with(|c: char| c.is_ascii_uppercase()) {
                out.push(name.to_lowercase());
            }
            depth += line.matches('{').count() as i32 - line.matches('}').count() as i32;
        }
        out
    }

    /// The front door and the guides name everything there is: the README's command table
    /// and the CLI's README every command, EMBEDDING's table every crate.
    #[test]
    fn the_readmes_list_every_command_and_embedding_every_crate() {
        let commands = cli_commands();
        assert!(commands.len() >= 15 && commands.contains(&"serve".to_string()), "{commands:?}");
        let readme = fs::read_to_string(root().join("README.md")).expect("README");
        let table = &readme[readme.find("## The `terrane` command").expect("the command table")..];
        let table = &table[..table.find("\n## ").unwrap_or(table.len())];
        let cli = fs::read_to_string(root().join("crates/cli/README.md")).expect("CLI README");
        for c in &commands {
            let named =
                table.contains(&format!("`terrane {c}`")) || table.contains(&format!("`{c}`"));
            assert!(named, "README's command table does not list `terrane {c}`");
            assert!(
                cli.contains(&format!("terrane {c} ")),
                "crates/cli/README.md misses `terrane {c}`"
            );
        }
        let embedding = fs::read_to_string(root().join("docs/EMBEDDING.md")).expect("EMBEDDING");
        for name in packages().keys() {
            assert!(
                embedding.contains(&format!("`{name}`")),
                "docs/EMBEDDING.md does not list {name}"
            );
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

    /// The files the tidy checks read as text: tracked and new (not ignored) files, by path
    /// relative to the root.
    fn listed_files() -> Vec<String> {
        let out = std::process::Command::new("git")
            .args(["ls-files", "--cached", "--others", "--exclude-standard"])
            .current_dir(root())
            .output()
            .expect("git ls-files");
        String::from_utf8_lossy(&out.stdout).lines().map(str::to_string).collect()
    }

    /// The fuzzing table of `docs/RELIABILITY.md` (between `<!-- fuzz-table -->` and
    /// `<!-- /fuzz-table -->`) is what `cargo xtask fuzz --table` renders from `fuzz/stats.tsv`
    /// and the committed corpora: after a fuzzing run, paste the new table in.
    #[test]
    fn the_fuzzing_table_is_the_one_the_stats_render() {
        let doc = fs::read_to_string(root().join("docs/RELIABILITY.md")).expect("RELIABILITY");
        let (open, close) = ("<!-- fuzz-table -->", "<!-- /fuzz-table -->");
        let start = doc.find(open).expect("the fuzz-table marker in docs/RELIABILITY.md");
        let end = doc.find(close).expect("the /fuzz-table marker in docs/RELIABILITY.md");
        let in_doc = doc[start + open.len()..end].trim();
        let rendered = crate::fuzz::table();
        assert_eq!(
            in_doc,
            rendered.trim(),
            "docs/RELIABILITY.md's fuzzing table differs from `cargo xtask fuzz --table`: paste \
             its output between the markers"
        );
    }

    /// Where `text` holds a work-diary reference, the first one found: the word stop, goal or
    /// issue, its first letter in either case, one space and a number, as whole words (the
    /// regular expressions `\b[Ss]top [0-9]+\b`, `\b[Gg]oal [0-9]+\b`, `\b[Ii]ssue [0-9]+\b`).
    fn diary_reference(text: &str) -> Option<&str> {
        let word = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
        let b = text.as_bytes();
        for i in 0..b.len() {
            if i > 0 && word(b[i - 1]) {
                continue;
            }
            for w in ["stop", "goal", "issue"] {
                let first = w.as_bytes()[0];
                if (b[i] != first && b[i] != first.to_ascii_uppercase())
                    || !b[i + 1..].starts_with(&w.as_bytes()[1..])
                    || b.get(i + w.len()) != Some(&b' ')
                {
                    continue;
                }
                let from = i + w.len() + 1;
                let digits = b[from..].iter().take_while(|c| c.is_ascii_digit()).count();
                let end = from + digits;
                if digits > 0 && b.get(end).is_none_or(|&c| !word(c)) {
                    return Some(&text[i..end]);
                }
            }
        }
        None
    }

    /// Documents and comments describe what is, not the sessions that made it: no `.md` or
    /// `.rs` file names a work stop, goal or issue by number (an upstream project's issue is
    /// named as `issue #1`, which this does not match). Fuzz corpora and test data are other
    /// programs' bytes and are not read.
    #[test]
    fn no_file_reads_as_a_work_diary() {
        let mut checked = 0;
        let mut found = Vec::new();
        for rel in listed_files() {
            if !(rel.ends_with(".md") || rel.ends_with(".rs"))
                || rel.starts_with("fuzz/corpus/")
                || rel.starts_with("testdata/")
            {
                continue;
            }
            let Ok(text) = fs::read_to_string(root().join(&rel)) else { continue };
            checked += 1;
            for (n, line) in text.lines().enumerate() {
                if let Some(hit) = diary_reference(line) {
                    found.push(format!("{rel}:{}: `{hit}`", n + 1));
                }
            }
        }
        assert!(checked > 100, "only {checked} files checked");
        assert!(found.is_empty(), "work-diary references:\n{}", found.join("\n"));
    }

    #[test]
    fn the_diary_matcher_matches_whole_words_only() {
        let hit = |s: &str| diary_reference(s).map(str::to_string);
        assert_eq!(
            hit(concat!("after S", "top 22: faster")).as_deref(),
            Some(concat!("St", "op 22"))
        );
        assert_eq!(
            hit(concat!("(is", "sue 18, g", "oal 4)")).as_deref(),
            Some(concat!("is", "sue 18"))
        );
        assert_eq!(hit(concat!("g", "oal 7.")).as_deref(), Some(concat!("go", "al 7")));
        assert_eq!(hit(concat!("Is", "sue 3")).as_deref(), Some(concat!("Is", "sue 3")));
        for fine in [
            "schematic4j issue #1",
            "nonstop 5",
            "stops 3",
            "stop 3rd",
            "STOP 3",
            "goals: 3",
            "issue-1.schem",
            "stop",
        ] {
            assert_eq!(hit(fine), None, "{fine}");
        }
    }

    /// Every repository path `docs/ARCHITECTURE.md` names in backticks (one starting with
    /// `crates/`, `docs/`, `xtask/`, `benches/`, `fuzz/`, `testdata/` or `.github/`) exists.
    #[test]
    fn every_path_architecture_names_exists() {
        let doc = fs::read_to_string(root().join("docs/ARCHITECTURE.md")).expect("ARCHITECTURE");
        // Inline code only: fenced blocks (the layer diagram) are left out.
        let mut inline = String::new();
        let mut fenced = false;
        for line in doc.lines() {
            if line.trim_start().starts_with("```") {
                fenced = !fenced;
            } else if !fenced {
                inline.push_str(line);
                inline.push('\n');
            }
        }
        let prefixes = ["crates/", "docs/", "xtask/", "benches/", "fuzz/", "testdata/", ".github/"];
        let mut checked = 0;
        let mut missing = Vec::new();
        for span in inline.split('`').skip(1).step_by(2) {
            let path = span.trim();
            if !prefixes.iter().any(|p| path.starts_with(p)) || path.contains(char::is_whitespace) {
                continue;
            }
            checked += 1;
            if !root().join(path).exists() {
                missing.push(path.to_string());
            }
        }
        assert!(checked > 20, "only {checked} paths found in docs/ARCHITECTURE.md");
        assert!(missing.is_empty(), "docs/ARCHITECTURE.md names missing paths: {missing:?}");
    }

    /// Every Rust source file of the workspace opens with a `//!` comment saying what it is
    /// for: a reader landing in any file learns its idea from its first line.
    #[test]
    fn every_source_file_opens_with_what_it_is_for() {
        let out = std::process::Command::new("git")
            .args(["ls-files", "--cached", "--others", "--exclude-standard", "--", "*.rs"])
            .current_dir(root())
            .output()
            .expect("git ls-files");
        let listed = String::from_utf8_lossy(&out.stdout);
        let mut checked = 0;
        for rel in listed.lines().filter(|r| !r.starts_with("fuzz/corpus/")) {
            let Ok(text) = fs::read_to_string(root().join(rel)) else { continue };
            checked += 1;
            let first = text.lines().next().unwrap_or("");
            assert!(first.starts_with("//!"), "{rel} does not open with a `//!` comment");
        }
        assert!(checked > 200, "only {checked} files checked");
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

    /// The modules of the facade (`crates/terrane/src`: a file or a folder's name) that each
    /// module's code names through `crate::` (outside comments and its `#[cfg(test)]` part).
    fn facade_imports() -> BTreeMap<String, std::collections::BTreeSet<String>> {
        let src = root().join("crates/terrane/src");
        let mut files: Vec<(String, PathBuf)> = Vec::new();
        let mut stack = vec![src.clone()];
        while let Some(dir) = stack.pop() {
            for e in fs::read_dir(&dir).expect("crates/terrane/src") {
                let path = e.expect("an entry").path();
                if path.is_dir() {
                    stack.push(path);
                } else if path.extension().is_some_and(|x| x == "rs") {
                    let rel = path.strip_prefix(&src).expect("under src");
                    let first = rel.components().next().expect("a name");
                    let module =
                        first.as_os_str().to_string_lossy().trim_end_matches(".rs").to_string();
                    if module != "lib" && !path.ends_with("tests.rs") {
                        files.push((module, path));
                    }
                }
            }
        }
        let modules: std::collections::BTreeSet<String> =
            files.iter().map(|(m, _)| m.clone()).collect();
        let mut out: BTreeMap<String, std::collections::BTreeSet<String>> = BTreeMap::new();
        for (module, path) in &files {
            let text = fs::read_to_string(path).expect("a source file");
            let code = text.split("#[cfg(test)]").next().unwrap_or("");
            let named = out.entry(module.clone()).or_default();
            for line in code.lines().filter(|l| !l.trim_start().starts_with("//")) {
                for (i, _) in line.match_indices("crate::") {
                    let rest = &line[i + "crate::".len()..];
                    let name: String =
                        rest.chars().take_while(|c| c.is_ascii_lowercase() || *c == '_').collect();
                    if name != *module && modules.contains(&name) {
                        named.insert(name);
                    }
                }
            }
        }
        out
    }

    /// The facade's modules form layers, as its crates do: no module names one that names it
    /// back, however far round (an import circle makes every module of it one idea).
    #[test]
    fn the_facades_modules_import_one_another_without_a_circle() {
        let imports = facade_imports();
        assert!(imports.len() > 20, "the facade's modules: {:?}", imports.keys());
        // Depth-first from each module; a module met again on the current path is a circle.
        fn visit<'a>(
            m: &'a str,
            imports: &'a BTreeMap<String, std::collections::BTreeSet<String>>,
            path: &mut Vec<&'a str>,
            done: &mut std::collections::BTreeSet<&'a str>,
        ) -> Option<Vec<String>> {
            if let Some(at) = path.iter().position(|p| *p == m) {
                let mut circle: Vec<String> = path[at..].iter().map(|s| s.to_string()).collect();
                circle.push(m.to_string());
                return Some(circle);
            }
            if !done.insert(m) {
                return None;
            }
            path.push(m);
            for next in imports.get(m).into_iter().flatten() {
                if let Some(c) = visit(next, imports, path, done) {
                    return Some(c);
                }
            }
            path.pop();
            None
        }
        let mut done = std::collections::BTreeSet::new();
        for m in imports.keys() {
            if let Some(circle) = visit(m, &imports, &mut Vec::new(), &mut done) {
                panic!("an import circle in crates/terrane/src: {}", circle.join(" -> "));
            }
        }
    }
}
