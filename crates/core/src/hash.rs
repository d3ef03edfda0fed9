//! Content hashes: every dataset, template, prompt and experiment is identified by sha256.

use sha2::{Digest, Sha256};

/// Lowercase hex sha256 of `bytes`.
pub fn sha256_hex(bytes: impl AsRef<[u8]>) -> String {
    hex::encode(Sha256::digest(bytes.as_ref()))
}

/// A 64-bit hash of `text`, stable across platforms and releases (the first 8 bytes of sha256).
pub fn stable_u64(text: &str) -> u64 {
    let digest = Sha256::digest(text.as_bytes());
    u64::from_le_bytes(digest[..8].try_into().expect("sha256 has 32 bytes"))
}

/// The hash a verdict records of the messages its judge was shown: sha256 of their JSON.
pub fn prompt_hash(messages: &[crate::Message]) -> String {
    sha256_hex(serde_json::to_string(messages).expect("messages serialise"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sha256_of_abc() {
        assert_eq!(
            sha256_hex("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
