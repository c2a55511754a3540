//! Clusters and the stores they keep their state in: Helm releases and Kubernetes objects
//! of production or the cluster itself, Vault secrets, etcd and Consul keys.

use super::*;

/// True if `kubectl exec … -- CMD` runs a recursive delete of an absolute path in the
/// container, directly or in a `sh -c` text: the data of a running service.
fn exec_deletes(words: &[&str]) -> bool {
    let Some(at) = words.iter().position(|word| *word == "--") else {
        return false;
    };
    if !words[..at].contains(&"exec") {
        return false;
    }
    let command: Vec<&str> = words[at + 1..]
        .iter()
        .flat_map(|word| word.split_whitespace())
        .collect();
    command.windows(2).enumerate().any(|(start, pair)| {
        pair[0] == "rm"
            && command[start + 1..]
                .iter()
                .take_while(|word| !matches!(**word, ";" | "&&" | "||" | "|"))
                .any(|word| {
                    word.starts_with('-') && !word.starts_with("--") && word.contains(['r', 'R'])
                        || *word == "--recursive"
                })
            && command[start + 1..]
                .iter()
                .take_while(|word| !matches!(**word, ";" | "&&" | "||" | "|"))
                .any(|word| word.trim_matches(['"', '\'']).starts_with('/'))
    })
}

/// True if `words` (after the program `name`) delete a cluster's objects or its stored
/// state.
pub(super) fn destroys(name: &str, form: &[Arg], words: &[&str]) -> bool {
    let has_word = |word: &str| words.contains(&word);
    match name {
        // A release removed from a production namespace or context, or from the cluster's
        // own components.
        "helm"
            if words
                .iter()
                .any(|word| matches!(*word, "uninstall" | "delete" | "del" | "un"))
                && form.windows(2).any(|pair| {
                    matches!(
                        pair[0].text.as_str(),
                        "--kube-context" | "-n" | "--namespace"
                    ) && ["prod", "production", "kube-system"]
                        .iter()
                        .any(|name| pair[1].text.contains(name))
                }) =>
        {
            true
        }
        "kubectl" | "oc"
            if (has_word("delete") || exec_deletes(words))
                && form.windows(2).any(|pair| {
                    matches!(
                        pair[0].text.as_str(),
                        "--context" | "-n" | "--namespace" | "--cluster"
                    ) && ["prod", "production", "kube-system"]
                        .iter()
                        .any(|name| pair[1].text.contains(name))
                }) =>
        {
            true
        }
        "kubectl" | "oc" => {
            let deletes = has_word("delete");
            deletes
                && words.iter().any(|word| {
                    matches!(
                        *word,
                        "namespace"
                            | "namespaces"
                            | "ns"
                            | "--all"
                            | "-A"
                            | "--all-namespaces"
                            | "node"
                            | "nodes"
                            | "pv"
                            | "crd"
                            | "crds"
                            | "customresourcedefinition"
                            | "clusterrole"
                            | "clusterrolebinding"
                    ) || word.starts_with("namespace/")
                        || word.starts_with("ns/")
                        || word.starts_with("node/")
                })
        }
        "helm" => has_word("uninstall") && has_word("--all"),
        "vault" => {
            has_word("delete")
                || has_word("destroy")
                || (has_word("secrets") && has_word("disable"))
        }
        "etcdctl" => has_word("del") && (has_word("--prefix") || has_word("--from-key")),
        "consul" => {
            has_word("kv")
                && has_word("delete")
                && words.iter().any(|word| word.starts_with("-recurse"))
        }
        _ => false,
    }
}
