//! The agent-bash that runs on a target: a static (musl) build, found here, named by its
//! SHA-256, and copied to the target only when the target's cache lacks that exact file.
//!
//! A static build is its own payload. A dynamically linked one (the usual `cargo build`)
//! cannot run in a container with another libc, so it looks for its static build beside it
//! (`agent-bash-x86_64-unknown-linux-musl`) or where cargo puts one
//! (`target/x86_64-unknown-linux-musl/{release,debug}/agent-bash`), and otherwise says what
//! to build. The setting `target_binary` names one outright.

use std::io::Read;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

/// A static agent-bash to run on targets.
#[derive(Clone, Debug)]
pub(crate) struct Payload {
    pub(crate) path: PathBuf,
    /// Its SHA-256, in lower-case hex: the name of its directory in a target's cache.
    pub(crate) sha256: String,
    pub(crate) size: u64,
    /// The machine it is built for, as `uname -m` names it (`x86_64`, `aarch64`).
    pub(crate) arch: String,
}

impl Payload {
    /// The static agent-bash for targets: `configured` (the setting `target_binary`), else
    /// this program or its static build.
    ///
    /// # Errors
    /// Where none was found, what was looked at and what to build, or why the configured
    /// one cannot be used.
    pub(crate) fn find(configured: Option<&Path>) -> Result<Payload, String> {
        if let Some(path) = configured {
            return Payload::of(path)
                .map_err(|why| format!("target_binary {}: {why}", path.display()));
        }
        let this = std::env::current_exe()
            .map_err(|err| format!("cannot find this program's own path: {err}"))?;
        let this_one = Payload::of(&this);
        if let Ok(payload) = this_one {
            return Ok(payload);
        }
        let candidates = static_builds_beside(&this);
        for candidate in &candidates {
            if let Ok(payload) = Payload::of(candidate) {
                return Ok(payload);
            }
        }
        let looked: Vec<String> = candidates.iter().map(|p| p.display().to_string()).collect();
        Err(format!(
            "a target runs the static (musl) agent-bash, and {} is dynamically linked; none was \
             found at {}. Build one with `cargo build --release --target {}-unknown-linux-musl` \
             (the repository's `scripts/musl`), or name one in the setting `target_binary`",
            this.display(),
            looked.join(", "),
            std::env::consts::ARCH,
        ))
    }

    /// The payload at `path`, when it is a static Linux executable.
    fn of(path: &Path) -> Result<Payload, String> {
        let mut file = std::fs::File::open(path).map_err(|err| err.to_string())?;
        let mut header = vec![0u8; 64];
        file.read_exact(&mut header)
            .map_err(|_| "not an executable (too short)".to_string())?;
        let elf = Elf::read(&header)?;
        if elf.has_interpreter(&mut file)? {
            return Err("dynamically linked".into());
        }
        let mut hasher = Sha256::new();
        let mut size = 0u64;
        let mut buffer = vec![0u8; 1 << 20];
        let mut file = std::fs::File::open(path).map_err(|err| err.to_string())?;
        loop {
            let read = file.read(&mut buffer).map_err(|err| err.to_string())?;
            if read == 0 {
                break;
            }
            hasher.update(&buffer[..read]);
            size += read as u64;
        }
        let digest = hasher.finalize();
        let sha256 = digest.iter().map(|byte| format!("{byte:02x}")).collect();
        Ok(Payload {
            path: path.to_path_buf(),
            sha256,
            size,
            arch: elf.arch(),
        })
    }
}

/// Where a static build of `this` may be: beside it, or in cargo's musl target directory.
fn static_builds_beside(this: &Path) -> Vec<PathBuf> {
    let triple = format!("{}-unknown-linux-musl", std::env::consts::ARCH);
    let mut candidates = Vec::new();
    if let Some(dir) = this.parent() {
        candidates.push(dir.join(format!("agent-bash-{triple}")));
        // cargo: target/<profile>/agent-bash beside target/<triple>/<profile>/agent-bash.
        if let (Some(profile), Some(target)) = (dir.file_name(), dir.parent()) {
            let musl = target.join(&triple);
            candidates.push(musl.join(profile).join("agent-bash"));
            for other in ["release", "debug"] {
                let path = musl.join(other).join("agent-bash");
                if !candidates.contains(&path) {
                    candidates.push(path);
                }
            }
        }
    }
    candidates
}

/// What the ELF header says: the machine, and where the program headers are.
struct Elf {
    machine: u16,
    ph_offset: u64,
    ph_size: u16,
    ph_count: u16,
}

impl Elf {
    fn read(header: &[u8]) -> Result<Elf, String> {
        // 64-bit (class 2), little-endian (data 1): the targets agent-bash builds for.
        if header.get(..6) != Some(b"\x7fELF\x02\x01".as_slice()) {
            return Err("not a 64-bit little-endian ELF executable".into());
        }
        let u16_at = |at: usize| u16::from_le_bytes([header[at], header[at + 1]]);
        let mut offset = [0u8; 8];
        offset.copy_from_slice(&header[32..40]);
        Ok(Elf {
            machine: u16_at(18),
            ph_offset: u64::from_le_bytes(offset),
            ph_size: u16_at(54),
            ph_count: u16_at(56),
        })
    }

    /// True if a program header asks for an interpreter (`ld.so`): a dynamic executable.
    fn has_interpreter(&self, file: &mut std::fs::File) -> Result<bool, String> {
        use std::io::{Seek, SeekFrom};
        const PT_INTERP: u32 = 3;
        let size = usize::from(self.ph_size);
        if self.ph_count == 0 {
            return Ok(false);
        }
        if size < 4 {
            return Err("malformed program headers".into());
        }
        let mut headers = vec![0u8; size * usize::from(self.ph_count)];
        file.seek(SeekFrom::Start(self.ph_offset))
            .and_then(|_| file.read_exact(&mut headers))
            .map_err(|_| "malformed program headers".to_string())?;
        Ok(headers.chunks_exact(size).any(|header| {
            u32::from_le_bytes([header[0], header[1], header[2], header[3]]) == PT_INTERP
        }))
    }

    /// The machine as `uname -m` names it.
    fn arch(&self) -> String {
        match self.machine {
            62 => "x86_64".into(),
            183 => "aarch64".into(),
            243 => "riscv64".into(),
            other => format!("ELF machine {other}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dynamic_program_is_not_a_payload_and_the_error_says_what_to_build() {
        // The test binary itself is linked like the usual build.
        let this = std::env::current_exe().unwrap();
        let linked_statically = cfg!(target_env = "musl");
        assert_eq!(Payload::of(&this).is_ok(), linked_statically);
        let err = Payload::find(Some(Path::new("/nonexistent/agent-bash"))).unwrap_err();
        assert!(
            err.starts_with("target_binary /nonexistent/agent-bash: "),
            "{err}"
        );
        let err = Payload::find(Some(Path::new("/etc/passwd"))).unwrap_err();
        assert!(err.contains("not a 64-bit little-endian ELF"), "{err}");
    }

    #[test]
    fn static_builds_are_looked_for_beside_and_in_cargos_musl_directory() {
        let found = static_builds_beside(Path::new("/w/target/debug/agent-bash"));
        let triple = format!("{}-unknown-linux-musl", std::env::consts::ARCH);
        assert_eq!(
            found,
            [
                PathBuf::from(format!("/w/target/debug/agent-bash-{triple}")),
                PathBuf::from(format!("/w/target/{triple}/debug/agent-bash")),
                PathBuf::from(format!("/w/target/{triple}/release/agent-bash")),
            ]
        );
    }
}
