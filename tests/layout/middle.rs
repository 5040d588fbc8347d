//! The middle of the house has one owner: a machine is judged (replayed and diagnosed) only
//! where it is judged, and commands are wiring that holds no rule of the domain.

use syn::visit::Visit;

use super::{Crate, Paths, is_test, name, read_crate};

/// What a visitor gathers of each module's file outside its tests, by module.
fn by_module<V: for<'ast> Visit<'ast> + Default, T>(
    krate: &Crate,
    gathered: impl Fn(V) -> T,
) -> Vec<(String, T)> {
    krate
        .modules
        .values()
        .map(|module| {
            let text = std::fs::read_to_string(&module.file).unwrap();
            let mut visitor = V::default();
            visitor.visit_file(&syn::parse_file(&text).unwrap());
            (name(&module.names), gathered(visitor))
        })
        .collect()
}

/// Every path a module names outside its tests, by module.
fn paths_by_module(krate: &Crate) -> Vec<(String, Vec<Vec<String>>)> {
    by_module(krate, |paths: Paths| paths.0)
}

/// Every method a module calls outside its tests (`log.as_it_was_at(cut)`), by module.
fn methods_by_module(krate: &Crate) -> Vec<(String, Vec<String>)> {
    #[derive(Default)]
    struct Methods(Vec<String>);
    impl<'ast> Visit<'ast> for Methods {
        fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
            if !is_test(&m.attrs) {
                syn::visit::visit_item_mod(self, m);
            }
        }
        fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
            if !is_test(&f.attrs) {
                syn::visit::visit_item_fn(self, f);
            }
        }
        fn visit_expr_method_call(&mut self, call: &'ast syn::ExprMethodCall) {
            self.0.push(call.method.to_string());
            syn::visit::visit_expr_method_call(self, call);
        }
    }
    by_module(krate, |methods: Methods| methods.0)
}

/// Whether `path` names `item` (`replay::replay`, `Diagnosis::of`): ends with its names.
fn names(path: &[String], item: &str) -> bool {
    let item: Vec<&str> = item.split("::").collect();
    path.len() >= item.len() && path[path.len() - item.len()..].iter().eq(item.iter())
}

/// A machine is judged — replayed and diagnosed — in one place: whole as a
/// `diagnose::Judged`, further as a `judge::Judging`. Nothing else runs the replay or the
/// diagnosis on a machine; every result takes the judged machine.
#[test]
fn a_machine_is_judged_in_one_place() {
    let engines = [
        "replay::replay",
        "judge_outside_log",
        "Diagnosis::of",
        "Diagnosing::new",
        "Replaying::new",
        "Replayer::new",
        "Branches::new",
    ];
    let judges = |module: &str| {
        ["replay", "diagnose", "judge"]
            .iter()
            .any(|m| module == *m || module.starts_with(&format!("{m}::")))
    };
    let krate = read_crate();
    let mut problems = Vec::new();
    for (module, paths) in paths_by_module(&krate) {
        // The crate's root re-exports the replay for the library's users; it runs nothing. The
        // simulator drives metal-api's FSM to make a fleet's events: it judges none.
        if judges(&module) || module == "crate" || module == "sim" || module.starts_with("sim::") {
            continue;
        }
        for path in paths {
            // The engines' modules whole (`use crate::replay::*`, `use crate::replay;`) would
            // hide the name of what is run.
            if path == ["crate", "replay"] || path == ["crate", "diagnose"] {
                problems.push(format!(
                    "{module} takes {} whole: name what it uses",
                    path[1]
                ));
            }
            if let Some(engine) = engines.iter().find(|e| names(&path, e)) {
                problems.push(format!(
                    "{module} runs {engine} itself: take a judged machine"
                ));
            }
        }
    }
    assert!(problems.is_empty(), "\n{}", problems.join("\n"));
}

/// Commands are wiring: a job, one fold, one render call, an ending. The inputs and the
/// window are made once (`commands::job`), and no command holds a rule of the domain — how a
/// machine is judged, at which instant, with which threshold. The watch reads its own
/// history directory again at each poll, not the command line's paths: it makes its inputs
/// itself.
#[test]
fn commands_hold_no_domain_rules() {
    let made_once = [
        "Inputs::resolve",
        "fleet::counted",
        "counted",
        "Ruleset::resolve",
    ];
    // What only the judged machine, the results and the audit call.
    let domain_methods = [
        "as_it_was_at",
        "add_undiagnosed",
        "add_counted",
        "add_trace",
        "add_edges",
        "contribution",
    ];
    let domain = [
        "Summary::add",
        "NowSpec",
        "TimeDelta",
        "Utc::now",
        "as_it_was_at",
        "EXPORTER_LAST_ERROR_THRESHOLD",
        "METAL_API_LAST_ERROR_THRESHOLD",
        "MachineFacts",
    ];
    let krate = read_crate();
    let mut problems = Vec::new();
    for (module, methods) in methods_by_module(&krate) {
        if !module.starts_with("commands::") {
            continue;
        }
        for method in methods {
            if domain_methods.contains(&method.as_str()) {
                problems.push(format!("{module} calls .{method}(): a rule of the domain"));
            }
        }
    }
    for (module, paths) in paths_by_module(&krate) {
        if !module.starts_with("commands::") || module == "commands::job" {
            continue;
        }
        let watch = module.starts_with("commands::watch");
        // `rules` works on rule sets alone; it reads no input.
        let own_rules = watch || module == "commands::rules";
        for path in paths {
            let own = own_rules && names(&path, "Ruleset::resolve");
            if !watch
                && !own
                && let Some(item) = made_once.iter().find(|e| names(&path, e))
            {
                problems.push(format!(
                    "{module} makes {item} itself: `commands::job` does"
                ));
            }
            let Some(item) = domain.iter().find(|e| names(&path, e)) else {
                continue;
            };
            // The watch is a server: its clock is the wall's.
            if watch && *item == "Utc::now" {
                continue;
            }
            problems.push(format!("{module} names {item}: a rule of the domain"));
        }
    }
    assert!(problems.is_empty(), "\n{}", problems.join("\n"));
}
