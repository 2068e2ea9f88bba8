//! `--help` of `wiregen` and of every subcommand is a golden under `tests/golden/help/`, and each shows examples.
//!
//! After changing a flag or a doc comment, regenerate the goldens with
//! `WIREGEN_UPDATE_GOLDEN=1 cargo test -p wiregen --test cli_help` (ignored when `CI` is set): it writes one file
//! per subcommand listed by `wiregen --help` and deletes goldens of subcommands that no longer exist.

#[path = "support/golden.rs"]
mod golden;

use std::path::{Path, PathBuf};
use std::process::Command;

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/golden/help")
}

/// `wiregen <args> --help`, at a fixed width, without colour.
fn help(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_wiregen"))
        .args(args)
        .arg("--help")
        .env("COLUMNS", "100")
        .env_remove("CLICOLOR_FORCE")
        .output()
        .unwrap();
    assert!(out.status.success(), "wiregen {args:?} --help failed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// Subcommand names from the `Commands:` section of the top-level help (without `help` itself).
fn subcommands(top: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut in_commands = false;
    for line in top.lines() {
        if line == "Commands:" {
            in_commands = true;
            continue;
        }
        if in_commands {
            if line.is_empty() || !line.starts_with(' ') {
                break;
            }
            // A command line has two spaces of indent; wrapped descriptions are indented further.
            if line.starts_with("  ") && !line.starts_with("   ") {
                let name = line.split_whitespace().next().unwrap();
                if name != "help" {
                    out.push(name.to_string());
                }
            }
        }
    }
    out
}

#[test]
fn help_goldens() {
    let top = help(&[]);
    let cmds = subcommands(&top);
    assert!(["generate", "check", "validate"].iter().all(|c| cmds.iter().any(|x| x == c)), "commands: {cmds:?}");
    let mut pages = vec![("wiregen".to_string(), top)];
    for c in &cmds {
        pages.push((c.clone(), help(&[c])));
    }
    let dir = golden_dir();
    let mut failures = Vec::new();
    for (name, text) in &pages {
        assert!(text.contains("Example"), "`{name} --help` shows no example:\n{text}");
        if let Err(e) = golden::check_golden(&dir.join(format!("{name}.txt")), text) {
            failures.push(e);
        }
    }
    // Goldens of subcommands that no longer exist.
    for e in std::fs::read_dir(&dir).unwrap() {
        let path = e.unwrap().path();
        let stem = path.file_stem().unwrap().to_string_lossy().to_string();
        if !pages.iter().any(|(n, _)| *n == stem) {
            if golden::updating() {
                std::fs::remove_file(&path).unwrap();
            } else {
                failures.push(format!("{} has no subcommand", path.display()));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn help_subcommand_matches_flag() {
    // `wiregen help generate` and `wiregen generate --help` are the same page.
    let out =
        Command::new(env!("CARGO_BIN_EXE_wiregen")).args(["help", "generate"]).env("COLUMNS", "100").output().unwrap();
    assert_eq!(String::from_utf8(out.stdout).unwrap(), help(&["generate"]));
}

#[test]
fn help_takes_its_own_help_and_refuses_an_unknown_command() {
    // `wiregen help --help` was clap's usage error (its `help` subcommand took only subcommand names).
    let page = help(&["help"]);
    assert!(page.starts_with("Print this message or the help of the given subcommand(s)"), "{page}");
    assert!(page.contains("Usage: wiregen help [COMMAND]..."), "{page}");
    // `wiregen help` is the top-level page; an unknown name is a usage error naming it.
    let top = Command::new(env!("CARGO_BIN_EXE_wiregen")).arg("help").env("COLUMNS", "100").output().unwrap();
    assert_eq!(String::from_utf8(top.stdout).unwrap(), help(&[]));
    let bad = Command::new(env!("CARGO_BIN_EXE_wiregen")).args(["help", "nope"]).output().unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("unrecognized subcommand 'nope'"));
}
