//! The policy stage of agent-bash: decides `allow`, `ask` or `deny` for a bash command line
//! from its parsed structure, and says why; or `suggest`, when the harness has a tool for it. Pure: parses and matches, runs nothing, prints
//! nothing (but see Limits on the parser's own panics), never panics.
//!
//! ```
//! use agent_bash_policy::{Decision, Policy, PolicySettings};
//!
//! let policy = Policy::new(&PolicySettings::default()).unwrap();
//! let verdict = policy.check("cd /tmp && sudo rm -rf --one-file-system /");
//! assert_eq!(verdict.decision, Decision::Deny);
//! assert_eq!(verdict.rule.as_deref(), Some("rm-root"));
//! assert_eq!(policy.check("echo 'rm -rf /'").decision, Decision::Allow);
//! ```
//!
//! # How a command is read
//!
//! The text is parsed with brush-parser (the parser of the brush shell), then walked. Every
//! place that can run a command is visited: pipelines (`|`, `|&`), lists (`;`, `&&`, `||`,
//! `&`, newlines), subshells, `{ }` groups, `if`/`while`/`until`/`for`/`case` (conditions,
//! bodies, the words they expand), `select` (read as the `for` loop it parses like), `[[ ]]`,
//! `(( ))`, function bodies (whether or not the function is called), coprocesses,
//! assignments (`X=$(…)`, `a=($(…))`), redirect targets, here-documents whose delimiter is
//! unquoted (`<<EOF` expands, `<<'EOF'` does not), and every word. brush-parser keeps
//! `$(…)`, backquotes, `${x:-$(…)}` and `$(( … ))` inside words as text, so those are parsed
//! again, as are the scripts handed to a launcher (below). Scripts within scripts are followed
//! 16 levels deep, and at most 10 000 of them per check; the rest are unknown.
//!
//! Where brush-parser and bash disagree, bash's reading is used: `( ( cmd ) )` and
//! `((cmd) )` are subshells in subshells (bash reads `(( … ))` as arithmetic only when it
//! starts with `((` and the inner `)` is followed at once by `)`), and `$'…'` ends at its
//! first NUL (`$'rm\0x'` is `rm`, `/$'\0'` is `/`). A text that does not parse as a whole is
//! unknown, and its top-level parts (split at newlines, `;`, `&`, `|` outside quotes and
//! substitutions, comments dropped, up to the first here-document) that parse on their own are
//! walked too, so a deny in one of them stays a deny (`rm -rf / # 2147483648>`); such a
//! command is never offered settings that would allow it ([`Policy::allowing`]).
//!
//! Code bash runs from places that are not command words is walked too: array subscripts
//! (`a[$(cmd)]=1`, and the quoted `'a[$(cmd)]'` given as a name to `let`, `read`,
//! `printf -v`, `declare`/`local`/`export`/`readonly`, `test -v`, `[[ -v ]]`, `wait -p`,
//! `mapfile`, `getopts`, `unset`, or as an operand of `[[ … -eq … ]]`, which bash evaluates
//! again); `trap [--] TEXT SIGNAL…`; option values a program runs with the shell (`ssh`/`scp`/
//! `sftp -o ProxyCommand=|LocalCommand=|KnownHostsCommand=`, `rsync -e`/`--rsh`, `git -c`
//! `core.sshCommand`, `core.fsmonitor`, `core.pager`, `core.editor`, `alias.*=!…`,
//! `credential.helper`, `diff.external`, `pager.*`, filters, …) and variables such programs read
//! (`GIT_SSH_COMMAND`, `GIT_PAGER`, `PAGER`, `EDITOR`, … assigned literally, or through `env`/
//! `sudo`); alias values (`alias x='…'`). What cannot be seen is unknown: `hash -p`,
//! `enable -f`, `shopt -s expand_aliases` (a name may then be any alias), `git -c
//! core.hooksPath=…` and `git --config-env`.
//!
//! Words are unquoted as the shell would: `'rm'`, `\rm`, `r"m"`, `$'\x72m'` and `rm` are the
//! same word, and brace expansion is applied (`{rm,-rf,/}` is `rm -rf /`). A word containing
//! an expansion (`$dir`, `${HOME}`, `~`, `$(…)`) keeps that part as its source text, quotes
//! removed: `rm -rf "$dir"/x` reads `rm -rf $dir/x`.
//!
//! # Segments
//!
//! Each simple command the shell would run is one [`Segment`]: its words (`argv`, without
//! leading `NAME=value` assignments and without redirections), its redirections (including
//! those of enclosing groups and loops, which apply to it), and `via`, the constructs it was
//! found in (`$(…)`, `<(…)`, `bash -c`, `f()`, `find -exec`). Brace expansion that would give
//! more than 1 024 words is not expanded and makes the command unknown. An outer command is listed
//! before the commands nested in its words. A command made only of redirections (`> f`) is a
//! segment with an empty `argv`; one made only of assignments is not a segment.
//!
//! # Wrappers and launchers
//!
//! A wrapper runs the command that follows its own options: `env [-i] [-u N] [N=v…]`,
//! `sudo [opts] [N=v…]`, `doas`, `pkexec`, `nice [-n N | -N]`, `nohup`, `timeout [opts]
//! DURATION`, `time [-p]`, `command [-p]` (not `-v`/`-V`, which run nothing), `builtin`,
//! `exec [-a NAME]`, `xargs [opts]`, `stdbuf`, `setsid`, `ionice` (not with `-p`), `chroot
//! DIR`, `taskset MASK`, `unbuffer`, `busybox`, `toybox`, `flock FILE`, `unshare`, `nsenter`,
//! `strace`, `ltrace`, `systemd-run`, `runuser`, `chrt PRIO`, `prlimit`, `numactl`,
//! `fakeroot`, `firejail`, `setpriv`, `valgrind`, `catchsegv`, `dbus-run-session`, `xvfb-run`,
//! `torsocks`, `proxychains`, `cgexec`, `caffeinate` and `ip netns exec NAME`, each with its
//! own option grammar; long options may be abbreviated as GNU tools allow (`env --sp` is
//! `--split-string`), and `xargs --replace`/`--eof`/`--max-lines` take a value only after `=`.
//! A segment keeps the words as written (`sudo
//! rm -rf /`) and rules are matched against that and against every command it wraps (`rm -rf
//! /`): the strongest match decides. So a rule `npm publish *` catches `sudo npm publish` and
//! `env X=1 npm publish`, and an allow rule for `npm test` also allows `timeout 60 npm test`
//! (add a rule such as `sudo *` = `ask` to keep sudo in check).
//!
//! A launcher runs a script given as text: `sh`/`bash`/`zsh`/`dash`/`ksh`/`fish`/… `-c TEXT`
//! (the words after `TEXT` become `$0`, `$1`, … and `"$@"` inside it), `eval WORDS`,
//! `trap [--] TEXT SIGNAL…`, `su`/`runuser -c TEXT` (also `-cTEXT`, `-lc TEXT`, `--command=`),
//! `env -S TEXT` (also `-iS'TEXT'`, `--split-string=`), `flock FILE -c TEXT`, `script -c TEXT`,
//! `sg GROUP TEXT`, `sudo -s CMD…`, `watch WORDS`, `ssh HOST WORDS`,
//! and a shell reading a here-document or here-string (`bash <<EOF`). The script is parsed
//! and its commands become segments of their own, found `via` the launcher. Local launchers are
//! transparent: unless a rule matches the launcher segment itself, it is `allow` and the
//! script's commands decide. `ssh` is not transparent (it also reaches another machine). A
//! launched script reads the launcher's input (`curl … | bash -c bash` is a shell reading the
//! download). A shell reading its script from its input — `sh`, `bash -s`, `bash /dev/stdin`
//! (also `/dev/fd/0`, `/proc/self/fd/0`), `source /dev/stdin`, `sudo -s`/`-i` or `doas -s`
//! with no command, `su` with no `-c` — from a pipe or `< <(…)` cannot be seen into and is
//! unknown, except that a download fed to it is denied (`download-to-shell`); fed a
//! here-document or here-string, that text is its script. `sudo -s CMD…` runs `CMD…` as a
//! script. `find -exec CMD … ;`
//! commands are segments `via` `find -exec`.
//!
//! # Matching
//!
//! A rule's `command` is a pattern split into words like a shell command line (quotes and
//! backslashes work as in bash). Each pattern word matches one argv word; an unquoted `*`
//! inside a word matches any run of characters within that word; a lone `*` as the *last*
//! word matches zero or more further words. Without a trailing lone `*` the pattern matches
//! exactly that many words. When the pattern's first word has no `/`, it is compared with the
//! command's basename (`rm` matches `/bin/rm`). Non-literal words match as their source text:
//! the pattern `rm -rf /` does not match `rm -rf $dir`, while `rm -rf *` does.
//!
//! A rule's `regex` (Rust `regex` syntax, unanchored) is matched against the command's
//! normalized text: the argv words joined by single spaces, then each redirection after a
//! single space, written without spaces inside: `rm -rf / >/dev/sda 2>&1`, `cat <<EOF`,
//! `grep x <<<text`. Words are not re-quoted (`echo "a b"` reads `echo a b`). A rule with both
//! `command` and `regex` matches when both do. Every rule is matched against every command a
//! segment runs through wrappers.
//!
//! # Combining
//!
//! Within a segment the strongest matching rule wins (`deny` > `ask` > `allow`; `suggest`
//! rules are apart: see [Suggestions](#suggestions)); user rules
//! come before built-ins when they tie. A segment no rule matches takes the `default`
//! decision (allow unless configured). A segment whose command name is not a literal word
//! (`$cmd`, `$(…)`, `${x}`, a glob such as `/bin/r?`), which is a shell fed from a pipe, or
//! which could not be parsed (syntax error, a parser panic, nesting too deep), takes the
//! `unknown` decision (ask unless configured), unless a rule gives it a stronger one. A name
//! made only of variables of the session's environment that the command leaves alone
//! (`"$VIRTUAL_ENV/bin/python"`) is read with their values: see [`Policy::with_environment`].
//! Arguments that are not literal are fine. Text the parser cannot be trusted with is also
//! unknown rather than parsed: nesting beyond what any real command uses (parentheses more
//! than 16 deep, `case` more than 8, brackets opened by or inside a word's `$(`, `${`, `$[`
//! more than 16 deep or more than 4 left open, brace expansions more than 5), a here-document that is never terminated or has an
//! empty delimiter, and integers too large for the parser (a file descriptor number before
//! `<`/`>` beyond i32, even in a comment; more than 18 digits right after `~`, `~+`, `~-`,
//! `{` or `..`).
//!
//! The command's decision is the strongest segment decision: deny if any segment is denied,
//! else ask if any asks, else allow if every segment is allowed (or `suggest`, when a
//! suggestion matched a line that is one simple command: its only segment). The verdict's `rule` and
//! `reason` are those of the first segment with that decision. A command with no segments
//! (empty, comments only, assignments only) is allowed.
//!
//! # Built-in rules
//!
//! On by default, each a `deny` with its own reason, each switched off by name with
//! `disable = ["name", …]` (see [`builtin_rules`]):
//!
//! | name | denies |
//! |---|---|
//! | `rm-root` | recursive `rm` (`-r`, `-R`, `-rf`, `-fr`, `-r -f`, `--recursive`, `--rec`) of `/`, `/*`, `//`, `/.`, a glob that may match any top-level name (`/?*`, `/[a-z]*`, `/.*`), or the home directory (`~`, `~/`, `~user`, `$HOME`, `${HOME}`, `"$HOME"/`, `~/*`, `~/.*`, `${HOME:?}`, `${HOME%/}`, `/home/$USER`); an unquoted `$IFS` counts as nothing (`${IFS}/` is `/`) |
//! | `rm-system-dir` | recursive `rm` of a top-level system directory (`/usr`, `/etc/`, `/var/*`, a glob matching one such as `/u*`, …) or of `/usr/bin`, `/usr/lib`, `/usr/share`, `/var/lib` and the like |
//! | `no-preserve-root` | `--no-preserve-root` (and its GNU abbreviations for `rm`/`chmod`/`chown`/`chgrp`) |
//! | `find-delete-root` | `find` from `/` or a top-level system directory (options end at `--`) with `-delete` or `-exec rm` (also through wrappers, `-exec sudo rm`); from home when no test narrows what it deletes (`find ~ -name '*.pyc' -delete` is unknown and asks instead) |
//! | `mkfs` | `mkfs`, `mkfs.*`, `mke2fs`, `mkdosfs`, `mkntfs`, `newfs*` on a disk device (not an image file, not `mkfs --help`) |
//! | `dd-block-device` | `dd`/`dcfldd` `of=` a disk device: `/dev/sd*`, `hd*`, `vd*`, `xvd*`, `nvme*`, `mmcblk*`, `disk*`, `rdisk*`, `dm-*`, `md*`, `nbd*`, `/dev/mapper/*`, `/dev/disk/*`, `/dev/block/*`, LVM's `/dev/VG/LV`, `/dev/root`, or a glob that can name one (`/dev/sd*`, `/dev/sd[a]`) (not loop devices) |
//! | `redirect-block-device` | `>`, `>>`, `>|`, `<>`, `&>`, `&>>`, `>&FILE` onto such a device (not `/dev/null`, `/dev/stdout`, `/dev/tty`, `/dev/fd/*`, …) |
//! | `wipe-block-device` | `shred`, `blkdiscard`, `mkswap`, `tee` on such a device, `wipefs -a`/`-o` (not a listing `wipefs`, not `-n`), `cp` or `ddrescue` onto one |
//! | `fork-bomb` | a function that calls itself (quoted or not), or a function that calls it back through others, in the background or twice in one pipeline, whatever the names (`:(){ :|:& };:`, `b(){ b|b; }`, `:(){ ':'|':'& };:`, `a(){ b|b& }; b(){ a|a& }; a`); an endless loop (`while :`, `while true`, `until false`) whose body starts a command in the background and never waits, sleeps or stops; an endless input (`yes`, `seq inf`, tens of gigabytes of `/dev/zero`) fed to `xargs -P 0` or to a command that holds it all (`tail`, `sort`); interpreter code that starts processes or grows memory in an endless loop |
//! | `chmod-root` | `chmod`/`chown`/`chgrp` `-R`/`--recursive` on `/`, `/*` or a top-level system directory |
//! | `download-to-shell` | `curl`/`wget`/… piped into a shell or interpreter reading its program from input (`\| sh`, `\| sudo bash`, `\| env bash -s`, `\| python3`), or fed to one as a file, text or here-string (`bash <(curl …)`, `sh -c "$(curl …)"`, `eval "$(curl …)"`, `source <(curl …)`, `. <(wget -O- …)`, `python <(curl …)`, `$(curl …)` as the command) |
//! | `shutdown` | `shutdown`, `reboot`, `halt`, `poweroff`, `systemctl`/`loginctl` `poweroff`/`reboot`/`halt`/`kexec`/`soft-reboot`/`suspend`/`hibernate`/`rescue`/`emergency`, `systemctl start`/`isolate` of `reboot.target` and the like, writing `/proc/sysrq-trigger`, `init 0`/`6`, `telinit 0`/`6`; the machine cut off as a shutdown would: `ip link … down`, `ifdown`, `iptables -P INPUT|OUTPUT DROP`, `nft flush ruleset`, `systemctl mask|stop` of `sshd`, the journal, logind or the network, `umount` or a read-only remount of `/`, `/home`, `/usr`, `/var`, a disk filled (`fallocate -l` of 100 GB or more, `dd` from `/dev/zero` with no `count=`) |
//! | `kill-all` | `killall5` (but `-0`), and `kill` of pid `-1` (every process, also `-01`) or `1` (init) with any signal spelling (`-9`, `-KILL`, `-SIGKILL`, `-s KILL`, `-n 9`, none). `kill -1` alone sends SIGHUP to no pid and is allowed, and signal 0 (`kill -0 1`, `-s 0`) only checks that a process exists; also `pkill -v`, a pattern matching every name, every process of root or of the user, the children of init, and `kill` of group 0 |
//! | `project-history` | deleting or moving `.git` or its objects, `git reflog expire --expire=now`, deleting a shared branch's ref (`update-ref -d`, `branch -D main`), a `filter-branch` that removes every file |
//! | `user-files` | a recursive delete, move or permission change of the home directory, a folder directly in it (`~/src`, `~/.ssh`) or anything below a system directory (not `/usr/local`, `/var/tmp`, caches); deleting or truncating a credential or start-up file; `rsync --delete`, `find -exec truncate`, `git clean` aimed there; `crontab -r` |
//! | `disk-write` | a program other than a reader given a disk device (`qemu-img convert … /dev/sda`, `sgdisk --zap-all`, `hdparm --security-erase`, `nvme format`, `zpool create`) |
//! | `firmware` | `flashrom -w`, `efibootmgr` changes, `grub-install`, `fwupdmgr install`, `bootctl install`, `mokutil --disable-validation` |
//! | `kernel` | `insmod`, `rmmod`, `kexec`, `exec -a insmod kmod`, `sysctl -w`, writes under `/proc/sys`, `/sys/kernel`, `/sys/block`, `/sys/firmware`, `/dev/mem` (`modprobe` of a module beyond the everyday container set asks) |
//! | `privilege` | setuid/setgid modes, `setcap`, joining `sudo`/`wheel`/`docker`, `visudo`, writes to sudoers, passwd, shadow, `ld.so.preload`, cron, systemd units, PAM, `authorized_keys`, `/etc/fstab`, grub defaults; a container given the host's root, home or engine socket; a shell in init's namespaces; a program named like `git` planted in a `PATH` directory from `/tmp`; `/etc/hosts` given a name that points away from this machine; a password piped to `sudo -S` for a root shell; administrator rights granted on a cloud account (AWS `AdministratorAccess`/`IAMFullAccess`, Google `roles/owner`/`editor`, Azure Owner/Contributor) or a repository (`gh api …/collaborators/… permission=admin`) |
//! | `persistence` | `crontab FILE`, `at`, `systemctl link`/`enable --now`, `enable-linger`, shell start-up files and tool configuration given more than exports, aliases and `source` lines (unseen text asks) |
//! | `system-packages` | removing a package the system needs (`libc6`, `bash`, `coreutils`, `systemd`, …) or any removal with the safety checks forced off |
//! | `remote-destroy` | a forced push (lease or not), deletion or mirror of a shared branch; `terraform`/`pulumi destroy`; `gh`/`glab repo delete`, `gh release delete`; cluster, cloud, bucket, secret-store and database deletions; `curl -X DELETE` to another host (a forced push of the current branch, `helm uninstall` and `docker system prune -a` ask) |
//! | `reverse-shell` | a shell wired to a network connection (`bash -i >& /dev/tcp/…`, `nc -e`, `socat TCP:… EXEC:…`, interpreter code joining a socket to a shell, a shell reading a pipe on a line with `nc`), `ssh -R` |
//! | `secret-exfiltration` | a credential file (`~/.ssh/id_*`, `~/.aws`, `~/.netrc`, `~/.kube`, `.env`, …), a token printed by a tool (`gh auth token` to a host other than GitHub), a secret manager's read, a database dump, a secret-named variable, or the whole environment, on a line that sends data to another machine; the whole repository pushed (`--all`, `--mirror`) to a remote the same command adds or names by URL |
//!
//! Built-in rules look at the command name case-insensitively and through every wrapper and
//! launcher; matching a built-in is a deny even when a user rule allows the same command.
//!
//! # Suggestions
//!
//! Off unless the host is declared. A harness that runs agent-bash has tools of its own for
//! what agents often do with the shell (Read, Grep, Glob, Edit, Write in Claude Code). When
//! the settings name it (`host`, one of [`hosts`]) or list its tools (`host_tools`), a
//! command with a better tool is decided `suggest`: not run, and the model is told which
//! tool to use. A rule with `decision = "suggest"` names its `tool` and what to say
//! (`message`); it is on only when that tool is among the host's (the set's, and
//! `host_tools`). The host's set adds its built-in suggestions after the rules (see
//! [`builtin_suggestions`]; `disable` switches one off by name):
//!
//! | name | stops |
//! |---|---|
//! | `suggest-read` | `cat [-n] FILE…`, `head`/`tail [-n N] FILE…` (not `-f`, `-c`), `less`/`more FILE…` |
//! | `suggest-search` | `grep -r`/`-R`/`--recursive` (not `-v`), `rg PATTERN` (not `-v`, `-r`, `--files`) |
//! | `suggest-glob` | `find [DIR…]` testing only names (`-name`, `-iname`, `-path`), `-type f`, depths |
//! | `suggest-edit` | `sed -i`/`--in-place` given a file |
//! | `suggest-write` | literal `echo`/`printf` text, or `cat` of a here-document or here-string without `$` or backquotes, sent with `>` to a file |
//!
//! A suggestion is never a protection, and never loosens one: it applies only to a segment
//! the rules, built-ins and fallbacks allow. It applies only when the command line is one
//! simple command, matched as written (not through wrappers): in `cat x | grep y` or `cd src
//! && cat x` a file tool would not do what the line does, so such lines are decided as
//! before. The words of a built-in suggestion's command must be literal (no `$x`, no
//! unquoted glob), its files ordinary (not `-`, `/dev`, `/proc`, `/sys`), and its only
//! redirections `2>/dev/null` or `2>&1` (but the `>` of `suggest-write`).
//!
//! # Limits
//!
//! The policy reads the command line, not the machine: it does not follow aliases, functions
//! defined by earlier calls, `PATH`, the contents of script files (`bash x.sh`), or the values
//! variables will have (`rm -rf "$DIR"` is not `rm -rf /` whatever `DIR` holds), the
//! arguments a function is called with, or what `xargs` reads from its input (`echo / |
//! xargs rm -rf` is not seen as `rm -rf /`; so `xargs` handing arguments to `rm -r`,
//! `chmod`/`chown`/`chgrp -R`, `shred`, `wipefs`, `blkdiscard`, `dd`, `mkfs*` or `kill` is
//! unknown, and asks). Where it matters for a built-in rule, it does follow a literal `cd` or
//! `pushd` (`cd / && rm -rf *` is `rm -rf /*`; a `cd` in a subshell stays there; one to a
//! place only known at run time forgets the known one), and asks when an `rm -r` operand is
//! `/` or `/*` once its variables are empty (`rm -rf "$dir/"`, `"$a/$b"`) or `mkfs` is given a
//! device named at run time (`mkfs.ext4 $DEV`). Not read: a variable's value evaluated again
//! in arithmetic (`i='a[$(cmd)]'; $((i))`). It is a guard rail against mistakes and obvious
//! tricks, not a sandbox: the kernel sandbox is the boundary against a hostile command.
//!
//! brush-parser 0.4.0 panics on a few inputs (caught: the command is then unknown, but the
//! process's panic hook prints the panic on stderr), recurses once per nesting level,
//! backtracks exponentially on some nestings and loops forever on some malformed
//! here-documents; `parse.rs` says how each is contained (found by `fuzz/`, kept in the
//! tests).

