// Daemon URLs (docs/client.md "URLs"): http://HOST[:PORT][/PREFIX], https://…, unix:/PATH.
// Userinfo, queries and fragments are refused (a token goes in the options, never in a URL).

import { clientRefusal } from "./errors.js";

export interface Target {
  scheme: "http" | "https" | "unix";
  /** Host name or IP literal (IPv6 without brackets); "localhost" for unix. */
  host: string;
  port: number;
  socketPath?: string;
  /** "" or "/prefix" (no trailing slash). */
  prefix: string;
  /** The URL as given, for messages (it never holds a secret: userinfo is refused). */
  display: string;
}

const PREFIX = /^(\/[A-Za-z0-9\-._~]+)*\/?$/;

export function parseTarget(url: string): Target {
  if (typeof url !== "string" || url === "") throw clientRefusal("invalid_argument", "The daemon URL is empty.");
  const bad = (why: string) => clientRefusal("invalid_argument", `The daemon URL ${JSON.stringify(url)} ${why}.`);
  if (url.startsWith("unix:")) {
    let path = url.slice(5);
    if (path.startsWith("//")) path = path.slice(2);
    if (!path.startsWith("/") || path.length < 2) throw bad("needs an absolute socket path (unix:/PATH)");
    if (/[\0?#]/.test(path)) throw bad("has a character a socket path cannot hold");
    return { scheme: "unix", host: "localhost", port: 0, socketPath: path, prefix: "", display: url };
  }
  const m = /^(https?):\/\/([^/?#]*)([^?#]*)$/.exec(url);
  if (!m) throw bad(url.includes("?") || url.includes("#") ? "has a query or fragment" : "is not http://, https:// or unix:");
  const scheme = m[1] as "http" | "https";
  const authority = m[2]!;
  const path = m[3]!;
  if (authority.includes("@")) throw bad("carries user information; put a token in the options");
  let host: string;
  let portText = "";
  const v6 = /^\[([0-9A-Fa-f:.]+)\](?::(.*))?$/.exec(authority);
  if (v6) {
    host = v6[1]!;
    portText = v6[2] ?? "";
    if (v6[2] === "") throw bad("has an empty port");
  } else {
    const parts = authority.split(":");
    if (parts.length > 2) throw bad("has an IPv6 address without brackets");
    host = parts[0]!;
    if (parts.length === 2) {
      portText = parts[1]!;
      if (portText === "") throw bad("has an empty port");
    }
    if (!/^[A-Za-z0-9.\-]+$/.test(host)) throw bad("has no valid host");
  }
  let port = scheme === "https" ? 443 : 80;
  if (portText !== "") {
    if (!/^[0-9]{1,5}$/.test(portText) || Number(portText) < 1 || Number(portText) > 65535) throw bad("has a bad port");
    port = Number(portText);
  }
  if (!PREFIX.test(path)) throw bad("has a path prefix with characters other than letters, digits and /-._~");
  const prefix = path.replace(/\/+$/, "");
  return { scheme, host: host.toLowerCase(), port, prefix, display: url };
}

/** An IP literal of the loopback network (127.0.0.0/8, ::1, ::ffff:127.x.x.x). */
export function isLoopbackAddress(address: string): boolean {
  const a = address.toLowerCase();
  if (/^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(a)) return true;
  if (a === "::1" || a === "0:0:0:0:0:0:0:1") return true;
  const mapped = /^::ffff:(\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3})$/.exec(a);
  return mapped !== null && isLoopbackAddress(mapped[1]!);
}

export function isIpLiteral(host: string): boolean {
  return /^\d{1,3}(\.\d{1,3}){3}$/.test(host) || host.includes(":");
}
