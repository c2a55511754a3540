//! Commands in interpreter code given on the command line: the strings handed to a shell,
//! and the harm the code does by itself, said as the shell command it amounts to. This
//! file gathers them; the calls of each kind and the literals they read have their files.

use super::*;

mod decoded;
mod execs;
mod harm;
mod literals;

use decoded::decoded_commands;
use execs::{code_execs, lisp_shell_calls, tcl_execs};
use harm::{code_deletions, code_harm};
use literals::{first_argument, quoted_prefix};

/// Calls that hand their first argument to a shell or run it as a program, across
/// languages.
const SHELL_CALLS: &[&str] = &[
    "os.system(",
    "os.popen(",
    "subprocess.run(",
    "subprocess.call(",
    "subprocess.Popen(",
    "subprocess.check_call(",
    "subprocess.check_output(",
    "subprocess.getoutput(",
    "subprocess.getstatusoutput(",
    "commands.getoutput(",
    "pty.spawn(",
    "os.execvp(",
    "os.execv(",
    "os.execl(",
    "os.execlp(",
    "os.spawnlp(",
    "execSync(",
    "exec(",
    "spawnSync(",
    "spawn(",
    "execFileSync(",
    "execFile(",
    "system(",
    "shell_exec(",
    "passthru(",
    "proc_open(",
    "popen(",
    "os.execute(",
    "io.popen(",
    "IO.popen(",
    "Open3.capture2(",
    "Open3.capture3(",
    "Kernel.exec(",
    "Kernel.system(",
    "%x(",
    "qx(",
    "qx{",
    "Deno.run(",
    "Bun.spawn(",
    "Bun.spawnSync(",
    "Runtime.getRuntime().exec(",
];

/// Python's `subprocess` calls as a module alias names them (`sp.run(`), when the code
/// imports `subprocess`.
const SUBPROCESS_CALLS: &[&str] = &[
    ".run(",
    ".call(",
    ".Popen(",
    ".check_output(",
    ".check_call(",
    ".getoutput(",
];

/// Code that runs a command or code made at run time (`system $ENV{HOOK}`,
/// `eval(File.read(ARGV[0]))`).
const RUN_TIME_CODE: &[&str] = &[
    "system $",
    "exec $",
    "eval(File.read",
    "eval(IO.read",
    "eval(open(",
    "eval(fs.readFileSync",
    "eval(sys.argv",
    "eval(process.argv",
    "exec(open(sys.argv",
    "exec(sys.argv",
];

/// Perl's and Ruby's `system "…"` and `exec '…'` without parentheses.
const BARE_CALLS: &[&str] = &[
    "system \"",
    "system '",
    "exec \"",
    "exec '",
    "system qq{",
    "exec qq{",
];

/// Loops that never end: forking or growing in one is a flood.
const ENDLESS: &[&str] = &[
    "iter(int, 1)",
    "iter(int,1)",
    "itertools.count()",
    "while True",
    "while 1",
    "while(1)",
    "while (1)",
    "while true",
    "for(;;)",
    "for (;;)",
    "loop {",
    "loop do",
    "fork while",
    "fork until",
    "fork for",
    "fork() while",
];

/// Shell commands in code given to an interpreter on its command line (`python -c`, `perl
/// -e`, `node -e`, `awk`): the string given to `system`, `os.system`, `subprocess.*`,
/// `execSync`, backquotes, … When the string is not a literal, its text is returned as a
/// word bash cannot read (`$(…)`), so the script is unknown.
pub(crate) fn code_commands(language: &str, code: &str) -> Vec<String> {
    let mut commands = shell_call_arguments(code);
    commands.extend(code_deletions(code));
    commands.extend(code_harm(code));
    commands.extend(awk_pipes(code));
    commands.extend(code_execs(code));
    commands.extend(lisp_shell_calls(code));
    // `system $ENV{HOOK}`, `eval(File.read(ARGV[0]))`: a command or code made at run time.
    for call in RUN_TIME_CODE {
        if code.contains(call) {
            commands.push("$(code-built-at-run-time)".to_owned());
        }
    }
    commands.extend(bare_calls(code));
    commands.extend(decoded_commands(language, code));
    if ["tclsh", "wish", "expect"]
        .iter()
        .any(|name| language.starts_with(name))
    {
        commands.extend(tcl_execs(code));
    }
    if floods(code) {
        // A loop that forks without end is a fork bomb: said as the shell's own.
        commands.push(":(){ :|:& };:".to_owned());
    }
    // Backquotes in Perl, Ruby and PHP run shell text too (in Python they are nothing, in
    // JavaScript a template).
    if ["perl", "ruby", "php"]
        .iter()
        .any(|name| language.starts_with(name))
    {
        commands.extend(backquoted(code));
    }
    commands
}