mod allowing;
mod builtin;
mod commands;
mod compile;
mod deciding;
mod env;
mod error;
mod expanded;
mod forms;
pub mod glob;
mod harm;
mod parse;
mod paths;
mod printed;
mod rules;
mod runners;
mod salvage;
mod suggest;
mod verdict;
mod walk;
mod words;
mod written;

use std::collections::HashMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, LazyLock};

pub use error::PolicyError;
pub use suggest::Host;

/// A decision, ordered by strength: `Allow < Suggest < Ask < Deny`.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    Allow,
    /// Not run this time: the host has a tool for it (see [Suggestions](crate#suggestions)).
    /// Only a rule decides it, and only for a command that would otherwise be allowed.
    Suggest,
    Ask,
    Deny,
}

/// The `[policy]` settings table. Every field is optional so that a settings layer may set
/// only some of them. Serializes to the same table, leaving out what is not set.
#[derive(Clone, Debug, Default, PartialEq, serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct PolicySettings {
    /// The decision for a command no rule matches; `None` means allow.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default: Option<Decision>,
    /// The decision for a command whose name is not a literal word, or that cannot be parsed;
    /// `None` means ask.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unknown: Option<Decision>,
    /// Built-in rules switched off, by name (see [`builtin_rules`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub disable: Vec<String>,
    /// The user rules, `[[policy.rules]]`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rules: Vec<RuleSpec>,
    /// The harness that runs agent-bash, by the name of a built-in set ([`hosts`]), or
    /// `none`: its tools are the host's, and its built-in suggestions are on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// More tools the host has, by the names its model calls them: `suggest` rules naming
    /// one of them (or of the set's) are on.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub host_tools: Vec<String>,
}

