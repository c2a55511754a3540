//! The files a command writes, and what it writes there when the line shows it: the
//! redirections, the writers' operands, SQL's `COPY … TO`, `sed -i` additions.

use super::*;

/// What `form` writes when it is known: `echo`/`printf` words, or a here-document's text.
pub(super) fn written_text(found: &Found, form: &[Arg]) -> Option<String> {
    if let Some(body) = found
        .redirects
        .iter()
        .find_map(|redirect| redirect.body.clone())
    {
        return Some(body);
    }
    if let Some((_, text)) = sql_copies(found, form).into_iter().next() {
        return text;
    }
    // `sed -i '1i TEXT'` / `'$a TEXT'`: the lines sed adds.
    if name(form) == "sed"
        && let Some(added) = form.iter().skip(1).find_map(|arg| {
            let script = arg
                .text
                .trim_start_matches(|c: char| c.is_ascii_digit() || c == '$');
            script
                .strip_prefix("i ")
                .or_else(|| script.strip_prefix("a "))
                .or_else(|| script.strip_prefix("i\\"))
                .or_else(|| script.strip_prefix("a\\"))
        })
    {
        return Some(added.to_owned());
    }
    match &*name(form) {
        "echo" | "printf" => Some(
            form.iter()
                .skip(1)
                .filter(|arg| !arg.text.starts_with('-'))
                .map(|arg| arg.text.replace("\\n", "\n"))
                .collect::<Vec<_>>()
                .join(" "),
        ),
        _ => None,
    }
}

/// Files a database shell writes with SQL's `COPY (SELECT 'text') TO 'path'` (DuckDB,
/// PostgreSQL) or `.output path` (SQLite): each path, with the text when one literal is
/// all the query selects.
fn sql_copies(found: &Found, form: &[Arg]) -> Vec<(String, Option<String>)> {
    if !matches!(&*name(form), "duckdb" | "sqlite3" | "psql") {
        return Vec::new();
    }
    let texts = form.iter().skip(1).map(|arg| arg.text.as_str()).chain(
        found
            .redirects
            .iter()
            .filter_map(|redirect| redirect.body.as_deref()),
    );
    let quoted = |text: &str| {
        let rest = text.trim_start().strip_prefix('\'')?;
        rest.split_once('\'').map(|(inside, _)| inside.to_owned())
    };
    let mut out = Vec::new();
    for text in texts {
        let upper = text.to_ascii_uppercase();
        if let Some(copy) = upper.find("COPY")
            && let Some(to) = upper[copy..].find(" TO ")
            && let Some(target) = quoted(&text[copy + to + 4..])
        {
            let selected = upper[copy..copy + to]
                .find("SELECT")
                .and_then(|at| quoted(&text[copy + at + 6..]));
            out.push((crate::paths::home_spellings(&target).into_owned(), selected));
        }
        for line in text.lines() {
            if let Some(target) = line
                .trim_start()
                .strip_prefix(".output ")
                .or_else(|| line.trim_start().strip_prefix(".once "))
            {
                out.push((target.trim().to_owned(), None));
            }
        }
    }
    out
}

/// Paths `form` writes: redirections, `tee`, the last operand of `cp`/`mv`/`install`/`ln`,
/// `dd of=`, `sed -i` files, `truncate`.
pub(crate) fn written_paths(found: &Found, form: &[Arg]) -> Vec<String> {
    const WRITERS: &[&str] = &[
        "tee", "truncate", "touch", "sponge", "cp", "mv", "install", "ginstall", "ln", "rsync",
        "scp", "dd", "sed", "perl", "find", "sort", "yq",
    ];
    let copies = sql_copies(found, form);
    if !copies.is_empty() {
        return copies
            .into_iter()
            .map(|(target, _)| home_of_someone(&path(&target)))
            .collect();
    }
    if !found.redirects.iter().any(|redirect| redirect.writes())
        && form
            .first()
            .is_none_or(|first| !WRITERS.contains(&basename(&first.text)))
    {
        return Vec::new();
    }
    let spelled = |text: &str| home_of_someone(&path(&crate::paths::home_spellings(text)));
    let mut paths: Vec<String> = found
        .redirects
        .iter()
        .filter(|redirect| redirect.writes())
        .map(|redirect| spelled(&redirect.target.text))
        .collect();
    let name = name(form);
    let operands: Vec<&Arg> = operands(form).collect();
    match &*name {
        "tee" | "truncate" | "touch" | "sponge" => {
            paths.extend(operands.iter().map(|arg| spelled(&arg.text)))
        }
        "yq" if form
            .iter()
            .any(|arg| arg.text == "-i" || arg.text == "--inplace") =>
        {
            paths.extend(operands.iter().skip(1).map(|arg| spelled(&arg.text)));
        }
        "sort" => paths.extend(
            form.windows(2)
                .filter(|pair| pair[0].text == "-o")
                .map(|pair| spelled(&pair[1].text)),
        ),
        "cp" | "mv" | "install" | "ginstall" | "ln" | "rsync" | "scp" if operands.len() >= 2 => {
            if let Some(last) = operands.last() {
                paths.push(path(&last.text));
            }
        }
        "dd" => paths.extend(
            form.iter()
                .filter_map(|arg| arg.text.strip_prefix("of="))
                .map(path),
        ),
        // `find -fprint FILE` (and -fls, -fprintf, -fprint0) empties FILE and writes it.
        "find" => paths.extend(
            form.windows(2)
                .filter(|pair| {
                    matches!(
                        pair[0].text.as_str(),
                        "-fprint" | "-fprint0" | "-fls" | "-fprintf"
                    )
                })
                .map(|pair| spelled(&pair[1].text)),
        ),
        "sed" | "perl"
            if form.iter().any(|arg| {
                arg.text.starts_with("-i")
                    || arg.text == "--in-place"
                    || (arg.text.starts_with('-')
                        && !arg.text.starts_with("--")
                        && arg.text.contains('i'))
            }) =>
        {
            paths.extend(operands.iter().skip(1).map(|arg| path(&arg.text)));
        }
        _ => {}
    }
    paths
}