/// The first argument of each shell call in `code` (`os.system("…")`, `execSync(…)`).
fn shell_call_arguments(code: &str) -> Vec<String> {
    let mut commands = Vec::new();
    let calls = SHELL_CALLS.iter().chain(
        SUBPROCESS_CALLS
            .iter()
            .filter(|_| code.contains("subprocess")),
    );
    for call in calls {
        let mut from = 0;
        while let Some(found) = code[from..].find(call) {
            let start = from + found + call.len();
            from = start;
            // `exec(` and `system(` are also parts of longer names (`os.exec(`, `execSync(`).
            let before = code[..start - call.len()].chars().last();
            if matches!(*call, "exec(" | "system(" | "spawn(" | "popen(")
                && before.is_some_and(|c| c.is_alphanumeric() || c == '_')
            {
                continue;
            }
            commands.push(first_argument(&code[start..]));
        }
    }
    commands
}

/// awk's `print … | "cmd"`: the string is a command awk runs with the shell.
fn awk_pipes(code: &str) -> Vec<String> {
    let mut commands = Vec::new();
    for part in code.split('|').skip(1) {
        if let Some(literal) = part
            .trim_start()
            .strip_prefix('"')
            .and_then(|rest| rest.split('"').next())
        {
            commands.push(literal.to_owned());
        }
    }
    commands
}

/// The quoted commands of Perl's and Ruby's `system "…"` and `exec '…'` without
/// parentheses.
fn bare_calls(code: &str) -> Vec<String> {
    let mut commands = Vec::new();
    for call in BARE_CALLS {
        for (at, _) in code.match_indices(call) {
            let before = code[..at].chars().last();
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$' || c == '.') {
                continue;
            }
            let rest = &code[at + call.len() - 1..];
            if let Some(text) = quoted_prefix(rest) {
                commands.push(text);
            }
        }
    }
    commands
}

/// True if code forks, or takes memory, in a loop without end: a fork bomb, or the same
/// flood of memory (`while True: a.append(bytearray(1<<30))`).
fn floods(code: &str) -> bool {
    let starts_processes = ["fork", "spawn(", "Popen(", "exec(", "system("]
        .iter()
        .any(|call| code.contains(call));
    let grows = [
        "bytearray(",
        ".append(",
        ".push(",
        "malloc(",
        "Buffer.alloc(",
    ]
    .iter()
    .any(|call| code.contains(call));
    (starts_processes || grows) && ENDLESS.iter().any(|form| code.contains(form))
}

/// The shell texts in backquotes (Perl, Ruby, PHP), home directories written as `~`.
fn backquoted(code: &str) -> Vec<String> {
    let mut commands = Vec::new();
    let mut parts = code.split('`');
    parts.next();
    while let (Some(inside), Some(_)) = (parts.next(), parts.next().or(Some(""))) {
        if !inside.is_empty() {
            commands.push(homes_as_tilde(inside));
        }
    }
    commands
}

/// Shell text with the interpolations that give the home directory (`#{Dir.home}`,
/// `${os.homedir()}`) written as `~`, so the rules see where it points.
fn homes_as_tilde(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(['#', '$']) {
        let opened = rest[at + 1..].starts_with('{');
        let close = rest[at..].find('}');
        match close {
            Some(close) if opened => {
                let inside = &rest[at + 2..at + close];
                out.push_str(&rest[..at]);
                if HOMES
                    .iter()
                    .any(|home| inside.contains(home.trim_matches(['#', '{', '}'])))
                    || inside == "HOME"
                {
                    out.push('~');
                } else {
                    out.push_str(&rest[at..=at + close]);
                }
                rest = &rest[at + close + 1..];
            }
            _ => {
                out.push_str(&rest[..=at]);
                rest = &rest[at + 1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// Expressions that give the home directory in interpreter code.
const HOMES: &[&str] = &[
    "expanduser(\"~\")",
    "expanduser('~')",
    "Path.home()",
    "$ENV{HOME}",
    "$ENV{'HOME'}",
    "environ[\"HOME\"]",
    "environ['HOME']",
    "getenv(\"HOME\")",
    "getenv('HOME')",
    "homedir()",
    "Dir.home",
    "ENV[\"HOME\"]",
    "ENV['HOME']",
    "process.env.HOME",
    "ENVIRON[\"HOME\"]",
    "#{Dir.home}",
    "#{ENV['HOME']}",
    "\"~\"",
    "'~'",
    "$HOME",
    "home-dir",
    "user_home",
    "homedir",
    "Deno.env.get('HOME')",
    "Deno.env.get(\"HOME\")",
    "$env(HOME)",
    "os.getenv(\"HOME\")",
    "\"~/",
    "'~/",
];
