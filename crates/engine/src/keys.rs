//! API keys in the OS keychain (macOS Keychain, Windows Credential Manager, the Secret
//! Service on Linux), under the service name `judgelab`. A key read from here lives only in
//! memory; `judgelab key set NAME` stores one.

use crate::EngineError;

const SERVICE: &str = "judgelab";

fn entry(name: &str) -> Result<keyring::Entry, EngineError> {
    keyring::Entry::new(SERVICE, name)
        .map_err(|e| EngineError::Keychain(format!("cannot open the OS keychain: {e}")))
}

/// The key stored as `name`.
pub fn read(name: &str) -> Result<String, EngineError> {
    entry(name)?.get_password().map_err(|e| match e {
        keyring::Error::NoEntry => EngineError::Invalid {
            path: "judge.api_key_keyring".into(),
            message: format!(
                "no key named {name:?} in the OS keychain: store one with `judgelab key set {name}`"
            ),
        },
        other => EngineError::Keychain(format!("cannot read the OS keychain: {other}")),
    })
}

/// Stores `key` as `name`, replacing any key of that name.
pub fn store(name: &str, key: &str) -> Result<(), EngineError> {
    entry(name)?
        .set_password(key)
        .map_err(|e| EngineError::Keychain(format!("cannot write to the OS keychain: {e}")))
}

/// Deletes the key stored as `name`; `false` if there was none.
pub fn delete(name: &str) -> Result<bool, EngineError> {
    match entry(name)?.delete_credential() {
        Ok(()) => Ok(true),
        Err(keyring::Error::NoEntry) => Ok(false),
        Err(e) => Err(EngineError::Keychain(format!(
            "cannot write to the OS keychain: {e}"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_key_says_how_to_store_one() {
        keyring::set_default_credential_builder(keyring::mock::default_credential_builder());
        let e = read("nowhere").unwrap_err();
        assert!(e.is_invalid_input());
        assert!(e.to_string().contains("judgelab key set nowhere"), "{e}");
    }
}
