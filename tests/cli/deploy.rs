//! What `fsmlog watch` ships to run where metal-stack runs (`Dockerfile`, `deploy/kubernetes/`,
//! `deploy/prometheus/fsmlog-watch-alerts.yaml`): the manifests pass only flags and variables
//! the binary takes, their names meet each other (Secret keys, ports, selectors, the volume),
//! and the alert rules load and pass their own `promtool test rules` cases.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::*;

fn root(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

fn manifest(name: &str) -> Value {
    let path = root("deploy/kubernetes").join(name);
    yaml_value(&std::fs::read_to_string(&path).unwrap())
}

fn strings(value: &Value) -> Vec<&str> {
    value
        .as_array()
        .unwrap_or_else(|| panic!("not a list: {value}"))
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect()
}

/// The value after `flag` in an argument list.
fn after<'a>(args: &[&'a str], flag: &str) -> &'a str {
    let at = args.iter().position(|a| *a == flag).unwrap();
    args[at + 1]
}

/// Every `--flag` in `args` is one `fsmlog watch --help` lists, and the command is `watch`.
fn flags_exist(args: &[&str], help: &str, whose: &str) {
    assert_eq!(args.first(), Some(&"watch"), "{whose}: {args:?}");
    let flags: Vec<&&str> = args.iter().filter(|a| a.starts_with("--")).collect();
    assert!(flags.len() >= 3, "{whose}: {args:?}");
    for flag in flags {
        assert!(
            help.contains(&format!("{flag} ")),
            "{whose}: {flag} is not a flag of watch"
        );
    }
}

/// `map` holds every key and value of `want` (a selector matches labels).
fn selects(want: &Value, map: &Value) -> bool {
    let want = want.as_object().unwrap();
    !want.is_empty() && want.iter().all(|(k, v)| map.get(k) == Some(v))
}

#[test]
fn the_kubernetes_manifests_pass_what_watch_takes_and_meet_each_other() {
    let (code, help, _) = stdout_of(&["watch", "--help"]);
    assert_eq!(code, 0, "{help}");
    let deployment = manifest("deployment.yaml");
    let secret = manifest("secret.yaml");
    let service = manifest("service.yaml");
    let monitor = manifest("servicemonitor.yaml");
    let pvc = manifest("pvc.yaml");

    let pod = &deployment["spec"]["template"];
    assert_eq!(
        deployment["spec"]["replicas"], 1,
        "one collector a directory"
    );
    assert_eq!(deployment["spec"]["strategy"]["type"], "Recreate");
    assert!(selects(
        &deployment["spec"]["selector"]["matchLabels"],
        &pod["metadata"]["labels"]
    ));
    let containers = pod["spec"]["containers"].as_array().unwrap();
    assert_eq!(containers.len(), 1);
    let container = &containers[0];
    let args = strings(&container["args"]);
    flags_exist(&args, &help, "deployment.yaml");

    // The credentials come from the Secret, under names watch reads (metalctl's).
    let keys = secret["stringData"].as_object().unwrap();
    let env = container["env"].as_array().unwrap();
    assert!(!env.is_empty());
    for var in env {
        let name = var["name"].as_str().unwrap();
        assert!(help.contains(name), "{name} is not read by watch");
        let from = &var["valueFrom"]["secretKeyRef"];
        assert_eq!(from["name"], secret["metadata"]["name"], "{name}");
        let key = from["key"].as_str().unwrap();
        assert!(keys.contains_key(key), "{name}: the Secret has no {key}");
    }
    // Not on the command line, where `ps` and the pod's spec show it.
    assert!(
        !args
            .iter()
            .any(|a| a.contains("hmac") || a.contains("token"))
    );

    // One port, named `metrics`: the one watch listens on, probed and served.
    let port = &container["ports"][0];
    assert_eq!(port["name"], "metrics");
    let listen = after(&args, "--listen");
    assert_eq!(
        listen.rsplit_once(':').unwrap().1,
        port["containerPort"].to_string(),
        "--listen {listen}"
    );
    assert!(
        !listen.starts_with("127."),
        "a pod's port must be reachable: {listen}"
    );
    assert_eq!(container["livenessProbe"]["httpGet"]["path"], "/healthz");
    assert_eq!(container["readinessProbe"]["httpGet"]["path"], "/readyz");
    for probe in ["livenessProbe", "readinessProbe"] {
        assert_eq!(container[probe]["httpGet"]["port"], "metrics", "{probe}");
    }

    // The history on the claim, where --into points.
    let mount = &container["volumeMounts"][0];
    assert_eq!(mount["mountPath"], after(&args, "--into"));
    let volume = &pod["spec"]["volumes"][0];
    assert_eq!(volume["name"], mount["name"]);
    assert_eq!(
        volume["persistentVolumeClaim"]["claimName"],
        pvc["metadata"]["name"]
    );

    // Not root, and nothing to escalate to.
    let security = &pod["spec"]["securityContext"];
    assert_eq!(security["runAsNonRoot"], true);
    assert_ne!(security["runAsUser"], 0);
    assert_eq!(
        container["securityContext"]["allowPrivilegeEscalation"],
        false
    );

    // The Service finds the pod and the ServiceMonitor the Service, on the named port.
    assert!(selects(
        &service["spec"]["selector"],
        &pod["metadata"]["labels"]
    ));
    assert_eq!(service["spec"]["ports"][0]["targetPort"], "metrics");
    assert!(selects(
        &monitor["spec"]["selector"]["matchLabels"],
        &service["metadata"]["labels"]
    ));
    let endpoint = &monitor["spec"]["endpoints"][0];
    assert_eq!(endpoint["port"], service["spec"]["ports"][0]["name"]);
    assert_eq!(endpoint["path"], "/metrics");
}

