//! Packages and images named only at run time, or fetched from a URL or a repository
//! rather than a registry: what a package runner would run cannot be seen.

use super::*;

/// A reason to ask when a package runner fetches what it runs from a repository rather
/// than a registry (`uvx --from git+https://…`, `npx github:user/repo`).
pub(crate) fn unseen_package(found: &crate::words::Found) -> Option<String> {
    found.each_form().find_map(|form| {
        let name = program(form)?;
        // A package or image named at run time (`npx --yes "$PKG"`, `docker run "$IMAGE"`).
        let runs_named = match name.as_ref() {
            "npx" | "uvx" | "bunx" | "pnpx" | "pipx" => true,
            "docker" | "podman" | "nerdctl" => form.get(1).is_some_and(|sub| sub.text == "run"),
            _ => false,
        };
        // The first word that is neither an option nor an option's value.
        let mut named = None;
        if !runs_named {
            return unseen_archive(form, &name);
        }
        let mut words = form.iter().skip(1).filter(|arg| arg.text != "run");
        while let Some(arg) = words.next() {
            let text = arg.text.as_str();
            if !text.starts_with('-') {
                named = Some(arg);
                break;
            }
            let takes_value = matches!(
                text,
                "-v" | "--volume"
                    | "-w"
                    | "--workdir"
                    | "-e"
                    | "--env"
                    | "--name"
                    | "-p"
                    | "--publish"
                    | "--network"
                    | "--entrypoint"
                    | "-u"
                    | "--user"
                    | "--mount"
                    | "--env-file"
                    | "-l"
                    | "--label"
                    | "--platform"
                    | "-p2"
                    | "--from"
                    | "--package"
                    | "--python"
                    | "--with"
                    | "-h"
                    | "--hostname"
                    | "--cpus"
                    | "-m"
                    | "--memory"
            );
            if takes_value {
                words.next();
            }
        }
        if let Some(named) = named
            && !named.literal
        {
            return Some(format!(
                "runs `{}`, a package or image named only at run time",
                named.text
            ));
        }
        unseen_archive(form, &name)
    })
}

/// Why a package from a URL or a repository rather than a registry is unknown.
fn unseen_archive(form: &[Arg], name: &str) -> Option<String> {
    {
        // pip builds an archive from a URL by running its setup code; the registry's own
        // file host is the registry.
        if matches!(name, "pip" | "pip3") && form.iter().any(|arg| arg.text == "install") {
            let archive = form.iter().skip(1).find(|arg| {
                let text = arg.text.as_str();
                (text.starts_with("http://") || text.starts_with("https://"))
                    && !text.contains("files.pythonhosted.org")
                    && [".tgz", ".tar.gz", ".whl", ".zip", ".tar.bz2"]
                        .iter()
                        .any(|end| text.ends_with(end))
            })?;
            return Some(format!(
                "installs `{}`, a package from a URL rather than a registry, running its build code",
                archive.text
            ));
        }
        if !matches!(
            name,
            "uvx" | "npx" | "pipx" | "bunx" | "pnpx" | "uv" | "pnpm" | "yarn"
        ) {
            return None;
        }
        let source = form.iter().skip(1).find(|arg| {
            let text = arg.text.trim_start_matches("--from=");
            let archive = [".tgz", ".tar.gz", ".whl", ".zip", ".tar.bz2"]
                .iter()
                .any(|end| text.ends_with(end));
            (text.starts_with("http://") || text.starts_with("https://")) && archive
                || text.starts_with("git+")
                || text.starts_with("github:")
                || text.starts_with("gitlab:")
                || (text.starts_with("https://") && text.contains(".git"))
        })?;
        Some(format!(
            "runs code fetched from `{}`, a repository rather than a registry",
            source.text
        ))
    }
}
