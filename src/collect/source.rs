//! Where to poll and how to sign in, resolved as metalctl resolves it (`cmd/root.go`,
//! `pkg/api/context.go`): a flag, else its `METALCTL_…` variable, else the key at the top of
//! metalctl's config.yaml, else the context's (`current`, or `--context`). The config is the
//! one `--config`/`METALCTL_CONFIG` names, else the first `config.yaml` in /etc/metalctl,
//! ~/.metalctl and the current directory.

use std::fmt;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result, anyhow, bail};
use base64::Engine as _;
use serde_json::Value;

use crate::render::escape;

/// metalctl's default `hmac_auth_type`.
pub const DEFAULT_AUTH_TYPE: &str = "Metal-Admin";

/// What the command line said; `None` where it said nothing.
#[derive(Debug, Default, Clone)]
pub struct SourceOptions {
    pub api_url: Option<String>,
    pub api_token: Option<String>,
    pub hmac: Option<String>,
    pub hmac_auth_type: Option<String>,
    pub config: Option<PathBuf>,
    pub context: Option<String>,
    pub partition: Option<String>,
}

/// A secret: never shown, not even by `{:?}`.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// The secret's text, for the one place that sends it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<hidden>")
    }
}

/// How requests are signed: an HMAC key wins over a token, as in metal-go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Auth {
    Hmac { key: Secret, auth_type: String },
    Token(Secret),
    Anonymous,
}

/// Everything the client needs to poll.
#[derive(Debug, Clone)]
pub struct Source {
    /// The API's base URL without a trailing slash; requests go to URL + `/v1/…`.
    pub url: String,
    pub auth: Auth,
    /// PEM certificates that replace the built-in roots (metalctl's
    /// `certificate_authority_data`, base64 of PEM).
    pub ca_pem: Option<Vec<u8>>,
    pub partition: Option<String>,
}

/// Resolves the source from the options, the environment (`env` looks a variable up) and
/// metalctl's config.
pub fn resolve(
    options: &SourceOptions,
    env: &dyn Fn(&str) -> Option<String>,
    home: Option<&Path>,
    cwd: &Path,
) -> Result<Source> {
    let env = |name: &str| env(name).filter(|v| !v.is_empty());
    let config_path = options
        .config
        .clone()
        .or_else(|| env("METALCTL_CONFIG").map(PathBuf::from));
    let config = match config_path {
        Some(path) => Some(read_config(&path)?),
        None => match search(home, cwd) {
            Some(path) => Some(read_config(&path)?),
            None => None,
        },
    };
    let top = |key: &str| {
        config
            .as_ref()
            .and_then(|c| c.value.get(key))
            .and_then(text)
            .filter(|v| !v.is_empty())
    };
    let context = match &config {
        Some(config) => config.context(options.context.as_deref())?,
        None if options.context.is_some() => {
            bail!("--context needs metalctl's config.yaml, and none was found (give --config FILE)")
        }
        None => None,
    };
    let from_context = |key: &str| {
        context
            .as_ref()
            .and_then(|c| c.get(key))
            .and_then(text)
            .filter(|v| !v.is_empty())
    };
    let pick = |flag: &Option<String>, var: &str, key: &str, context_key: &str| {
        flag.clone()
            .filter(|v| !v.is_empty())
            .or_else(|| env(var))
            .or_else(|| top(key))
            .or_else(|| from_context(context_key))
    };
    let url = pick(&options.api_url, "METALCTL_API_URL", "api-url", "url").ok_or_else(|| {
        anyhow!(
            "no metal-api URL: give --api-url, set METALCTL_API_URL, or name a context of \
             metalctl's config.yaml"
        )
    })?;
    let url = check_url(&url)?;
    let hmac = pick(&options.hmac, "METALCTL_HMAC", "hmac", "hmac");
    let auth_type = pick(
        &options.hmac_auth_type,
        "METALCTL_HMAC_AUTH_TYPE",
        "hmac-auth-type",
        "hmac_auth_type",
    )
    .unwrap_or_else(|| DEFAULT_AUTH_TYPE.to_string());
    // metalctl reads no token from a context; a kubeconfig's is not read here.
    let token = options
        .api_token
        .clone()
        .filter(|v| !v.is_empty())
        .or_else(|| env("METALCTL_API_TOKEN"))
        .or_else(|| top("api-token"));
    let auth = match (hmac, token) {
        (Some(key), _) => Auth::Hmac {
            key: Secret(key),
            auth_type,
        },
        (None, Some(token)) => Auth::Token(Secret(token)),
        (None, None) => Auth::Anonymous,
    };
    let ca_pem = match top("certificate-authority-data")
        .or_else(|| from_context("certificate_authority_data"))
    {
        Some(data) => Some(decode_ca(&data)?),
        None => None,
    };
    Ok(Source {
        url,
        auth,
        ca_pem,
        partition: options.partition.clone().filter(|p| !p.is_empty()),
    })
}