/// One user rule, as written in the settings.
#[derive(Clone, Debug, PartialEq, serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct RuleSpec {
    /// Shown as the deciding rule; defaults to `command`, else `regex`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    pub decision: Decision,
    /// An argv pattern such as `git push --force *` (see the crate docs for matching).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// A regex on the command's normalized text (see the crate docs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub regex: Option<String>,
    /// Shown to the model when this rule decides (`ask` and `deny`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// For `suggest`: the host's tool to use instead, as its model calls it (`Read`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// For `suggest`: what the model is told (`read files with Read`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Command lines the rule must match; checked by [`Policy::new`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub examples: Vec<String>,
    /// Command lines the rule must not match; checked by [`Policy::new`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub counter_examples: Vec<String>,
}

/// What would allow a refused command ([`Policy::allowing`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Allowance {
    /// Settings to add in a later layer; empty when only configured rules are in the way.
    pub additions: PolicySettings,
    /// Names of configured `ask` or `deny` rules that would have to change.
    pub rules_to_change: Vec<String>,
}

/// The decision on one command line, with the segments it was made from.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Verdict {
    pub decision: Decision,
    pub segments: Vec<Segment>,
    /// The deciding segment's reason: its rule's reason, or why it is unknown.
    pub reason: Option<String>,
    /// The deciding segment's rule; `None` when decided by the default or unknown decision.
    pub rule: Option<String>,
}

