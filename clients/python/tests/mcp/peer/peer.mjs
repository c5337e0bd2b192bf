// The TypeScript MCP SDK's own Client, as a real peer of plimsoll's Python MCP server.
//
//   node peer.mjs SCENARIO
//
// PEER_TRANSPORT  stdio: spawn PEER_PYTHON -m plimsoll.mcp (environment: PEER_SERVER_ENV, JSON);
//                 http: connect to PEER_HTTP_URL (a server the test started), sending
//                 "Authorization: Bearer $PEER_HTTP_TOKEN" when that is set
// Prints one JSON report on stdout (the test asserts on it). Scenario "sessions" also prints
// {"ready": ...} once, before its first MCP session ends, and waits for a line on stdin.
import { createInterface } from "node:readline";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const transportKind = process.env.PEER_TRANSPORT ?? "stdio";

/** One MCP session: a Client over a fresh transport, tools listed (so outputs are validated). */
async function connect(name) {
  const client = new Client({ name, version: "1.0.0" });
  let transport;
  if (transportKind === "stdio") {
    transport = new StdioClientTransport({
      command: process.env.PEER_PYTHON,
      args: ["-m", "plimsoll.mcp", "--transport", "stdio"],
      env: { ...process.env, ...JSON.parse(process.env.PEER_SERVER_ENV ?? "{}") },
      stderr: "inherit",
    });
  } else {
    const token = process.env.PEER_HTTP_TOKEN;
    transport = new StreamableHTTPClientTransport(new URL(process.env.PEER_HTTP_URL), token
      ? { requestInit: { headers: { Authorization: `Bearer ${token}` } } } : undefined);
  }
  await client.connect(transport);
  const { tools } = await client.listTools();
  return { client, transport, tools };
}

/** Ends the MCP session the way each transport does: DELETE over HTTP, EOF on stdio. */
async function end({ client, transport }) {
  if (transportKind === "http") await transport.terminateSession();
  await client.close();
}

async function call(session, name, args = {}) {
  const result = await session.client.callTool({ name, arguments: args });
  return { isError: result.isError ?? false, structured: result.structuredContent ?? null,
           text: result.content?.[0]?.text ?? null };
}

function waitForLine() {
  return new Promise((resolve) => {
    const lines = createInterface({ input: process.stdin });
    lines.once("line", (line) => { lines.close(); process.stdin.destroy(); resolve(line); });
  });
}

const scenarios = {
  async tools() {
    const session = await connect("peer-tools");
    const report = {
      server: session.client.getServerVersion(),
      tools: session.tools.map((t) => ({ name: t.name, inputSchema: t.inputSchema,
                                         outputSchema: t.outputSchema ?? null })),
    };
    await end(session);
    return report;
  },

  // A server whose floor is process, on the embedded daemon (tier process).
  async runs() {
    const session = await connect("peer-runs");
    const report = {
      describe: await call(session, "describe"),
      ok: await call(session, "run_code", { language: "javascript", code: "console.log(6*7)" }),
      failed: await call(session, "run_code",
                         { language: "javascript", code: "throw new Error('boom')" }),
      stronger: await call(session, "run_code",
                           { language: "javascript", code: "console.log(1)", floor: "container" }),
      bad_language: await call(session, "run_code", { language: "cobol", code: "DISPLAY 1" }),
    };
    await end(session);
    return report;
  },

  // A server with the default floor (container), on the embedded daemon (tier process).
  async refused() {
    const session = await connect("peer-refused");
    const report = {
      describe: await call(session, "describe"),
      run: await call(session, "run_code", { language: "javascript", code: "console.log(1)" }),
      weaker: await call(session, "run_code",
                         { language: "javascript", code: "console.log(1)", floor: "process" }),
      open: await call(session, "open_session"),
    };
    await end(session);
    return report;
  },

  // On the linux daemon: a session's state across cells; handles bound to their MCP session.
  async sessions() {
    const a = await connect("peer-a");
    const report = {};
    const first = await call(a, "open_session");
    report.first = first;
    const handle = first.structured.session_id;
    report.cell1 = await call(a, "run_cell", { session_id: handle, language: "python",
                                               code: "x = 20\nprint('set')" });
    report.cell2 = await call(a, "run_cell", { session_id: handle, language: "python",
                                               code: "x + 22" });
    report.file = await call(a, "run_cell", {
      session_id: handle, language: "python", code: "print(open('/work/in.txt').read())",
      files: [{ path: "in.txt", content: "from the peer" }] });
    report.closed = await call(a, "close_session", { session_id: handle });
    report.closed_again = await call(a, "close_session", { session_id: handle });
    report.after_close = await call(a, "run_cell", { session_id: handle, language: "python",
                                                     code: "1" });
    const second = await call(a, "open_session");
    report.second = second;
    const kept = second.structured.session_id;
    await call(a, "run_cell", { session_id: kept, language: "python", code: "y = 7" });

    const b = await connect("peer-b");
    report.from_b_cell = await call(b, "run_cell", { session_id: kept, language: "python",
                                                     code: "y" });
    report.from_b_close = await call(b, "close_session", { session_id: kept });
    await end(b);
    report.a_still = await call(a, "run_cell", { session_id: kept, language: "python",
                                                 code: "y * 6" });

    process.stdout.write(JSON.stringify({ ready: true }) + "\n");
    await waitForLine(); // the test checks through the daemon that the session is still open
    await end(a);
    return report;
  },

  // Over HTTP: a session left open when the server itself is stopped.
  async leave_open() {
    const a = await connect("peer-leave");
    const report = { opened: await call(a, "open_session") };
    await call(a, "run_cell", { session_id: report.opened.structured.session_id,
                                language: "python", code: "z = 1" });
    await a.client.close(); // no DELETE: the MCP session stays until the server stops
    return report;
  },
};

const name = process.argv[2];
if (!(name in scenarios)) {
  console.error(`usage: node peer.mjs ${Object.keys(scenarios).join("|")}`);
  process.exit(2);
}
const report = await scenarios[name]();
process.stdout.write(JSON.stringify({ report }) + "\n");
