//! Variables and their values: arguments naming a variable the text gave values, or a
//! function's positional parameters, read as each value (`bind_values`), after the walk.

use std::collections::HashMap;

use crate::words::{Arg, Found, Redirect, Stdin};

use super::name_of;

/// The values the text gives each variable name.
type ByName<'a> = HashMap<&'a str, Vec<&'a Arg>>;

/// The arguments of each call the text makes of a function it defines, by the function's
/// label (`f()`).
type Calls = HashMap<String, Vec<Vec<Arg>>>;

/// Reads the arguments that name a variable the text gave values (`D=~; rm -rf "$D"/src`,
/// `for d in dist ~/src; do rm -rf "$d"; done`) and a function's positional parameters
/// where the text calls it with literal words (`f() { rm -rf "$1"; }; f ~/src`) as each of
/// those values, so the rules see where they point. Only arguments: a command name made of
/// variables stays unknown. Each value may be the one bash uses, so an argument becomes one
/// argument per value.
pub(super) fn bind_values(found: &mut [Found], bindings: &[(String, Vec<Arg>)]) {
    if bindings.is_empty()
        && !found
            .iter()
            .any(|one| one.via.iter().any(|via| via.ends_with("()")))
    {
        return;
    }
    let by_name = values_by_name(bindings);
    let calls = function_calls(found);
    for one in found.iter_mut() {
        bind_redirects(one, &by_name);
        bind_arguments(one, &by_name, &calls);
    }
}

/// The values bound to each name. The same value bound again (a function's `local d="$1"`
/// in every copy) is one.
fn values_by_name(bindings: &[(String, Vec<Arg>)]) -> ByName<'_> {
    let mut by_name: ByName<'_> = HashMap::new();
    for (name, values) in bindings {
        let known = by_name.entry(name.as_str()).or_default();
        for value in values {
            if !known.iter().any(|seen| seen.text == value.text) {
                known.push(value);
            }
        }
    }
    by_name
}

/// The calls the text makes of the functions it defines, with their arguments.
fn function_calls(found: &[Found]) -> Calls {
    let labels: std::collections::HashSet<&str> = found
        .iter()
        .flat_map(|one| one.via.iter().map(String::as_str))
        .filter(|via| via.ends_with("()"))
        .collect();
    let mut calls: Calls = HashMap::new();
    if !labels.is_empty() {
        for one in found.iter() {
            if let Some(first) = one.argv.first().filter(|first| first.is_plain())
                && let Some(label) = labels
                    .iter()
                    .find(|label| label.strip_suffix("()") == Some(first.text.as_str()))
            {
                calls
                    .entry((*label).to_owned())
                    .or_default()
                    .push(one.argv[1..].to_vec());
            }
        }
    }
    calls
}

/// `for f in ~/.ssh/*; do : > "$f"; done`: a written file named by a bound variable is each
/// of its values.
fn bind_redirects(one: &mut Found, by_name: &ByName<'_>) {
    let bound_target = |redirect: &Redirect| {
        redirect.writes()
            && !redirect.target.literal
            && redirect.target.text.strip_prefix('$').is_some_and(|rest| {
                by_name.contains_key(rest.trim_start_matches('{').trim_end_matches('}'))
            })
    };
    if !one.redirects.iter().any(bound_target) {
        return;
    }
    let mut redirects = Vec::with_capacity(one.redirects.len());
    for redirect in &one.redirects {
        let name = redirect
            .target
            .text
            .strip_prefix('$')
            .map(|rest| rest.trim_start_matches('{').trim_end_matches('}'));
        match name.and_then(|name| by_name.get(name)) {
            Some(values) if redirect.writes() => {
                redirects.extend(values.iter().map(|value| Redirect {
                    target: (*value).clone(),
                    ..redirect.clone()
                }));
            }
            _ => redirects.push(redirect.clone()),
        }
    }
    one.redirects = redirects;
}

/// Reads the arguments of `one` that name a bound variable, or a positional parameter of a
/// function the text calls, as each of their values. Other commands do not change.
fn bind_arguments(one: &mut Found, by_name: &ByName<'_>, calls: &Calls) {
    let in_call = one.via.iter().any(|via| calls.contains_key(via));
    let bound = one.argv.iter().enumerate().any(|(index, arg)| {
        !arg.literal
            && !one.forms.contains(&index)
            && arg.text.contains('$')
            && variables_named(&arg.text).any(|name| {
                by_name.contains_key(name) || (in_call && name.parse::<usize>().is_ok())
            })
    });
    if !bound {
        return;
    }
    let positional: Vec<&Vec<Arg>> = one
        .via
        .iter()
        .filter_map(|via| calls.get(via))
        .flatten()
        .collect();
    let mut changed = false;
    let mut argv = Vec::with_capacity(one.argv.len());
    for (index, arg) in one.argv.iter().enumerate() {
        if arg.literal || one.forms.contains(&index) || !arg.text.contains('$') {
            argv.push(arg.clone());
            continue;
        }
        let values = argument_values(arg, by_name, &positional);
        changed |= values.len() != 1 || values[0].text != arg.text;
        argv.extend(values);
    }
    if changed {
        one.argv = argv;
        one.forms = crate::forms::forms(&one.argv);
    }
}

