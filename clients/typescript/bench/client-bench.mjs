#!/usr/bin/env node
// client-bench.mjs --url URL --runs N [--package DIR]
// On an embedded daemon: p50 of runJavascript("console.log(6*7)") through @plimsoll/client, p50
// of the same POST /v1/runs made with node:http alone (fresh Plimsoll-Request-Id, keep-alive in
// both), their difference, and p50 of a session cell "1+1". Warm-up excluded. Prints one JSON line.
// The package is imported as "@plimsoll/client" (installed), else from --package DIR, else from
// $PLIMSOLL_CLIENT_WORK/install/node_modules/@plimsoll/client (where run-tests installs it).
import http from "node:http";
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { pathToFileURL } from "node:url";

const args = process.argv.slice(2);
const arg = (name, fallback) => {
  const i = args.indexOf(name);
  return i >= 0 && i + 1 < args.length ? args[i + 1] : fallback;
};
const url = arg("--url", process.env.PLIMSOLL_URL ?? "http://127.0.0.1:8470");
const runs = Number(arg("--runs", "1000"));
if (!Number.isInteger(runs) || runs < 1) throw new Error("--runs must be a positive integer");

async function load() {
  const dir = arg("--package", "") || (process.env.PLIMSOLL_CLIENT_WORK ? `${process.env.PLIMSOLL_CLIENT_WORK}/install/node_modules/@plimsoll/client` : "");
  if (dir && existsSync(`${dir}/dist/index.js`)) return import(pathToFileURL(`${dir}/dist/index.js`).href);
  return import("@plimsoll/client");
}
const { Client } = await load();

const warmup = Math.min(200, Math.max(10, Math.floor(runs / 10)));
const p50 = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor((s.length - 1) / 2)];
};
async function measure(f) {
  for (let i = 0; i < warmup; i++) await f();
  const times = [];
  for (let i = 0; i < runs; i++) {
    const t = process.hrtime.bigint();
    await f();
    times.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  return p50(times);
}

const client = new Client(url);
const clientRun = await measure(async () => {
  const r = await client.runJavascript("console.log(6*7)");
  if (r.exitCode !== 0) throw new Error("run failed");
});

const target = new URL(url);
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
const body = Buffer.from(JSON.stringify({ protocol: 1, javascript: { code: "console.log(6*7)" } }));
const raw = () =>
  new Promise((resolve, reject) => {
    const req = http.request({
      host: target.hostname, port: target.port, path: "/v1/runs", method: "POST", agent,
      headers: { "Content-Type": "application/json", "Content-Length": body.length, "Plimsoll-Request-Id": randomBytes(16).toString("hex") },
    }, (res) => {
      const chunks = [];
      res.on("data", (c) => chunks.push(c));
      res.on("end", () => (res.statusCode === 200 ? resolve(Buffer.concat(chunks)) : reject(new Error(`HTTP ${res.statusCode}`))));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(body);
  });
const rawRun = await measure(raw);

const session = await client.openSession();
const cell = await measure(async () => {
  const r = await session.runCell("javascript", "1+1");
  if (r.exitCode !== 0) throw new Error("cell failed");
});
await session.close();
client.close();
agent.destroy();

const round = (x) => Math.round(x * 1000) / 1000;
console.log(JSON.stringify({
  client: "typescript", runs, client_run_p50_ms: round(clientRun), raw_run_p50_ms: round(rawRun),
  overhead_p50_ms: round(clientRun - rawRun), cell_p50_ms: round(cell),
}));