#[test]
fn the_dockerfile_runs_watch_as_no_root_from_an_empty_image() {
    let (_, help, _) = stdout_of(&["watch", "--help"]);
    let text = std::fs::read_to_string(root("Dockerfile")).unwrap();
    let lines: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
    let last_from = lines.iter().rposition(|l| l.starts_with("FROM ")).unwrap();
    let image = &lines[last_from..];
    assert_eq!(image[0], "FROM scratch", "no shell in the image");
    let user = image.iter().find_map(|l| l.strip_prefix("USER ")).unwrap();
    assert!(
        !user.starts_with('0') && !user.starts_with("root"),
        "{user}"
    );
    let cmd = image.iter().find_map(|l| l.strip_prefix("CMD ")).unwrap();
    let cmd: Vec<String> = serde_json::from_str(cmd).unwrap();
    let cmd: Vec<&str> = cmd.iter().map(String::as_str).collect();
    flags_exist(&cmd, &help, "Dockerfile");
    let port = after(&cmd, "--listen").rsplit_once(':').unwrap().1;
    assert!(image.contains(&format!("EXPOSE {port}").as_str()), "{port}");
    let volume = image
        .iter()
        .find_map(|l| l.strip_prefix("VOLUME "))
        .unwrap();
    assert_eq!(volume, after(&cmd, "--into"));
    // The context leaves out the target directory (gigabytes) and .git.
    let ignore = std::fs::read_to_string(root(".dockerignore")).unwrap();
    assert!(ignore.lines().any(|l| l == "target/"), "{ignore}");
}

#[test]
fn the_watch_alerts_load_pass_their_tests_and_are_the_prometheus_rule() {
    let rules = root("deploy/prometheus/fsmlog-watch-alerts.yaml");
    let text = std::fs::read_to_string(&rules).unwrap();
    let operator = manifest("prometheusrule.yaml");
    assert_eq!(operator["kind"], "PrometheusRule");
    assert_eq!(
        operator["spec"]["groups"],
        yaml_value(&text)["groups"],
        "deploy/kubernetes/prometheusrule.yaml holds other rules than {}",
        rules.display()
    );
    // The families the rules read are in the watch's documented table.
    let doc = std::fs::read_to_string(root("docs/watch.md")).unwrap();
    for family in [
        "fsmlog_unexpected_transitions_total",
        "fsmlog_last_good_poll_timestamp_seconds",
        "fsmlog_history_gaps",
        "fsmlog_build_info",
    ] {
        assert!(text.contains(family), "{family}");
        assert!(
            doc.contains(&format!("`{family}`")),
            "docs/watch.md: {family}"
        );
    }
    if !have_promtool() {
        return;
    }
    promtool_rules_pass(
        &root("deploy/prometheus"),
        "fsmlog-watch-alerts.yaml",
        "fsmlog-watch-alerts.test.yaml",
    );
}
