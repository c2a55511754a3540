//! Databases: dropped or emptied on another host, through a framework in production, or
//! by SQL fed to a client whose server is not this machine.

use super::*;

/// True if `form` (the program `name`, its `words`) drops or empties a database that is
/// not a local development one.
pub(super) fn destroys(name: &str, found: &Found, form: &[Arg], words: &[&str]) -> bool {
    let has_word = |word: &str| words.contains(&word);
    match name {
        // Dropping a database on another host (a local test database is everyday work); a
        // command run over ssh is on another host.
        "dropdb" | "dropuser" if found.via.iter().any(|via| via == "ssh") => true,
        "dropdb" | "dropuser" => {
            form.windows(2).any(|pair| {
                matches!(pair[0].text.as_str(), "-h" | "--host") && !is_loopback(&pair[1].text)
            }) || form.iter().any(|arg| {
                arg.text
                    .strip_prefix("--host=")
                    .is_some_and(|host| !is_loopback(host))
            })
        }
        // A framework's database dropped or emptied in production.
        "rails" | "rake" | "python" | "python3" | "mix" | "php" | "npx" | "bundle" => {
            framework_drops_production(words)
        }
        "supabase" => has_word("reset") && has_word("--linked"),
        // The SQL on the command line, or fed on input (`echo 'DROP …' | psql`).
        // A database on another host, or named by a variable (a local development database
        // is everyday work to reset).
        "psql" | "mysql" | "mariadb" | "sqlcmd" | "cockroach" | "clickhouse-client" => {
            (words.iter().any(|word| is_destructive_sql(word))
                || found
                    .redirects
                    .iter()
                    .filter_map(|redirect| redirect.body.as_deref())
                    .any(is_destructive_sql))
                && !local_database(form)
        }
        "mongo" | "mongosh" => {
            words
                .iter()
                .any(|word| word.contains("dropDatabase") || word.contains(".drop()"))
                && !local_database(form)
        }
        // Flushing a local development server is everyday work; a named remote one is not.
        "redis-cli" | "valkey-cli" | "keydb-cli" => {
            words.iter().any(|word| {
                word.eq_ignore_ascii_case("flushall") || word.eq_ignore_ascii_case("flushdb")
            }) && form.windows(2).any(|pair| {
                matches!(pair[0].text.as_str(), "-h" | "-u")
                    && !is_loopback(
                        pair[1]
                            .text
                            .split("://")
                            .last()
                            .unwrap_or("")
                            .split([':', '@', '/'])
                            .next()
                            .unwrap_or(""),
                    )
            })
        }
        _ => false,
    }
}

/// True if a framework's task `words` drop or reset the database with a production
/// setting named (`rails db:drop RAILS_ENV=production`).
fn framework_drops_production(words: &[&str]) -> bool {
    let production = words.iter().any(|word| {
        let lower = word.to_ascii_lowercase();
        (lower.contains("env=prod") || lower.contains("settings") || lower.contains("env="))
            && lower.contains("prod")
    });
    let drops = words.iter().any(|word| {
        matches!(
            *word,
            "db:drop"
                | "db:reset"
                | "db:purge"
                | "db:schema:load"
                | "flush"
                | "reset_db"
                | "ecto.drop"
                | "ecto.reset"
                | "migrate:fresh"
                | "db:wipe"
                | "migrate:reset"
        )
    });
    production && drops
}

fn is_destructive_sql(text: &str) -> bool {
    let upper = text.to_ascii_uppercase();
    let upper: String = upper.split_whitespace().collect::<Vec<_>>().join(" ");
    [
        "DROP DATABASE",
        "DROP SCHEMA",
        "DROP TABLE",
        "TRUNCATE",
        "DROP USER",
        "DELETE FROM",
    ]
    .iter()
    .any(|statement| {
        upper.contains(statement) && !(*statement == "DELETE FROM" && upper.contains(" WHERE "))
    })
}

/// True if a database client's target is this machine: a loopback host or socket given,
/// or none at all (the local default). A URI or host known only at run time is not.
fn local_database(form: &[Arg]) -> bool {
    let mut target = None;
    for (at, arg) in form.iter().enumerate().skip(1) {
        let text = arg.text.as_str();
        let value = match text {
            "-h" | "--host" | "-S" | "--server" => form.get(at + 1),
            _ if text.starts_with("--host=") => Some(arg),
            _ if text.contains("://") || text.starts_with("host=") || text.starts_with('$') => {
                Some(arg)
            }
            _ => None,
        };
        if let Some(value) = value {
            target = Some(value);
        }
    }
    let Some(target) = target else {
        return true;
    };
    if !target.literal {
        return false;
    }
    let text = target
        .text
        .trim_start_matches("--host=")
        .trim_start_matches("host=");
    let host = text
        .split("://")
        .last()
        .unwrap_or("")
        .rsplit('@')
        .next()
        .unwrap_or("")
        .split([':', '/', ' ', '?'])
        .next()
        .unwrap_or("");
    host.is_empty() || is_loopback(host) || text.starts_with('/')
}
