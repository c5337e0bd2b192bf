// The harness's environment (tests/clients/README.md), read once.
import { readFileSync } from "node:fs";

export const env = (name: string): string => process.env[name] ?? "";
export const repo = env("PLIMSOLL_REPO") || new URL("../../../..", import.meta.url).pathname;
export const embeddedUrl = env("PLIMSOLL_TEST_EMBEDDED_URL");

export function readJson(path: string): any {
  return JSON.parse(readFileSync(path, "utf8"));
}

/**
 * A harness variable is absent: the reason for t.skip() when a developer runs a test by hand,
 * and a failure (thrown while the file registers its tests) under the harness, which sets every
 * variable (PLIMSOLL_CLIENT_REQUIRE_HARNESS=1).
 */
export function skipped(what: string, reason: string): string {
  if (env("PLIMSOLL_CLIENT_REQUIRE_HARNESS") === "1") {
    throw new Error(`${what}: ${reason} (tests/clients/harness.py sets it)`);
  }
  console.log(`skipped: ${what}: ${reason}`);
  return reason;
}

/**
 * The one skip the harness allows: the reason this host cannot run the linux provider
 * (PLIMSOLL_TEST_LINUX_SKIP: not root, no guest image), or undefined when a linux daemon is there.
 */
export function linuxSkip(what: string): string | undefined {
  if (env("PLIMSOLL_TEST_LINUX_URL")) return undefined;
  const host = env("PLIMSOLL_TEST_LINUX_SKIP");
  if (!host) return skipped(what, "PLIMSOLL_TEST_LINUX_URL is not set");
  console.log(`skipped: ${what}: ${host}`);
  return host;
}
