// The harness's environment (tests/clients/README.md), read once.
import { readFileSync } from "node:fs";

export const env = (name: string): string => process.env[name] ?? "";
export const repo = env("PLIMSOLL_REPO") || new URL("../../../..", import.meta.url).pathname;
export const embeddedUrl = env("PLIMSOLL_TEST_EMBEDDED_URL");

export function readJson(path: string): any {
  return JSON.parse(readFileSync(path, "utf8"));
}

/** Prints the skip the way run-tests reports it, and returns the reason for t.skip(). */
export function skipped(what: string, reason: string): string {
  console.log(`skipped: ${what}: ${reason}`);
  return reason;
}