/// One simple command the shell would run, and the decision on it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Segment {
    /// The words, unquoted; parts the shell expands are kept as source text (`$dir`).
    pub argv: Vec<String>,
    pub decision: Decision,
    /// The rule that decided; `None` when no rule matched.
    pub rule: Option<String>,
    /// The rule's reason, or why the segment is unknown.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The constructs the command was found in, outermost first: `$(…)`, `` `…` ``, `<(…)`,
    /// `>(…)`, `bash -c`, `eval`, `bash <<`, `ssh`, `f()`, `find -exec`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub via: Vec<String>,
    /// The redirections that apply to it, normalized (`2>&1`, `>/dev/null`, `<<EOF`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub redirects: Vec<String>,
    /// It asks only because which files under the working directory it deletes or changes
    /// (`find . -name x | xargs rm -rf`) is known at run time: a kernel sandbox that
    /// confines writes bounds what it can do.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub bounded_by_sandbox: bool,
    /// For `suggest`: the host's tool to use instead.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
}

/// Compiled policy settings: user rules, the enabled built-ins, and the fallback decisions.
#[derive(Clone)]
pub struct Policy {
    default: Decision,
    unknown: Decision,
    rules: Vec<rules::Rule>,
    builtins: Vec<&'static builtin::Builtin>,
    /// The suggestions whose tool the host has: the `suggest` rules, then the host set's.
    suggestions: Vec<suggest::Suggestion>,
    /// Variables of the session's environment whose values may name a command.
    env: Arc<HashMap<String, String>>,
}

