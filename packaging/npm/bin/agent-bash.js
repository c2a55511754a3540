#!/usr/bin/env node
// The npm face of agent-bash (docs/install.md): starts the binary shipped in this package,
// passing the arguments, stdin, stdout and stderr through untouched (`agent-bash mcp` speaks
// MCP on stdio: this launcher never writes to stdout), forwarding the signals that stop a
// program, and ending with the binary's exit status or signal.
//
// The package carries one binary, the static (musl) build for x86_64 Linux, which runs on any
// x86_64 Linux distribution. Elsewhere the launcher says so, and what to do instead, on stderr.
// scripts/packages builds the package (it copies the binary into vendor/) and tests it.
'use strict';

const childProcess = require('child_process');
const os = require('os');
const path = require('path');

// `${process.platform}-${process.arch}` → the binary in this package for it.
const BINARIES = {
  'linux-x64': path.join(__dirname, '..', 'vendor', 'linux-x64', 'agent-bash'),
};

const FORWARDED_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT'];

/** The binary for this platform and architecture, or null when the package has none. */
function binaryFor(platform, arch) {
  return BINARIES[`${platform}-${arch}`] || null;
}

function unsupportedMessage(platform, arch) {
  const fromSource =
    'with a Rust toolchain (https://rustup.rs), in a clone of the agent-bash repository:\n' +
    '  cargo install --locked --path .\n';
  const missing =
    `agent-bash: this npm package has no binary for ${platform}-${arch}: it ships one for ` +
    'linux-x64 (x86_64 Linux) only.\n';
  if (platform !== 'linux') {
    return (
      missing +
      `agent-bash runs on Linux only (it does not build for ${platform}): run it on a Linux ` +
      'machine, VM or container (on Windows, under WSL 2), where this package works on ' +
      'x86_64; on another architecture build it from source there, ' +
      fromSource
    );
  }
  return missing + 'Build it from source instead, ' + fromSource;
}

/**
 * Runs agent-bash with `args` and ends this process as it ends. `platform` and `arch` are
 * this machine's; the tests pass others to see the message of an unsupported platform.
 */
function run(args, platform = process.platform, arch = process.arch) {
  const binary = binaryFor(platform, arch);
  if (binary === null) {
    process.stderr.write(unsupportedMessage(platform, arch));
    process.exit(1);
  }
  const child = childProcess.spawn(binary, args, { stdio: 'inherit' });
  const forward = (signal) => {
    child.kill(signal);
  };
  for (const signal of FORWARDED_SIGNALS) {
    process.on(signal, forward);
  }
  child.on('error', (error) => {
    process.stderr.write(`agent-bash: cannot start ${binary}: ${error.message}\n`);
    process.exit(1);
  });
  child.on('exit', (code, signal) => {
    for (const forwarded of FORWARDED_SIGNALS) {
      process.removeListener(forwarded, forward);
    }
    if (signal !== null) {
      // End by the same signal, so that whoever started us sees what the binary got (or,
      // for a signal that Node.js ignores, with the shell's status for it).
      process.kill(process.pid, signal);
      setTimeout(() => process.exit(128 + (os.constants.signals[signal] || 0)), 1000);
      return;
    }
    process.exit(code === null ? 1 : code);
  });
}

module.exports = { binaryFor, run, unsupportedMessage };

if (require.main === module) {
  run(process.argv.slice(2));
}
