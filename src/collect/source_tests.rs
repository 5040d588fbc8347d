//! Where to poll and how to sign in, resolved from flags, the environment and metalctl's config.
use std::collections::HashMap;
use std::path::Path;

use super::*;

const CONFIG: &str = "\
current: prod
contexts:
  prod:
    url: https://api.prod.example/metal/
    hmac: prod-key
  lab:
    url: http://lab.example/metal
    hmac: lab-key
    hmac_auth_type: Metal-View
    certificate_authority_data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUIKLS0tLS1FTkQgQ0VSVElGSUNBVEUtLS0tLQo=
";

fn resolve_with(
    options: &SourceOptions,
    vars: &[(&str, &str)],
    home: Option<&Path>,
    cwd: &Path,
) -> Result<Source> {
    let vars: HashMap<String, String> = vars
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    resolve(options, &|name| vars.get(name).cloned(), home, cwd)
}

fn key(source: &Source) -> (&str, &str) {
    match &source.auth {
        Auth::Hmac { key, auth_type } => (key.expose(), auth_type.as_str()),
        other => panic!("not HMAC: {other:?}"),
    }
}

#[test]
fn flags_win_over_the_environment_and_the_environment_over_the_config() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("config.yaml"), CONFIG).unwrap();
    let none = SourceOptions::default();
    let from_config = resolve_with(&none, &[], None, dir.path()).unwrap();
    assert_eq!(from_config.url, "https://api.prod.example/metal");
    assert_eq!(key(&from_config), ("prod-key", "Metal-Admin"));
    let vars = [
        ("METALCTL_API_URL", "http://env.example"),
        ("METALCTL_HMAC", "env-key"),
        ("METALCTL_HMAC_AUTH_TYPE", "Env-Type"),
    ];
    let from_env = resolve_with(&none, &vars, None, dir.path()).unwrap();
    assert_eq!(from_env.url, "http://env.example");
    assert_eq!(key(&from_env), ("env-key", "Env-Type"));
    let flags = SourceOptions {
        api_url: Some("http://flag.example/".into()),
        hmac: Some("flag-key".into()),
        ..SourceOptions::default()
    };
    let from_flags = resolve_with(&flags, &vars, None, dir.path()).unwrap();
    assert_eq!(from_flags.url, "http://flag.example");
    assert_eq!(key(&from_flags), ("flag-key", "Env-Type"));
}

#[test]
fn a_named_context_its_auth_type_and_its_certificate() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("other.yaml");
    std::fs::write(&file, CONFIG).unwrap();
    let options = SourceOptions {
        config: Some(file.clone()),
        context: Some("lab".into()),
        ..SourceOptions::default()
    };
    let lab = resolve_with(&options, &[], None, Path::new("/nonexistent")).unwrap();
    assert_eq!(lab.url, "http://lab.example/metal");
    assert_eq!(key(&lab), ("lab-key", "Metal-View"));
    let pem = String::from_utf8(lab.ca_pem.unwrap()).unwrap();
    assert!(pem.starts_with("-----BEGIN CERTIFICATE-----"), "{pem}");
    let missing = SourceOptions {
        context: Some("nope".into()),
        ..options
    };
    let err = resolve_with(&missing, &[], None, Path::new("/")).unwrap_err();
    assert!(err.to_string().contains("no context \"nope\""), "{err}");
}

#[test]
fn the_search_path_home_before_the_current_directory() {
    let home = tempfile::tempdir().unwrap();
    let cwd = tempfile::tempdir().unwrap();
    std::fs::create_dir(home.path().join(".metalctl")).unwrap();
    std::fs::write(
        home.path().join(".metalctl/config.yaml"),
        "current: a\ncontexts:\n  a:\n    url: http://home.example\n",
    )
    .unwrap();
    std::fs::write(
        cwd.path().join("config.yaml"),
        "current: a\ncontexts:\n  a:\n    url: http://cwd.example\n",
    )
    .unwrap();
    let none = SourceOptions::default();
    let source = resolve_with(&none, &[], Some(home.path()), cwd.path()).unwrap();
    assert_eq!(source.url, "http://home.example");
    assert_eq!(source.auth, Auth::Anonymous);
    let source = resolve_with(&none, &[], None, cwd.path()).unwrap();
    assert_eq!(source.url, "http://cwd.example");
}

#[test]
fn a_token_without_a_key_and_no_url_at_all() {
    let cwd = tempfile::tempdir().unwrap();
    let vars = [
        ("METALCTL_API_URL", "https://x"),
        ("METALCTL_API_TOKEN", "tok"),
    ];
    let source = resolve_with(&SourceOptions::default(), &vars, None, cwd.path()).unwrap();
    assert_eq!(source.auth, Auth::Token(Secret("tok".into())));
    assert_eq!(
        format!("{source:?}").matches("tok").count(),
        0,
        "{source:?}"
    );
    let err = resolve_with(&SourceOptions::default(), &[], None, cwd.path()).unwrap_err();
    assert!(err.to_string().contains("no metal-api URL"), "{err}");
    let bad = SourceOptions {
        api_url: Some("ftp://x".into()),
        ..SourceOptions::default()
    };
    assert!(resolve_with(&bad, &[], None, cwd.path()).is_err());
}

#[test]
fn a_broken_config_is_named_without_its_text() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("config.yaml");
    std::fs::write(&file, "hmac: [secret-value\n").unwrap();
    let options = SourceOptions {
        config: Some(file),
        ..SourceOptions::default()
    };
    let err = resolve_with(&options, &[], None, dir.path()).unwrap_err();
    let text = format!("{err:#}");
    assert!(text.contains("config.yaml"), "{text}");
    assert!(!text.contains("secret-value"), "{text}");
    let bad_ca =
        "current: a\ncontexts:\n  a:\n    url: http://x\n    certificate_authority_data: '%%%'\n";
    std::fs::write(dir.path().join("config.yaml"), bad_ca).unwrap();
    let err = resolve_with(&SourceOptions::default(), &[], None, dir.path()).unwrap_err();
    assert!(err.to_string().contains("not base64"), "{err}");
}

#[test]
fn a_url_with_a_user_or_password_is_refused_without_repeating_them() {
    let cwd = tempfile::tempdir().unwrap();
    for url in [
        "https://op:pa55word@api.example/metal",
        "http://pa55word@api.example",
        "HTTPS://op:pa55word@api.example:443/?x=@y",
        "ftp://op:pa55word@api.example",
    ] {
        let options = SourceOptions {
            api_url: Some(url.into()),
            ..SourceOptions::default()
        };
        let vars = [("METALCTL_API_TOKEN", "tok")];
        let err = resolve_with(&options, &vars, None, cwd.path()).unwrap_err();
        let text = format!("{err:#}");
        assert!(!text.contains("pa55word"), "{text}");
        assert!(text.contains("…@api.example"), "{text}");
    }
    assert_eq!(
        without_userinfo("https://api.example/a@b?c=@d"),
        "https://api.example/a@b?c=@d"
    );
    assert_eq!(without_userinfo("http://u:p@h:1/x"), "http://…@h:1/x");
}