impl std::fmt::Debug for Policy {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("Policy")
            .field("default", &self.default)
            .field("unknown", &self.unknown)
            .field(
                "rules",
                &self.rules.iter().map(|rule| &rule.name).collect::<Vec<_>>(),
            )
            .field(
                "builtins",
                &self
                    .builtins
                    .iter()
                    .map(|builtin| builtin.name)
                    .collect::<Vec<_>>(),
            )
            .field(
                "suggestions",
                &self
                    .suggestions
                    .iter()
                    .map(|suggestion| (&suggestion.name, &suggestion.tool))
                    .collect::<Vec<_>>(),
            )
            .finish()
    }
}

/// The built-in rules with every one enabled, `default` allow and `unknown` ask.
impl Default for Policy {
    fn default() -> Policy {
        Policy {
            default: Decision::Allow,
            unknown: Decision::Ask,
            rules: Vec::new(),
            builtins: builtin::BUILTINS.iter().collect(),
            suggestions: Vec::new(),
            env: Arc::default(),
        }
    }
}

impl Policy {
    /// Compiles the rules and checks every example and counter-example.
    ///
    /// # Errors
    ///
    /// A [`PolicyError`] naming the rule and field for a rule without `command` and `regex`,
    /// an empty or unsplittable pattern, an invalid regex, an example the rule does not match
    /// or a counter-example it matches, a `suggest` rule without `tool` (or `tool` on another
    /// rule); for a `disable` entry that names no built-in rule or suggestion, a `host` that
    /// names no built-in set, or `default`/`unknown` set to `suggest`.
    pub fn new(settings: &PolicySettings) -> Result<Policy, PolicyError> {
        compile::check_disabled(&settings.disable)?;
        compile::check_fallbacks(settings)?;
        let host = compile::host(settings)?;
        let (rules, mut suggestions) = compile::compile_rules(settings, host)?;
        suggestions.extend(suggest::builtins_of(host, &settings.disable));
        Ok(Policy {
            default: settings.default.unwrap_or(Decision::Allow),
            unknown: settings.unknown.unwrap_or(Decision::Ask),
            rules,
            builtins: builtin::BUILTINS
                .iter()
                .filter(|builtin| !settings.disable.iter().any(|name| name == builtin.name))
                .collect(),
            suggestions,
            env: Arc::default(),
        })
    }

