//! metal-stack/security's HMAC scheme (`mac.go`): `X-Date` the time in RFC 3339 (whole
//! seconds, UTC), `X-Data-Salt` 24 random letters, `Authorization: TYPE hex(HMAC-SHA256(key,
//! X-Date ‖ method ‖ salt))`. metal-api refuses a date older than 15 seconds.

use chrono::{DateTime, SecondsFormat, Utc};
use hmac::{Hmac, Mac};
use sha2::Sha256;

/// The letters security's `randomByteString` draws a salt from.
const LETTERS: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";

/// The three headers a signed request carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Signed {
    pub date: String,
    pub salt: String,
    pub authorization: String,
}

/// The `Authorization` value for this date, method and salt.
pub fn authorization(auth_type: &str, key: &[u8], date: &str, method: &str, salt: &[u8]) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(key).expect("HMAC takes a key of any length");
    mac.update(date.as_bytes());
    mac.update(method.as_bytes());
    mac.update(salt);
    let sum = mac.finalize().into_bytes();
    let mut hex = String::with_capacity(auth_type.len() + 1 + 64);
    hex.push_str(auth_type);
    hex.push(' ');
    for b in sum {
        hex.push(char::from(b"0123456789abcdef"[usize::from(b >> 4)]));
        hex.push(char::from(b"0123456789abcdef"[usize::from(b & 15)]));
    }
    hex
}

/// Signs a request of `method` made at `now`, with a fresh random salt.
pub fn sign(auth_type: &str, key: &[u8], method: &str, now: DateTime<Utc>) -> Signed {
    let salt = salt();
    let date = now.to_rfc3339_opts(SecondsFormat::Secs, true);
    Signed {
        authorization: authorization(auth_type, key, &date, method, salt.as_bytes()),
        date,
        salt,
    }
}

/// 24 letters, as security's client draws them (`randByteString(24)`).
fn salt() -> String {
    let mut bytes = [0u8; 24];
    // Without the system's randomness a salt would be guessable; that is no state to sign in.
    getrandom::fill(&mut bytes).expect("the system's random source is readable");
    bytes
        .iter()
        .map(|b| char::from(LETTERS[usize::from(*b) % LETTERS.len()]))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// security's `TestAddAuth`: type `mytype`, key 1,2,3, 2019-01-16T14:44:45Z (the
    /// nanoseconds are dropped), GET, salt bytes 1…6.
    #[test]
    fn the_security_test_vector() {
        assert_eq!(
            authorization(
                "mytype",
                &[1, 2, 3],
                "2019-01-16T14:44:45Z",
                "GET",
                &[1, 2, 3, 4, 5, 6]
            ),
            "mytype f8d293a06bdde899a5bd1dd61b13842564650c717c742db02c4e1a888fc22501"
        );
    }

    #[test]
    fn a_signature_has_security_headers() {
        let now = DateTime::parse_from_rfc3339("2019-01-16T14:44:45.123456789Z")
            .unwrap()
            .with_timezone(&Utc);
        let signed = sign("Metal-Admin", b"secret", "POST", now);
        assert_eq!(signed.date, "2019-01-16T14:44:45Z");
        assert_eq!(signed.salt.len(), 24);
        assert!(signed.salt.bytes().all(|b| b.is_ascii_alphabetic()));
        assert_eq!(
            signed.authorization,
            authorization(
                "Metal-Admin",
                b"secret",
                &signed.date,
                "POST",
                signed.salt.as_bytes()
            )
        );
        assert_ne!(
            sign("Metal-Admin", b"secret", "POST", now).salt,
            signed.salt
        );
    }
}
