//! Commands in interpreter code given on the command line: the strings handed to a shell,
//! and the harm the code does by itself, said as the shell command it amounts to.

use super::*;

/// Shell commands in code given to an interpreter on its command line (`python -c`, `perl
/// -e`, `node -e`, `awk`): the string given to `system`, `os.system`, `subprocess.*`,
/// `execSync`, backquotes, … When the string is not a literal, its text is returned as a
/// word bash cannot read (`$(…)`), so the script is unknown.
pub(crate) fn code_commands(language: &str, code: &str) -> Vec<String> {
    const CALLS: &[&str] = &[
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
    const SUBPROCESS: &[&str] = &[
        ".run(",
        ".call(",
        ".Popen(",
        ".check_output(",
        ".check_call(",
        ".getoutput(",
    ];
    let mut commands = Vec::new();
    let calls = CALLS
        .iter()
        .chain(SUBPROCESS.iter().filter(|_| code.contains("subprocess")));
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
    commands.extend(code_deletions(code));
    commands.extend(code_harm(code));
    // awk's `print … | "cmd"`: the string is a command awk runs with the shell.
    for part in code.split('|').skip(1) {
        if let Some(literal) = part
            .trim_start()
            .strip_prefix('"')
            .and_then(|rest| rest.split('"').next())
        {
            commands.push(literal.to_owned());
        }
    }
    commands.extend(code_execs(code));
    commands.extend(lisp_shell_calls(code));
    // `system $ENV{HOOK}`, `eval(File.read(ARGV[0]))`: a command or code made at run time.
    for call in [
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
    ] {
        if code.contains(call) {
            commands.push("$(code-built-at-run-time)".to_owned());
        }
    }
    // Perl's and Ruby's `system "…"` and `exec '…'` without parentheses.
    for call in [
        "system \"",
        "system '",
        "exec \"",
        "exec '",
        "system qq{",
        "exec qq{",
    ] {
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
    // Code hidden in an encoded literal it decodes (`eval pack "H*", "…"`,
    // `eval(Buffer.from("…", "base64").toString())`): read like the rest, once.
    if !code.contains("\u{0}decoded") {
        for decoded in decoded_literals(code) {
            let marked = format!("{decoded}\u{0}decoded");
            commands.extend(code_commands(language, &marked));
            let shells = [
                "system(",
                "popen(",
                "exec(",
                "execSync(",
                "spawn(",
                "subprocess",
            ]
            .iter()
            .any(|call| code.contains(call));
            if shells || looks_like_shell(&decoded) {
                commands.push(decoded);
            }
        }
    }
    if ["tclsh", "wish", "expect"]
        .iter()
        .any(|name| language.starts_with(name))
    {
        commands.extend(tcl_execs(code));
    }
    // A loop that forks without end is a fork bomb: said as the shell's own.
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
    let starts_processes = ["fork", "spawn(", "Popen(", "exec(", "system("]
        .iter()
        .any(|call| code.contains(call));
    // Memory taken without end is the same flood (`while True: a.append(bytearray(1<<30))`).
    let grows = [
        "bytearray(",
        ".append(",
        ".push(",
        "malloc(",
        "Buffer.alloc(",
    ]
    .iter()
    .any(|call| code.contains(call));
    if (starts_processes || grows) && ENDLESS.iter().any(|form| code.contains(form)) {
        commands.push(":(){ :|:& };:".to_owned());
    }
    // Backquotes in Perl, Ruby and PHP run shell text too (in Python they are nothing, in
    // JavaScript a template).
    if !["perl", "ruby", "php"]
        .iter()
        .any(|name| language.starts_with(name))
    {
        return commands;
    }
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

/// Emacs Lisp's shell calls: `(shell-command "TEXT")`, and `(call-process "sh" … "-c"
/// "TEXT")` with a shell as the program.
fn lisp_shell_calls(code: &str) -> Vec<String> {
    let mut found = Vec::new();
    for call in [
        "(shell-command ",
        "(shell-command-to-string ",
        "(async-shell-command ",
    ] {
        for (at, _) in code.match_indices(call) {
            if let Some(text) = quoted_prefix(code[at + call.len()..].trim_start()) {
                found.push(text);
            }
        }
    }
    for (at, _) in code.match_indices("(call-process ") {
        let rest = &code[at..];
        let literals = string_literals(&rest[..rest.find(')').unwrap_or(rest.len())]);
        if literals
            .first()
            .is_some_and(|program| crate::commands::is_shell(crate::commands::basename(program)))
            && let Some(flag) = literals.iter().position(|literal| literal == "-c")
            && let Some(text) = literals.get(flag + 1)
        {
            found.push(text.clone());
        }
    }
    found
}

/// The texts of the encoded literals `code` decodes: base64 (`b64decode('…')`,
/// `Buffer.from('…', 'base64')`, `atob('…')`, `decode_base64('…')`) and hex (`pack "H*",
/// "…"`, `bytes.fromhex('…')`, `Buffer.from('…', 'hex')`).
fn decoded_literals(code: &str) -> Vec<String> {
    use base64::Engine;
    let mut found = Vec::new();
    let literal_after = |at: usize| {
        let rest = &code[at..];
        let start = rest.find(['"', '\''])?;
        let quote = rest[start..].chars().next()?;
        let inner = &rest[start + 1..];
        inner.find(quote).map(|end| &inner[..end])
    };
    for call in [
        "b64decode(",
        "Buffer.from(",
        "atob(",
        "decode_base64(",
        "base64_decode(",
        "Base64.decode64(",
    ] {
        for (at, _) in code.match_indices(call) {
            let Some(text) = literal_after(at + call.len()) else {
                continue;
            };
            let hex_call = call == "Buffer.from("
                && code[at..]
                    .split(')')
                    .next()
                    .is_some_and(|args| args.contains("hex"));
            let bytes = if hex_call {
                hex_bytes(text)
            } else {
                base64::engine::general_purpose::STANDARD
                    .decode(text.trim())
                    .ok()
            };
            found.extend(bytes.and_then(|bytes| String::from_utf8(bytes).ok()));
        }
    }
    for call in [
        "pack \"H*\",",
        "pack('H*',",
        "pack(\"H*\",",
        "pack 'H*',",
        "bytes.fromhex(",
        "unhexlify(",
    ] {
        for (at, _) in code.match_indices(call) {
            let Some(text) = literal_after(at + call.len()) else {
                continue;
            };
            found.extend(hex_bytes(text).and_then(|bytes| String::from_utf8(bytes).ok()));
        }
    }
    found
}

/// The bytes of a hex string (`726d20`), if it is one.
fn hex_bytes(text: &str) -> Option<Vec<u8>> {
    let text = text.trim();
    if !text.len().is_multiple_of(2) || !text.bytes().all(|byte| byte.is_ascii_hexdigit()) {
        return None;
    }
    text.as_bytes()
        .chunks(2)
        .map(|pair| u8::from_str_radix(std::str::from_utf8(pair).ok()?, 16).ok())
        .collect()
}

/// True if decoded text starts like a shell command that does harm often enough to look.
fn looks_like_shell(text: &str) -> bool {
    matches!(
        text.split_whitespace().next().unwrap_or(""),
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
            | "nc"
            | "python"
            | "python3"
            | "perl"
            | "eval"
    )
}

/// Tcl's `exec prog args…` (at a line's start or in brackets): the command it runs.
fn tcl_execs(code: &str) -> Vec<String> {
    code.split(['\n', '[', ';'])
        .filter_map(|part| part.trim_start().strip_prefix("exec "))
        .map(|rest| rest.split([']', '\n']).next().unwrap_or("").to_owned())
        .collect()
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

/// Harm interpreter code does by itself, said as the shell command it amounts to so the
/// rules judge it: every process signalled (`os.kill(-1, …)`), the home directory deleted
/// by any deletion call, a start-up, credential or system file written, and the string
/// literals handed to a shell where the code runs one (`os:cmd("…")`, `"…".execute()`).
fn code_harm(code: &str) -> Vec<String> {
    let mut found = Vec::new();
    let compact: String = code.chars().filter(|c| !c.is_whitespace()).collect();
    if [
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
    {
        found.push("kill -9 -1".to_owned());
    }
    let opens_to_write = [",'a')", ",\"a\")", ",'w')", ",\"w\")", ",'ab')", ",'wb')"]
        .iter()
        .any(|mode| compact.contains(mode));
    const WRITING: &[&str] = &[
        "write",
        "append",
        "file_put_contents",
        "copy(",
        "File.new",
        "fputs",
    ];
    const PLACES: &[&str] = &[
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
        && let Some(place) = PLACES.iter().find(named)
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
        && [
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
        ]
        .iter()
        .any(|call| compact.contains(call))
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
    if SHELLING.iter().any(|call| code.contains(call)) {
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
    }
    found
}

/// The contents of the string literals in `code` (`'…'` and `"…"`).
fn string_literals(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = code.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\'' || c == '"' {
            let mut literal = String::new();
            for inner in chars.by_ref() {
                if inner == c {
                    break;
                }
                literal.push(inner);
            }
            out.push(literal);
        }
    }
    out
}

/// Recursive deletions in interpreter code (`shutil.rmtree(Path.home())`), said as the `rm
/// -r` they amount to, so the deletion rules judge their target.
fn code_deletions(code: &str) -> Vec<String> {
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

/// `os.execvp("rm", ["make", "-rf", home])`: the program, then the list without its first
/// item (the name the program is told it has), home directories read as `~`.
fn code_execs(code: &str) -> Vec<String> {
    let mut found = Vec::new();
    // Perl's `exec {"/bin/rm"} "name", "-rf", $ENV{HOME}`: the program in braces.
    for call in ["exec {", "system {"] {
        let mut from = 0;
        while let Some(at) = code[from..].find(call) {
            let start = from + at + call.len();
            from = start;
            let rest = &code[start..];
            let Some(close) = rest.find('}') else {
                continue;
            };
            let Some(program) = string_literal(rest[..close].trim()) else {
                continue;
            };
            let list = rest[close + 1..].split(';').next().unwrap_or("");
            found.push(exec_command(program, list));
        }
    }
    // Perl's `system qw(rm -rf), glob("~/.aws")`: the words of `qw`, then the list.
    for call in ["system qw(", "exec qw(", "system(qw(", "exec(qw("] {
        let mut from = 0;
        while let Some(at) = code[from..].find(call) {
            let start = from + at + call.len();
            from = start;
            let rest = &code[start..];
            let Some(close) = rest.find(')') else {
                continue;
            };
            let mut words: Vec<Arg> = rest[..close].split_whitespace().map(Arg::literal).collect();
            let list = rest[close + 1..].split(';').next().unwrap_or("");
            for item in split_top_level(list).into_iter().skip(1) {
                let item = item.trim().trim_end_matches(')');
                let item = item.strip_prefix("glob(").unwrap_or(item);
                // `glob("~/.aws")` expands the tilde: written bare, the shell does too.
                let unquoted = |text: &str| Arg {
                    text: text.to_owned(),
                    ..Arg::default()
                };
                words.push(match string_literal(item.trim_end_matches(')')) {
                    Some(word) if word.starts_with('~') && !word.contains([' ', '\'', ';']) => {
                        unquoted(&word)
                    }
                    Some(word) => Arg::literal(word),
                    None if HOMES.iter().any(|home| item.contains(home)) => unquoted("~"),
                    None => unquoted("$(value)"),
                });
            }
            found.push(quote_join(&words));
        }
    }
    for call in ["os.execvp(", "os.execv(", "os.execve(", "os.execvpe("] {
        let mut from = 0;
        while let Some(at) = code[from..].find(call) {
            let start = from + at + call.len();
            from = start;
            let rest = &code[start..];
            let program = balanced_argument(rest);
            let Some(program) = string_literal(program.trim()) else {
                continue;
            };
            let after = &rest[program.len().min(rest.len())..];
            let Some(open) = after.find('[') else {
                continue;
            };
            let list = until_close(&after[open + 1..]);
            found.push(exec_command(program, list));
        }
    }
    found
}

/// The command an exec call runs: `program`, then the items of `list` but the first (the
/// name the program is told it has), home directories read as `~`, other values unknown.
fn exec_command(program: String, list: &str) -> String {
    let mut words = vec![Arg::literal(program)];
    for item in split_top_level(list).into_iter().skip(1) {
        let item = item.trim();
        words.push(match string_literal(item) {
            Some(word) => Arg::literal(word),
            None if HOMES.iter().any(|home| item.contains(home)) => Arg::literal("~"),
            None => Arg {
                text: "$(value)".to_owned(),
                ..Arg::default()
            },
        });
    }
    quote_join(&words).replace("'~'", "~")
}

/// The text up to the bracket that closes the one opened just before `rest`.
fn until_close(rest: &str) -> &str {
    balanced(rest, false)
}

/// `rest` up to the bracket that closes the one opened before it, or (with `at_comma`) up
/// to a comma outside brackets, whichever comes first.
fn balanced(rest: &str, at_comma: bool) -> &str {
    let mut depth = 0usize;
    for (at, c) in rest.char_indices() {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' if depth == 0 => return &rest[..at],
            ')' | ']' | '}' => depth -= 1,
            ',' if at_comma && depth == 0 => return &rest[..at],
            _ => {}
        }
    }
    rest
}

/// The items of a list's text, split at commas outside brackets and parentheses.
fn split_top_level(list: &str) -> Vec<&str> {
    let mut items = Vec::new();
    let (mut depth, mut start) = (0usize, 0);
    for (at, c) in list.char_indices() {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                items.push(&list[start..at]);
                start = at + 1;
            }
            _ => {}
        }
    }
    items.push(&list[start..]);
    items
}

/// The first argument of a call whose `(` came just before `rest`, parentheses balanced.
fn balanced_argument(rest: &str) -> &str {
    balanced(rest, true)
}

/// The command in the first argument of a call: a string literal's text, a list of string
/// literals joined, or a text that asks (`$(…)`) when it is built at run time.
fn first_argument(rest: &str) -> String {
    let rest = rest.trim_start();
    let rest = rest.strip_prefix('(').unwrap_or(rest).trim_start();
    let unknown = "$(code-built-at-run-time)".to_owned();
    if let Some(list) = rest.strip_prefix('[') {
        let end = list.find(']').unwrap_or(list.len());
        let mut words = Vec::new();
        for item in list[..end].split(',') {
            match string_literal(item.trim()) {
                Some(word) => words.push(format!("'{}'", word.replace('\'', "'\\''"))),
                None if item.trim().is_empty() => {}
                None => return unknown,
            }
        }
        return words.join(" ");
    }
    let end = rest.find([',', ')', ';']).unwrap_or(rest.len());
    let argument = rest[..end].trim();
    match string_literal(argument) {
        Some(text) => text,
        // A literal that holds a `,` `)` or `;`: take it whole.
        None => quoted_prefix(rest).unwrap_or(unknown),
    }
}

/// The text of a whole string literal (`'…'` or `"…"`, no interpolation).
fn string_literal(text: &str) -> Option<String> {
    let text = text.strip_prefix('r').unwrap_or(text);
    let quote = text.chars().next().filter(|c| matches!(c, '\'' | '"'))?;
    let inner = text.strip_prefix(quote)?.strip_suffix(quote)?;
    if inner.contains(quote) || inner.contains("#{") || inner.contains("${") {
        return None;
    }
    Some(inner.replace("\\n", "\n"))
}

/// The string literal that `text` starts with, if it starts with one.
fn quoted_prefix(text: &str) -> Option<String> {
    let quote = text.chars().next().filter(|c| matches!(c, '\'' | '"'))?;
    let inner = &text[1..];
    let end = inner.find(quote)?;
    let literal = &inner[..end];
    (!literal.contains("#{") && !literal.contains("${")).then(|| literal.to_owned())
}
