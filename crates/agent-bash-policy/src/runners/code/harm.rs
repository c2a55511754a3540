//! The harm interpreter code does by itself, said as the shell command it amounts to:
//! processes signalled, disks and vital files written, cloud objects and files deleted.

use super::literals::{balanced_argument, string_literal, string_literals};
use super::*;

/// How code writes a file.
const WRITING: &[&str] = &[
    "write",
    "append",
    "file_put_contents",
    "copy(",
    "File.new",
    "fputs",
];

/// Start-up, credential and system files whose writing is harm.
const VITAL_PLACES: &[&str] = &[
    ".bashrc",
    ".profile",
    ".zshrc",
    ".bash_profile",
    "authorized_keys",
    "/etc/sudoers",
    "/etc/passwd",
    "/etc/shadow",
    "/etc/crontab",
    "ld.so.preload",
    "/etc/hosts",
    "/etc/sudoers.d",
];

/// Calls through which code runs a shell or a program (`os:cmd(`, `"…".execute()`).
const SHELLING: &[&str] = &[
    "os:cmd(",
    ".execute()",
    "(system ",
    "system(",
    "Bun.$`",
    "$`",
    "exec(",
    "execSync(",
    "spawn(",
    "popen(",
    "os.execute(",
    "shell(",
    "run(`",
    "Process.run(",
    "Command(",
    "process-run",
    "run-program",
];

/// Cloud SDK calls that delete buckets, objects, databases or machines.
const SDK_DELETIONS: &[&str] = &[
    "deleteBucket(",
    "DeleteBucketCommand",
    "deleteObjects(",
    "DeleteObjectsCommand",
    ".delete()",
    "delete_bucket(",
    "delete_objects(",
    "delete_db_instance(",
    "delete_table(",
    "terminate_instances(",
];

/// Harm interpreter code does by itself, said as the shell command it amounts to so the
/// rules judge it: every process signalled (`os.kill(-1, …)`), the home directory deleted
/// by any deletion call, a start-up, credential or system file written, and the string
/// literals handed to a shell where the code runs one (`os:cmd("…")`, `"…".execute()`).
pub(super) fn code_harm(code: &str) -> Vec<String> {
    let mut found = Vec::new();
    let compact: String = code.chars().filter(|c| !c.is_whitespace()).collect();
    if kills_everything(&compact) {
        found.push("kill -9 -1".to_owned());
    }
    let opens_to_write = [",'a')", ",\"a\")", ",'w')", ",\"w\")", ",'ab')", ",'wb')"]
        .iter()
        .any(|mode| compact.contains(mode));
    // A disk opened and written: the raw device.
    if (opens_to_write
        || code.contains("r+b")
        || code.contains(".write(")
        || code.contains("writeFile"))
        && let Some(at) = code
            .find("/dev/sd")
            .or_else(|| code.find("/dev/nvme"))
            .or_else(|| code.find("/dev/vd"))
    {
        let device: String = code[at..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '/')
            .collect();
        found.push(format!("dd if=/dev/zero of={device}"));
    }
    let named = |place: &&&str| {
        ['"', '\'', '`', ')', '/', '.']
            .iter()
            .any(|end| code.contains(&format!("{place}{end}")))
    };
    if (opens_to_write || WRITING.iter().any(|call| code.contains(call)))
        && let Some(place) = VITAL_PLACES.iter().find(named)
    {
        let target = if place.starts_with('/') {
            (*place).to_owned()
        } else if *place == "authorized_keys" {
            "~/.ssh/authorized_keys".to_owned()
        } else {
            format!("~/{place}")
        };
        found.push(format!("cp /dev/null {target}"));
    }
    // Cloud objects deleted through an SDK: said as the CLI's delete.
    if (code.contains("boto3") || code.contains("aws-sdk"))
        && SDK_DELETIONS.iter().any(|call| compact.contains(call))
    {
        found.push("aws s3 rb s3://bucket --force".to_owned());
    }
    // A kernel module loaded by the raw system call (313 is finit_module, 175 init_module on
    // x86_64).
    if ["syscall(313", "syscall(175", "finit_module", "init_module("]
        .iter()
        .any(|call| compact.contains(call))
    {
        found.push("insmod module.ko".to_owned());
    }
    if SHELLING.iter().any(|call| code.contains(call)) {
        found.extend(shell_literals(code));
    }
    found
}

/// True if code signals every process (`os.kill(-1, …)`), `compact` being it without
/// blanks.
fn kills_everything(compact: &str) -> bool {
    [
        "kill(-1",
        "kill9,-1",
        "kill(:KILL,-1",
        "kill('KILL',-1",
        "kill(-1,",
        ".kill(-1",
    ]
    .iter()
    .any(|form| compact.contains(form))
        || (compact.contains("kill") && compact.contains(",-1)"))
}

/// The string literals of code that runs a shell which start like a harmful command, and
/// its backquoted templates (`Bun.$\`rm -rf ~\``).
fn shell_literals(code: &str) -> Vec<String> {
    let mut found = Vec::new();
    for literal in string_literals(code) {
        let first = literal.split_whitespace().next().unwrap_or("");
        if matches!(
            first,
            "rm" | "sh"
                | "bash"
                | "curl"
                | "wget"
                | "shutdown"
                | "reboot"
                | "mkfs"
                | "dd"
                | "chmod"
                | "chown"
                | "kill"
                | "pkill"
                | "killall"
                | "crontab"
                | "nc"
                | "halt"
                | "poweroff"
        ) {
            // `"rm -rf " + homedir()`: the literal's end is a home directory.
            let mut script = literal.clone();
            if literal.ends_with(' ') && HOMES.iter().any(|home| code.contains(home)) {
                script.push('~');
            }
            found.push(script);
        }
    }
    // Backquoted templates (`Bun.$\`rm -rf ~\``) hold shell text too.
    for part in code.split('`').skip(1).step_by(2) {
        if !part.is_empty() {
            found.push(part.replace("${", "$(").replace('}', ")"));
        }
    }
    found
}

/// Recursive deletions in interpreter code (`shutil.rmtree(Path.home())`), said as the `rm
/// -r` they amount to, so the deletion rules judge their target.
pub(super) fn code_deletions(code: &str) -> Vec<String> {
    const DELETIONS: &[&str] = &[
        "rmtree(",
        "remove_tree(",
        "rm_rf(",
        "rm_r(",
        "rmSync(",
        "rmdirSync(",
        "fs.rm(",
        "remove_dir_all(",
        "remove_dir(",
        "rimraf(",
        "Deno.remove(",
        "unlinkSync(",
        "os.removedirs(",
        "rm(",
        "unlink(",
        "unlink ",
        "rm_rf!(",
        "delete-directory/files ",
        "(delete-directory ",
        "file delete ",
        "Deno.remove(",
        "os.remove(",
        "os.rmdir(",
        "FileUtils.rm_r(",
        "array_map(\"unlink\", glob(",
        "array_map('unlink', glob(",
    ];

    let mut found = Vec::new();
    for call in DELETIONS {
        let mut from = 0;
        while let Some(at) = code[from..].find(call) {
            let start = from + at + call.len();
            from = start;
            let argument = balanced_argument(&code[start..]);
            if HOMES.iter().any(|home| argument.contains(home)) {
                found.push("rm -rf ~".to_owned());
            } else if let Some(text) = string_literal(argument.trim()) {
                found.push(format!("rm -rf '{}'", text.replace('\'', "")));
            }
        }
    }
    found
}
