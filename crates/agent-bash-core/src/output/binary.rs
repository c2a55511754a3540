//! Binary detection: decides from a stream's first bytes whether it is text at all.
//!
//! Pure. A stream found binary is not rendered; its raw bytes go to the spill file.

/// How many bytes of a stream the decision looks at.
pub const SNIFF_BYTES: usize = 1024;

/// Percentage of non-text bytes in the sample above which a stream is binary.
const NON_TEXT_PERCENT: usize = 30;

/// The kind of binary data from an incomplete sample (a job's first read, shorter than
/// `SNIFF_BYTES`), or `None` for text. Only the sure signs count (a magic number, a NUL):
/// one control character in a short first read must not make a whole stream binary.
pub fn sniff_partial(sample: &[u8]) -> Option<&'static str> {
    if sample.len() >= SNIFF_BYTES {
        return sniff(sample);
    }
    sniff(sample).filter(|_| magic(sample).is_some() || memchr::memchr(0, sample).is_some())
}

/// The kind named by a magic number at the start of `sample`.
fn magic(sample: &[u8]) -> Option<&'static str> {
    const MAGIC: &[(&[u8], &str)] = &[
        (b"\x89PNG\r\n\x1a\n", "png"),
        (b"\xff\xd8\xff", "jpeg"),
        (b"GIF87a", "gif"),
        (b"GIF89a", "gif"),
        (b"%PDF-", "pdf"),
        (b"\x7fELF", "elf"),
        (b"PK\x03\x04", "zip"),
        (b"\x1f\x8b", "gzip"),
        (b"\xfd7zXZ\0", "xz"),
        (b"BZh", "bzip2"),
        (b"\x28\xb5\x2f\xfd", "zstd"),
        (b"\0asm", "wasm"),
    ];
    if let Some((_, kind)) = MAGIC.iter().find(|(magic, _)| sample.starts_with(magic)) {
        return Some(kind);
    }
    if sample.len() >= 12 && sample.starts_with(b"RIFF") && &sample[8..12] == b"WEBP" {
        return Some("webp");
    }
    None
}

/// The kind of binary data, or `None` for text.
pub fn sniff(sample: &[u8]) -> Option<&'static str> {
    if let Some(kind) = magic(sample) {
        return Some(kind);
    }
    if memchr::memchr(0, sample).is_some() {
        return Some("data");
    }
    // Controls that text does not use, plus bytes of invalid UTF-8 (a character cut by the
    // end of the sample is not held against it).
    let controls = sample
        .iter()
        .filter(|&&b| b < 0x20 && !matches!(b, b'\t' | b'\n' | b'\r' | 0x0c | 0x1b | 0x08))
        .count();
    let mut invalid = 0;
    for chunk in sample.utf8_chunks() {
        invalid += chunk.invalid().len();
    }
    invalid = invalid.saturating_sub(3);
    if (controls + invalid) * 100 > sample.len() * NON_TEXT_PERCENT {
        return Some("data");
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[track_caller]
    fn check(sample: &[u8], expected: Option<&str>) {
        assert_eq!(sniff(sample), expected);
    }

    #[test]
    fn kinds() {
        check(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR", Some("png"));
        check(b"\xff\xd8\xff\xe0\0\x10JFIF", Some("jpeg"));
        check(b"\x7fELF\x02\x01\x01", Some("elf"));
        check(b"RIFF\x10\0\0\0WEBPVP8 ", Some("webp"));
        check(b"hello\0world", Some("data"));
        check(&[0x80u8; 100], Some("data"));
        check(&[0x01u8; 100], Some("data"));
    }

    #[test]
    fn text_is_text() {
        check(b"hello world\n", None);
        check("日本語のテキスト\n".as_bytes(), None);
        check(b"\x1b[31mred\x1b[0m\r\n", None);
        check(b"mostly text with one bad \xff byte in it", None);
        check(b"", None);
    }
}
