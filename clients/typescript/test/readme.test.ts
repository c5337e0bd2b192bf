// Every README example runs as written against the embedded daemon (PLIMSOLL_URL) and prints
// exactly the output the README shows after it.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { promisify } from "node:util";
import { embeddedUrl, env, skipped } from "./env.js";

const compiled = env("PLIMSOLL_TS_README_DIR") || new URL("./readme-examples", import.meta.url).pathname;
const sources = compiled.replace(/test-dist\/readme-examples$/, "test/readme-examples");
const examples = readdirSync(compiled).filter((f) => /^example-\d+\.js$/.test(f)).sort();

test("the README has examples", () => {
  assert.ok(examples.length >= 4, `found ${examples.length}`);
});

for (const file of examples) {
  const name = file.replace(/\.js$/, "");
  const skip = embeddedUrl ? undefined : skipped(`README ${name}`, "PLIMSOLL_TEST_EMBEDDED_URL is not set");
  test(`README ${name}`, skip ? { skip } : {}, async () => {
    const expected = readFileSync(`${sources}/${name}.expected.txt`, "utf8");
    const childEnv: NodeJS.ProcessEnv = { ...process.env, PLIMSOLL_URL: embeddedUrl };
    delete childEnv.PLIMSOLL_TOKEN;
    const { stdout } = await promisify(execFile)(process.execPath, [`${compiled}/${file}`], { env: childEnv, timeout: 30_000 });
    assert.equal(stdout, expected);
  });
}