    /// The policy for commands started with this environment (the variables a session's
    /// shell starts with). A command name made of its variables is read with their values
    /// when nothing in the command can change them first, so `"$VIRTUAL_ENV/bin/python"` is
    /// the program it names rather than unknown; `x=rm; $x` stays unknown. Values that
    /// would split into words or glob (spaces, `*`) are never used, nor are variables the
    /// shell manages itself (`PWD`, `REPLY`, …).
    ///
    /// ```
    /// use agent_bash_policy::{Decision, Policy};
    ///
    /// let policy = Policy::default()
    ///     .with_environment([("TOOLS".to_string(), "/opt/tools".to_string())]);
    /// assert_eq!(policy.check("\"$TOOLS/bin/lint\" src").decision, Decision::Allow);
    /// assert_eq!(policy.check("TOOLS=/tmp; $TOOLS/bin/lint").decision, Decision::Ask);
    /// assert_eq!(policy.check("$OTHER/bin/lint").decision, Decision::Ask);
    /// ```
    #[must_use]
    pub fn with_environment(mut self, vars: impl IntoIterator<Item = (String, String)>) -> Policy {
        self.env = Arc::new(env::usable(vars));
        self
    }

    /// What would allow `command`: the settings to add as a later layer (a person's own
    /// settings file) — built-in rules to switch off, `unknown = "allow"`, allow rules for
    /// commands the `default` decision refuses — and the configured `ask`/`deny` rules that
    /// would have to change (an added rule never outweighs one); checked to allow it before
    /// it is returned. `None` when the command is allowed already, or when it does not parse
    /// as a whole (what it would run is not known, so nothing is offered).
    ///
    /// ```
    /// use agent_bash_policy::{Decision, Policy};
    ///
    /// let policy = Policy::default();
    /// let allowance = policy.allowing("sudo rm -rf --no-preserve-root /").unwrap();
    /// assert_eq!(allowance.additions.disable, ["no-preserve-root", "rm-root"]);
    /// assert!(allowance.rules_to_change.is_empty());
    /// assert!(policy.allowing("ls").is_none());
    /// ```
    pub fn allowing(&self, command: &str) -> Option<Allowance> {
        catch_unwind(AssertUnwindSafe(|| allowing::allowing(self, command)))
            .ok()
            .flatten()
    }

