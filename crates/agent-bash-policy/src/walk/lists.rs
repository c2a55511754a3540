//! The walker over lists, pipelines and compound commands (loops, conditionals, `case`,
//! subshells, function bodies, `[[ ]]`, arithmetic): what holds simple commands.

use brush_parser::ast;

use crate::commands;
use crate::harm;
use crate::words::{Arg, Found, Redirect, Stdin};

use super::marks::{endless, mark_background_flood};
use super::output::{output_of, prints_without_end};
use super::{Walker, name_of};

impl Walker<'_> {
    pub(super) fn compound_list(&mut self, list: &ast::CompoundList, redirects: &[Redirect]) {
        for ast::CompoundListItem(and_or, separator) in &list.0 {
            let background = matches!(separator, ast::SeparatorOperator::Async);
            self.background += usize::from(background);
            self.pipeline(&and_or.first, redirects);
            for next in &and_or.additional {
                match next {
                    ast::AndOr::And(pipeline) | ast::AndOr::Or(pipeline) => {
                        self.pipeline(pipeline, redirects);
                    }
                }
            }
            self.background -= usize::from(background);
        }
    }

    fn pipeline(&mut self, pipeline: &ast::Pipeline, redirects: &[Redirect]) {
        if let [command] = pipeline.seq.as_slice() {
            let start = self.out.len();
            self.command(command, redirects);
            self.last_output = match &self.out[start..] {
                [found] => output_of(found),
                _ => None,
            };
            return;
        }
        let self_calls = pipeline
            .seq
            .iter()
            .filter(|command| self.calls_enclosing_function(command))
            .count();
        let fans_out = usize::from(self_calls >= 2);
        self.self_pipelines += fans_out;
        let names: Vec<String> = pipeline.seq.iter().filter_map(called_name).collect();
        let fanned_before = self.fanned.len();
        for (index, name) in names.iter().enumerate() {
            if names[index + 1..].contains(name) && !self.fanned.contains(name) {
                self.fanned.push(name.clone());
            }
        }
        let saved_stdin = self.stdin;
        let mut download_before = false;
        let mut local_paths = true;
        let mut home_paths = false;
        let mut piped = None;
        let mut watched = false;
        let mut endless = false;
        for (index, command) in pipeline.seq.iter().enumerate() {
            self.watched += usize::from(index == 1 && watched);
            self.stdin = match (index, download_before, local_paths) {
                (0, _, _) => saved_stdin,
                (_, true, _) => Stdin::DownloadPipe,
                (_, false, true) => Stdin::LocalPaths,
                (_, false, false) if home_paths => Stdin::HomePaths,
                (_, false, false) => Stdin::Pipe,
            };
            let start = self.out.len();
            self.endless_input = index > 0 && endless;
            // What a literal `echo`/`printf` before it prints: the next command's input.
            self.piped_text = match command {
                ast::Command::Simple(_) => piped.take(),
                _ => None,
            };
            self.command(command, redirects);
            self.piped_text = None;
            self.endless_input = false;
            let this = &self.out[start..];
            endless = matches!(this, [found] if prints_without_end(found));
            if index == 0 {
                watched = this
                    .iter()
                    .any(|found| found.each_form().any(watches_files));
            }
            piped = match this {
                [found] => output_of(found),
                _ => None,
            };
            download_before |= this.iter().any(Found::downloads);
            local_paths = match this {
                [found] if index == 0 => commands::lists_local_paths(found.each_form().last()),
                [found] => local_paths && commands::keeps_whole_lines(found.each_form().last()),
                _ => false,
            };
            home_paths = match this {
                [found] if index == 0 => harm::lists_home(found),
                [found] => home_paths && commands::keeps_whole_lines(found.each_form().last()),
                _ => false,
            };
        }
        self.stdin = saved_stdin;
        self.last_output = piped;
        self.self_pipelines -= fans_out;
        self.watched -= usize::from(watched && pipeline.seq.len() > 1);
        self.fanned.truncate(fanned_before);
    }

    /// True if `command` is a plain call of a function whose body encloses this point.
    fn calls_enclosing_function(&self, command: &ast::Command) -> bool {
        called_name(command).is_some_and(|name| self.functions.contains(&name))
    }

    fn command(&mut self, command: &ast::Command, redirects: &[Redirect]) {
        match command {
            ast::Command::Simple(simple) => self.simple(simple, redirects),
            ast::Command::Compound(compound, own) => {
                let redirects = self.with_redirects(redirects, own.as_ref());
                self.compound(compound, &redirects);
            }
            ast::Command::Function(definition) => self.function(definition),
            ast::Command::ExtendedTest(test, own) => {
                self.with_redirects(redirects, own.as_ref());
                self.extended_test(&test.expr);
            }
        }
    }

    /// The redirects in force inside a compound command: the enclosing ones, then its own.
    fn with_redirects(
        &mut self,
        outer: &[Redirect],
        own: Option<&ast::RedirectList>,
    ) -> Vec<Redirect> {
        let mut redirects = outer.to_vec();
        for redirect in own.iter().flat_map(|list| &list.0) {
            self.redirect(redirect, &mut redirects);
        }
        redirects
    }

    fn compound(&mut self, compound: &ast::CompoundCommand, redirects: &[Redirect]) {
        match compound {
            ast::CompoundCommand::Arithmetic(arithmetic) => self.arithmetic(arithmetic, redirects),
            ast::CompoundCommand::ArithmeticForClause(clause) => {
                for expr in [&clause.initializer, &clause.condition, &clause.updater]
                    .into_iter()
                    .flatten()
                {
                    self.scan_text(&expr.value);
                }
                self.compound_list(&clause.body.list, redirects);
            }
            ast::CompoundCommand::BraceGroup(group) => self.compound_list(&group.list, redirects),
            ast::CompoundCommand::Subshell(subshell) => {
                // A `cd` inside a subshell does not move the commands after it.
                let cwd = self.cwd.clone();
                self.compound_list(&subshell.list, redirects);
                self.cwd = cwd;
            }
            ast::CompoundCommand::ForClause(clause) => {
                let mut values = Vec::new();
                for value in clause.values.iter().flatten() {
                    values.extend(self.expand(&value.value));
                }
                self.bindings.push((clause.variable_name.clone(), values));
                self.compound_list(&clause.body.list, redirects);
            }
            ast::CompoundCommand::CaseClause(clause) => {
                self.expand(&clause.value.value);
                for item in &clause.cases {
                    for pattern in &item.patterns {
                        self.expand(&pattern.value);
                    }
                    if let Some(list) = &item.cmd {
                        self.compound_list(list, redirects);
                    }
                }
            }
            ast::CompoundCommand::IfClause(clause) => {
                self.compound_list(&clause.condition, redirects);
                self.compound_list(&clause.then, redirects);
                for other in clause.elses.iter().flatten() {
                    if let Some(condition) = &other.condition {
                        self.compound_list(condition, redirects);
                    }
                    self.compound_list(&other.body, redirects);
                }
            }
            ast::CompoundCommand::WhileClause(clause) => {
                self.compound_list(&clause.0, redirects);
                let start = self.out.len();
                self.compound_list(&clause.1.list, redirects);
                if endless(&clause.0, ":") {
                    mark_background_flood(&mut self.out[start..], &clause.1.list);
                }
            }
            ast::CompoundCommand::UntilClause(clause) => {
                self.compound_list(&clause.0, redirects);
                let start = self.out.len();
                self.compound_list(&clause.1.list, redirects);
                if endless(&clause.0, "false") {
                    mark_background_flood(&mut self.out[start..], &clause.1.list);
                }
            }
            // A coprocess reads what the shell writes to it later (`>&${COPROC[1]}`).
            ast::CompoundCommand::Coprocess(coprocess) => {
                let saved = std::mem::replace(&mut self.stdin, Stdin::Pipe);
                self.command(&coprocess.body, redirects);
                self.stdin = saved;
            }
        }
    }

    /// `(( … ))`, which brush-parser reads as arithmetic whenever the tokens are `(` `(` …
    /// `)` `)`. Bash reads arithmetic only when the text starts with `((` and the inner
    /// expression's closing `)` is followed at once by `)`; otherwise (`( ( cmd ) )`,
    /// `((cmd) )`) it is a subshell in a subshell, walked as such.
    fn arithmetic(&mut self, arithmetic: &ast::ArithmeticCommand, redirects: &[Redirect]) {
        let (start, end) = (arithmetic.loc.start.index, arithmetic.loc.end.index);
        let source: Option<String> = self
            .text
            .get(start..end)
            .map(|chars| chars.iter().collect());
        match source {
            Some(source) if source.starts_with("((") && source.ends_with("))") => {
                self.arithmetic_text(&arithmetic.expr.value);
            }
            Some(source) if source.len() >= 2 => {
                // Drop the outer `(` and `)`: the rest is the inner subshell.
                let inner: String = source
                    .chars()
                    .skip(1)
                    .take(source.chars().count() - 2)
                    .collect();
                self.inherited = redirects.to_vec();
                self.nested_script(&inner, "( )");
                self.inherited.clear();
            }
            _ => self.unknown(
                &arithmetic.expr.value,
                "an arithmetic command whose text could not be found".to_owned(),
            ),
        }
    }

    fn function(&mut self, definition: &ast::FunctionDefinition) {
        let name = definition.fname.value.clone();
        let ast::FunctionBody(body, own) = &definition.body;
        let saved_background = std::mem::take(&mut self.background);
        let saved_self_pipelines = std::mem::take(&mut self.self_pipelines);
        self.functions.push(name.clone());
        self.inside(&format!("{name}()"), |walker| {
            let redirects = walker.with_redirects(&[], own.as_ref());
            walker.compound(body, &redirects);
        });
        self.functions.pop();
        self.background = saved_background;
        self.self_pipelines = saved_self_pipelines;
    }

    fn extended_test(&mut self, expr: &ast::ExtendedTestExpr) {
        match expr {
            ast::ExtendedTestExpr::And(left, right) | ast::ExtendedTestExpr::Or(left, right) => {
                self.extended_test(left);
                self.extended_test(right);
            }
            ast::ExtendedTestExpr::Not(inner) | ast::ExtendedTestExpr::Parenthesized(inner) => {
                self.extended_test(inner);
            }
            ast::ExtendedTestExpr::UnaryTest(predicate, word) => {
                let args = self.expand(&word.value);
                if matches!(
                    predicate,
                    ast::UnaryPredicate::ShellVariableIsSetAndAssigned
                        | ast::UnaryPredicate::ShellVariableIsSetAndNameRef
                ) {
                    args.iter().for_each(|arg| self.subscript(arg));
                }
            }
            ast::ExtendedTestExpr::BinaryTest(predicate, left, right) => {
                let mut args = self.expand(&left.value);
                args.extend(self.expand(&right.value));
                // `-eq` and the like evaluate both sides as arithmetic.
                if matches!(
                    predicate,
                    ast::BinaryPredicate::ArithmeticEqualTo
                        | ast::BinaryPredicate::ArithmeticNotEqualTo
                        | ast::BinaryPredicate::ArithmeticLessThan
                        | ast::BinaryPredicate::ArithmeticLessThanOrEqualTo
                        | ast::BinaryPredicate::ArithmeticGreaterThan
                        | ast::BinaryPredicate::ArithmeticGreaterThanOrEqualTo
                ) {
                    args.iter().for_each(|arg| self.subscript(arg));
                    for arg in &args {
                        if let Some(reason) = self.unseen_arithmetic(&arg.text) {
                            self.unknown(&arg.text, reason);
                        }
                    }
                }
            }
        }
    }

    /// Why arithmetic on `expression` runs what the policy cannot see: it reads a variable
    /// that `read`/`mapfile` filled from a file or a pipe, or a command substitution's output
    /// that is a file's text (`$(cat VERSION)`). Bash evaluates such a value as an expression
    /// again, and `a[$(cmd)]` in it runs `cmd`.
    fn unseen_arithmetic(&self, expression: &str) -> Option<String> {
        let trimmed = expression.trim_start_matches(['"', ' ']);
        if ["$(cat ", "$(<", "$(head ", "$(tail ", "`cat "]
            .iter()
            .any(|start| trimmed.starts_with(start))
        {
            return Some(format!(
                "arithmetic on `{expression}`, a file's text: bash evaluates a value such as \
                 `a[$(cmd)]` in it as code"
            ));
        }
        let name = expression
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .find(|word| self.read_names.iter().any(|name| name == word))?;
        Some(format!(
            "arithmetic on `{name}`, read from a file or pipe: bash evaluates a value such as \
             `a[$(cmd)]` in it as code"
        ))
    }

    /// `$((…))` and `((…))`: the commands in the text, and the values it reads that may hold
    /// more.
    pub(super) fn arithmetic_text(&mut self, expression: &str) {
        self.scan_text(expression);
        if let Some(reason) = self.unseen_arithmetic(expression) {
            self.unknown(expression, reason);
        }
    }
}

/// The name a plain simple command calls; quotes do not change it (`':'|':'`).
pub(super) fn called_name(command: &ast::Command) -> Option<String> {
    let ast::Command::Simple(simple) = command else {
        return None;
    };
    let word = simple.word_or_name.as_ref()?;
    Some(
        word.value
            .chars()
            .filter(|c| !matches!(c, '\'' | '"' | '\\'))
            .collect(),
    )
}

/// True if `form` reports file changes without end (`inotifywait -m`, `fswatch`).
fn watches_files(form: &[Arg]) -> bool {
    match &*name_of(form) {
        "inotifywait" => form.iter().any(|arg| {
            arg.text == "--monitor"
                || (arg.text.starts_with('-')
                    && !arg.text.starts_with("--")
                    && arg.text.contains('m'))
        }),
        "fswatch" | "watchman-wait" => true,
        _ => false,
    }
}
