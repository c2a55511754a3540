//! What the policy knows about particular commands: wrappers that run another command
//! (`sudo`, `env`, `timeout`, `xargs`, …), launchers that run a script given as text
//! (`bash -c`, `eval`, `ssh host …`), interpreters that read a program from their input, and
//! downloaders.
//!
//! Every function here looks at words only. Pure: runs nothing.

mod interpreters;
mod launchers;
mod names;
mod option_scripts;
mod output;
mod wrappers;

pub(crate) use interpreters::{ProgramSource, program_source, shell_reads_stdin};
pub(crate) use launchers::launch;
pub(crate) use names::{
    adds_arguments, basename, changes_what_names_run, evaluated_names, input_reaches_shell,
    is_assignment, is_downloader, is_language_interpreter, is_shell, makes_file_system,
    names_environment, program, program_name,
};
pub(crate) use option_scripts::{
    GIT_COMMAND_KEYS, git_config_parameters, git_value_script, option_scripts, runs_variable,
};
pub(crate) use output::{keeps_whole_lines, lists_local_paths};
pub(crate) use wrappers::wrapped_command;
