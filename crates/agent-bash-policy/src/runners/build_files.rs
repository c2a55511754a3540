//! Build files read on standard input: a Dockerfile's `RUN` steps and a makefile's
//! recipes, as the shell text the build runs.

use super::*;

/// True if `form` builds an image from a Dockerfile read on standard input (`docker build
/// -f - .`, `docker build -`, `podman build -f-`).
pub(crate) fn stdin_dockerfile(form: &[Arg]) -> bool {
    matches!(
        program(form).as_deref(),
        Some("docker" | "podman" | "buildah" | "nerdctl")
    ) && form
        .iter()
        .any(|arg| matches!(arg.text.as_str(), "build" | "buildx" | "bud"))
        && form
            .iter()
            .enumerate()
            .any(|(at, arg)| match arg.text.as_str() {
                "-f" | "--file" => form.get(at + 1).is_some_and(|next| next.text == "-"),
                "-f-" | "--file=-" | "-" => true,
                _ => false,
            })
}

/// The shell text of a Dockerfile's `RUN` steps (their `--mount`/`--network` options
/// left out, continuation lines joined): what the build runs.
pub(crate) fn dockerfile_runs(dockerfile: &str) -> String {
    let joined = dockerfile.replace("\\\n", " ");
    joined
        .lines()
        .filter_map(|line| {
            let line = line.trim_start();
            let rest = line
                .strip_prefix("RUN ")
                .or_else(|| line.strip_prefix("run "))?;
            let mut rest = rest.trim_start();
            while rest.starts_with("--") {
                rest = rest
                    .split_once(' ')
                    .map_or("", |(_, tail)| tail)
                    .trim_start();
            }
            Some(rest.to_owned())
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// True if `form` is `make` reading its makefile from standard input (`make -f -`).
pub(crate) fn stdin_makefile(form: &[Arg]) -> bool {
    matches!(program(form).as_deref(), Some("make" | "gmake"))
        && form.iter().enumerate().any(|(at, arg)| {
            let value = match arg.text.as_str() {
                "-f" | "--file" | "--makefile" => form.get(at + 1).map(|next| next.text.as_str()),
                text => text
                    .strip_prefix("--file=")
                    .or_else(|| text.strip_prefix("--makefile="))
                    .or_else(|| text.strip_prefix("-f").filter(|rest| !rest.is_empty())),
            };
            matches!(value, Some("-" | "/dev/stdin"))
        })
}

/// The shell text of a makefile's recipes: tab-led lines and what follows `;` on a rule
/// line, without the `@`/`-`/`+` prefixes, make's `$(VAR)` read as the shell's `$VAR`,
/// `$(shell …)` as `$(…)` and `$$` as `$`.
pub(crate) fn make_recipes(makefile: &str) -> String {
    let mut recipes = Vec::new();
    for line in makefile.lines() {
        let recipe = if let Some(recipe) = line.strip_prefix('\t') {
            recipe
        } else if let Some((rule, recipe)) = line.split_once(';')
            && rule.contains(':')
            && !rule.contains('=')
        {
            recipe
        } else {
            continue;
        };
        let recipe = recipe.trim_start().trim_start_matches(['@', '-', '+']);
        recipes.push(make_variables(recipe));
    }
    recipes.join("\n")
}

/// make's references read as the shell's: `$(HOME)` and `${HOME}` as `$HOME`, `$(shell X)` as
/// `$(X)`, `$$` as `$`.
fn make_variables(recipe: &str) -> String {
    let mut out = String::with_capacity(recipe.len());
    let mut rest = recipe;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        if let Some(tail) = after.strip_prefix('$') {
            out.push('$');
            rest = tail;
            continue;
        }
        let close = match after.chars().next() {
            Some('(') => after.find(')'),
            Some('{') => after.find('}'),
            _ => None,
        };
        match close {
            Some(close) => {
                let inside = &after[1..close];
                match inside.strip_prefix("shell ") {
                    Some(command) => out.push_str(&format!("$({command})")),
                    None => out.push_str(&format!("${{{inside}}}")),
                }
                rest = &after[close + 1..];
            }
            None => {
                out.push('$');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}
