//! The walker over redirections, here-documents and process substitutions, normalized into
//! [`Redirect`]s and the [`Arg`] a `<(…)` stands for.

use brush_parser::ast;

use crate::words::{Arg, Found, Printed, Redirect, Stdin};

use super::Walker;
use super::output::printed;

impl Walker<'_> {
    pub(super) fn redirect(&mut self, redirect: &ast::IoRedirect, out: &mut Vec<Redirect>) {
        let normalized = match redirect {
            ast::IoRedirect::File(fd, kind, target) => {
                let op = match kind {
                    ast::IoFileRedirectKind::Read => "<",
                    ast::IoFileRedirectKind::Write => ">",
                    ast::IoFileRedirectKind::Append => ">>",
                    ast::IoFileRedirectKind::ReadAndWrite => "<>",
                    ast::IoFileRedirectKind::Clobber => ">|",
                    ast::IoFileRedirectKind::DuplicateInput => "<&",
                    ast::IoFileRedirectKind::DuplicateOutput => ">&",
                };
                let target = match target {
                    ast::IoFileRedirectTarget::Filename(word)
                    | ast::IoFileRedirectTarget::Duplicate(word) => self.expand_first(&word.value),
                    ast::IoFileRedirectTarget::Fd(fd) => Arg::literal(fd.to_string()),
                    ast::IoFileRedirectTarget::ProcessSubstitution(kind, subshell) => {
                        self.process_substitution(kind, subshell)
                    }
                };
                Redirect {
                    fd: *fd,
                    op,
                    target,
                    body: None,
                }
            }
            ast::IoRedirect::HereDocument(fd, doc) => {
                let start = self.out.len();
                if doc.requires_expansion {
                    self.scan_heredoc(&doc.doc.value);
                }
                let mut target = self.expand_first(&doc.here_end.value);
                target.download = self.out[start..].iter().any(Found::downloads);
                let op = if doc.remove_tabs { "<<-" } else { "<<" };
                Redirect {
                    fd: *fd,
                    op,
                    target,
                    body: Some(doc.doc.value.clone()),
                }
            }
            ast::IoRedirect::HereString(fd, word) => {
                let target = self.expand_first(&word.value);
                let body = Some(target.text.clone());
                Redirect {
                    fd: *fd,
                    op: "<<<",
                    target,
                    body,
                }
            }
            ast::IoRedirect::OutputAndError(word, append) => {
                let op = if *append { "&>>" } else { "&>" };
                Redirect {
                    fd: None,
                    op,
                    target: self.expand_first(&word.value),
                    body: None,
                }
            }
        };
        out.push(normalized);
    }

    pub(super) fn process_substitution(
        &mut self,
        kind: &ast::ProcessSubstitutionKind,
        subshell: &ast::SubshellCommand,
    ) -> Arg {
        let label = match kind {
            ast::ProcessSubstitutionKind::Read => "<(…)",
            ast::ProcessSubstitutionKind::Write => ">(…)",
        };
        let start = self.out.len();
        if matches!(kind, ast::ProcessSubstitutionKind::Write) {
            // `>(sh)` reads what the command writes.
            self.launch_stdin = Some(Stdin::Pipe);
        }
        self.last_output = None;
        self.inside(label, |walker| walker.compound_list(&subshell.list, &[]));
        if matches!(kind, ast::ProcessSubstitutionKind::Write) {
            self.output_substitutions.push((start, self.out.len()));
        }
        let download = self.out[start..].iter().any(Found::downloads);
        // What the inner pipeline prints when the line shows it (`<(echo … | base64 -d)`).
        let shown = self.last_output.take();
        let printed = matches!(kind, ast::ProcessSubstitutionKind::Read).then(|| {
            Box::new(match shown {
                Some(text) => Printed::Text(text),
                None => printed(&self.out[start..]),
            })
        });
        Arg {
            text: label.to_owned(),
            download,
            printed,
            ..Arg::default()
        }
    }
}
