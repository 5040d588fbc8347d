//! The examples every command's `--help` ends with (and the manual page shows).

pub(super) const REPORT_EXAMPLES: &str = "Examples:
  fsmlog report fleet-export/                          every unexpected pair of a fleet
  metalctl machine logs ID -o json | fsmlog report -   one machine, straight from metalctl
  fsmlog report -o csv exports/*.json > pairs.csv      the pairs for a spreadsheet
  fsmlog report -o openmetrics fleet/ | curl --data-binary @- http://pushgateway:9091/metrics/job/fsmlog";

pub(super) const REPLAY_EXAMPLES: &str = "Examples:
  fsmlog replay seed-machine.txt                       every event with its verdict
  fsmlog replay -o ndjson fleet.json | jq 'select(.state == \"Waiting\")'
  fsmlog replay -o csv --rules metal-api-v0.19.0 logs/ > steps.csv";

pub(super) const DIFF_EXAMPLES: &str = "Examples:
  fsmlog diff --old metal-api --new proposed.json fleet/     a rule change's effect
  fsmlog diff --old metal-api-v0.19.0 --new metal-api-v0.19.3 --fail-on never fleet/
  fsmlog diff --old metal-api --new proposed.json -o markdown fleet/ > diff.md";

pub(super) const CHECK_EXAMPLES: &str = "Examples:
  fsmlog check fleet/ --write-baseline fsmlog-baseline.json   record today's pairs once
  fsmlog check fleet/ --baseline fsmlog-baseline.json         exit 1 on a new pair
  fsmlog check fleet/ --baseline fsmlog-baseline.json -o sarif > fsmlog.sarif";

pub(super) const COLLECT_EXAMPLES: &str = "Examples:
  METALCTL_HMAC=… fsmlog collect --api-url https://api.example/metal --into history/
  fsmlog collect --context prod --into history/ --once     one poll, e.g. from a CronJob
  fsmlog report history/                                   every reading command reads it";

pub(super) const WATCH_EXAMPLES: &str = "Examples:
  METALCTL_HMAC=… fsmlog watch --api-url https://api.example/metal --into history/
  fsmlog watch --context prod --into /history --listen 0.0.0.0:9119 --log-format json
  curl -s localhost:9119/metrics                           what Prometheus scrapes";

pub(super) const GRAPH_EXAMPLES: &str = "Examples:
  fsmlog graph -o svg > rules.svg                        the rule set itself
  fsmlog graph -o svg fleet/ > fleet.svg                 what the fleet did, unexpected in red
  fsmlog graph -o mermaid --since 7d fleet/              for a pull-request comment";

pub(super) const ISSUES_EXAMPLES: &str = "Examples:
  fsmlog issues fleet/                                   every machine with an issue, worst first
  fsmlog issues --fail-on major fleet/                   a nightly gate: exit 1 on major or critical
  fsmlog issues --now now --only stuck -o csv fleet/     stuck machines as of the wall clock
  fsmlog issues -o openmetrics --out /var/lib/node_exporter/textfile/fsmlog.prom fleet/
  fsmlog issues -o template --template '{{ .id }}' fleet/   the ids, one a line, for a loop
  fsmlog issues --no-headers fleet/ | awk '{print $1}'   the machine of each issue, from its row";

pub(super) const EXPLAIN_EXAMPLES: &str = "Examples:
  fsmlog explain fleet/                                  every unexpected pair, explained
  fsmlog explain --pair 'Waiting/PXE Booting' fleet/     how long machines waited, what came before
  fsmlog explain --context 5 -o json fleet/ | jq '.pairs[0].gap_seconds'";

pub(super) const PROPOSE_EXAMPLES: &str = "Examples:
  fsmlog rules propose fleet/                                 what the verdicts accept, and the effect
  fsmlog rules propose fleet/ -o json --out proposed.json     the rule file (fsmlog rules lint passes it)
  fsmlog rules propose fleet/ -o go --go-file cmd/metal-api/internal/fsm/events.go | git apply";

pub(super) const RULES_EXAMPLES: &str = "Examples:
  fsmlog rules show metal-api-v0.19.3                  the matrix of a built-in
  fsmlog rules export metal-api > mine.json && fsmlog rules lint mine.json
  fsmlog rules import-go events.go --out proposed.json";

pub(super) const MAN_EXAMPLES: &str = "Examples:
  fsmlog man | man -l -                                read the manual
  fsmlog man > /usr/local/share/man/man1/fsmlog.1      install it for `man fsmlog`";

pub(super) const LIST_EXAMPLES: &str = "Examples:
  fsmlog rules list                                    every built-in, oldest first";

pub(super) const SHOW_EXAMPLES: &str = "Examples:
  fsmlog rules show                                    the default rule set as a matrix
  fsmlog rules show metal-api-v0.19.0                  the first FSM
  fsmlog rules show proposed.json                      a rule file";

pub(super) const EXPORT_EXAMPLES: &str = "Examples:
  fsmlog rules export metal-api > mine.json            a built-in as a file to edit
  fsmlog rules export metal-api-v0.19.3 | jq '.transitions | length'";

pub(super) const LINT_EXAMPLES: &str = "Examples:
  fsmlog rules lint mine.json                          exit 1 and each mistake with its line
  fsmlog rules import-go events.go --out new.json && fsmlog rules lint new.json";

pub(super) const IMPORT_GO_EXAMPLES: &str = "Examples:
  fsmlog rules import-go cmd/metal-api/internal/fsm/events.go --out proposed.json
  git show main:cmd/metal-api/internal/fsm/events.go > base.go && fsmlog rules import-go base.go --name base";

pub(super) const COMPLETIONS_EXAMPLES: &str = "Examples:
  source <(fsmlog completions bash)                    in ~/.bashrc
  fsmlog completions zsh > \"${fpath[1]}/_fsmlog\"
  fsmlog completions fish > ~/.config/fish/completions/fsmlog.fish";
