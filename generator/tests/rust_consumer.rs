//! The generated crate as a consumer outside this workspace builds it. Cargo unites features across a build, and
//! this workspace turns on serde_json's `preserve_order` (and never `arbitrary_precision`), so tests inside it
//! cannot see what a crate built elsewhere does. This test copies `generated/rust` into a scratch consumer whose
//! build turns `arbitrary_precision` on, builds it with its own `Cargo.lock` and target (offline: every crate is
//! in the local cache once the workspace has built), and reads messages through it.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("generator/ has a parent").to_path_buf()
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("read_dir") {
        let entry = entry.expect("entry");
        let path = entry.path();
        if path.is_dir() {
            copy_dir(&path, &to.join(entry.file_name()));
        } else {
            std::fs::copy(&path, to.join(entry.file_name())).expect("copy");
        }
    }
}

const MAIN: &str = r##"
fn main() {
    // A whole number written as a fraction, numbers in an open object's payload (fractions, -0, past 64 bits),
    // keys out of order: read as the default features read them, written back in input order.
    let m = session_wire::parse_envelope(
        r#"{"id":"m","time":1000.0,"role":"agent","ev":{"t":"tool-call-start","call":"c","name":"n","title":"t","description":"d","args":{"z":1.5,"a":-0,"big":18446744073709551616,"n":{"y":1,"b":2}}}}"#,
    );
    match m {
        Ok(m) => println!("{}", serde_json::to_string(&m).expect("serializes")),
        Err(e) => println!("refused: {e}"),
    }
    let far = session_wire::parse_envelope(r#"{"id":"a","time":1e400,"role":"user","ev":{"t":"abort"}}"#);
    println!("{:?}", far.err().map(|e| (e.rule().id(), e.pointer().to_string())));
    // Through a `serde_json::Value`, which holds numbers as text in this build: as from text. An integer past 64
    // bits is the nearest double (`serde_json::from_value` refused it: "invalid type: integer as u128"); a number
    // past the double range is refused where it is (`from_value`, `validate_value` and the stream checker took
    // `"args":{"a":1e400}` and wrote it back as `1e+400`; in `time` it was "expected an integer, got an integer").
    let big = r#"{"id":"m","time":1,"role":"agent","ev":{"t":"tool-call-start","call":"c","name":"n","title":"t","description":"d","args":{"big":18446744073709551616}}}"#;
    let v: serde_json::Value = serde_json::from_str(big).expect("a value");
    let typed: session_wire::Envelope = serde_json::from_value(v.clone()).expect("serde_json::from_value");
    println!("{}", serde_json::to_string(&typed).expect("serializes"));
    let checked = session_wire::Envelope::from_value(&v).expect("from_value");
    println!("{}", serde_json::to_string(&checked).expect("serializes"));
    for line in [
        r#"{"id":"m","time":1,"role":"agent","ev":{"t":"tool-call-start","call":"c","name":"n","title":"t","description":"d","args":{"a":1e400}}}"#,
        r#"{"id":"m","time":1e400,"role":"user","ev":{"t":"abort"}}"#,
    ] {
        let v: serde_json::Value = serde_json::from_str(line).expect("a value");
        let e = session_wire::Envelope::from_value(&v).expect_err("out of range");
        println!("{} {} {}", e.rule().id(), e.pointer(), e.message());
        let e = session_wire::validate_value(&v).expect_err("out of range");
        println!("{} {}", e.rule().id(), e.pointer());
        let r = session_wire::stream::StreamChecker::new().check_value(&v);
        println!("{} {} {}", r.valid, r.errors[0].rule, r.errors[0].pointer);
    }
}
"##;

#[test]
fn a_consumer_whose_build_turns_on_arbitrary_precision_reads_numbers_as_numbers() {
    let base = Path::new(env!("CARGO_TARGET_TMPDIR")).join("rust-consumer");
    let _ = std::fs::remove_dir_all(base.join("session-wire"));
    copy_dir(&root().join("generated/rust"), &base.join("session-wire"));
    let manifest = base.join("session-wire/Cargo.toml");
    let mut toml = std::fs::read_to_string(&manifest).expect("Cargo.toml");
    toml.push_str("\n[workspace]\n");
    std::fs::write(&manifest, toml).expect("write");
    let app = base.join("app");
    std::fs::create_dir_all(app.join("src")).expect("mkdir");
    std::fs::write(
        app.join("Cargo.toml"),
        "[package]\nname = \"app\"\nversion = \"0.0.0\"\nedition = \"2021\"\npublish = false\n\n[dependencies]\n\
         session-wire = { path = \"../session-wire\" }\n\
         serde_json = { version = \"1\", features = [\"arbitrary_precision\"] }\n\n[workspace]\n",
    )
    .expect("write");
    std::fs::write(app.join("src/main.rs"), MAIN).expect("write");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = Command::new(cargo)
        .args(["run", "--offline", "--quiet", "--color", "never"])
        .current_dir(&app)
        .env("CARGO_TARGET_DIR", base.join("target"))
        .env_remove("RUSTFLAGS")
        .output()
        .expect("run cargo");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(
        lines,
        [
            r#"{"id":"m","time":1000,"role":"agent","ev":{"t":"tool-call-start","call":"c","name":"n","title":"t","description":"d","args":{"z":1.5,"a":-0.0,"big":1.8446744073709552e+19,"n":{"y":1,"b":2}}}}"#,
            r#"Some(("malformed-json", ""))"#,
            r#"{"id":"m","time":1,"role":"agent","ev":{"t":"tool-call-start","call":"c","name":"n","title":"t","description":"d","args":{"big":1.8446744073709552e+19}}}"#,
            r#"{"id":"m","time":1,"role":"agent","ev":{"t":"tool-call-start","call":"c","name":"n","title":"t","description":"d","args":{"big":1.8446744073709552e+19}}}"#,
            "malformed-json /ev/args/a malformed JSON: number out of range",
            "malformed-json /ev/args/a",
            "false malformed-json /ev/args/a",
            "malformed-json /time malformed JSON: number out of range",
            "malformed-json /time",
            "false malformed-json /time",
        ],
        "{stdout}"
    );
}