    /// Decides on one command line. Never panics, never runs anything.
    pub fn check(&self, command: &str) -> Verdict {
        // The walker contains the parser's known failures itself; this catches anything else
        // (a bug of ours) and turns it into the unknown decision rather than a crash.
        catch_unwind(AssertUnwindSafe(|| self.check_unguarded(command))).unwrap_or_else(|_| {
            let reason = Some("the policy failed on this command".to_owned());
            Verdict {
                decision: self.unknown,
                segments: vec![Segment {
                    argv: vec![command.chars().take(200).collect()],
                    decision: self.unknown,
                    rule: None,
                    reason: reason.clone(),
                    via: Vec::new(),
                    redirects: Vec::new(),
                    bounded_by_sandbox: false,
                    tool: None,
                }],
                reason,
                rule: None,
            }
        })
    }
}

/// The built-in sets of harness tools that `policy.host` can name, in the order they are
/// listed.
pub fn hosts() -> &'static [Host] {
    suggest::HOSTS
}

/// The built-in suggestions, as `(name, what it stops)`: a host set turns on those it names
/// a tool for (see [`hosts`]); `disable` switches one off by name.
pub fn builtin_suggestions() -> &'static [(&'static str, &'static str)] {
    static LIST: LazyLock<Vec<(&'static str, &'static str)>> = LazyLock::new(|| {
        suggest::BUILTIN_SUGGESTIONS
            .iter()
            .map(|suggestion| (suggestion.name, suggestion.description))
            .collect()
    });
    &LIST
}

/// The built-in rules, as `(name, what it denies)`, in the order they are checked.
pub fn builtin_rules() -> &'static [(&'static str, &'static str)] {
    static LIST: LazyLock<Vec<(&'static str, &'static str)>> = LazyLock::new(|| {
        builtin::BUILTINS
            .iter()
            .map(|builtin| (builtin.name, builtin.description))
            .collect()
    });
    &LIST
}
