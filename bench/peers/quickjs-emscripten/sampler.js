#!/usr/bin/env node
// The process-tier peer of bench/run.py (issue 23): quickjs-emscripten on Node, the library people
// use to run untrusted JavaScript in-process. Prints one sampler JSON line (bench/README.md,
// "sampler scenarios").
//
//   node sampler.js --modules DIR --scenario NAME --runs N --warmup N
//   node sampler.js --modules DIR --once
//
// DIR is the npm ci of this directory's package-lock.json (the bench installs it into its cache,
// never into the source tree; harness/npm_peer.py). Untimed, once: the module is loaded and its
// wasm compiled and instantiated (getQuickJS()). Timed, per run, with process.hrtime.bigint():
// a fresh QuickJS runtime and context, a console.log defined on the context that appends to a
// string, eval of console.log(6*7), the output checked ("42\n"), the context and the runtime
// disposed. This is what engine_bench's engine.instance_console_log does on plimsoll's engine,
// except that every run there also gets a fresh wasm instance and linear memory; here all
// runtimes share the module's one instance and memory.
//
// --once is the whole-process peer (the bench times the process from outside, as it times
// `plimsoll run`): load the module, one run, print its output; exit 0 only if it was "42\n".
"use strict";

const path = require("path");
const { createRequire } = require("module");

const SNIPPET = "console.log(6*7)";
const EXPECTED = "42\n";

function parseArgs(argv) {
  const args = { modules: null, scenario: "quickjs-emscripten", runs: 100, warmup: 5, once: false };
  for (let i = 0; i < argv.length; i += 2) {
    const key = argv[i];
    if (key === "--once") {
      args.once = true;
      i -= 1;
      continue;
    }
    const value = argv[i + 1];
    if (value === undefined) throw new Error(`${key} needs a value`);
    if (key === "--modules") args.modules = value;
    else if (key === "--scenario") args.scenario = value;
    else if (key === "--runs") args.runs = Number.parseInt(value, 10);
    else if (key === "--warmup") args.warmup = Number.parseInt(value, 10);
    else throw new Error(`unknown option ${key}`);
  }
  if (!args.modules) throw new Error("--modules DIR is required");
  if (!(args.runs >= 1) || !(args.warmup >= 0)) throw new Error("--runs >= 1 and --warmup >= 0");
  return args;
}

function print(record) {
  process.stdout.write(JSON.stringify(record) + "\n");
}

// One fresh runtime + context running SNIPPET; returns what console.log printed.
function runOnce(QuickJS) {
  const runtime = QuickJS.newRuntime();
  let output = "";
  try {
    const context = runtime.newContext();
    try {
      const log = context.newFunction("log", (...handles) => {
        output += handles.map((handle) => String(context.dump(handle))).join(" ") + "\n";
      });
      const console = context.newObject();
      context.setProp(console, "log", log);
      context.setProp(context.global, "console", console);
      console.dispose();
      log.dispose();
      const result = context.evalCode(SNIPPET);
      if (result.error) {
        const error = context.dump(result.error);
        result.error.dispose();
        throw new Error(`eval failed: ${JSON.stringify(error)}`);
      }
      result.value.dispose();
    } finally {
      context.dispose();
    }
  } finally {
    runtime.dispose();
  }
  return output;
}

// --once: the library loaded and one run made in this fresh process; the output to stdout.
async function runWholeProcess(modules) {
  const requireFromInstall = createRequire(path.join(path.resolve(modules), "package.json"));
  const QuickJS = await requireFromInstall("quickjs-emscripten").getQuickJS();
  const output = runOnce(QuickJS);
  process.stdout.write(output);
  if (output !== EXPECTED) {
    process.stderr.write(`sampler.js: printed ${JSON.stringify(output)}, not ${JSON.stringify(EXPECTED)}\n`);
    return 1;
  }
  return 0;
}

async function main() {
  let args;
  try {
    args = parseArgs(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`sampler.js: ${error.message}\n`);
    return 2;
  }
  if (args.once) return runWholeProcess(args.modules);
  let QuickJS;
  let version;
  try {
    const requireFromInstall = createRequire(path.join(path.resolve(args.modules), "package.json"));
    const library = requireFromInstall("quickjs-emscripten");
    version = requireFromInstall("quickjs-emscripten/package.json").version;
    QuickJS = await library.getQuickJS();   // untimed: load + compile + instantiate the wasm
  } catch (error) {
    // The bench installed it (or skipped the row when it could not): a
    // library that is there but does not load is a failure, not a skip.
    print({ scenario: args.scenario, error: `quickjs-emscripten cannot load from ${args.modules}: ${error.message}` });
    return 1;
  }
  const samples = [];
  try {
    for (let i = 0; i < args.warmup + args.runs; i++) {
      const start = process.hrtime.bigint();
      const output = runOnce(QuickJS);
      const elapsed = process.hrtime.bigint() - start;
      if (output !== EXPECTED) {
        throw new Error(`run ${i + 1} printed ${JSON.stringify(output)}, not ${JSON.stringify(EXPECTED)}`);
      }
      if (i >= args.warmup) samples.push(Number(elapsed) / 1e6);
    }
  } catch (error) {
    print({ scenario: args.scenario, error: error.message });
    return 0;
  }
  print({
    scenario: args.scenario, unit: "ms", samples,
    facts: { peer: `quickjs-emscripten ${version} (release-sync variant)`, node: process.version, tier: "process" },
  });
  return 0;
}

main().then((status) => { process.exitCode = status; }, (error) => {
  process.stderr.write(`sampler.js: ${error.stack || error}\n`);
  process.exitCode = 1;
});