/// `arg` with each variable it names read as each of its values: a bound variable's, or
/// `$1`…`$9` as the arguments of the calls in `positional`.
fn argument_values(arg: &Arg, by_name: &ByName<'_>, positional: &[&Vec<Arg>]) -> Vec<Arg> {
    let mut values = vec![arg.clone()];
    for name in variables_named(&arg.text) {
        if let Some(given) = by_name.get(name) {
            let given: Vec<Arg> = given.iter().map(|arg| (*arg).clone()).collect();
            values = substitute(
                values,
                &[format!("${{{name}}}"), format!("${name}")],
                &given,
            );
        } else if let Ok(number) = name.parse::<usize>()
            && (1..=9).contains(&number)
        {
            let given: Vec<Arg> = positional
                .iter()
                .filter_map(|args| args.get(number - 1).cloned())
                .collect();
            values = substitute(
                values,
                &[format!("${{{name}}}"), format!("${name}")],
                &given,
            );
        }
    }
    values
}

/// The names of the variables `$NAME` and `${NAME}` expanded in `text`.
fn variables_named(text: &str) -> impl Iterator<Item = &str> {
    text.match_indices('$').filter_map(|(at, _)| {
        let rest = &text[at + 1..];
        let rest = rest.strip_prefix('{').unwrap_or(rest);
        let end = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        (end > 0).then(|| &rest[..end])
    })
}

/// Each of `args` with `names` (spellings of one variable) read as each of `values`.
fn substitute(args: Vec<Arg>, names: &[String], values: &[Arg]) -> Vec<Arg> {
    if values.is_empty() || values.len() > 32 {
        return args;
    }
    let mut out = Vec::new();
    for arg in args {
        let Some(name) = names.iter().find(|name| {
            arg.text.match_indices(name.as_str()).any(|(at, _)| {
                // `$D` in `$Dx` is another variable (`${D}x` is not).
                name.ends_with('}')
                    || !arg.text[at + name.len()..]
                        .starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
            })
        }) else {
            out.push(arg);
            continue;
        };
        for value in values {
            let text = arg.text.replace(name.as_str(), &value.text);
            let literal = value.literal && !text.contains('$') && !text.contains('~');
            out.push(Arg {
                text,
                literal,
                glob: arg.glob || value.glob,
                download: arg.download || value.download,
                ..arg.clone()
            });
        }
    }
    out
}

/// The names `declare -n r=HOME` makes stand for others: `$r` is `$HOME`.
pub(super) fn nameref_bindings(form: &[Arg]) -> Vec<(String, Vec<Arg>)> {
    let mut bindings = Vec::new();
    if matches!(&*name_of(form), "declare" | "local" | "typeset")
        && form
            .iter()
            .any(|arg| arg.text.starts_with('-') && arg.text.contains('n'))
    {
        for arg in form.iter().skip(1).filter(|arg| arg.literal) {
            if let Some((name, target)) = arg.text.split_once('=') {
                let value = Arg {
                    text: format!("${target}"),
                    ..Arg::default()
                };
                bindings.push((name.to_owned(), vec![value]));
            }
        }
    }
    bindings
}

/// The variables `read`/`mapfile`/`readarray` fill when their input is a file or a pipe
/// (not a here-string the line spells out).
pub(super) fn names_read_from_data(found: &Found, form: &[Arg]) -> Option<Vec<String>> {
    let name = name_of(form);
    if !matches!(&*name, "read" | "mapfile" | "readarray") {
        return None;
    }
    let from_file = found.redirects.iter().any(|redirect| redirect.op == "<");
    let spelled = found
        .redirects
        .iter()
        .any(|redirect| redirect.body.is_some());
    if !(from_file || (found.stdin != Stdin::Inherited && !spelled)) {
        return None;
    }
    let mut names = Vec::new();
    let mut words = form.iter().skip(1);
    while let Some(arg) = words.next() {
        match arg.text.as_str() {
            "-p" | "-d" | "-n" | "-N" | "-t" | "-u" | "-i" | "-O" | "-s" | "-C" | "-c" => {
                words.next();
            }
            "-a" => names.extend(words.next().map(|arg| arg.text.clone())),
            text if text.starts_with('-') => {}
            text => names.push(text.to_owned()),
        }
    }
    if names.is_empty() && name == "read" {
        names.push("REPLY".to_owned());
    }
    Some(names)
}