/// The URL without trailing slashes; only http and https, and no user or password in it: the
/// URL is named in every error and log line, and metal-api signs in with the HMAC or token.
fn check_url(url: &str) -> Result<String> {
    let trimmed = url.trim().trim_end_matches('/');
    let lower = trimmed.to_ascii_lowercase();
    let rest = lower
        .strip_prefix("https://")
        .or_else(|| lower.strip_prefix("http://"));
    match rest {
        Some(host) if !host.is_empty() => {}
        _ => bail!(
            "the metal-api URL {:?} is not an http:// or https:// URL",
            escape::text(&without_userinfo(url))
        ),
    }
    if without_userinfo(trimmed) != trimmed {
        bail!(
            "the metal-api URL {:?} holds a user or password: give it without (metal-api signs \
             in with --hmac or --api-token, and the URL is named in every error and log line)",
            escape::text(&without_userinfo(url))
        );
    }
    Ok(trimmed.to_string())
}

/// The URL with what stands before an `@` in its authority (a user and password) written
/// `…`, so that no error repeats it.
fn without_userinfo(url: &str) -> String {
    let start = url.find("://").map_or(0, |at| at + 3);
    let end = url[start..]
        .find(['/', '?', '#'])
        .map_or(url.len(), |at| start + at);
    match url[start..end].rfind('@') {
        Some(at) => format!("{}…{}", &url[..start], &url[start + at..]),
        None => url.to_string(),
    }
}

/// metalctl's `certificate_authority_data`: PEM, base64-encoded (`createTLSClientConfig`).
fn decode_ca(data: &str) -> Result<Vec<u8>> {
    let compact: String = data.split_ascii_whitespace().collect();
    let pem = base64::engine::general_purpose::STANDARD
        .decode(compact.as_bytes())
        .map_err(|_| anyhow!("certificate_authority_data is not base64 (of PEM certificates)"))?;
    if !pem.windows(11).any(|w| w == b"-----BEGIN ") {
        bail!("certificate_authority_data holds no PEM certificate");
    }
    Ok(pem)
}

/// metalctl's search path for `config.yaml`, first found wins.
fn search(home: Option<&Path>, cwd: &Path) -> Option<PathBuf> {
    let mut dirs = vec![PathBuf::from("/etc/metalctl")];
    dirs.extend(home.map(|h| h.join(".metalctl")));
    dirs.push(cwd.to_path_buf());
    dirs.iter()
        .flat_map(|d| [d.join("config.yaml"), d.join("config.yml")])
        .find(|p| p.is_file())
}

/// metalctl's config.yaml, read.
struct Config {
    path: PathBuf,
    value: Value,
}

fn read_config(path: &Path) -> Result<Config> {
    let shown = escape::text(&path.display().to_string()).into_owned();
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("{shown}: metalctl's config cannot be read"))?;
    let value = if text.trim().is_empty() {
        Value::Object(Default::default())
    } else {
        // The parser's message may quote the line, and the line may hold a key: only where.
        crate::input::yaml::mapping(&text)
            .map(|m| m.value)
            .map_err(|e| {
                let place = e.split(": ").next().unwrap_or("");
                anyhow!("{shown}: {place}: metalctl's config is not a YAML mapping")
            })?
    };
    Ok(Config {
        path: path.to_path_buf(),
        value,
    })
}

impl Config {
    /// The context `name` names (it must exist), else the `current` one if it exists.
    fn context(&self, name: Option<&str>) -> Result<Option<Value>> {
        let contexts = self.value.get("contexts");
        let Some(wanted) = name
            .map(str::to_string)
            .or_else(|| self.value.get("current").and_then(text))
        else {
            return Ok(None);
        };
        match contexts.and_then(|c| c.get(&wanted)) {
            Some(context) => Ok(Some(context.clone())),
            None if name.is_some() => bail!(
                "{}: no context {:?} in metalctl's config",
                escape::text(&self.path.display().to_string()),
                escape::text(&wanted)
            ),
            // metalctl falls back to its defaults where `current` names nothing.
            None => Ok(None),
        }
    }
}

/// A scalar as text (YAML may read `hmac: 1234` as a number).
fn text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

#[cfg(test)]
#[path = "source_tests.rs"]
mod tests;
